package tests

import (
	"context"
	"net/http"
	"net/http/httptest"
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
)

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkComputedRead measures the computed read path of the /v1 facade
// in process: parameters, the fixed GraphQL operation through the executor
// and its loaders, the legacy aliases, the envelope and the encoding, with
// neither the access layer nor the response cache (the load harness,
// `make bench`, measures the whole service over HTTP). Allocations per
// request are the figure to compare between changes: unlike time, they do
// not move with the machine's other load. cpu-ns/op is the process's CPU
// time per request (GC included; the wall time per op also holds the
// database round trips and the loaders' batch waits).
//
//	go test ./tests/ -run '^$' -bench ComputedRead -benchmem
func BenchmarkComputedRead(b *testing.B) {
	store := dbtest.New(b)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	store.Now = func() time.Time { return now }
	_, err := demo.Seed(context.Background(), store, demo.Options{Events: 5000})
	require.NoError(b, err)
	exec := resolvers.NewExecutor(resolvers.Config{Store: store, CursorSecret: "bench"})
	router, err := rest.New(rest.Config{
		Executor: exec,
		Schema:   graph.NewExecutableSchema(graph.Config{}).Schema(),
		Now:      store.Now,
	})
	require.NoError(b, err)

	for _, bc := range []struct{ name, target string }{
		{"latest", "/v1/latest?limit=25"},
		{"signal_top", "/v1/signal/top"},
		{"relationships", "/v1/entities/101/relationships"},
		{"brief_batch", "/v1/brief/batch?ids=101,102,103,104,105&since=2026-11-13T00:00:00Z"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bc.target, nil)
			rec := httptest.NewRecorder()
			router.ServeHTTP(rec, req)
			require.Equal(b, http.StatusOK, rec.Code, rec.Body.String())
			b.SetBytes(int64(rec.Body.Len()))
			ctx, statements := db.WithStatementCounter(context.Background())
			req = req.WithContext(ctx)
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() { // the first call resets the timer
				rec := httptest.NewRecorder()
				router.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", bc.target, rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(statements.Load())/float64(b.N), "stmts/op")
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
