// Package searcheval scores event search against labelled queries: the
// judged sets in tests/testdata, run on the demo data by `make test`
// (tests/search_eval_test.go) and on the benchmark database by `make bench`.
//
// A query is labelled with what makes an event relevant: it involves the
// named entities (any of them, or all with All), belongs to one of the
// categories or subcategories, its text holds one of the Texts, and/or it
// falls in the Window its time words name; every label given must hold.
// The query is searched as /v1/search searches it: its time and question
// words read, one hit per story. A hit stands for the reports folded into
// it (alsoReportedAs), listed right after it. Scores over the top 10:
//
//	recall@10 = |relevant ∩ top 10| / min(|relevant|, 10)
//	MRR       = 1 / rank of the first relevant result (0 if none)
//	nDCG@10   = Σ rel_i / log2(i+1) over the top 10, divided by the same
//	            sum for min(|relevant|, 10) relevant results in a row
package searcheval

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/search"
)

// Query is one labelled query.
type Query struct {
	// Query is the event-search query; Resolve the name to resolve (the
	// older set only). One of them is set.
	Query   string `json:"query,omitempty"`
	Resolve string `json:"resolve,omitempty"`
	// Kind groups queries in the report.
	Kind string `json:"kind"`
	// Entities are canonical names of the relevant entities; All asks for
	// every one of them in the same event.
	Entities []string `json:"entities,omitempty"`
	All      bool     `json:"all,omitempty"`
	// Categories and Subcategories are the relevant classifications.
	Categories    []string `json:"categories,omitempty"`
	Subcategories []string `json:"subcategories,omitempty"`
	// Texts: the event's text holds one of these (plainto_tsquery).
	Texts []string `json:"texts,omitempty"`
	// Must are canonical names of entities at least one of whose events
	// must be in the top 20 (relationship expansion).
	Must []string `json:"must,omitempty"`
	// Window is the time the query asks about, relative to the clock:
	// today, yesterday, this_week (from Monday, UTC) or last_Nd (the last
	// N days).
	Window string `json:"window,omitempty"`
}

// window resolves a Window label against now.
func window(w string, now time.Time) (from, to time.Time, err error) {
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch {
	case w == "":
		return time.Time{}, time.Time{}, nil
	case w == "today":
		return day, day.AddDate(0, 0, 1), nil
	case w == "yesterday":
		return day.AddDate(0, 0, -1), day, nil
	case w == "this_week":
		monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		return monday, monday.AddDate(0, 0, 7), nil
	case strings.HasPrefix(w, "last_") && strings.HasSuffix(w, "d"):
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(w, "last_"), "d"))
		if err == nil && n > 0 {
			return now.AddDate(0, 0, -n), time.Time{}, nil
		}
	}
	return time.Time{}, time.Time{}, fmt.Errorf("unknown window %q", w)
}

// Load reads a judged set.
func Load(path string) ([]Query, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("error reading judged set: %w", err)
	}
	var qs []Query
	if err := json.Unmarshal(raw, &qs); err != nil {
		return nil, fmt.Errorf("error decoding judged set %s: %w", path, err)
	}
	return qs, nil
}

// Scores are one query's scores, or a mean.
type Scores struct {
	Recall, RR, NDCG float64
}

// Score scores a ranked result list: rel[i] tells whether result i is
// relevant, total how many relevant events exist (only min(total, 10)
// matters).
func Score(rel []bool, total int) Scores {
	var s Scores
	ideal := min(total, 10)
	if ideal == 0 {
		return s
	}
	found := 0
	dcg := 0.0
	for i, r := range rel[:min(len(rel), 10)] {
		if r {
			found++
			dcg += 1 / math.Log2(float64(i+2))
			if s.RR == 0 {
				s.RR = 1 / float64(i+1)
			}
		}
	}
	idcg := 0.0
	for i := range ideal {
		idcg += 1 / math.Log2(float64(i+2))
	}
	s.Recall = float64(found) / float64(ideal)
	s.NDCG = dcg / idcg
	return s
}

// Judge tells which of ids are relevant to q among events since since (the
// clock at now), and how many relevant events there are (counted up to 10).
func Judge(ctx context.Context, q db.Querier, ents map[string]int64, jq Query, since, now time.Time, ids []int64) ([]bool, int, error) {
	from, to, err := window(jq.Window, now)
	if err != nil {
		return nil, 0, fmt.Errorf("the label of %q: %w", jq.Query, err)
	}
	if from.After(since) {
		since = from
	}
	var (
		where []string
		args  = []any{since}
	)
	if !to.IsZero() {
		where = append(where, fmt.Sprintf("e.latest_evidence_at < $%d", len(args)+1))
		args = append(args, to)
	}
	add := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if len(jq.Entities) > 0 {
		var eids []int64
		for _, n := range jq.Entities {
			id, ok := ents[n]
			if !ok {
				return nil, 0, fmt.Errorf("unknown entity %q in the label of %q", n, jq.Query)
			}
			eids = append(eids, id)
		}
		if jq.All {
			where = append(where, "(SELECT count(DISTINCT ee.entity_id) FROM event_entities ee WHERE ee.event_id = e.id AND ee.entity_id = ANY("+add(eids)+")) = "+add(len(eids)))
		} else {
			where = append(where, "EXISTS (SELECT 1 FROM event_entities ee WHERE ee.event_id = e.id AND ee.entity_id = ANY("+add(eids)+"))")
		}
	}
	var class []string
	if len(jq.Categories) > 0 {
		class = append(class, "e.category = ANY("+add(jq.Categories)+")")
	}
	if len(jq.Subcategories) > 0 {
		class = append(class, "e.subcategory = ANY("+add(jq.Subcategories)+")")
	}
	if len(class) > 0 {
		where = append(where, "("+strings.Join(class, " OR ")+")")
	}
	if len(jq.Texts) > 0 {
		var texts []string
		for _, t := range jq.Texts {
			texts = append(texts, "e.search @@ plainto_tsquery('english', "+add(t)+")")
		}
		where = append(where, "("+strings.Join(texts, " OR ")+")")
	}
	cond := "e.latest_evidence_at >= $1"
	if len(where) > 0 {
		cond += " AND " + strings.Join(where, " AND ")
	}
	idsArg := add(ids)
	rows, err := q.Query(ctx, `SELECT 'hit', e.id FROM events e WHERE e.id = ANY(`+idsArg+`) AND `+cond+`
		UNION ALL
		SELECT 'total', count(*) FROM (SELECT 1 FROM events e WHERE `+cond+` LIMIT 10) t`, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("error judging %q: %w", jq.Query, err)
	}
	hits := map[int64]bool{}
	total := 0
	var kind string
	var v int64
	if _, err := pgx.ForEachRow(rows, []any{&kind, &v}, func() error {
		if kind == "hit" {
			hits[v] = true
		} else {
			total = int(v)
		}
		return nil
	}); err != nil {
		return nil, 0, fmt.Errorf("error judging %q: %w", jq.Query, err)
	}
	rel := make([]bool, len(ids))
	for i, id := range ids {
		rel[i] = hits[id]
	}
	return rel, total, nil
}

// Result is one query's outcome.
type Result struct {
	Query    Query
	Scores   Scores
	Relevant int
	Err      error
	// Searched are the words searched (the query's time and question
	// words left out); TopMatched the ones the first hit matched, by
	// text, synonym or entity (empty: the first hit holds none of the
	// words that matter); Top the first hit's event id.
	Searched, TopMatched []string
	Top                  int64
}

// Report is a judged set's outcome.
type Report struct {
	Results []Result
	// Mean is over the queries; ByKind over each kind's.
	Mean   Scores
	ByKind map[string]Scores
	Counts map[string]int
}

// Evaluate runs every event query of qs (limit 10, the last 30 days before
// now, the clock at now) on store and scores it. A query the search refuses
// or that has no relevant event is a Result with Err set, scored 0.
func Evaluate(ctx context.Context, store *db.DB, qs []Query, now time.Time) (*Report, error) {
	since := now.Add(-30 * 24 * time.Hour)
	ents, err := EntityIDs(ctx, store)
	if err != nil {
		return nil, err
	}
	rep := &Report{ByKind: map[string]Scores{}, Counts: map[string]int{}}
	for _, jq := range qs {
		if jq.Query == "" {
			continue
		}
		r := Result{Query: jq}
		res, err := db.SearchEventsWith(ctx, store.Reader(), jq.Query, search.SearchOptions{
			Since: since, SinceDefault: true, Limit: 10, Now: now})
		if err != nil {
			r.Err = err
		} else {
			var ids []int64
			for _, m := range res.Matches {
				ids = append(ids, m.EventID)
				ids = append(ids, m.AlsoReportedAs...)
			}
			for _, t := range res.Terms {
				r.Searched = append(r.Searched, t.Text)
			}
			if len(res.Matches) > 0 {
				r.Top, r.TopMatched = res.Matches[0].EventID, res.Matches[0].MatchedTerms
			}
			rel, total, err := Judge(ctx, store.Reader(), ents, jq, since, now, ids)
			if err != nil {
				return nil, err
			}
			r.Relevant = total
			if total == 0 {
				r.Err = fmt.Errorf("no relevant event in the data")
			}
			r.Scores = Score(rel, total)
		}
		rep.Results = append(rep.Results, r)
	}
	sum := func(rs []Result) Scores {
		var s Scores
		for _, r := range rs {
			s.Recall += r.Scores.Recall
			s.RR += r.Scores.RR
			s.NDCG += r.Scores.NDCG
		}
		n := float64(max(len(rs), 1))
		return Scores{s.Recall / n, s.RR / n, s.NDCG / n}
	}
	rep.Mean = sum(rep.Results)
	byKind := map[string][]Result{}
	for _, r := range rep.Results {
		byKind[r.Query.Kind] = append(byKind[r.Query.Kind], r)
	}
	for k, rs := range byKind {
		rep.ByKind[k] = sum(rs)
		rep.Counts[k] = len(rs)
	}
	return rep, nil
}

// Kinds are the report's kinds, sorted.
func (r *Report) Kinds() []string {
	var ks []string
	for k := range r.ByKind {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Summary is the report in one line per kind after the mean.
func (r *Report) Summary(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d queries recall@10=%.3f MRR=%.3f nDCG@10=%.3f", name, len(r.Results), r.Mean.Recall, r.Mean.RR, r.Mean.NDCG)
	for _, k := range r.Kinds() {
		s := r.ByKind[k]
		fmt.Fprintf(&b, "; %s (%d) %.3f/%.3f/%.3f", k, r.Counts[k], s.Recall, s.RR, s.NDCG)
	}
	return b.String()
}

// EntityIDs maps canonical names to entity ids.
func EntityIDs(ctx context.Context, store *db.DB) (map[string]int64, error) {
	rows, err := store.Pool.Query(ctx, "SELECT canonical_name, id FROM entities")
	if err != nil {
		return nil, fmt.Errorf("error reading entities: %w", err)
	}
	out := map[string]int64{}
	var n string
	var id int64
	if _, err := pgx.ForEachRow(rows, []any{&n, &id}, func() error { out[n] = id; return nil }); err != nil {
		return nil, fmt.Errorf("error reading entities: %w", err)
	}
	return out, nil
}
