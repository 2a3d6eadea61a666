package db

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
)

// Search tuning (docs/api/search.md explains each).
const (
	// maxLinkedEntities bounds the entities a query is linked to.
	maxLinkedEntities = 10
	// maxRelatedEntities bounds the entities reached by expansion.
	maxRelatedEntities = 10
	// maxQueryTokens bounds the query words considered for entity linking.
	maxQueryTokens = 12
	// maxPhraseTokens is the longest run of query words matched against
	// entity names.
	maxPhraseTokens = 4
	// linkPartFuzzyMinSimilarity is the trigram similarity a word no event
	// holds needs to a name to link that name.
	linkPartFuzzyMinSimilarity = 0.4
	// maxFuzzyWholeWords is the most words a query may have for the whole
	// of it to be linked by trigram similarity (a misspelt name).
	maxFuzzyWholeWords = 3
	// entityFillFactor: when the entities the whole query names exactly
	// have this many times the page in events, the terms are not probed.
	entityFillFactor = 10
	// maxTermProbes bounds the terms whose newest matches are fetched
	// (the rarest are chosen); every term still counts in the score.
	maxTermProbes = 4

	// bucketSeconds is the width of search_bucket's time slices
	// (migration 009).
	bucketSeconds = 600
	// probeSafety asks a bucket range for this many times the matches a
	// probe keeps, so an uneven rate still fills it.
	probeSafety = 2
	// plainMaxMatches and plainMaxPostings: a probe expected to match at
	// most this many events, whose words' posting lists together hold at
	// most this many entries, is fetched whole from the index (no bucket
	// range): cheaper than a range that would hold its few matches.
	plainMaxMatches  = 400
	plainMaxPostings = 8000
	// fallbackMaxMatches and fallbackMaxPostings: when a bucket range
	// found fewer matches than wanted (the words are rare lately), the
	// whole index is asked if the probe stays within these.
	fallbackMaxMatches  = 1500
	fallbackMaxPostings = 8000
	// maxRangeEvents bounds the events a bucket range may span (GIN reads
	// each of their bucket entries).
	maxRangeEvents = 40000

	// BM25's k1 (term frequency saturation). Its b is 0: an event grows
	// with its evidence posts, and a length normalization would rank a
	// corroborated event below a thin one.
	bm25K1 = 1.2
	// A term's match through an entity link: owner, participant.
	linkOwner       = 1.0
	linkParticipant = 0.8
	// Strength of the entity links by how the query named the entity.
	linkExact   = 1.0
	linkPrefix  = 0.9
	linkFuzzy   = 0.8
	linkRelated = 0.5
	// Boosts: recency (up to +recencyBoost, halving every recencyHalfLife)
	// and significance (up to +significanceBoost at 10).
	recencyBoost      = 0.1
	recencyHalfLife   = 3 * 24 * time.Hour
	significanceBoost = 0.1
)

// linkedEntity is an entity a search query names, or one related to it.
type linkedEntity struct {
	EntityID int64
	Kind     string
	Rank     int
	Whole    bool
	Related  bool
	// Phrases are the indexes (into searchQuery.phrases) of the runs of
	// words that name it (part links).
	Phrases []int
	// Names are its canonical name and aliases (not for related ones).
	Names []string
	// Events is its popularity (entities.event_count).
	Events int64
}

// SearchEvents ranks events since since for query and reports how the
// query was read (cryptointel.SearchResult). See docs/api/search.md:
//
//   - the query is split into terms (words, or thesaurus phrases such as
//     "went down"), each searching for the word typed, its listed forms and
//     an entity's other names at full weight and its thesaurus synonyms at
//     a lower one;
//   - it is linked to entities (the whole query by exact name or alias,
//     else by prefix, else by a close trigram match; any run of up to four
//     words by exact name or alias) and to their related entities
//     (relationships with search_expand);
//   - candidates are the newest events of each linked entity and the
//     newest matches of each term and of all terms together, each fetched
//     from events_search_idx within a short range of time buckets sized by
//     the term's document frequency (or whole, for a rare term), so they
//     cost what the matches cost;
//   - each candidate is scored by BM25 over the terms (IDF from
//     search_terms, term frequency weighted title 1, summary 0.5, bullets
//     0.25, evidence 0.1, saturated by k1, normalized by length), a term
//     also matching through an entity link, times the recency and
//     significance boosts.
//
// limit <= 0 means cryptointel.SearchEventsFirst.Default. Two statements,
// whatever the limit.
//
// Returns EINVALID when the query is empty, longer than
// cryptointel.SearchQueryMaxRunes, has more than SearchQueryMaxWords words,
// no words at all, or only stop words and names no entity.
func SearchEvents(ctx context.Context, q Querier, text string, since time.Time, limit int) (*cryptointel.SearchResult, error) {
	sq, err := parseSearchQuery(text)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = cryptointel.SearchEventsFirst.Default
	}
	a, err := analyzeSearch(ctx, q, sq)
	if err != nil {
		return nil, err
	}
	if len(a.terms) == 0 && len(a.links) == 0 {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgQueryOnlyStopWords}
	}
	res := &cryptointel.SearchResult{Query: sq.Text, Matches: []cryptointel.EventMatch{}, Terms: []cryptointel.SearchTerm{}, UnmatchedTerms: []string{}}
	for _, t := range a.terms {
		res.Terms = append(res.Terms, a.report(t))
	}
	rows, err := query(ctx, q, rankSQL, a.rankArgs(since, limit)...)
	if err != nil {
		return nil, fmt.Errorf("error searching events: %w", err)
	}
	var matched int64
	var m cryptointel.EventMatch
	var mask int64
	if _, err := pgx.ForEachRow(rows, []any{&m.EventID, &m.LatestEvidenceAt, &m.MatchRank, &m.MatchedVia, &m.MatchType, &m.EntityID, &mask}, func() error {
		m.LatestEvidenceAt = m.LatestEvidenceAt.UTC()
		m.MatchedTerms = a.termTexts(mask)
		matched |= mask
		res.Matches = append(res.Matches, m)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("error searching events: %w", err)
	}
	for i, t := range a.terms {
		res.Terms[i].Matched = matched&(1<<i) != 0
		if !res.Terms[i].Matched {
			res.UnmatchedTerms = append(res.UnmatchedTerms, t.Text)
		}
	}
	return res, nil
}

// rankedTerm is a query term as the ranking statement sees it.
type rankedTerm struct {
	searchTerm
	// Orig is its index in searchQuery.Terms.
	Orig int
	// Alts are its alternatives that hold a searchable word, with their
	// tsquery text and document frequency.
	Alts []rankedAlt
	// DF is the term's estimated document frequency (its alternatives'
	// together), IDF its BM25 inverse document frequency.
	DF  float64
	IDF float64
	// Entities are the names of entities that the term names alone.
	Entities []string
}

// rankedAlt is an alternative with its tsquery.
type rankedAlt struct {
	searchAlt
	TSQ string
	DF  int64
}

// searchAnalysis is what the first statement found for a query.
type searchAnalysis struct {
	q     *searchQuery
	terms []rankedTerm
	links []linkedEntity
	// masks are the term masks of links, in links' order.
	masks []int64
	// corpus statistics.
	docs, lexemes   int64
	firstAt, lastAt time.Time
}

// analyzeSQL is the first statement: ?1 the whole query, $2 its phrases,
// $3 every alternative of every term. It links the query to entities
// (with their names), stems every alternative and the linked entities'
// names with their document frequencies, and reads the corpus statistics:
// rows of kind link, alt and corpus.
func analyzeSQL(fuzzy bool) string {
	fuzzyWhole := ""
	if fuzzy {
		// Only when nothing names an entity exactly or by prefix: the
		// trigram scan is the statement's dearest part.
		fuzzyWhole = fmt.Sprintf(`
			UNION ALL
			(SELECT f.entity_id, f.kind, f.value,
			       CASE WHEN f.sim >= 0.6 THEN 6 WHEN f.sim >= 0.45 THEN 7 ELSE 8 END, 'fuzzy', f.sim
			FROM (
				SELECT en.entity_id, en.kind, en.value, similarity(en.norm, norm_text($1::text))::float8 AS sim
				FROM entity_names en WHERE en.norm %% norm_text($1::text)
			) f
			WHERE f.sim >= CASE WHEN strpos(norm_text($4::text), ' ') = 0 THEN %g ELSE %g END
			  AND (SELECT v FROM unknown_words)
			  AND NOT EXISTS (SELECT 1 FROM whole_exact) AND NOT EXISTS (SELECT 1 FROM part)
			ORDER BY f.sim DESC, f.entity_id
			LIMIT 1)`, fuzzyMinSimilarity, linkFuzzyMinSimilarity)
	}
	return `
		WITH whole_exact AS (` + nameMatchSQL("norm_text($1::text)", false, 0) + `
			UNION ALL` + nameMatchSQL("norm_text($4::text)", false, 0) + `
		), part_exact AS (
			SELECT en.entity_id, en.kind, en.value, p.i::int AS pidx,
			       CASE en.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END AS rank
			FROM unnest($2::text[]) WITH ORDINALITY AS p(t, i)
			JOIN entity_names en ON en.norm = norm_text(p.t)
			WHERE numnode(plainto_tsquery('english', p.t)) > 0
		), part_fuzzy AS (
			-- A single word that no event holds and no name matches
			-- exactly is a misspelt name when one is close enough:
			-- "Solanna outage".
			SELECT f.entity_id, f.kind, f.value, p.i::int AS pidx, 7 AS rank
			FROM unnest($2::text[]) WITH ORDINALITY AS p(t, i)
			CROSS JOIN LATERAL (
				SELECT en.entity_id, en.kind, en.value, similarity(en.norm, norm_text(p.t)) AS sim
				FROM entity_names en WHERE en.norm % norm_text(p.t)
				ORDER BY 4 DESC, en.entity_id LIMIT 1
			) f
			WHERE char_length(p.t) >= 5 AND strpos(p.t, ' ') = 0 AND f.sim >= ` + f64(linkPartFuzzyMinSimilarity) + `
			  AND NOT EXISTS (SELECT 1 FROM part_exact x WHERE x.pidx = p.i)
			  AND NOT EXISTS (SELECT 1 FROM unnest(tsvector_to_array(to_tsvector('english', p.t))) x
			                  JOIN search_terms st ON st.term = x WHERE st.df > 0)
		), part AS (
			SELECT * FROM part_exact UNION ALL SELECT * FROM part_fuzzy
		), unknown_words AS (
			-- No word of the query is in any event: a misspelt name is
			-- the likeliest reading, and only then is the whole query
			-- linked by trigram similarity.
			SELECT NOT EXISTS (SELECT 1 FROM unnest(tsvector_to_array(to_tsvector('english', $4::text))) x
			                   JOIN search_terms st ON st.term = x WHERE st.df > 0) AS v
		), whole AS (
			SELECT * FROM whole_exact` + fuzzyWhole + `
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
			SELECT b.* FROM best b
			ORDER BY b.whole DESC, b.rank, (SELECT e.event_count FROM entities e WHERE e.id = b.entity_id) DESC, b.entity_id
			LIMIT ` + fmt.Sprint(maxLinkedEntities) + `
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
		), links AS (
			SELECT entity_id, kind, rank, whole, false AS related FROM linked
			UNION ALL
			(SELECT r.entity_id, r.kind, r.rank, r.whole, true FROM related r
			 ORDER BY r.whole DESC, r.rank, (SELECT e.event_count FROM entities e WHERE e.id = r.entity_id) DESC, r.entity_id
			 LIMIT ` + fmt.Sprint(maxRelatedEntities) + `)
		), names AS (
			SELECT l.entity_id, en.value
			FROM links l JOIN entity_names en ON en.entity_id = l.entity_id
			WHERE NOT l.related AND en.kind <> 'display_name'
		), alts AS (
			SELECT DISTINCT t FROM (SELECT unnest($3::text[]) UNION ALL SELECT value FROM names) a(t)
		)
		SELECT 'link' AS what, l.entity_id, l.kind, l.rank, l.whole, l.related,
		       coalesce((SELECT array_agg(DISTINCT p.pidx) FROM part p WHERE p.entity_id = l.entity_id), '{}') AS pidx,
		       coalesce((SELECT array_agg(n.value ORDER BY n.value) FROM names n WHERE n.entity_id = l.entity_id), '{}') AS names,
		       ''::text AS t, ''::text AS tsq, (SELECT e.event_count FROM entities e WHERE e.id = l.entity_id) AS df,
		       0::bigint AS docs, 0::bigint AS lexemes,
		       NULL::timestamptz AS first_at, NULL::timestamptz AS last_at
		FROM links l
		UNION ALL
		SELECT 'alt', 0, '', 0, false, false, '{}', '{}', a.t, phraseto_tsquery('english', a.t)::text,
		       coalesce((SELECT min(coalesce((SELECT st.df FROM search_terms st WHERE st.term = x), 0))
		                 FROM unnest(tsvector_to_array(to_tsvector('english', a.t))) x), 0),
		       0, 0, NULL, NULL
		FROM alts a
		UNION ALL
		SELECT 'corpus', 0, '', 0, false, false, '{}', '{}', '', '', 0, c.docs, c.lexemes, c.first_at, c.last_at
		FROM search_corpus c`
}

// The analyze statement's two texts (with and without whole-query fuzzy
// linking); fixed, so pgx prepares each once per connection.
var (
	analyzeFuzzySQL = analyzeSQL(true)
	analyzeExactSQL = analyzeSQL(false)
)

// analyzeStatement is the first statement and its arguments for sq.
func analyzeStatement(sq *searchQuery) (string, []any) {
	phrases, _, _ := sq.phrases()
	var alts []string
	for _, t := range sq.Terms {
		for _, a := range t.Alts {
			alts = append(alts, a.Text)
		}
	}
	sql := analyzeExactSQL
	if utf8.RuneCountInString(sq.Text) >= minFuzzyRunes && len(sq.Words) <= maxFuzzyWholeWords {
		sql = analyzeFuzzySQL
	}
	whole := sq.Text
	if utf8.RuneCountInString(whole) > maxNameRunes {
		whole = string([]rune(whole)[:maxNameRunes])
	}
	return sql, []any{whole, nonNilStrings(phrases), nonNilStrings(alts), strings.Join(sq.Words, " ")}
}

// analyzeSearch runs the first statement and builds the ranked terms.
func analyzeSearch(ctx context.Context, q Querier, sq *searchQuery) (*searchAnalysis, error) {
	_, pFirst, pLast := sq.phrases()
	sql, args := analyzeStatement(sq)
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("error analyzing search query: %w", err)
	}
	a := &searchAnalysis{q: sq}
	stems := map[string]rankedAlt{}
	var (
		what, kind, t, tsq string
		id, df, docs, lex  int64
		rank               int
		whole2, related    bool
		pidx               []int32
		names              []string
		firstAt, lastAt    *time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&what, &id, &kind, &rank, &whole2, &related, &pidx, &names, &t, &tsq, &df, &docs, &lex, &firstAt, &lastAt}, func() error {
		switch what {
		case "link":
			l := linkedEntity{EntityID: id, Kind: kind, Rank: rank, Whole: whole2, Related: related, Names: append([]string(nil), names...), Events: df}
			for _, p := range pidx {
				l.Phrases = append(l.Phrases, int(p)-1)
			}
			a.links = append(a.links, l)
		case "alt":
			stems[strings.ToLower(t)] = rankedAlt{TSQ: tsq, DF: df}
		case "corpus":
			a.docs, a.lexemes = docs, lex
			if firstAt != nil && lastAt != nil {
				a.firstAt, a.lastAt = *firstAt, *lastAt
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("error analyzing search query: %w", err)
	}

	// Each link's term mask; entities named by one term lend it their
	// names.
	entityNames := make([][]string, len(sq.Terms))
	for _, l := range a.links {
		var mask int64
		switch {
		case l.Related:
		case l.Whole:
			mask = sq.termMask(0, len(sq.Words)-1)
		default:
			for _, p := range l.Phrases {
				if p >= 0 && p < len(pFirst) {
					mask |= sq.termMask(pFirst[p], pLast[p])
				}
			}
		}
		a.masks = append(a.masks, mask)
		if !l.Related && mask != 0 && mask&(mask-1) == 0 {
			i := 0
			for mask>>i != 1 {
				i++
			}
			entityNames[i] = append(entityNames[i], l.Names...)
		}
	}

	// A synonym that another term types is left to that term: one word of
	// the event must not satisfy two terms.
	typedElsewhere := map[string]bool{}
	for _, st := range sq.Terms {
		typedElsewhere[thesaurusKey(queryWords(st.Text))] = true
	}
	n := math.Max(float64(a.docs), 1)
	for i, st := range sq.Terms {
		rt := rankedTerm{searchTerm: st, Orig: i}
		seen := map[string]bool{}
		add := func(alt searchAlt) {
			s, ok := stems[strings.ToLower(alt.Text)]
			if !ok || s.TSQ == "" || seen[s.TSQ] || len(rt.Alts) >= maxTermAlternatives {
				return
			}
			seen[s.TSQ] = true
			rt.Alts = append(rt.Alts, rankedAlt{searchAlt: alt, TSQ: s.TSQ, DF: s.DF})
			rt.DF += float64(s.DF)
		}
		for _, alt := range st.Alts {
			if alt.Weight == weightTyped {
				add(alt)
			}
		}
		for _, name := range entityNames[i] {
			add(searchAlt{Text: name, Weight: weightTyped})
			rt.Entities = append(rt.Entities, name)
		}
		for _, alt := range st.Alts {
			if alt.Weight != weightTyped && !typedElsewhere[thesaurusKey(queryWords(alt.Text))] {
				add(alt)
			}
		}
		if len(rt.Alts) == 0 && entityNames[i] == nil {
			continue // only stop words
		}
		// The term's rarity is that of the words typed (and of the
		// entity's names); synonyms only stand in when those are absent.
		typedDF := 0.0
		for _, alt := range rt.Alts {
			if alt.Weight == weightTyped {
				typedDF += float64(alt.DF)
			}
		}
		if typedDF > 0 {
			rt.DF = typedDF
		}
		rt.DF = math.Min(rt.DF, n)
		rt.IDF = math.Log(1 + (n-rt.DF+0.5)/(rt.DF+0.5))
		a.terms = append(a.terms, rt)
	}
	// Link masks index sq.Terms; the statement indexes a.terms.
	remap := make([]int, len(sq.Terms))
	for i := range remap {
		remap[i] = -1
	}
	for i, t := range a.terms {
		remap[t.Orig] = i
	}
	for k, m := range a.masks {
		var out int64
		for i := range sq.Terms {
			if m&(1<<i) != 0 && remap[i] >= 0 {
				out |= 1 << remap[i]
			}
		}
		a.masks[k] = out
	}
	return a, nil
}

// report is term t as cryptointel.SearchTerm (Matched is set later).
func (a *searchAnalysis) report(t rankedTerm) cryptointel.SearchTerm {
	out := cryptointel.SearchTerm{Text: t.Text, Expansions: []string{}, DocumentFrequency: int64(t.DF)}
	for _, alt := range t.Alts[min(1, len(t.Alts)):] {
		if !strings.EqualFold(alt.Text, t.Text) {
			out.Expansions = append(out.Expansions, alt.Text)
		}
	}
	return out
}

// termTexts are the texts of the terms in mask.
func (a *searchAnalysis) termTexts(mask int64) []string {
	out := []string{}
	for i, t := range a.terms {
		if mask&(1<<i) != 0 {
			out = append(out, t.Text)
		}
	}
	return out
}

// entityFillsPage reports whether the whole query names entities exactly
// and they have events enough to fill the page many times over: their
// events rank first (tier 0) and text-only matches could only follow them,
// so no term is probed.
func (a *searchAnalysis) entityFillsPage(limit int) bool {
	var events int64
	for _, l := range a.links {
		if l.Whole && !l.Related && l.Rank <= cryptointel.RankExactAlias {
			events += l.Events
		}
	}
	return events >= int64(entityFillFactor*limit)
}

// probe is one candidate fetch of the ranking statement.
type probe struct {
	tsq      string
	lo       *int32
	fallback bool
}

// probes sizes the candidate fetches: the rarest terms' own (up to
// maxTermProbes), and all probed terms together when there are several.
func (a *searchAnalysis) probes(since time.Time, k int) []probe {
	var idx []int
	for i, t := range a.terms {
		if len(t.Alts) > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(x, y int) bool { return a.terms[idx[x]].DF < a.terms[idx[y]].DF })
	if len(idx) > maxTermProbes {
		idx = idx[:maxTermProbes]
	}
	var out []probe
	// A term is probed by its typed words (and forms, and its entity's
	// names) when they match enough events by themselves: their matches
	// outrank the synonyms', and every synonym is one more posting list
	// for the index to walk. Otherwise the synonyms join the probe.
	termQuery := func(t rankedTerm) (string, float64) {
		typed := 0.0
		for _, alt := range t.Alts {
			if alt.Weight == weightTyped {
				typed += float64(alt.DF)
			}
		}
		var parts []string
		postings := 0.0
		for _, alt := range t.Alts {
			if alt.Weight == weightTyped || typed < plainMaxMatches {
				parts = append(parts, "("+alt.TSQ+")")
				postings += float64(alt.DF)
			}
		}
		return strings.Join(parts, " | "), postings
	}
	n := math.Max(float64(a.docs), 1)
	for _, i := range idx {
		// A probe matches every alternative, synonyms included: its
		// expected matches are their postings together.
		q, postings := termQuery(a.terms[i])
		out = append(out, a.sizeProbe(q, math.Min(n, postings), postings, since, k))
	}
	if len(idx) >= 2 {
		parts := make([]string, len(idx))
		est, postings := n, 0.0
		for j, i := range idx {
			q, p := termQuery(a.terms[i])
			parts[j] = "(" + q + ")"
			est = math.Min(est, p)
			postings += p
		}
		// Words of one story come together far more often than
		// independence says; a tenth of the rarest term's matches is
		// the estimate.
		out = append(out, a.sizeProbe(strings.Join(parts, " & "), math.Max(1, est/10), postings, since, k))
	}
	return out
}

// sizeProbe picks how a tsquery expected to match est events, whose words'
// posting lists hold postings entries, is fetched: whole from the index
// when both are small, else within the newest bucket range that should
// hold probeSafety·k matches at the corpus's event rate.
func (a *searchAnalysis) sizeProbe(tsq string, est, postings float64, since time.Time, k int) probe {
	p := probe{tsq: tsq}
	if (est <= plainMaxMatches && postings <= plainMaxPostings) || a.lastAt.IsZero() {
		return p
	}
	n := math.Max(float64(a.docs), 1)
	span := math.Max(1, a.lastAt.Sub(a.firstAt).Seconds()/bucketSeconds)
	rate := math.Max(n/span, 1)
	events := math.Min(float64(probeSafety*k)*n/est, maxRangeEvents)
	buckets := int32(math.Ceil(events / rate))
	lo := int32(a.lastAt.Unix()/bucketSeconds) - buckets
	if s := int32(since.Unix() / bucketSeconds); lo < s {
		lo = s
	}
	p.lo = &lo
	p.fallback = est <= fallbackMaxMatches && postings <= fallbackMaxPostings
	return p
}

// rankArgs are the ranking statement's arguments.
func (a *searchAnalysis) rankArgs(since time.Time, limit int) []any {
	k := max(2*limit, 24)
	var ps []probe
	if !a.entityFillsPage(limit) {
		ps = a.probes(since, k)
	}
	var (
		pq  []string
		plo []*int32
		pfb []bool
	)
	for _, p := range ps {
		pq, plo, pfb = append(pq, p.tsq), append(plo, p.lo), append(pfb, p.fallback)
	}
	var (
		lid   []int64
		lband []string
		lmask []int64
		lstr  []float64
		ltype []string
	)
	for i, l := range a.links {
		band, s := bandPart, linkExact
		switch {
		case l.Related:
			band, s = bandRelated, linkRelated
			if !l.Whole {
				s *= 0.7
			}
		case l.Whole:
			band = bandWhole
		}
		switch {
		case l.Rank == cryptointel.RankPrefix || l.Rank == cryptointel.RankToken || l.Rank == cryptointel.RankSubstring:
			s *= linkPrefix
		case l.Rank >= cryptointel.RankFuzzyBase:
			s *= linkFuzzy
		}
		typ := linkMatchType(l)
		if l.Related {
			typ = cryptointel.MatchTypeExpansion
		}
		lid, lband, lmask, lstr, ltype = append(lid, l.EntityID), append(lband, band), append(lmask, a.masks[i]), append(lstr, s), append(ltype, typ)
	}
	var (
		aq   []string
		at   []int32
		aw   []float64
		asyn []bool
		idf  []float64
	)
	for i, t := range a.terms {
		idf = append(idf, t.IDF)
		for _, alt := range t.Alts {
			aq, at, aw, asyn = append(aq, alt.TSQ), append(at, int32(i)), append(aw, alt.Weight), append(asyn, alt.Weight != weightTyped)
		}
	}
	now := a.lastAt
	if now.IsZero() {
		now = since
	}
	return []any{
		since, limit, k, max(2*limit, 20),
		nonNil(lid), nonNilStrings(lband), nonNil(lmask), nonNilFloats(lstr), nonNilStrings(ltype),
		nonNilStrings(pq), plo, nonNilBools(pfb),
		nonNilStrings(aq), at, nonNilFloats(aw), nonNilBools(asyn), nonNilFloats(idf),
		now,
	}
}

// Link bands passed to the ranking statement.
const (
	bandWhole   = "whole"   // the whole query names the entity
	bandPart    = "part"    // a run of the query's words names the entity
	bandRelated = "related" // related to a linked entity
)

// rankSQL is the ranking statement. Arguments: $1 since, $2 limit, $3 the
// matches kept per probe, $4 the events kept per linked entity; the links
// ($5 entity ids, $6 bands, $7 term masks, $8 strengths, $9 match types);
// the probes ($10 tsqueries, $11 lowest bucket or NULL for the whole index,
// $12 whether a short range falls back to the whole index); the
// alternatives ($13 tsqueries, $14 term index, $15 weights, $16 whether a
// synonym); $17 each term's IDF; $18 the time recency is measured from.
//
// Candidates are fetched by primary key and scored once each. The probes
// order by latest_evidence_at + 0 so that no plan walks the recency index
// for them: a range is answered by events_search_idx alone.
var rankSQL = `
	WITH links AS MATERIALIZED (
		SELECT * FROM unnest($5::bigint[], $6::text[], $7::bigint[], $8::float8[], $9::text[])
		       AS l(entity_id, band, mask, strength, type)
	),
	probes AS MATERIALIZED (
		SELECT p.i, p.q::tsquery AS q, p.lo, p.fb
		FROM unnest($10::text[], $11::int[], $12::bool[]) WITH ORDINALITY AS p(q, lo, fb, i)
	),
	pb AS MATERIALIZED (
		SELECT p.i, x.id FROM probes p CROSS JOIN LATERAL (
			SELECT e.id FROM events e
			WHERE e.search @@ p.q AND search_bucket(e.latest_evidence_at) >= p.lo
			  AND e.latest_evidence_at + '0 s'::interval >= $1
			ORDER BY e.latest_evidence_at + '0 s'::interval DESC
			LIMIT $3
		) x
		WHERE p.lo IS NOT NULL
	),
	pp AS MATERIALIZED (
		SELECT p.i, x.id FROM probes p CROSS JOIN LATERAL (
			SELECT e.id FROM events e
			WHERE e.search @@ p.q AND e.latest_evidence_at + '0 s'::interval >= $1
			ORDER BY e.latest_evidence_at + '0 s'::interval DESC
			LIMIT $3
		) x
		WHERE p.lo IS NULL OR (p.fb AND (SELECT count(*) FROM pb WHERE pb.i = p.i) < $3)
	),
	ent AS (
		SELECT x.event_id AS id
		FROM links l CROSS JOIN LATERAL (
			SELECT ee.event_id FROM event_entities ee
			WHERE ee.entity_id = l.entity_id AND ee.latest_evidence_at >= $1
			ORDER BY ee.latest_evidence_at DESC, ee.event_id DESC
			LIMIT $4
		) x
	),
	cand AS MATERIALIZED (
		SELECT e.id, e.latest_evidence_at, e.significance, e.search
		FROM events e
		WHERE e.id = ANY (ARRAY(SELECT id FROM pb UNION SELECT id FROM pp UNION SELECT id FROM ent))
		  AND e.latest_evidence_at >= $1
	),
	alts AS MATERIALIZED (
		SELECT a.q::tsquery AS q, a.t, a.w, a.syn
		FROM unnest($13::text[], $14::int[], $15::float8[], $16::bool[]) AS a(q, t, w, syn)
	),
	terms AS MATERIALIZED (
		SELECT (t.i - 1)::int AS t, t.idf FROM unnest($17::float8[]) WITH ORDINALITY AS t(idf, i)
	),
	tf AS (
		SELECT h.id, h.t, sum(h.w * h.r) AS tf, bool_or(NOT h.syn) AS typed
		FROM (
			SELECT c.id, a.t, a.w, a.syn, ts_rank_cd('{0.1,0.25,0.5,1}', c.search, a.q, 0) AS r
			FROM cand c JOIN alts a ON c.search @@ a.q
		) h
		GROUP BY h.id, h.t
	),
	lk AS MATERIALIZED (
		SELECT ee.event_id AS id, l.entity_id, l.band, l.mask, l.type,
		       l.strength * CASE ee.role WHEN 'owner' THEN ` + f64(linkOwner) + ` ELSE ` + f64(linkParticipant) + ` END AS s
		FROM cand c JOIN event_entities ee ON ee.event_id = c.id JOIN links l ON l.entity_id = ee.entity_id
	),
	lkb AS MATERIALIZED (
		SELECT DISTINCT ON (lk.id, lk.band) lk.id, lk.band, lk.entity_id, lk.type, lk.s
		FROM lk ORDER BY lk.id, lk.band, lk.s DESC, lk.entity_id
	),
	lkt AS (
		SELECT lk.id, tm.t, max(lk.s) AS ls
		FROM lk JOIN terms tm ON (lk.mask >> tm.t) & 1 = 1
		WHERE lk.band <> 'related'
		GROUP BY lk.id, tm.t
	),
	ct AS (
		SELECT c.id, tm.t, tm.idf, coalesce(lkt.ls, 0) AS ls, coalesce(tf.typed, false) AS typed,
		       coalesce(tf.tf, 0) / (coalesce(tf.tf, 0) + ` + f64(bm25K1) + `) AS bm
		FROM cand c CROSS JOIN terms tm
		LEFT JOIN tf ON tf.id = c.id AND tf.t = tm.t
		LEFT JOIN lkt ON lkt.id = c.id AND lkt.t = tm.t
	),
	sc AS (
		SELECT ct.id,
		       sum(ct.idf * (greatest(ct.bm, ct.ls) + 0.25 * least(ct.bm, ct.ls))) AS base,
		       sum(ct.idf * ct.bm) AS textpart, sum(ct.idf * ct.ls) AS linkpart,
		       bool_or(ct.typed AND ct.bm > 0) AS typed,
		       bit_or(CASE WHEN ct.bm > 0 OR ct.ls > 0 THEN 1::bigint << ct.t ELSE 0 END) AS matched
		FROM ct GROUP BY ct.id
	),
	maxidf AS (SELECT coalesce(max(idf), 1) AS v FROM terms),
	ranked AS (
		SELECT c.id, c.latest_evidence_at, s.matched,
		       w.entity_id AS whole_id, w.type AS whole_type,
		       r.entity_id AS rel_id, r.s AS rel_s,
		       p.entity_id AS part_id, p.type AS part_type,
		       (CASE WHEN coalesce(s.base, 0) > 0 THEN s.base ELSE coalesce(r.s, 0) * (SELECT v FROM maxidf) END + 0.01 * coalesce(w.s, 0))
		         * (1 + ` + f64(recencyBoost) + ` * power(0.5, extract(epoch FROM ($18::timestamptz - c.latest_evidence_at)) / ` + f64(recencyHalfLife.Seconds()) + `))
		         * (1 + ` + f64(significanceBoost) + ` * coalesce(c.significance, 0) / 10) AS score,
		       coalesce(s.textpart, 0) AS textpart, coalesce(s.linkpart, 0) AS linkpart, coalesce(s.typed, false) AS typed
		FROM cand c
		LEFT JOIN sc s ON s.id = c.id
		LEFT JOIN lkb w ON w.id = c.id AND w.band = 'whole'
		LEFT JOIN lkb r ON r.id = c.id AND r.band = 'related'
		LEFT JOIN lkb p ON p.id = c.id AND p.band = 'part'
	),
	tiered AS (
		SELECT rk.*,
		       CASE WHEN rk.whole_id IS NOT NULL THEN 0
		            WHEN NOT EXISTS (SELECT 1 FROM links WHERE band = 'whole') THEN 0
		            WHEN rk.rel_id IS NOT NULL THEN 1 ELSE 2 END AS tier,
		       CASE WHEN rk.whole_id IS NOT NULL
		            THEN row_number() OVER (PARTITION BY rk.whole_id ORDER BY rk.score DESC, rk.latest_evidence_at DESC, rk.id DESC)
		       END AS nth
		FROM ranked rk
		WHERE rk.score > 0
	)
	SELECT t.id, t.latest_evidence_at,
	       (CASE WHEN t.nth IS NOT NULL AND (SELECT count(*) FROM links WHERE band = 'whole') > 1
	             THEN 0.02 * (t.nth - 1) + 0.02 / (1 + t.score)
	             ELSE t.tier + 1 / (1 + t.score) END)::float8 AS rank,
	       CASE WHEN t.whole_id IS NOT NULL THEN 'entity'
	            WHEN t.part_id IS NOT NULL AND t.linkpart >= t.textpart THEN 'entity'
	            WHEN t.textpart > 0 THEN 'text'
	            WHEN t.rel_id IS NOT NULL THEN 'related_entity'
	            ELSE 'entity' END AS via,
	       CASE WHEN t.whole_id IS NOT NULL THEN t.whole_type
	            WHEN t.part_id IS NOT NULL AND t.linkpart >= t.textpart THEN t.part_type
	            WHEN t.textpart > 0 THEN CASE WHEN t.typed THEN 'fulltext' ELSE 'synonym' END
	            WHEN t.rel_id IS NOT NULL THEN 'expansion'
	            ELSE coalesce(t.part_type, 'exact') END AS type,
	       CASE WHEN t.whole_id IS NOT NULL THEN t.whole_id
	            WHEN t.part_id IS NOT NULL AND t.linkpart >= t.textpart THEN t.part_id
	            WHEN t.textpart > 0 THEN 0
	            ELSE coalesce(t.rel_id, t.part_id, 0) END AS entity_id,
	       coalesce(t.matched, 0) AS matched
	FROM tiered t
	ORDER BY 3, t.latest_evidence_at DESC, t.id DESC
	LIMIT $2`

// f64 writes a tuning constant into SQL text.
func f64(v float64) string { return fmt.Sprintf("%g", v) }

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

func nonNilFloats(s []float64) []float64 {
	if s == nil {
		return []float64{}
	}
	return s
}

func nonNilBools(s []bool) []bool {
	if s == nil {
		return []bool{}
	}
	return s
}
