package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/tests/searcheval"
)

// Search's rows, targets, judged set and scale table (issue "search that
// answers like a search engine").

// newsSearchRoute is /v1/search with multi-word queries written like news
// headlines and questions.
const newsSearchRoute = "GET /v1/search?q=… (news-style)"

// newsQueries are the news-style queries: words of the demo data's
// headlines and everyday paraphrases of them.
var newsQueries = []string{
	"Solana outage", "exchange hacked", "SEC lawsuit", "regulator approved ETF", "Bitcoin ETF approval",
	"chain went down", "stablecoin lost its peg", "Coinbase lists new token", "Ethereum upgrade delayed",
	"attacker drains bridge contract", "funds frozen after breach", "Arbitrum governance vote",
	"perpetual futures listing Binance", "token unlock early backers", "seed round led by Paradigm",
}

// newsEntities name an entity of each news-style query (the entity
// form's filter), in newsQueries' order.
var newsEntities = []string{
	"Solana", "Binance", "SEC", "SEC", "Bitcoin", "Ethereum", "Tether", "Coinbase", "Ethereum",
	"Wormhole", "Binance", "Arbitrum", "Binance", "Arbitrum", "Paradigm",
}

// newsCategories are a category of each news-style query (the category
// form's filter), in newsQueries' order.
var newsCategories = []string{
	"technology", "security", "regulation", "regulation", "regulation", "technology", "security", "listing", "technology",
	"security", "security", "governance", "listing", "tokenomics", "funding",
}

// searchForm is a news-style search with sort, filters or facets: each
// is measured beside the plain form (newsSearchRoute), which it should
// cost at most targetSearchFormRatio times.
type searchForm struct {
	name string
	add  func(q url.Values, i int, fx *fixtures)
}

// searchForms are the forms of the news-style search measured beside it.
var searchForms = []searchForm{
	{"sort=recency", func(q url.Values, _ int, _ *fixtures) { q.Set("sort", "recency") }},
	{"from/to 7 days", func(q url.Values, _ int, fx *fixtures) {
		q.Set("from", fx.now.Add(-7*24*time.Hour).UTC().Format(time.RFC3339))
		q.Set("to", fx.now.UTC().Format(time.RFC3339))
	}},
	{"category", func(q url.Values, i int, _ *fixtures) { q.Set("category", newsCategories[i]) }},
	{"entity", func(q url.Values, i int, _ *fixtures) { q.Set("entity", newsEntities[i]) }},
	{"facets", func(q url.Values, _ int, _ *fixtures) { q.Set("facets", "true") }},
}

// searchFormRoute is the row name of a form.
func searchFormRoute(f searchForm) string {
	return strings.TrimSuffix(newsSearchRoute, ")") + ", " + f.name + ")"
}

// Search targets (every request computed, metering on).
const (
	targetSearchRPS       = 800.0
	targetSearchPGCPU     = 2 * time.Millisecond
	targetSearchFormRatio = 2.0
)

func init() {
	registerScenarios(50, func(fx *fixtures) []scenario {
		out := []scenario{{name: newsSearchRoute, key: true, next: func(w *worker) (*http.Request, error) {
			q := url.Values{"q": {newsQueries[pick(w, len(newsQueries))]}}
			return http.NewRequest(http.MethodGet, "/v1/search?"+q.Encode(), nil)
		}}}
		for _, f := range searchForms {
			out = append(out, scenario{name: searchFormRoute(f), key: true, next: func(w *worker) (*http.Request, error) {
				i := pick(w, len(newsQueries))
				q := url.Values{"q": {newsQueries[i]}}
				f.add(q, i, fx)
				return http.NewRequest(http.MethodGet, "/v1/search?"+q.Encode(), nil)
			}})
		}
		return out
	})
	registerSuite(suite{name: "search judged set", order: 50, run: runJudgedSet})
	registerSuite(suite{name: "scale", order: 60, run: runScale})
}

// searchTargets adds the search targets to the report's table.
func searchTargets(in reportInput, add func(name, measured string, met bool, gap string)) {
	for _, route := range []string{searchRoute, newsSearchRoute} {
		rows := byConcurrency(in.computed, route+" (computed)")
		label := strings.TrimPrefix(route, "GET ")
		if route == newsSearchRoute {
			if r, ok := rows[1]; ok {
				add(fmt.Sprintf("%s c=1 p50 ≤ %s", label, ms(targetSearchP50)), ms(r.pct(0.5))+meteredFloorClause(in), r.pct(0.5) <= targetSearchP50,
					gap(float64(r.pct(0.5)), float64(targetSearchP50)))
			}
		}
		if r, ok := rows[8]; ok {
			add(fmt.Sprintf("%s c=8 ≥ %.0f req/s", label, targetSearchRPS), fmt.Sprintf("%.0f req/s", r.rps()), r.rps() >= targetSearchRPS,
				gap(targetSearchRPS, r.rps()))
		}
		if r, ok := rows[1]; ok {
			add(fmt.Sprintf("%s PostgreSQL CPU ≤ %s per request (c=1)", label, ms(targetSearchPGCPU)), ms(r.pgCPUPerReq()),
				r.pgCPUPerReq() <= targetSearchPGCPU, gap(float64(r.pgCPUPerReq()), float64(targetSearchPGCPU)))
		}
	}
	plain, ok := byConcurrency(in.computed, newsSearchRoute+" (computed)")[1]
	if !ok {
		return
	}
	for _, f := range searchForms {
		r, ok := byConcurrency(in.computed, searchFormRoute(f)+" (computed)")[1]
		if !ok {
			continue
		}
		ratio := float64(r.pct(0.5)) / math.Max(float64(plain.pct(0.5)), 1)
		add(fmt.Sprintf("%s c=1 p50 ≤ %.0f× the plain form's", strings.TrimPrefix(searchFormRoute(f), "GET "), targetSearchFormRatio),
			fmt.Sprintf("%.2f× (%s against %s)", ratio, ms(r.pct(0.5)), ms(plain.pct(0.5))), ratio <= targetSearchFormRatio,
			gap(ratio, targetSearchFormRatio))
	}
}

// runJudgedSet scores the judged set (tests/testdata/search_judged.json) on
// the benchmark database over the last 30 days of its data.
func runJudgedSet(ctx context.Context, env *benchEnv) (*section, error) {
	qs, err := searcheval.Load(filepath.Join(env.opts.repo, "tests", "testdata", "search_judged.json"))
	if err != nil {
		return nil, err
	}
	store, err := db.Open(ctx, env.opts.databaseURL, db.Options{MaxConns: 2})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var newest time.Time
	if err := store.Pool.QueryRow(ctx, "SELECT coalesce(max(latest_evidence_at), now()) FROM events").Scan(&newest); err != nil {
		return nil, fmt.Errorf("error reading the newest event: %w", err)
	}
	rep, err := searcheval.Evaluate(ctx, store, qs, newest)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "`tests/testdata/search_judged.json` (%d queries written before the ranking was tuned) on this database, each query's events of the last 30 days labelled relevant by entity, category, subcategory or text (`tests/searcheval`):\n\n", len(rep.Results))
	fmt.Fprintf(&b, "| kind | queries | recall@10 | MRR | nDCG@10 |\n|---|--:|--:|--:|--:|\n")
	for _, k := range rep.Kinds() {
		s := rep.ByKind[k]
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.3f |\n", k, rep.Counts[k], s.Recall, s.RR, s.NDCG)
	}
	fmt.Fprintf(&b, "| **all** | %d | %.3f | %.3f | %.3f |\n", len(rep.Results), rep.Mean.Recall, rep.Mean.RR, rep.Mean.NDCG)
	var failed []string
	for _, r := range rep.Results {
		if r.Err != nil {
			failed = append(failed, fmt.Sprintf("%q (%v)", r.Query.Query, r.Err))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(&b, "\nScored 0: %s.\n", strings.Join(failed, "; "))
	}
	fmt.Printf("%s\n", rep.Summary("search judged set (benchmark database)"))
	return &section{title: "Search judged set", markdown: b.String()}, nil
}

// scaleRoutes are the rows of the scale table.
var scaleRoutes = []string{searchRoute, newsSearchRoute, latestRoute, byNameRoute, threeHopRoute}

// scaleFile keeps each seed size's figures across runs (a run measures
// one size), beside RESULTS.md.
const scaleFile = "tests/bench/scale.json"

// scalePoint is one route at one size, every request computed.
type scalePoint struct {
	P50c1Ms  float64 `json:"p50_c1_ms"`
	RPSc8    float64 `json:"rps_c8"`
	PGCPUMs  float64 `json:"pg_cpu_c1_ms"`
	Measured string  `json:"measured"`
}

// runScale measures the scale rows at this run's size on a server computing
// every request (c=1 and c=8), records them in scale.json under the number
// of events (also with -stdout: the file is the record across runs), and
// renders the table of every size recorded.
func runScale(ctx context.Context, env *benchEnv) (*section, error) {
	srv, err := env.startServer(ctx, "server-scale.log", "RESPONSE_CACHE_TTL=-1s")
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	byName := map[string]scenario{}
	for _, sc := range scenarios(env.fx) {
		byName[sc.name] = sc
	}
	path := filepath.Join(env.opts.repo, scaleFile)
	all := map[string]map[string]scalePoint{}
	if raw, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(raw, &all); err != nil {
			return nil, fmt.Errorf("error reading %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	size := strconv.Itoa(env.opts.events)
	points := map[string]scalePoint{}
	for _, name := range scaleRoutes {
		sc, ok := byName[name]
		if !ok {
			continue
		}
		sc.name += " (scale)"
		p := scalePoint{Measured: time.Now().UTC().Format("2006-01-02")}
		for _, c := range []int{1, 8} {
			r, err := env.measure(ctx, srv.base, sc, c, srv.pid())
			if err != nil {
				return nil, err
			}
			if c == 1 {
				p.P50c1Ms = float64(r.pct(0.5).Microseconds()) / 1000
				p.PGCPUMs = float64(r.pgCPUPerReq().Microseconds()) / 1000
			} else {
				p.RPSc8 = r.rps()
			}
		}
		points[name] = p
	}
	all[size] = points
	raw, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("error writing %s: %w", path, err)
	}
	var sizes []int
	for s := range all {
		n, _ := strconv.Atoi(s)
		sizes = append(sizes, n)
	}
	sort.Ints(sizes)
	var b strings.Builder
	fmt.Fprintf(&b, "Every request computed (`RESPONSE_CACHE_TTL=-1s`), metering on; c=1 p50 / c=8 req/s / PostgreSQL CPU per request at c=1. "+
		"One `make bench` measures one size (`BENCH_EVENTS`, default 1,000,000; each size is its own cached database); the figures of the other sizes come from `%s`, with the date each was measured.\n\n", scaleFile)
	fmt.Fprintf(&b, "| route |")
	for _, n := range sizes {
		fmt.Fprintf(&b, " %s events |", humanCount(n))
	}
	fmt.Fprintf(&b, "\n|---|")
	for range sizes {
		fmt.Fprintf(&b, "--:|")
	}
	fmt.Fprintf(&b, "\n")
	for _, name := range scaleRoutes {
		fmt.Fprintf(&b, "| %s |", name)
		for _, n := range sizes {
			if p, ok := all[strconv.Itoa(n)][name]; ok {
				fmt.Fprintf(&b, " %.2f ms / %.0f / %.2f ms (%s) |", p.P50c1Ms, p.RPSc8, p.PGCPUMs, p.Measured)
			} else {
				fmt.Fprintf(&b, " – |")
			}
		}
		fmt.Fprintf(&b, "\n")
	}
	return &section{title: "Scale", markdown: b.String()}, nil
}

// humanCount writes 100000 as 100k and 10000000 as 10M.
func humanCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}
