package tests

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/resolvers"
	"github.com/cryptointel/cryptointel/rest"
	"github.com/cryptointel/cryptointel/tests/bench/queries"
)

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threeHopQuery is the /graphql document of the load harness's 3-hop row.
const threeHopQuery = queries.ThreeHop

// latest25Doc is the 25 latest events with owners and evidence.
const latest25Doc = queries.Latest25

// computedBenchStore opens the benchmark's data: the database at
// COMPUTED_BENCH_DATABASE_URL when set (migrated and seeded on first use,
// then reused, so repeated runs such as callgrind's do not pay the seed),
// else a fresh test database seeded here.
func computedBenchStore(b *testing.B, now time.Time) *db.DB {
	ctx := context.Background()
	seed := demo.Options{Events: 5000}
	url := os.Getenv("COMPUTED_BENCH_DATABASE_URL")
	if url == "" {
		store := dbtest.New(b)
		store.Now = func() time.Time { return now }
		_, err := demo.Seed(ctx, store, seed)
		require.NoError(b, err)
		return store
	}
	store, err := db.Open(ctx, url, db.Options{})
	require.NoError(b, err)
	b.Cleanup(func() { store.Close() })
	store.Now = func() time.Time { return now }
	require.NoError(b, store.Migrate(ctx))
	_, err = demo.Seed(ctx, store, seed) // does nothing when the data is there
	require.NoError(b, err)
	return store
}

// BenchmarkComputedRead measures the computed read path in process: for
// the /v1 routes, parameters, the fixed GraphQL operation and its loads,
// the legacy aliases, the envelope and the encoding; for /graphql, the
// handler with a document it parses, validates and runs. Neither the
// access layer nor the response cache is in the way (the load harness,
// `make bench`, measures the whole service over HTTP). Allocations per
// request are the figure to compare between changes: unlike time, they do
// not move with the machine's other load; instructions per request
// (tests/bench/callgrind.sh) are the other. cpu-ns/op is the process's CPU
// time per request (GC included; the wall time per op also holds the
// database round trips). stmts/op counts the statements sent to
// PostgreSQL.
//
//	go test ./tests/ -run '^$' -bench ComputedRead -benchmem
func BenchmarkComputedRead(b *testing.B) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	store := computedBenchStore(b, now)
	exec := resolvers.NewExecutor(resolvers.Config{Store: store, CursorSecret: "bench"})
	router, err := rest.New(rest.Config{
		Executor: exec,
		Schema:   graph.NewExecutableSchema(graph.Config{}).Schema(),
		Now:      store.Now,
	})
	require.NoError(b, err)
	threeHop := `{"query":` + jsonString(threeHopQuery) + `,"variables":{"id":101,"n":5}}`
	latest25 := `{"query":` + jsonString(queries.Latest25) + `}`

	for _, bc := range []struct {
		name, target string
		body         string // POST /graphql when set
	}{
		{"latest", "/v1/latest?limit=25", ""},
		{"latest_lean", "/v1/latest?limit=25&legacy=false", ""},
		{"signal_top", "/v1/signal/top", ""},
		{"search", "/v1/search?q=Ethereum", ""},
		{"by_name", "/v1/entities/byName?name=Solana", ""},
		{"relationships", "/v1/entities/101/relationships", ""},
		{"brief_batch", "/v1/brief/batch?ids=101,102,103,104,105&since=2026-11-13T00:00:00Z", ""},
		{"graphql_3hop", "/graphql", threeHop},
		{"graphql_latest25", "/graphql", latest25},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var h http.Handler = router
			newReq := func(ctx context.Context) *http.Request {
				if bc.body == "" {
					return httptest.NewRequestWithContext(ctx, http.MethodGet, bc.target, nil)
				}
				req := httptest.NewRequestWithContext(ctx, http.MethodPost, bc.target, strings.NewReader(bc.body))
				req.Header.Set("Content-Type", "application/json")
				return req
			}
			if bc.body != "" {
				h = exec
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, newReq(context.Background()))
			require.Equal(b, http.StatusOK, rec.Code, rec.Body.String())
			require.NotContains(b, rec.Body.String(), `"errors"`)
			b.SetBytes(int64(rec.Body.Len()))
			ctx, statements := db.WithStatementCounter(context.Background())
			b.ReportAllocs()
			cpu, pgCPU := processCPU(), backendsCPU(store)
			for b.Loop() { // the first call resets the timer
				computedServeOnce(b, h, newReq(ctx))
			}
			b.ReportMetric(float64(statements.Load())/float64(b.N), "stmts/op")
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(backendsCPU(store)-pgCPU)/float64(b.N), "pg-cpu-ns/op")
		})
	}
}

// backendsCPU is the CPU time so far of the PostgreSQL backends connected
// to store's database (their process titles name it; readable when the
// server runs on this machine, else 0): PostgreSQL's share of the work.
func backendsCPU(store *db.DB) time.Duration {
	name := " " + store.Pool.Config().ConnConfig.Database + " "
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.HasPrefix(string(b), "postgres: ") || !strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), name) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(u+s) * 10 * time.Millisecond
	}
	return total
}

// computedServeOnce serves one request and checks its status.
func computedServeOnce(b *testing.B, h http.Handler, req *http.Request) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", req.URL, rec.Code, rec.Body)
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case '\n':
			sb.WriteString(`\n`)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
