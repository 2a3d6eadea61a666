package search

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/wire"
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

	// probeSafety sizes a probe's first buckets to hold this many times
	// the matches it keeps, so an uneven rate still fills them.
	probeSafety = 2
	// plainMaxMatches and plainMaxPostings: a probe that matches at most
	// this many events, whose words' posting lists together hold at most
	// this many entries, is fetched whole from the index (no buckets):
	// cheaper than the buckets that would hold its few matches.
	plainMaxMatches  = 400
	plainMaxPostings = 8000

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
// query was read (SearchResult). See docs/api/search.md:
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
//     newest matches of the terms together and of the rarest alone (of
//     the others only when together they match too few), each fetched
//     from events_search_idx group of time buckets by group, newest first,
//     the first group sized by the terms' document frequency (or whole,
//     for a rare term), so they cost what the matches cost;
//   - each candidate is scored in the service from its search vector by
//     BM25 over the terms (IDF from search_terms, term frequency weighted
//     title 1, summary 0.5, bullets 0.25, evidence 0.1, saturated by k1),
//     a term also matching through an entity link, times the recency and
//     significance boosts.
//
// limit <= 0 means cryptointel.SearchEventsFirst.Default. Two statements,
// whatever the limit: the analysis and the search statement (one when
// a Memo kept the analysis).
//
// Returns EINVALID when the query is empty, longer than
// cryptointel.SearchQueryMaxRunes, has more than SearchQueryMaxWords words,
// no words at all, only time or question words, or only stop words and
// names no entity.
func SearchEvents(ctx context.Context, q Querier, text string, since time.Time, limit int) (*SearchResult, error) {
	return searchEvents(ctx, q, nil, 0, text, SearchOptions{Since: since, Limit: limit})
}

// SearchEventsWith is SearchEvents with the options: a window, filters,
// the sort, paging, collapsing and facets (SearchOptions).
//
// Returns EINVALID, beside SearchEvents' refusals, for an unknown sort or
// surface, a window that ends before it starts, or time words that leave
// the window empty.
func SearchEventsWith(ctx context.Context, q Querier, text string, o SearchOptions) (*SearchResult, error) {
	return searchEvents(ctx, q, nil, 0, text, o)
}

// CheckSearchOptions returns EINVALID for options no search can take: an
// unknown sort or surface, a window that ends before it starts.
func CheckSearchOptions(o SearchOptions) error {
	switch o.Sort {
	case "", SearchSortRelevance, SearchSortRecency:
	default:
		return &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgSearchSort}
	}
	switch o.Surface {
	case "", SearchSurfaceRadar, SearchSurfaceSignal:
	default:
		return &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgSearchSurface}
	}
	if !o.Until.IsZero() && !o.Until.After(o.Since) {
		return &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgSearchRange}
	}
	return nil
}

// searchEvents is SearchEventsWith, reading and keeping the query's
// analysis in memo for content version version when both are set.
func searchEvents(ctx context.Context, q Querier, memo *Memo, version int64, text string, o SearchOptions) (*SearchResult, error) {
	if err := CheckSearchOptions(o); err != nil {
		return nil, err
	}
	limit := o.Limit
	if limit <= 0 {
		limit = cryptointel.SearchEventsFirst.Default
	}
	offset := min(max(o.Offset, 0), cryptointel.SearchMaxDepth)
	a := memo.get(version, text)
	if a == nil {
		sq, err := parseSearchQuery(text)
		if err != nil {
			return nil, err
		}
		if a, err = analyzeSearch(ctx, q, sq); err != nil {
			return nil, err
		}
		memo.put(version, text, a)
	}
	if len(a.terms) == 0 && len(a.links) == 0 {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgQueryOnlyStopWords}
	}
	now := o.Now
	if now.IsZero() {
		now = a.lastAt
	}
	if now.IsZero() {
		now = time.Now()
	}
	win, err := a.q.Read.window(now, o.Since, o.Until, o.SinceDefault)
	if err != nil {
		return nil, err
	}
	f := searchFilters{until: win.until, category: o.Category, signal: o.Surface == SearchSurfaceSignal, entities: o.EntityIDs}
	sql, args, links := a.candidateStatement(win.since, offset+limit, f)
	cands, err := a.fetchCandidates(ctx, q, sql, args)
	if err != nil {
		return nil, err
	}
	ro := rankOptions{limit: limit, offset: offset, afterID: o.AfterID, recencySort: o.Sort == SearchSortRecency,
		now: now, preferNewer: win.recency, history: win.history, collapse: !o.NoCollapse, facets: o.Facets,
		scheduledFrom: win.scheduledFrom, scheduledTo: win.scheduledTo}
	if o.Category == "" {
		ro.category = a.q.Read.Category
	}
	rk := a.rank(cands, links, ro)
	res := &SearchResult{Query: a.q.Text, Matches: rk.page, Terms: make([]SearchTerm, 0, len(a.terms)), UnmatchedTerms: []string{},
		Dropped: append([]SearchDropped{}, a.q.Read.Dropped...), Sort: SearchSortRelevance,
		Offset: rk.offset, More: rk.more && rk.offset+len(rk.page) < cryptointel.SearchMaxDepth, Facets: rk.facets}
	if ro.recencySort {
		res.Sort = SearchSortRecency
	}
	for _, d := range a.dropped {
		res.Dropped = append(res.Dropped, SearchDropped{Text: d, Reason: DroppedStopWord})
	}
	res.Filters = append(append([]SearchFilter{}, win.filters...), o.Filters...)
	if ro.category != "" {
		res.Filters = append(res.Filters, SearchFilter{Name: SearchFilterCategoryPreference, Value: ro.category,
			Source: SearchSourceQuery, Text: a.q.Read.CategoryText})
	}
	for i, t := range a.terms {
		st := a.report(t)
		st.Matched = rk.matched&(1<<i) != 0
		if !st.Matched {
			res.UnmatchedTerms = append(res.UnmatchedTerms, t.Text)
		}
		res.Terms = append(res.Terms, st)
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
	// scorer reads the terms' frequencies from candidates' vectors.
	scorer *scorer
	// dropped are the query's terms of stop words only.
	dropped []string
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
		WITH whole_exact AS (` + nameMatchSQL("norm_text($1::text)") + `
			UNION ALL` + nameMatchSQL("norm_text($4::text)") + `
		), part_exact AS (
			SELECT en.entity_id, en.kind, en.value, p.i::int AS pidx,
			       CASE en.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END AS rank
			FROM unnest($2::text[]) WITH ORDINALITY AS p(t, i)
			JOIN entity_names en ON en.norm = norm_text(p.t)
			WHERE numnode(plainto_tsquery('english', p.t)) > 0
		), part_fuzzy AS (
			-- A single word that no event holds, no name matches
			-- exactly and the thesaurus does not list ($5) is a
			-- misspelt name when one is close enough: "Solanna
			-- outage", but not "raised money" (Monero).
			SELECT f.entity_id, f.kind, f.value, p.i::int AS pidx, 7 AS rank
			FROM unnest($2::text[]) WITH ORDINALITY AS p(t, i)
			CROSS JOIN LATERAL (
				SELECT en.entity_id, en.kind, en.value, similarity(en.norm, norm_text(p.t)) AS sim
				FROM entity_names en WHERE en.norm % norm_text(p.t)
				ORDER BY 4 DESC, en.entity_id LIMIT 1
			) f
			WHERE char_length(p.t) >= 5 AND strpos(p.t, ' ') = 0 AND f.sim >= ` + f64(linkPartFuzzyMinSimilarity) + `
			  AND p.t <> ALL ($5::text[])
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
	if utf8.RuneCountInString(sq.Whole) >= MinFuzzyRunes && len(sq.Words) <= maxFuzzyWholeWords {
		sql = analyzeFuzzySQL
	}
	whole := sq.Whole
	if utf8.RuneCountInString(whole) > maxNameRunes {
		whole = string([]rune(whole)[:maxNameRunes])
	}
	var known []string
	for _, p := range phrases {
		if searchThesaurus.knows(p) {
			known = append(known, p)
		}
	}
	return sql, []any{whole, wire.NonNil(phrases), wire.NonNil(alts), strings.Join(sq.Words, " "), wire.NonNil(known)}
}

// lostToStopWords reports whether a thesaurus phrase searched as a synonym
// keeps a single word once the stemmer drops its stop words: "goes down"
// would search "goes" alone and find "mainnet goes live", so such a
// phrase is not searched (the words typed always are). A dropped single
// letter names a class and leaves the phrase its meaning: "Series A"
// searches "series".
func lostToStopWords(alt searchAlt, stems map[string]rankedAlt) bool {
	s, ok := stems[strings.ToLower(alt.Text)]
	if !ok || strings.Count(s.TSQ, "'") > 2 {
		return false
	}
	words := 0
	for _, w := range queryWords(alt.Text) {
		if utf8.RuneCountInString(w) > 1 {
			words++
		}
	}
	return words > 1
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
			if alt.Weight != weightTyped && !typedElsewhere[thesaurusKey(queryWords(alt.Text))] && !lostToStopWords(alt, stems) {
				add(alt)
			}
		}
		if len(rt.Alts) == 0 && entityNames[i] == nil {
			a.dropped = append(a.dropped, st.Text)
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
	a.scorer = newScorer(a.terms)
	return a, nil
}

// report is term t as SearchTerm (Matched is set later).
func (a *searchAnalysis) report(t rankedTerm) SearchTerm {
	out := SearchTerm{Text: t.Text, Expansions: []string{}, DocumentFrequency: int64(t.DF)}
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
		if l.Whole && !l.Related && l.Rank <= RankExactAlias {
			events += l.Events
		}
	}
	return events >= int64(entityFillFactor*limit)
}

// Link bands of the ranking.
const (
	bandWhole   = "whole"   // the whole query names the entity
	bandPart    = "part"    // a run of the query's words names the entity
	bandRelated = "related" // related to a linked entity
)

// f64 writes a tuning constant into SQL text.
func f64(v float64) string { return fmt.Sprintf("%g", v) }

// linkMatchType names how the query named a linked entity.
func linkMatchType(l linkedEntity) string {
	switch {
	case l.Rank <= RankExactDisplay:
		return MatchTypeExact
	case l.Rank == RankExactAlias:
		return MatchTypeAlias
	case l.Rank == RankPrefix:
		return MatchTypePrefix
	case l.Rank == RankToken:
		return MatchTypeToken
	case l.Rank == RankSubstring:
		return MatchTypeSubstring
	default:
		return MatchTypeFuzzy
	}
}
