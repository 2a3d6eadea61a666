package db

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/cryptointel/cryptointel"
)

const (
	// fuzzyMinSimilarity is the trigram similarity a fuzzy name match needs.
	// It equals pg_trgm's default similarity_threshold, so the % operator
	// (which the trigram GIN index answers) selects exactly these rows.
	fuzzyMinSimilarity = 0.3
	// linkFuzzyMinSimilarity is the similarity a fuzzy match of the whole
	// search query needs to link the query to an entity.
	linkFuzzyMinSimilarity = 0.45
	// minFuzzyRunes is the shortest name that is matched by token and by
	// trigram similarity; shorter names (tickers such as "OP") only match
	// exactly or by prefix.
	minFuzzyRunes = 3
	// maxNameRunes bounds the name or query looked up.
	maxNameRunes = 200
)

// cleanName drops what PostgreSQL text cannot hold (NUL, invalid UTF-8),
// trims name and bounds its length.
func cleanName(name string) string {
	name = strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "")
	name = strings.TrimSpace(name)
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = string([]rune(name)[:maxNameRunes])
	}
	return name
}

// nameMatchSQL returns the UNION ALL of the name-matching branches for the
// normalized name expression n (SQL, a constant so the planner folds it and
// picks the index for each branch), each yielding entity_id, kind, value,
// rank, match_type, sim. Exact and prefix matches use the btree on
// entity_names.norm; token, substring and fuzzy matches use the trigram GIN
// index. partial adds the token and substring branches.
func nameMatchSQL(n string, partial bool, fuzzyMin float64) string {
	kindRank := `CASE en.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END`
	// LIKE pattern for "starts with n", with LIKE's metacharacters escaped.
	prefix := `(replace(replace(replace(` + n + `, '\', '\\'), '%', '\%'), '_', '\_') || '%')`
	var b strings.Builder
	fmt.Fprintf(&b, `
		SELECT en.entity_id, en.kind, en.value, %s AS rank, 'exact' AS match_type, 1.0::float8 AS sim
		FROM entity_names en WHERE en.norm = %s
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 3, 'prefix', 1.0::float8
		FROM entity_names en WHERE en.norm LIKE %s AND en.norm <> %s`, kindRank, n, prefix, n)
	if partial {
		// A whole word (or run of words) of the name, not at its start:
		// "labs" finds "Uniswap Labs". Regex metacharacters are escaped.
		word := `('\m' || regexp_replace(` + n + `, '([^[:alnum:][:space:]])', '\\\1', 'g') || '\M')`
		fmt.Fprintf(&b, `
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 4, 'token', 1.0::float8
		FROM entity_names en WHERE en.norm ~ %s AND en.norm NOT LIKE %s
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 5, 'substring', 1.0::float8
		FROM entity_names en WHERE en.norm LIKE '%%' || %s AND en.norm NOT LIKE %s AND en.norm !~ %s`, word, prefix, prefix, prefix, word)
	}
	if fuzzyMin > 0 {
		// The % operator (trigram similarity above pg_trgm's threshold, 0.3
		// by default) is answered by the GIN index; the similarity is then
		// recomputed for the rank.
		fmt.Fprintf(&b, `
		UNION ALL
		SELECT f.entity_id, f.kind, f.value,
		       CASE WHEN f.sim >= 0.6 THEN 6 WHEN f.sim >= 0.45 THEN 7 ELSE 8 END, 'fuzzy', f.sim
		FROM (
			SELECT en.entity_id, en.kind, en.value, similarity(en.norm, %s)::float8 AS sim
			FROM entity_names en WHERE en.norm %% %s
		) f WHERE f.sim >= %g`, n, n, fuzzyMin)
	}
	return b.String()
}

// ResolveEntities finds entities by name: case- and accent-insensitive over
// canonical names, display names and aliases, strongest first, ties broken
// by popularity (event count) then id. Every candidate of an ambiguous name
// is returned.
//
// Matches in strength order: exact canonical name (rank 0), exact display
// name (1), exact alias (2), prefix of any name (3), a whole word of any name
// (4), inside a word of any name (5, "swap" finds Uniswap), trigram
// similarity of at least 0.3 (6–8, so "Etherium" finds Ethereum); ranks 4 to
// 8 need 3+ characters, so short tickers match only exactly or by prefix.
// Each entity appears once, with its best match. Ties of rank are broken by
// popularity, the entity's event count (entities.event_count, maintained by
// ingest and seed) descending, then by id ascending. limit <= 0 means
// cryptointel.ResolveEntitiesFirst.Default;
// offset < 0 means 0.
//
// Returns EINVALID when name is empty or only whitespace. One statement.
func ResolveEntities(ctx context.Context, q Querier, name string, limit, offset int) ([]cryptointel.EntityMatch, error) {
	name = cleanName(name)
	if name == "" {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgNameRequired}
	}
	if limit <= 0 {
		limit = cryptointel.ResolveEntitiesFirst.Default
	}
	if offset < 0 {
		offset = 0
	}
	rows, err := query(ctx, q, resolveSQL(utf8.RuneCountInString(name) >= minFuzzyRunes), name, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	defer rows.Close()
	out := []cryptointel.EntityMatch{}
	for rows.Next() {
		var (
			m   cryptointel.EntityMatch
			sim float64
		)
		if err := rows.Scan(&m.EntityID, &m.MatchedVia, &m.MatchedValue, &m.MatchRank, &m.MatchType, &sim, &m.Popularity); err != nil {
			return nil, fmt.Errorf("error scanning entity matches: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	return out, nil
}

// resolveSQL is ResolveEntities' statement ($1 the cleaned, non-empty name,
// $2 the limit, $3 the offset); long names (3+ characters) also match by
// token, substring and trigram similarity. Its text is fixed per branch
// set, so it is prepared once per connection and its generic plan answers
// every branch from the indexes (planning it per request, with the name
// written in, cost more than running it).
func resolveSQL(long bool) string {
	fuzzyMin := 0.0
	if long {
		fuzzyMin = fuzzyMinSimilarity
	}
	return `
		WITH m AS (` + nameMatchSQL("norm_text($1::text)", long, fuzzyMin) + `
		), best AS (
			SELECT DISTINCT ON (m.entity_id) m.*
			FROM m
			ORDER BY m.entity_id, m.rank, m.sim DESC,
			         CASE m.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END, m.value
		)
		SELECT b.entity_id, b.kind, b.value, b.rank, b.match_type, b.sim, e.event_count
		FROM best b JOIN entities e ON e.id = b.entity_id
		ORDER BY b.rank, e.event_count DESC, b.entity_id
		LIMIT $2 OFFSET $3`
}

// Search tuning. The candidate caps keep every branch index-driven and
// bounded whatever the table size and the window.
const (
	// textCandidates is how many of the most recent full-text matches (of
	// every word, and of some words) are ranked by relevance (see
	// textCandidatesSQL for how they are found in bounded work).
	textCandidates = 200
	// recentScan is how many of the newest events in the window are
	// checked for the words before the full-text index is asked
	// (textCandidatesSQL).
	recentScan = 10_000
	// maxLinkedEntities bounds the entities a query is linked to.
	maxLinkedEntities = 10
	// maxRelatedEntities bounds the entities reached by expansion.
	maxRelatedEntities = 10
	// maxQueryTokens bounds the query words considered for entity linking.
	maxQueryTokens = 12
	// maxPhraseTokens is the longest run of query words matched against
	// entity names.
	maxPhraseTokens = 4
)

// linkedEntity is an entity a search query names, or one related to it.
type linkedEntity struct {
	EntityID int64  `bun:"entity_id"`
	Kind     string `bun:"kind"`
	Rank     int    `bun:"rank"`
	Whole    bool   `bun:"whole"`
	Related  bool   `bun:"related"`
}

// queryPhrases splits query into words (letters, digits and the
// punctuation inside names such as "ether.fi" or "0x") and returns every run
// of up to maxPhraseTokens consecutive words except the whole query.
func queryPhrases(query string) []string {
	words := strings.FieldsFunc(query, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`,;:!?"()[]{}<>`, r)
	})
	for i, w := range words {
		words[i] = strings.Trim(w, `.'-_/`)
	}
	kept := words[:0]
	for _, w := range words {
		if w != "" {
			kept = append(kept, w)
		}
	}
	words = kept
	if len(words) > maxQueryTokens {
		words = words[:maxQueryTokens]
	}
	var out []string
	seen := map[string]bool{strings.ToLower(strings.Join(words, " ")): true}
	for size := min(maxPhraseTokens, len(words)); size >= 1; size-- {
		for i := 0; i+size <= len(words); i++ {
			p := strings.Join(words[i:i+size], " ")
			if k := strings.ToLower(p); !seen[k] {
				seen[k] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// linkEntities returns the entities query names: by its whole text (exact,
// prefix or strong fuzzy match), by any run of its words (exact matches
// only, words that are English stop words excluded), and the entities
// related to those through relationships with search_expand, in either
// direction. One statement.
func linkEntities(ctx context.Context, idb bun.IDB, query string) ([]linkedEntity, error) {
	var rows []linkedEntity
	if err := linkQuery(idb, query).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("error linking search query to entities: %w", err)
	}
	return rows, nil
}

// linkQuery is linkEntities' statement.
func linkQuery(idb bun.IDB, query string) *bun.RawQuery {
	long := utf8.RuneCountInString(query) >= minFuzzyRunes
	fuzzyMin := 0.0
	if long {
		fuzzyMin = linkFuzzyMinSimilarity
	}
	phrases := queryPhrases(query)
	if phrases == nil {
		phrases = []string{}
	}
	return idb.NewRaw(`
		WITH whole AS (`+nameMatchSQL("norm_text(?0)", false, fuzzyMin)+`
		), part AS (
			SELECT en.entity_id, en.kind, en.value,
			       CASE en.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END AS rank
			FROM entity_names en
			WHERE en.norm = ANY (ARRAY(
				SELECT norm_text(p) FROM unnest(?1::text[]) AS p
				WHERE numnode(plainto_tsquery('english', p)) > 0))
		), m AS (
			-- The whole query links by its strongest class of match only:
			-- exact names if any, else prefixes, else close fuzzy matches
			-- (and those only when no part of the query names an entity).
			SELECT entity_id, kind, rank, true AS whole FROM whole
			WHERE CASE WHEN rank <= 2 THEN 0 WHEN rank <= 4 THEN 1 ELSE 2 END =
			      (SELECT min(CASE WHEN rank <= 2 THEN 0 WHEN rank <= 4 THEN 1 ELSE 2 END) FROM whole)
			  AND (rank < 5 OR NOT EXISTS (SELECT 1 FROM part))
			UNION ALL
			SELECT entity_id, kind, rank, false FROM part
		), best AS (
			SELECT DISTINCT ON (m.entity_id) m.* FROM m
			ORDER BY m.entity_id, m.whole DESC, m.rank
		), linked AS (
			-- Popularity by primary key per candidate (a handful), never a
			-- scan of entities.
			SELECT b.* FROM best b
			ORDER BY b.whole DESC, b.rank, (SELECT e.event_count FROM entities e WHERE e.id = b.entity_id) DESC, b.entity_id
			LIMIT ?2
		), related AS (
			SELECT DISTINCT ON (x.entity_id) x.entity_id, x.kind, x.rank, x.whole
			FROM (
				SELECT r.target_entity_id AS entity_id, l.kind, l.rank, l.whole
				FROM linked l JOIN relationships r ON r.source_entity_id = l.entity_id
				WHERE r.search_expand AND r.status = 'active'
				UNION ALL
				SELECT r.source_entity_id, l.kind, l.rank, l.whole
				FROM linked l JOIN relationships r ON r.target_entity_id = l.entity_id
				WHERE r.search_expand AND r.status = 'active'
			) x
			WHERE x.entity_id NOT IN (SELECT entity_id FROM linked)
			ORDER BY x.entity_id, x.whole DESC, x.rank
		)
		SELECT entity_id, kind, rank, whole, false AS related FROM linked
		UNION ALL
		(SELECT r.entity_id, r.kind, r.rank, r.whole, true FROM related r
		 ORDER BY r.whole DESC, r.rank, (SELECT e.event_count FROM entities e WHERE e.id = r.entity_id) DESC, r.entity_id
		 LIMIT ?3)`,
		query, pgdialect.Array(phrases), maxLinkedEntities, maxRelatedEntities)
}

// SearchEvents ranks events since since for query: full-text relevance,
// entity linking and relationship expansion. Results are strongest first,
// recency breaking ties.
//
// Channels, strongest first (see EventMatch.MatchRank for the bands):
//   - entity: events owned by (or, ranked a little lower, involving) an
//     entity the whole query names: exactly, by alias, or, when nothing
//     matches exactly, by prefix or else by a close fuzzy match; within the
//     band, events whose text also matches rank higher.
//   - text: full-text relevance (ts_rank_cd over the weighted events.search
//     vector: title A, summary B, bullets C, evidence D) of events holding
//     every word of the query (websearch_to_tsquery), then of those holding
//     some of its words, among the textCandidates most recent matches of
//     each (see textCandidatesSQL), so full text never ranks the whole
//     table.
//     Events of an entity named by part of the query that hold every word
//     rank first in this band.
//   - entity (part of the query): other events of an entity named exactly
//     by a run of the query's words, below text matches.
//   - related_entity: events of entities related to a linked entity through
//     a relationship with search_expand, in either direction (a foundation's
//     query finds its project's events), below direct matches.
//
// Each event appears once, with its strongest channel; equal ranks are
// ordered by latest evidence time, newest first, then id. since bounds every
// channel. limit <= 0 means cryptointel.SearchEventsFirst.Default.
//
// Returns EINVALID when query is empty or only whitespace. Two statements,
// whatever the limit.
func SearchEvents(ctx context.Context, idb bun.IDB, query string, since time.Time, limit int) ([]cryptointel.EventMatch, error) {
	query = cleanName(query)
	if query == "" {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgQueryRequired}
	}
	if limit <= 0 {
		limit = cryptointel.SearchEventsFirst.Default
	}
	links, err := linkEntities(ctx, idb, query)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		ID               int64     `bun:"id"`
		LatestEvidenceAt time.Time `bun:"latest_evidence_at"`
		Rank             float64   `bun:"rank"`
		Via              string    `bun:"via"`
		Type             string    `bun:"type"`
		EntityID         int64     `bun:"entity_id"`
	}
	if err := searchQuery(idb, query, links, since, limit).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("error searching events: %w", err)
	}
	out := make([]cryptointel.EventMatch, 0, len(rows))
	for _, r := range rows {
		out = append(out, cryptointel.EventMatch{
			EventID:          r.ID,
			MatchedVia:       r.Via,
			MatchType:        r.Type,
			MatchRank:        r.Rank,
			EntityID:         r.EntityID,
			LatestEvidenceAt: r.LatestEvidenceAt,
		})
	}
	return out, nil
}

// Link bands passed to the ranking statement.
const (
	bandWhole   = "whole"   // the whole query names the entity
	bandPart    = "part"    // a run of the query's words names the entity
	bandRelated = "related" // related to a linked entity
)

// searchQuery is SearchEvents' ranking statement for query and its linked
// entities.
//
// Ranks (lower is stronger), with q the text quality in [0, 1): q =
// ts_rank_cd(search, every-word query, 32) when the event holds every word
// (a title hit alone gives 0.5, an evidence-only hit about 0.1), half of
// ts_rank_cd(search, any-word query, 32) when it holds only some, else 0;
// "role" is 0 for an owner and 0.1 for a participant; k the name-match rank
// (0 canonical, 1 display name, 2 alias, 3 prefix, 5–7 fuzzy):
//
//	entity, whole query      0.08·k + 0.3·(1−q) + role          [0, 1)
//	entity, part + all words 1.0 + 0.1·k + 0.5·(1−q) + role     [1, 1.9)
//	text, all words          1.2 + 0.5·(1−q)                    [1.2, 1.7]
//	entity, part             2.0 + 0.1·k + role                 [2, 2.3]
//	related_entity           2.5 + 0.1·k (+0.2 from a part) + 0.3·(1−q) + role   [2.5, 3.5)
//	text, some words         3.5 + 0.4·(1−q)                    (3.5, 3.9]
//
// When the whole query names an entity exactly, text matches rank after the
// related-entity band: all words 3.5 + 0.5·(1−q), some words 4.0 + 0.4·(1−q).
func searchQuery(idb bun.IDB, query string, links []linkedEntity, since time.Time, limit int) *bun.RawQuery {
	// Per-entity candidates: enough to fill the page from one entity.
	perEntity := max(2*limit, 20)
	ids := make([]int64, 0, len(links))
	bases := make([]float64, 0, len(links))
	bands := make([]string, 0, len(links))
	vias := make([]string, 0, len(links))
	types := make([]string, 0, len(links))
	for _, l := range links {
		k := float64(min(l.Rank, 7))
		switch {
		case l.Related:
			base := 2.5 + 0.1*k
			if !l.Whole {
				base += 0.2
			}
			bases, bands = append(bases, base), append(bands, bandRelated)
			vias, types = append(vias, cryptointel.MatchedViaRelatedEntity), append(types, cryptointel.MatchTypeExpansion)
		case l.Whole:
			bases, bands = append(bases, 0.08*k), append(bands, bandWhole)
			vias, types = append(vias, cryptointel.MatchedViaEntity), append(types, linkMatchType(l))
		default:
			bases, bands = append(bases, 0.1*min(k, 2)), append(bands, bandPart)
			vias, types = append(vias, cryptointel.MatchedViaEntity), append(types, linkMatchType(l))
		}
		ids = append(ids, l.EntityID)
	}
	// When the whole query names several entities (a shared ticker), their
	// events are interleaved: each entity's n-th event ranks 0.02·(n−1)
	// lower, its own rank scaled into the step, so every candidate shows
	// on the first page.
	finalRank := "rank"
	wholeLinks := 0
	for _, b := range bands {
		if b == bandWhole {
			wholeLinks++
		}
	}
	if wholeLinks > 1 {
		finalRank = `CASE WHEN via = 'entity' AND rank < 1
		                  THEN 0.02 * (row_number() OVER (PARTITION BY entity_id, rank < 1 ORDER BY rank, latest_evidence_at DESC, id DESC) - 1) + 0.02 * rank
		                  ELSE rank END`
	}
	// When the whole query names an entity exactly, the query is that
	// entity: text matches outside its events (and its related entities')
	// come after them.
	textBase, someBase := "1.2", "3.5"
	for _, l := range links {
		if l.Whole && !l.Related && l.Rank <= cryptointel.RankExactAlias {
			textBase, someBase = "3.5", "4.0"
		}
	}
	all := `websearch_to_tsquery('english', ?0)`
	// Any word: the plain query's ANDs turned into ORs. Only worth a second
	// candidate set when the query has several words.
	anyWord := `replace(plainto_tsquery('english', ?0)::text, '&', '|')::tsquery`
	textSets := textCandidatesSQL("text_all", all)
	textUnion := "SELECT id FROM text_all"
	anyRank := "0"
	if len(queryPhrases(query)) > 0 {
		textSets += ",\n" + textCandidatesSQL("text_any", anyWord)
		textUnion += " UNION SELECT id FROM text_any"
		anyRank = `CASE WHEN e.search @@ ` + anyWord + ` THEN 0.5 * ts_rank_cd(e.search, ` + anyWord + `, 32) ELSE 0 END`
	}
	return idb.NewRaw(`
		WITH links AS MATERIALIZED (
			SELECT * FROM unnest(?1::bigint[], ?2::float8[], ?3::text[], ?4::text[], ?5::text[])
			       AS l(entity_id, base, band, via, type)
		),
		`+textSets+`,
		text_c AS (`+textUnion+`),
		ent_c AS (
			SELECT x.event_id AS id
			FROM links l CROSS JOIN LATERAL (
				SELECT ee.event_id FROM event_entities ee
				WHERE ee.entity_id = l.entity_id AND ee.latest_evidence_at >= ?6
				ORDER BY ee.latest_evidence_at DESC, ee.event_id DESC
				LIMIT ?8
			) x
		),
		-- Candidates are fetched by primary key and scored once each.
		scored AS MATERIALIZED (
			SELECT s.*, (s.q > 0) AS text_hit
			FROM (
				SELECT e.id, e.latest_evidence_at, e.search @@ `+all+` AS all_hit,
				       CASE WHEN e.search @@ `+all+` THEN ts_rank_cd(e.search, `+all+`, 32)
				            ELSE `+anyRank+` END AS q
				FROM events e
				WHERE e.id = ANY (ARRAY(SELECT id FROM text_c UNION SELECT id FROM ent_c))
			) s
		),
		ranked AS (
			SELECT s.id, s.latest_evidence_at, best.rank, best.via, best.type, best.entity_id
			FROM scored s CROSS JOIN LATERAL (
				SELECT * FROM (
					SELECT CASE WHEN s.all_hit THEN `+textBase+` + 0.5 * (1 - s.q) ELSE `+someBase+` + 0.4 * (1 - s.q) END AS rank,
					       'text' AS via, 'fulltext' AS type, 0::bigint AS entity_id
					WHERE s.text_hit
					UNION ALL
					SELECT CASE
					         WHEN l.band = 'part' AND s.all_hit THEN 1.0 + l.base + 0.5 * (1 - s.q)
					         WHEN l.band = 'part' THEN 2.0 + l.base
					         ELSE l.base + 0.3 * (1 - s.q)
					       END + CASE ee.role WHEN 'owner' THEN 0 ELSE 0.1 END,
					       l.via, l.type, l.entity_id
					FROM event_entities ee JOIN links l ON l.entity_id = ee.entity_id
					WHERE ee.event_id = s.id
				) b
				ORDER BY b.rank, b.entity_id
				LIMIT 1
			) best
		)
		SELECT id, latest_evidence_at, `+finalRank+` AS rank, via, type, entity_id
		FROM ranked
		ORDER BY 3, latest_evidence_at DESC, id DESC
		LIMIT ?9`,
		query, pgdialect.Array(ids), pgdialect.Array(bases), pgdialect.Array(bands), pgdialect.Array(vias), pgdialect.Array(types),
		since, textCandidates, perEntity, limit, recentScan)
}

// textCandidatesSQL returns the CTEs name (with name_new and name_any)
// selecting the ids of the most recent events since ?6 that match the
// tsquery expression tsq, at most ?7 (textCandidates) of them in the usual
// case, reading a bounded number of rows whatever the words.
//
// The planner cannot tell how many events hold all of several words (it
// multiplies their frequencies, and an entity's name words always come
// together), so left to itself it sorted every match of a common pair by
// recency: 14k heap rows and over 100 ms for "XRP Ledger" on a million
// events; and the GIN index's bitmap of a common word alone costs ~10 ms
// (33k entries for "Ethereum") before the first row. So:
//
//  1. name_new walks the newest ?10 (recentScan) events of the window down
//     the recency index and keeps the first ?7 that match. When it finds
//     ?7, those are the ?7 newest matches and nothing else runs (common
//     words: a few thousand rows).
//  2. Otherwise name_any takes up to ?7+1 matches in any order from the
//     GIN index (a bitmap scan, cheap for the rare words that get here).
//     When there are no more than ?7 they are all the matches.
//
// The result is the ?7 newest matches, as a full sort would give, except
// when the words match more than ?7 events but fewer than ?7 among the
// newest ?10: then it is the matches among the newest ?10 plus ?7+1 others.
// At most ?10 + ?7+1 rows are read.
func textCandidatesSQL(name, tsq string) string {
	return name + `_new AS MATERIALIZED (
			SELECT r.id FROM (
				SELECT e.id, e.search FROM events e
				WHERE e.latest_evidence_at >= ?6
				ORDER BY e.latest_evidence_at DESC, e.id DESC
				LIMIT ?10
			) r
			WHERE r.search @@ ` + tsq + `
			LIMIT ?7
		),
		` + name + `_any AS MATERIALIZED (
			SELECT e.id FROM events e
			WHERE e.search @@ ` + tsq + ` AND e.latest_evidence_at >= ?6
			  AND (SELECT count(*) FROM ` + name + `_new) < ?7
			LIMIT ?7 + 1
		),
		` + name + ` AS (SELECT id FROM ` + name + `_new UNION SELECT id FROM ` + name + `_any)`
}

// linkMatchType names how the query named a linked entity.
func linkMatchType(l linkedEntity) string {
	switch {
	case l.Rank <= cryptointel.RankExactDisplay:
		return cryptointel.MatchTypeExact
	case l.Rank == cryptointel.RankExactAlias:
		return cryptointel.MatchTypeAlias
	case l.Rank == cryptointel.RankPrefix:
		return cryptointel.MatchTypePrefix
	case l.Rank == cryptointel.RankToken:
		return cryptointel.MatchTypeToken
	case l.Rank == cryptointel.RankSubstring:
		return cryptointel.MatchTypeSubstring
	default:
		return cryptointel.MatchTypeFuzzy
	}
}
