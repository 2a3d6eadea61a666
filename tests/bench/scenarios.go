package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel/tests/bench/queries"
)

// How to add measurements (several people add rows; keep them in files of
// their own so nothing conflicts):
//
//   - HTTP rows measured like the core routes — on the service as shipped
//     and on the service computing every request — go in a file
//     tests/bench/scenarios_<topic>.go that calls registerScenarios from
//     init() with an order (core routes 0–99).
//   - Anything else (another server configuration, another protocol) goes
//     in such a file too, calling registerSuite: its run gets the run's
//     benchEnv (options, fixtures, client, statistics connection, a way to
//     start another server and to measure a scenario on it) and returns a
//     section of RESULTS.md.

// scenarioSet is one file's HTTP rows.
type scenarioSet struct {
	order int
	build func(fx *fixtures) []scenario
}

var scenarioSets []scenarioSet

// registerScenarios adds rows measured on the service as shipped and on
// the service computing every request, in order (lowest first). Call it
// from init().
func registerScenarios(order int, build func(fx *fixtures) []scenario) {
	scenarioSets = append(scenarioSets, scenarioSet{order: order, build: build})
}

// scenarios are every registered row, in order.
func scenarios(fx *fixtures) []scenario {
	sets := append([]scenarioSet(nil), scenarioSets...)
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].order < sets[j].order })
	var out []scenario
	for _, s := range sets {
		out = append(out, s.build(fx)...)
	}
	return out
}

// suite is a section of the report measured its own way.
type suite struct {
	name  string
	order int
	run   func(ctx context.Context, env *benchEnv) (*section, error)
}

var suites []suite

// registerSuite adds a suite. Call it from init().
func registerSuite(s suite) { suites = append(suites, s) }

// section is what a suite adds to the report: rows in the routes table's
// columns and markdown after them.
type section struct {
	title    string
	rows     []result
	markdown string
}

// benchEnv is what a suite can use.
type benchEnv struct {
	opts   options
	fx     *fixtures
	client *http.Client
	stats  *pgx.Conn
	// startServer starts another service on the benchmark database with
	// extra environment (KEY=VALUE); stop it when done.
	startServer func(ctx context.Context, logName string, extraEnv ...string) (*proc, error)
	// measure runs sc at concurrency c against base (the server with pid)
	// as the core rows are measured.
	measure func(ctx context.Context, base string, sc scenario, c int, pid int) (result, error)
}

// pick is worker w's deterministic choice among n things.
func pick(w *worker, n int) int { return (w.id*7919 + w.iter) % n }

// threeHopQuery is the /graphql scenario (queries.ThreeHop).
const threeHopQuery = queries.ThreeHop

func init() { registerScenarios(0, coreScenarios) }

// coreScenarios are the measured service routes.
func coreScenarios(fx *fixtures) []scenario {
	get := func(path string, q url.Values) (*http.Request, error) {
		u := path
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		return http.NewRequest(http.MethodGet, u, nil)
	}
	walkSince := fx.now.Add(-6 * 24 * time.Hour).UTC().Format(time.RFC3339)
	briefSince := fx.now.Add(-7 * 24 * time.Hour).UTC().Format(time.RFC3339)
	return []scenario{
		{name: "GET /v1/latest?limit=25", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/latest", url.Values{"limit": {"25"}})
		}},
		{name: "GET /v1/signal/top", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/signal/top", nil)
		}},
		{name: "GET /v1/search?q=…", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/search", url.Values{"q": {fx.names[pick(w, len(fx.names))]}})
		}},
		{name: "GET /v1/entities/byName", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/entities/byName", url.Values{"name": {fx.names[pick(w, len(fx.names))]}})
		}},
		// The cheapest metered request: one entity by its key (0.3 KB), the
		// access layer and one read. The c=1 p50 targets are read beside it
		// (meteredFloorClause): on this machine it is most of their budget.
		{name: byIDRoute, key: true, next: func(w *worker) (*http.Request, error) {
			id := fx.entityIDs[pick(w, len(fx.entityIDs))]
			return get("/v1/entities/byId", url.Values{"id": {strconv.FormatInt(id, 10)}})
		}},
		{name: "GET /v1/entities/{id}/relationships", key: true, next: func(w *worker) (*http.Request, error) {
			id := fx.entityIDs[pick(w, len(fx.entityIDs))]
			return get("/v1/entities/"+strconv.FormatInt(id, 10)+"/relationships", nil)
		}},
		{name: "GET /v1/radar/all (cursor walk)", key: true,
			next: func(w *worker) (*http.Request, error) {
				q := url.Values{"since": {walkSince}, "limit": {"25"}}
				if w.cursor != "" {
					q.Set("cursor", w.cursor)
				}
				return get("/v1/radar/all", q)
			},
			after: func(w *worker, body []byte) { w.cursor = nextCursor(body) },
		},
		{name: "GET /v1/brief/batch (25 ids)", key: true, next: func(w *worker) (*http.Request, error) {
			start := pick(w, len(fx.entityIDs)-24)
			ids := make([]string, 25)
			for i := range ids {
				ids[i] = strconv.FormatInt(fx.entityIDs[start+i], 10)
			}
			return get("/v1/brief/batch", url.Values{"ids": {strings.Join(ids, ",")}, "since": {briefSince}})
		}},
		{name: "GET /v1/latest?limit=25&sort=recency&window=30d", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/latest", url.Values{"limit": {"25"}, "sort": {"recency"}, "window": {"30d"}})
		}},
		{name: "POST /graphql (25 latest with owners and evidence)", key: true, next: func(w *worker) (*http.Request, error) {
			return graphqlRequest(latest25Service, nil)
		}},
		{name: "POST /graphql (3 hops, 5 per level)", key: true, next: func(w *worker) (*http.Request, error) {
			id := fx.hopIDs[pick(w, len(fx.hopIDs))]
			return graphqlRequest(threeHopQuery, map[string]any{"id": id, "n": 5})
		}},
	}
}

// floorScenario is the floor's /v1/latest?limit=25 (no key: the floor has
// no access layer).
func floorScenario() scenario {
	return scenario{name: "floor: GET /v1/latest?limit=25", next: func(w *worker) (*http.Request, error) {
		return http.NewRequest(http.MethodGet, "/v1/latest?limit=25", nil)
	}}
}

// nextCursor reads the envelope's next_cursor ("" when null or absent)
// without decoding the whole page: events carry no next_cursor field, so
// the first occurrence is the envelope's.
func nextCursor(body []byte) string {
	i := bytes.Index(body, []byte(`"next_cursor":`))
	if i < 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(body[i+len(`"next_cursor":`):]))
	var s *string
	if err := dec.Decode(&s); err != nil || s == nil {
		return ""
	}
	return *s
}
