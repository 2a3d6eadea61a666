package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// BenchmarkMCPBesideRoute runs, in process and one at a time, each MCP
// tool call of the bench's "mcp tools" suite and the /v1 route it runs,
// with the same parameters, through the whole service's handler (access
// layer, metering, the response cache off: computed), as
// tests/bench/scenarios_mcp.go does over HTTP. cpu-ns/op is the process's
// CPU time per call (GC included; the HTTP frame and the kernel's share
// of the socket are not in it): the tool's over its route's is the ratio
// the bench holds to 1.1. Instructions per call, counted by callgrind as
// tests/bench/callgrind.sh counts them, compare two builds on a busy
// machine. MCP_BENCH_DATABASE_URL, when set, is a database migrated and
// seeded on first use and then reused (repeated runs skip the seed).
//
//	go test ./app -run '^$' -bench MCPBesideRoute -benchmem
func BenchmarkMCPBesideRoute(b *testing.B) {
	ctx := context.Background()
	url := os.Getenv("MCP_BENCH_DATABASE_URL")
	if url == "" {
		url = dbtest.NewURL(b)
	}
	a := seededApp(b, url, 8, 5000, "")
	// Keys enough that none reaches its rate window's bound: each is used
	// a few times in turn, as the bench's key pool uses its keys.
	var keys []string
	next := 0
	key := func() string {
		next++
		if next/50 >= len(keys) {
			k, _, err := db.CreateAPIKey(ctx, a.DB.Bun, fmt.Sprintf("mcp-bench-%d-%d", time.Now().UnixNano(), len(keys)), cryptointel.PlanEnterprise)
			if err != nil {
				b.Fatal(err)
			}
			keys = append(keys, k)
		}
		return keys[next/50]
	}
	call := func(tool, args string) func() *http.Request {
		return func() *http.Request { return toolCall(tool, args, key()) }
	}
	get := func(target string) func() *http.Request {
		return func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, target, nil)
			r.Header.Set("Authorization", "Bearer "+key())
			return r
		}
	}
	for _, bc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"latest/route", get("/v1/latest?limit=25")},
		{"latest/tool", call("latest_events", `{"limit":25,"detail":"full"}`)},
		{"search/route", get("/v1/search?q=Ethereum")},
		{"search/tool", call("search_events", `{"query":"Ethereum","detail":"full"}`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rec := httptest.NewRecorder()
			a.Handler.ServeHTTP(rec, bc.req())
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"isError":true`) {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
			b.SetBytes(int64(rec.Body.Len()))
			b.ReportAllocs()
			w := &discard{header: http.Header{}}
			cpu := processCPU()
			for b.Loop() {
				clear(w.header)
				w.status = 0
				a.Handler.ServeHTTP(w, bc.req())
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// discard is a ResponseWriter that keeps only the status.
type discard struct {
	header http.Header
	status int
}

func (d *discard) Header() http.Header { return d.header }
func (d *discard) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}
func (d *discard) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	return len(p), nil
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
