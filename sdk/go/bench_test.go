package cryptointel

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"syscall"
	"testing"
)

// The cost of the library over a raw HTTP call of the same route
// (GET /v1/latest?limit=10, a page of ten lean events as the demo server
// answers it, testdata/latest.json), on the client's side only: both go
// through a transport that answers from memory, so the numbers are the
// client's CPU, not the network's or the server's; cpu-ns/op is the
// process's CPU time (user and system, from getrusage) per call, steadier
// than ns/op on a shared machine. The raw call builds the
// URL and headers by hand, reads the body and decodes it into the same
// result type the library decodes into.
//
//	go test -run '^$' -bench 'Call$' -benchmem -count 5

type cannedTransport struct {
	body   []byte
	header http.Header
}

func (c cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: c.header.Clone(), Body: io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: int64(len(c.body)), Request: req}, nil
}

func canned(b *testing.B) cannedTransport {
	body, err := os.ReadFile("testdata/latest.json")
	if err != nil {
		b.Fatal(err)
	}
	h := http.Header{}
	for k, v := range map[string]string{
		"Content-Type": "application/json; charset=utf-8", "X-Request-Id": "6VULP5J7C3K2MZMR7YHXRMD7I2",
		"X-Plan-Tier": "enterprise", "X-Credit-Cost": "1", "X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "99",
		"X-RateLimit-Reset": "10", "X-Monthly-Limit": "10000000", "X-Monthly-Used": "15", "X-Monthly-Remaining": "9999985",
		"X-Api-Surface": "feed", "X-Access-Layer": "evaluation", "X-Endpoint-Policy": "latest", "Etag": `"AAAkEY3BLimDWI1z"`,
	} {
		h.Set(k, v)
	}
	return cannedTransport{body: body, header: h}
}

func BenchmarkLibraryCall(b *testing.B) {
	hc := &http.Client{Transport: canned(b)}
	c, err := New("http://127.0.0.1:8080", WithAPIKey("ci_bench"), WithHTTP(hc))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	limit := 10
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		r, err := c.GetV1LatestWithResponse(ctx, &GetV1LatestParams{Limit: &limit})
		if err != nil || len(r.JSON200.Data) != 10 {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawCall(b *testing.B) {
	hc := &http.Client{Transport: canned(b)}
	ctx := context.Background()
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		rawCall(b, ctx, hc)
	}
}

// rawCall is GET /v1/latest?limit=10 with net/http alone.
func rawCall(b *testing.B, ctx context.Context, hc *http.Client) {
	{
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:8080/v1/latest?limit=10&legacy=false", nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer ci_bench")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err)
		}
		var out GetV1LatestResponse
		if err := json.Unmarshal(body, &out.JSON200); err != nil || len(out.JSON200.Data) != 10 {
			b.Fatal(err)
		}
	}
}

// cpuPerOp reports the process's CPU time per iteration as cpu-ns/op when
// the returned function runs.
func cpuPerOp(b *testing.B) func() {
	cpu := func() int64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru) //nolint:errcheck
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op") }
}

// BenchmarkLibraryOverhead alternates a library call and a raw call and
// times each with the process's CPU clock, so that what else the machine
// does weighs on both alike: overhead-% is the library's extra CPU.
func BenchmarkLibraryOverhead(b *testing.B) {
	hc := &http.Client{Transport: canned(b)}
	c, err := New("http://127.0.0.1:8080", WithAPIKey("ci_bench"), WithHTTP(&http.Client{Transport: canned(b)}))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	limit := 10
	cpu := func() int64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru) //nolint:errcheck
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	var lib, raw int64
	for b.Loop() {
		t0 := cpu()
		r, err := c.GetV1LatestWithResponse(ctx, &GetV1LatestParams{Limit: &limit})
		if err != nil || len(r.JSON200.Data) != 10 {
			b.Fatal(err)
		}
		t1 := cpu()
		rawCall(b, ctx, hc)
		raw += cpu() - t1
		lib += t1 - t0
	}
	b.ReportMetric(float64(lib)/float64(b.N), "lib-cpu-ns/op")
	b.ReportMetric(float64(raw)/float64(b.N), "raw-cpu-ns/op")
	b.ReportMetric(100*float64(lib-raw)/float64(raw), "overhead-%")
}
