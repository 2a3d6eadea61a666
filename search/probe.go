package search

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cryptointel/cryptointel/wire"
)

// Time buckets of events_search_idx (migration 012): search_buckets names
// an event's ten-minute, hour, day and week buckets, each code the
// bucket's number times four plus its level.
var bucketWidths = [...]int64{600, 3600, 86400, 604800}

// Probe planning (docs/api/search.md, "Candidates").
const (
	// maxGroupCodes bounds the buckets one group of a probe names: GIN
	// walks each named bucket's entry along the word's postings.
	maxGroupCodes = 6
	// maxProbeGroups bounds the groups of a probe, each reaching
	// groupGrowth times as far back as all before it. A conjunction asks
	// as many as a single term: GIN walks the words' postings in a
	// group's buckets whether or not they come together, so its later
	// groups cost more, but at a million events a conjunction cut to two
	// groups lost a tenth of the judged set's recall@10 (paraphrases 0.93
	// to 0.83, several entities 0.86 to 0.50; tests/bench/NOTES.md).
	maxProbeGroups = 4
	groupGrowth    = 4
)

// floorDiv is a/b rounded down.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// bucketCode is the code of level's bucket holding t (search_buckets).
func bucketCode(level int, t time.Time) int32 {
	return int32(floorDiv(t.Unix(), bucketWidths[level])*4) + int32(level)
}

// bucketStart is the start of level's bucket holding t.
func bucketStart(level int, t time.Time) time.Time {
	return time.Unix(floorDiv(t.Unix(), bucketWidths[level])*bucketWidths[level], 0)
}

// bucketCount is how many of level's buckets cover [from, to].
func bucketCount(level int, from, to time.Time) int64 {
	w := bucketWidths[level]
	return floorDiv(to.Unix(), w) - floorDiv(from.Unix(), w) + 1
}

// bucketCodes are the codes of level's buckets covering [from, to],
// newest first.
func bucketCodes(level int, from, to time.Time) []int32 {
	w := bucketWidths[level]
	lo, hi := floorDiv(from.Unix(), w), floorDiv(to.Unix(), w)
	out := make([]int32, 0, max(hi-lo+1, 0))
	for b := hi; b >= lo; b-- {
		out = append(out, int32(b*4)+int32(level))
	}
	return out
}

// codesLiteral writes codes as an int[] literal, NULL (the whole index)
// when nil.
func codesLiteral(codes []int32) *string {
	if codes == nil {
		return nil
	}
	b := make([]byte, 0, 10*len(codes)+2)
	b = append(b, '{')
	for i, c := range codes {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(c), 10)
	}
	s := string(append(b, '}'))
	return &s
}

// probe is one candidate fetch: the newest matches of a tsquery.
type probe struct {
	tsq string
	// stage 1 probes always run; stage 2 probes (each term alone) only
	// when stage 1 found fewer than the matches kept.
	stage int
	// groups are the buckets asked, newest first, until one has found
	// the matches kept; none: the whole index.
	groups []probeGroup
}

// probeGroup is a step of a probe: the matches in some buckets, or of one
// day, older than the buckets of the steps before.
type probeGroup struct {
	codes []int32
	// dayQuery, when set, is the probe's tsquery at one day, asked of
	// events_search_day_idx instead of codes (dayLevel).
	dayQuery string
	before   time.Time
}

// dayLevel is the first bucket level whose groups are asked day by day of
// events_search_day_idx (migration 023): a day or week bucket's entry in
// events_search_idx lists every event of the bucket, which GIN decodes
// whatever the words (14 ms for two words never in one event in three
// week buckets at a million events), where the words' entries of each day
// hold their postings of that day only (0.05–0.2 ms a day). Ten-minute and
// hour buckets list few events and keep the probe's newest steps to the
// time they need.
const dayLevel = 2

// dayQuery is tsq (written by PostgreSQL) at day: each lexeme keyed with
// the day as search_day_lexemes keys an event's words, and each phrase
// operator an &, since the day's keys keep no positions (a probe with a
// phrase checks the event's own vector too: hasPhrase).
func dayQuery(tsq string, day int64) string {
	suffix := "@" + strconv.FormatInt(day, 10)
	var b strings.Builder
	b.Grow(len(tsq) + 8*len(suffix))
	for i := 0; i < len(tsq); i++ {
		switch c := tsq[i]; c {
		case '\'':
			j := i + 1
			for j < len(tsq) {
				if tsq[j] == '\'' {
					if j+1 < len(tsq) && tsq[j+1] == '\'' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			b.WriteString(tsq[i:j])
			b.WriteString(suffix)
			b.WriteByte('\'')
			i = j
		case '<':
			for i < len(tsq) && tsq[i] != '>' {
				i++
			}
			b.WriteByte('&')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hasPhrase reports whether tsq holds a phrase operator.
func hasPhrase(tsq string) bool {
	return strings.Contains(tsq, "<")
}

// probes plans the candidate fetches (the rarest maxTermProbes terms are
// probed): all of them together and the rarest alone first (stage 1);
// when all together match fewer than k, all but the commonest together
// and each other term alone (stage 2), since an event that lacks a common
// word can still outrank one that holds every word.
func (a *searchAnalysis) probes(since, until time.Time, k int) []probe {
	var (
		qs       []string
		dfs, idf []float64
	)
	for i, t := range a.terms {
		if len(t.Alts) == 0 {
			continue
		}
		// A term whose words no event holds is not probed: it would take
		// a probe from a term that can match (and its IDF is the
		// highest), so 32 such words together found nothing.
		if q, df := a.termQuery(i); q != "" && df > 0 {
			qs, dfs, idf = append(qs, q), append(dfs, df), append(idf, t.IDF)
		}
	}
	// The rarest terms (the highest IDF, the typed words' rarity) weigh
	// most in the score: they are probed.
	order := make([]int, len(qs))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(x, y int) bool { return idf[order[x]] > idf[order[y]] })
	if len(order) > maxTermProbes {
		order = order[:maxTermProbes]
	}
	sq, sdf := make([]string, len(order)), make([]float64, len(order))
	for j, o := range order {
		sq[j], sdf[j] = qs[o], dfs[o]
	}
	var out []probe
	if len(sq) >= 2 {
		// Of three terms or more, all but the commonest together walk the
		// older days for all of them in stage 2 (their matches hold every
		// match of all the terms): all the terms together stop at their
		// newest hours. Three words that never meet walked every day twice
		// (tests/bench/NOTES.md).
		out = append(out, a.planProbe(conjunction(sq), sdf, since, until, k, 1, len(sq) >= 3))
	}
	for j := range sq {
		stage := 2
		if j == 0 {
			stage = 1
		}
		out = append(out, a.planProbe(sq[j], sdf[j:j+1], since, until, k, stage, false))
	}
	if len(sq) >= 3 {
		out = append(out, a.planProbe(conjunction(sq[:len(sq)-1]), sdf[:len(sdf)-1], since, until, k, 2, false))
	}
	return out
}

// conjunction joins term queries with &.
func conjunction(qs []string) string {
	parts := make([]string, len(qs))
	for j, q := range qs {
		parts[j] = "(" + q + ")"
	}
	return strings.Join(parts, " & ")
}

// termQuery is the tsquery a term is probed by, and its words' postings
// together: the words typed (with their forms and the entity's names) when
// those match enough events by themselves — their matches outrank the
// synonyms', and every synonym is one more posting list for the index to
// walk — otherwise the synonyms too.
func (a *searchAnalysis) termQuery(i int) (string, float64) {
	t := a.terms[i]
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

// planProbe plans the probe of tsq whose terms' words have dfs postings
// each. It matches at most as many events as its rarest term: when those
// are few (and the posting lists short) it reads the whole index. Otherwise
// it asks the newest buckets that would hold probeSafety·k matches were
// every match of the rarest term a match of the probe, then, while it has
// found fewer than k, groups of older buckets reaching groupGrowth times as
// far back, up to maxProbeGroups: a probe whose words come together costs
// a few lookups, one whose words seldom do reads further back. Each group
// names the buckets of the finest width (ten minutes, an hour, a day, a
// week) that covers its time in at most maxGroupCodes.
//
// A shallow probe whose first group is of ten-minute or hour buckets asks
// no day (dayLevel).
func (a *searchAnalysis) planProbe(tsq string, dfs []float64, since, until time.Time, k, stage int, shallow bool) probe {
	p := probe{tsq: tsq, stage: stage}
	// The newest time asked: the newest event, or the window's end.
	lastAt := a.lastAt
	if !until.IsZero() && until.Before(lastAt) {
		lastAt = until
	}
	n := math.Max(float64(a.docs), 1)
	most, postings := n, 0.0
	for _, df := range dfs {
		most, postings = math.Min(most, df), postings+df
	}
	if (most <= plainMaxMatches && postings <= plainMaxPostings) || a.lastAt.IsZero() || lastAt.Before(since) {
		return p
	}
	span := math.Max(a.lastAt.Sub(a.firstAt).Seconds(), float64(bucketWidths[0]))
	reach := time.Duration(float64(probeSafety*k) / math.Max(most, 1) * span * float64(time.Second))
	end, before := lastAt, time.Time{}
	for range maxProbeGroups {
		from := end.Add(-reach)
		if from.Before(since) {
			from = since
		}
		last := end
		if !before.IsZero() {
			last = end.Add(-time.Nanosecond)
		}
		level := len(bucketWidths) - 1
		for l := range bucketWidths {
			if bucketCount(l, from, last) <= maxGroupCodes {
				level = l
				break
			}
		}
		start := bucketStart(level, from)
		if level >= dayLevel && shallow && len(p.groups) > 0 && p.groups[0].dayQuery == "" {
			break
		}
		if level >= dayLevel {
			first := start
			if first.Before(since) {
				first = since
			}
			for d := floorDiv(last.Unix(), bucketWidths[2]); d >= floorDiv(first.Unix(), bucketWidths[2]); d-- {
				p.groups = append(p.groups, probeGroup{dayQuery: dayQuery(tsq, d), before: before})
			}
		} else {
			p.groups = append(p.groups, probeGroup{codes: bucketCodes(level, from, last), before: before})
		}
		if !start.After(since) {
			break
		}
		end, before = start, start
		reach = lastAt.Sub(start) * (groupGrowth - 1)
	}
	return p
}

// filterSQL is the search's filters on event e: $4 the end of the window
// (exclusive), $5 a category, $6 signal events only, $7 entities it must
// name; each null (false) when not asked. They filter the rows an index
// found; none of them makes a statement read the table whole.
const filterSQL = `
				  AND ($4::timestamptz IS NULL OR e.latest_evidence_at + '0 s'::interval < $4::timestamptz)
				  AND ($5::text IS NULL OR e.category = $5::text)
				  AND (NOT $6::bool OR e.significance IS NOT NULL)
				  AND ($7::bigint[] IS NULL OR EXISTS (SELECT 1 FROM event_entities fe
				       WHERE fe.event_id = e.id AND fe.entity_id = ANY ($7::bigint[])))`

// groupSQL is the newest $8 matches of probe p in its groups that pass
// the condition written after it, group by group, newest first: the
// nested loop over the groups runs in their order and stops at the limit.
// The probes order and filter by latest_evidence_at + 0 so that no plan
// walks the recency index for them.
const groupSQL = `
			SELECT y.id FROM groups g CROSS JOIN LATERAL (
				(SELECT e.id, e.latest_evidence_at + '0 s'::interval AS t FROM events e
				WHERE g.dq IS NULL AND e.search @@ p.q AND search_buckets(e.latest_evidence_at) && g.b
				  AND e.latest_evidence_at + '0 s'::interval >= $1
				  AND (g.before IS NULL OR e.latest_evidence_at + '0 s'::interval < g.before)` + filterSQL + `
				ORDER BY 2 DESC LIMIT $8)
				UNION ALL
				(SELECT e.id, e.latest_evidence_at + '0 s'::interval AS t FROM events e
				WHERE g.dq IS NOT NULL AND search_day_lexemes(e.search, e.latest_evidence_at) @@ g.dq
				  AND (NOT p.phrase OR ts_match_vq(e.search, p.q))
				  AND e.latest_evidence_at + '0 s'::interval >= $1
				  AND (g.before IS NULL OR e.latest_evidence_at + '0 s'::interval < g.before)` + filterSQL + `
				ORDER BY 2 DESC LIMIT $8)
			) y
			WHERE g.i = p.i`

// wholeSQL is the newest matches of probe p from the whole index since $1,
// when it has no groups.
const wholeSQL = `
			SELECT e.id FROM events e
			WHERE NOT p.grouped AND e.search @@ p.q AND e.latest_evidence_at + '0 s'::interval >= $1` + filterSQL + `
			ORDER BY e.latest_evidence_at + '0 s'::interval DESC`

// probeSQL is the newest $8 matches of probe p: group by group, newest
// first, until $8 are found, or, when it has no groups, from the whole
// index. Only the branch whose gate holds runs.
const probeSQL = groupSQL + `
			UNION ALL (` + wholeSQL + `)
			LIMIT $8`

// searchShape is the shape of a search statement: it holds only the steps
// its probes need. Each shape is prepared and planned once per connection
// (the pools force generic plans, db/db.go); a step that does not run still
// costs its setup at every run, and a search whose entities fill the page
// ran in 0.33 ms instead of 0.41 at a million events without the probes'
// steps.
type searchShape struct {
	// probes: any probes; stage2: any of stage 2.
	probes, stage2 bool
}

// candidateSQL is the search statement of each shape: it fetches the
// candidates and returns each with its time, significance, search vector
// and the linked entities it names (entity id times two, plus one for an
// owner); the service ranks them. Arguments: $1 since, $2 the events kept
// per linked entity, $3 the linked entities; with probes, $8 the matches
// kept per probe, the probes ($9 tsqueries, $10 stages, $11 whether each
// holds a phrase) and their groups ($12 probe, $13 buckets, $14 older
// than, $15 the probe's tsquery at the group's day when the group is a
// day: probeGroup.dayQuery).
//
// Stage 1 probes run first; stage 2 probes only when the first probe (all
// the terms together) found fewer than $8.
var candidateSQL = func() map[searchShape]string {
	out := map[searchShape]string{{}: candidateStatementSQL("", "")}
	for _, stage2 := range []bool{false, true} {
		ctes, ids := probesSQL+`,
	`+stageSQL("1", "true"), "SELECT id FROM s1 UNION "
		if stage2 {
			ctes, ids = ctes+`,
	`+stageSQL("2", "(SELECT count(*) < $8 FROM s1 WHERE s1.i = 1)"), ids+"SELECT id FROM s2 UNION "
		}
		out[searchShape{probes: true, stage2: stage2}] = candidateStatementSQL(ctes+",", ids)
	}
	return out
}()

// probesSQL are the probes and their groups as tables.
const probesSQL = `
	probes AS MATERIALIZED (
		SELECT p.i::int AS i, p.stage, p.q::tsquery AS q, p.phrase,
		       EXISTS (SELECT 1 FROM unnest($12::int[]) x WHERE x = p.i) AS grouped
		FROM unnest($9::text[], $10::int[], $11::bool[]) WITH ORDINALITY AS p(q, stage, phrase, i)
	),
	groups AS MATERIALIZED (
		SELECT g.i, g.b::int[] AS b, g.before, g.dq::tsquery AS dq
		FROM unnest($12::int[], $13::text[], $14::timestamptz[], $15::text[]) AS g(i, b, before, dq)
	)`

// stageSQL defines s<stage>, the matches of the probes of a stage, found
// when gate holds.
func stageSQL(stage, gate string) string {
	return `s` + stage + ` AS MATERIALIZED (
		SELECT p.i, x.id FROM probes p CROSS JOIN LATERAL (` + probeSQL + `) x
		WHERE p.stage = ` + stage + ` AND ` + gate + `)`
}

// filterWalkRows bounds the events a filtered search reads (walkSQL).
const filterWalkRows = 1000

// walkSQL is the search statement of a search filtered by a category or an
// entity: the probes ($9 tsqueries) are matched against the newest
// $10 events that pass the filters, read from the filter's own index (an
// entity's events from event_entities, a category's from
// events_category_idx), each probe keeping its newest $8 matches. The
// probes' index (events_search_idx) knows neither filter: a probe whose
// matches mostly fail it read tens of thousands of rows to keep a few
// (a second for "attacker drains bridge contract" of one entity), where
// the walk costs its bound whatever the words. Matches older than the
// filter's newest $10 events are not found: the filter's own newest
// events, linked entities' events included, still are.
//
// The walk reads the events newest first, one at a time, and each probe
// stops at its $8th match: a probe of common words reads the walk's
// newest events only, and the walk reads no further than its deepest
// probe (the CTE is read as its probes ask for rows, each from its first
// row, in the walk's order).
//
// Of an entity's events the walk reads the ids and the signatures of their
// words (migration 031) from event_entities, from its recency index alone
// when no category filters them (walkShape: the category was a heap fetch
// for each), and each probe looks up only the events whose signature may
// hold its words (walkSignatureSQL): a probe whose words are rare among
// the entity's events read all 1,000 of them, four buffers each, where it
// now reads their signatures and the few events that pass.
var walkSQL = func() map[walkShape]string {
	out := map[walkShape]string{}
	for _, sh := range []walkShape{{entity: true}, {entity: true, category: true}, {entity: true, several: true},
		{entity: true, several: true, category: true}, {category: true}} {
		probes := `
	probes AS MATERIALIZED (
		SELECT p.i::int AS i, p.q::tsquery AS q FROM unnest($9::text[]) WITH ORDINALITY AS p(q, i)
	),`
		match := `
			SELECT w.id FROM walk w WHERE w.search @@ p.q LIMIT $8`
		if sh.entity {
			probes = `
	probes AS MATERIALIZED (
		SELECT p.i::int AS i, p.q::tsquery AS q` + walkSignatureColumns() + `
		FROM unnest($9::text[]) WITH ORDINALITY AS p(q, i)
	),`
			// OFFSET 0 keeps the lookup a subquery, run for each link
			// that passes as the probe asks.
			match = `
			SELECT w.event_id AS id FROM walk w CROSS JOIN LATERAL (
				SELECT e.search FROM events e
				WHERE e.id = w.event_id AND (NOT $6::bool OR e.significance IS NOT NULL)
				OFFSET 0
			) x
			WHERE ` + walkSignatureSQL("w", "p") + ` AND x.search @@ p.q
			LIMIT $8`
		}
		out[sh] = candidateStatementSQL(probes+`
	walk AS MATERIALIZED (`+walkEventsSQL(sh)+`
	),
	s AS MATERIALIZED (
		SELECT p.i, x.id FROM probes p CROSS JOIN LATERAL (`+match+`
		) x
	),`, "SELECT id FROM s UNION ")
	}
	return out
}()

// walkShape is the filters a walk reads its events by: an entity (or
// several), a category or both.
type walkShape struct {
	entity, several, category bool
}

// walkEventsSQL is the walk of shape sh: the newest $10 events passing
// the filters, newest first: a category's with their search vectors, an
// entity's as their links' ids and signatures.
func walkEventsSQL(sh walkShape) string {
	if !sh.entity {
		return `
		SELECT c.id, c.search FROM events c
		WHERE c.category = $5::text AND c.latest_evidence_at >= $1
		  AND ($4::timestamptz IS NULL OR c.latest_evidence_at < $4::timestamptz)
		  AND (NOT $6::bool OR c.significance IS NOT NULL)
		ORDER BY c.latest_evidence_at DESC, c.id DESC
		LIMIT $10`
	}
	category := ""
	if sh.category {
		category = `
				  AND ee.category = $5::text`
	}
	if !sh.several {
		// One entity's links, read in the index's order.
		return `
		SELECT ee.latest_evidence_at, ee.event_id, ee.sig_a, ee.sig_b FROM event_entities ee
		WHERE ee.entity_id = ($7::bigint[])[1] AND ee.latest_evidence_at >= $1
		  AND ($4::timestamptz IS NULL OR ee.latest_evidence_at < $4::timestamptz)` + category + `
		ORDER BY ee.latest_evidence_at DESC, ee.event_id DESC
		LIMIT $10`
	}
	// An event two of the entities name is one event of the walk.
	return `
		SELECT DISTINCT w.latest_evidence_at, w.event_id, w.sig_a, w.sig_b FROM (
			SELECT w.latest_evidence_at, w.event_id, w.sig_a, w.sig_b FROM unnest($7::bigint[]) AS l(entity_id) CROSS JOIN LATERAL (
				SELECT ee.event_id, ee.latest_evidence_at, ee.sig_a, ee.sig_b FROM event_entities ee
				WHERE ee.entity_id = l.entity_id AND ee.latest_evidence_at >= $1
				  AND ($4::timestamptz IS NULL OR ee.latest_evidence_at < $4::timestamptz)` + category + `
				ORDER BY ee.latest_evidence_at DESC, ee.event_id DESC
				LIMIT $10
			) w
			ORDER BY w.latest_evidence_at DESC, w.event_id DESC
			LIMIT $10
		) w
		ORDER BY w.latest_evidence_at DESC, w.event_id DESC`
}

// walkSignatureColumns are a probe's signature test as columns of the
// probes CTE, read once a probe from $11 and $12 (signature.go), which
// hold walkSignatureSlots of each probe in turn: a1 to a8 and b1 to b8,
// the bits each clause of the probe's words sets in the two words of a
// signature, NULL past its clauses.
func walkSignatureColumns() string {
	var b strings.Builder
	for _, c := range []struct{ name, param string }{{"a", "$11"}, {"b", "$12"}} {
		for i := 1; i <= walkSignatureSlots; i++ {
			n := strconv.Itoa(i)
			b.WriteString(",\n\t\t       (" + c.param + "::bigint[])[(p.i::int - 1) * " + strconv.Itoa(walkSignatureSlots) + " + " + n + "] AS " + c.name + n)
		}
	}
	return b.String()
}

// walkSignatureSQL is the signature test of the link w for probe p
// (walkSignatureColumns): the link passes when its signature holds every
// bit of one of the probe's clauses, or it has none (a clause of no bits
// passes every link). A NULL clause passes nothing.
func walkSignatureSQL(w, p string) string {
	var b strings.Builder
	b.WriteString("(" + w + ".sig_a IS NULL")
	for i := 1; i <= walkSignatureSlots; i++ {
		a, bb := p+".a"+strconv.Itoa(i), p+".b"+strconv.Itoa(i)
		b.WriteString("\n\t\t\t\tOR (" + w + ".sig_a & " + a + " = " + a + " AND " + w + ".sig_b & " + bb + " = " + bb + ")")
	}
	b.WriteString(")")
	return b.String()
}

// candidateStatementSQL is the search statement whose probes' matches are
// found by the CTEs ctes and listed by ids (both empty without probes).
func candidateStatementSQL(ctes, ids string) string {
	return `
	WITH ` + ctes + `
	ent AS (
		SELECT x.event_id AS id
		FROM unnest($3::bigint[] || coalesce($7::bigint[], '{}')) AS l(entity_id) CROSS JOIN LATERAL (
			SELECT ee.event_id FROM event_entities ee
			WHERE ee.entity_id = l.entity_id AND ee.latest_evidence_at >= $1
			  AND ($4::timestamptz IS NULL OR ee.latest_evidence_at < $4::timestamptz)
			ORDER BY ee.latest_evidence_at DESC, ee.event_id DESC
			LIMIT $2
		) x
	)
	SELECT e.id, e.latest_evidence_at, coalesce(e.significance, 0), e.search,
	       ARRAY(SELECT ee.entity_id * 2 + (ee.role = 'owner')::int FROM event_entities ee
	             WHERE ee.event_id = e.id ORDER BY ee.role, ee.entity_id),
	       e.title, e.category
	FROM events e
	WHERE e.id = ANY (ARRAY(` + ids + `SELECT id FROM ent))
	  AND e.latest_evidence_at >= $1` + filterSQL
}

// searchFilters are a search's filters as the search statement takes
// them (filterSQL).
type searchFilters struct {
	until    time.Time
	category string
	signal   bool
	entities []int64
}

// args are the filters' arguments, $4 to $7.
func (f searchFilters) args() []any {
	var until *time.Time
	if !f.until.IsZero() {
		until = &f.until
	}
	var cat *string
	if f.category != "" {
		cat = &f.category
	}
	var ents []int64
	if len(f.entities) > 0 {
		ents = f.entities
	}
	return []any{until, cat, f.signal, ents}
}

// candidateStatement is the search statement of the shape its probes need
// and its arguments, with the links the ranking reads: the candidates of a
// ranking deep enough to show depth events.
func (a *searchAnalysis) candidateStatement(since time.Time, depth int, f searchFilters) (string, []any, []rankLink) {
	k := max(2*depth, 24)
	var ps []probe
	if !a.entityFillsPage(depth) {
		ps = a.probes(since, f.until, k)
	}
	links := a.rankLinks()
	ids := make([]int64, len(links))
	for i, l := range links {
		ids[i] = l.entityID
	}
	args := append([]any{since, max(2*depth, 20), ids}, f.args()...)
	if len(ps) == 0 {
		return candidateSQL[searchShape{}], args, links
	}
	if f.category != "" || len(f.entities) > 0 {
		pq := make([]*string, len(ps))
		for i := range ps {
			pq[i] = &ps[i].tsq
		}
		args = append(args, k, pq, filterWalkRows)
		if len(f.entities) > 0 {
			// Each probe looks up only the events whose words may
			// match it (walkSignatures).
			sa, sb := walkSignatures(pq)
			args = append(args, sa, sb)
		}
		return walkSQL[walkShape{entity: len(f.entities) > 0, several: len(f.entities) > 1, category: f.category != ""}], args, links
	}
	var (
		pq, gb, gd []*string
		pst, gi    []int32
		pph        []bool
		gbefore    = []*time.Time{}
	)
	shape := searchShape{probes: true}
	for i, p := range ps {
		pq, pst, pph = append(pq, &ps[i].tsq), append(pst, int32(p.stage)), append(pph, hasPhrase(p.tsq))
		shape.stage2 = shape.stage2 || p.stage == 2
		for j, g := range p.groups {
			var (
				before *time.Time
				dq     *string
			)
			if !g.before.IsZero() {
				before = &ps[i].groups[j].before
			}
			if g.dayQuery != "" {
				dq = &ps[i].groups[j].dayQuery
			}
			gi, gb, gd, gbefore = append(gi, int32(i+1)), append(gb, codesLiteral(g.codes)), append(gd, dq), append(gbefore, before)
		}
	}
	args = append(args, k, pq, pst, pph, wire.NonNil(gi), wire.NonNil(gb), gbefore, wire.NonNil(gd))
	return candidateSQL[shape], args, links
}

// rankLinks are the links as the ranking reads them: band, term mask,
// strength and match type.
func (a *searchAnalysis) rankLinks() []rankLink {
	out := make([]rankLink, 0, len(a.links))
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
		case l.Rank == RankPrefix || l.Rank == RankToken || l.Rank == RankSubstring:
			s *= linkPrefix
		case l.Rank >= RankFuzzyBase:
			s *= linkFuzzy
		}
		typ := linkMatchType(l)
		if l.Related {
			typ = MatchTypeExpansion
		}
		out = append(out, rankLink{entityID: l.EntityID, band: band, mask: a.masks[i], strength: s, typ: typ})
	}
	return out
}

// fetchCandidates runs the search statement and reads each candidate's
// term frequencies from its search vector.
func (a *searchAnalysis) fetchCandidates(ctx context.Context, q Querier, sql string, args []any) ([]*candidate, error) {
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("error searching events: %w", err)
	}
	defer rows.Close()
	sc := a.scorer
	pos := make([][]byte, len(sc.lexemes))
	var out []*candidate
	binaryVector, described := false, false
	// The candidates and their terms' figures are carved from blocks, and
	// one list of destinations serves every row: a search reads hundreds
	// of candidates.
	const block = 64
	nt := len(a.terms)
	var (
		cs    []candidate
		tfs   []float64
		typed []bool
		vec   pgtype.TSVector
		dst   = make([]any, 7)
	)
	for rows.Next() {
		if !described {
			// The format is known once a row came: a statement that failed
			// before its first (a connection lost after it was sent)
			// describes no columns, and says why in rows.Err.
			binaryVector, described = rows.FieldDescriptions()[3].Format == pgtype.BinaryFormatCode, true
		}
		if len(cs) == 0 {
			cs, tfs, typed = make([]candidate, block), make([]float64, block*nt), make([]bool, block*nt)
		}
		c := &cs[0]
		cs = cs[1:]
		c.tf, tfs = tfs[:nt:nt], tfs[nt:]
		c.typed, typed = typed[:nt:nt], typed[nt:]
		dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6] = &c.id, &c.at, &c.significance, nil, &c.ents, &c.title, &c.category
		if !binaryVector {
			vec = pgtype.TSVector{}
			dst[3] = &vec
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("error scanning search candidates: %w", err)
		}
		if binaryVector {
			if raw := rows.RawValues()[3]; raw != nil {
				if err := sc.vectorPositions(raw, pos); err != nil {
					return nil, fmt.Errorf("error reading event %d's search vector: %w", c.id, err)
				}
			} else {
				clear(pos)
			}
		} else {
			sc.textPositions(vec, pos)
		}
		for i := range sc.alts {
			alt := &sc.alts[i]
			if f := altFrequency(alt, pos); f > 0 {
				c.tf[alt.term] += alt.weight * f
				if !alt.syn {
					c.typed[alt.term] = true
				}
			}
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error searching events: %w", err)
	}
	return out, nil
}
