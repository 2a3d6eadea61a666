package observe

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/httperr"
)

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

type testBundle struct {
	handler http.Handler
	logs    *syncBuffer
}

// setup serves a mux under Middleware. Each test passes its own route
// prefix so the process-wide counters it asserts on are its own.
func setup(t *testing.T, prefix string) *testBundle {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"` + r.PathValue("id") + `","request_id":"` + RequestID(r.Context()) + `"}`)) //nolint:errcheck
	})
	mux.HandleFunc("POST "+prefix+"/fail", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	mux.HandleFunc("GET "+prefix+"/panic", func(w http.ResponseWriter, r *http.Request) {
		panic("boom")
	})
	mux.HandleFunc("GET "+prefix+"/inner/", func(w http.ResponseWriter, r *http.Request) {
		SetRoute(r.Context(), "GET "+prefix+"/inner/{name}")
		w.WriteHeader(http.StatusNoContent)
	})
	logs := &syncBuffer{}
	logger := NewLogger(logs, slog.LevelDebug)
	return &testBundle{handler: Middleware(logger, mux), logs: logs}
}

func (b *testBundle) do(method, target string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	return rec
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	b := setup(t, "/rid")

	t.Run("EchoesValidIncomingID", func(t *testing.T) {
		rec := b.do("GET", "/rid/items/1", http.Header{"X-Request-Id": {"abc-123_DEF.4"}})
		require.Equal(t, "abc-123_DEF.4", rec.Header().Get("X-Request-Id"))
		require.Contains(t, rec.Body.String(), `"request_id":"abc-123_DEF.4"`)
	})
	t.Run("ReplacesInvalidID", func(t *testing.T) {
		for _, bad := range []string{"has space", "new\nline", strings.Repeat("a", 129), "<script>", "a:b"} {
			rec := b.do("GET", "/rid/items/1", http.Header{"X-Request-Id": {bad}})
			id := rec.Header().Get("X-Request-Id")
			require.NotEqual(t, bad, id)
			require.True(t, ValidRequestID(id), id)
		}
	})
	t.Run("GeneratesUniqueIDs", func(t *testing.T) {
		seen := map[string]bool{}
		for range 50 {
			id := b.do("GET", "/rid/items/1", nil).Header().Get("X-Request-Id")
			require.Len(t, id, 26)
			require.False(t, seen[id], "duplicate id %s", id)
			seen[id] = true
		}
	})
}

func TestMetricsByRoutePattern(t *testing.T) {
	t.Parallel()
	b := setup(t, "/met")
	for _, id := range []string{"1", "2", "3"} {
		require.Equal(t, http.StatusOK, b.do("GET", "/met/items/"+id+"?secret=x", nil).Code)
	}
	require.Equal(t, http.StatusServiceUnavailable, b.do("POST", "/met/fail", nil).Code)
	require.Equal(t, http.StatusNoContent, b.do("GET", "/met/inner/zed", nil).Code)

	require.Equal(t, 3.0, testutil.ToFloat64(httpRequests.WithLabelValues("GET", "/met/items/{id}", "200")))
	require.Equal(t, 1.0, testutil.ToFloat64(httpRequests.WithLabelValues("POST", "/met/fail", "503")))
	require.Equal(t, 1.0, testutil.ToFloat64(httpRequests.WithLabelValues("GET", "/met/inner/{name}", "204")))
	// No series is labeled with a raw URL.
	n, err := testutil.GatherAndCount(NewRegistry(), "cryptointel_http_requests_total")
	require.NoError(t, err)
	require.Positive(t, n)
	require.Zero(t, testutil.ToFloat64(httpRequests.WithLabelValues("GET", "/met/items/1", "200")))
}

func TestUnmatchedRoute(t *testing.T) {
	t.Parallel()
	b := setup(t, "/unm")
	before := testutil.ToFloat64(httpRequests.WithLabelValues("GET", "unmatched", "404"))
	require.Equal(t, http.StatusNotFound, b.do("GET", "/unm/nowhere/12345", nil).Code)
	require.Equal(t, before+1, testutil.ToFloat64(httpRequests.WithLabelValues("GET", "unmatched", "404")))
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	b := setup(t, "/log")
	rec := b.do("GET", "/log/items/7?api_key=hunter2", http.Header{
		"Authorization": {"Bearer sk_live_secret_value"},
		"X-Request-Id":  {"req-log-1"},
	})
	require.Equal(t, http.StatusOK, rec.Code)

	lines := b.logs.lines(t)
	require.Len(t, lines, 1)
	line := lines[0]
	require.Equal(t, "INFO", line["level"])
	require.Equal(t, "http request", line["msg"])
	require.Equal(t, "req-log-1", line["request_id"])
	require.Equal(t, "GET", line["method"])
	require.Equal(t, "/log/items/{id}", line["route"])
	require.Equal(t, "/log/items/7", line["path"])
	require.EqualValues(t, 200, line["status"])
	require.EqualValues(t, rec.Body.Len(), line["bytes"])
	require.Contains(t, line, "duration_ms")

	b.logs.mu.Lock()
	raw := b.logs.buf.String()
	b.logs.mu.Unlock()
	require.NotContains(t, raw, "sk_live_secret_value")
	require.NotContains(t, raw, "hunter2")
	require.NotContains(t, strings.ToLower(raw), "authorization")
}

func TestPanicIsA500WithJSON(t *testing.T) {
	t.Parallel()
	b := setup(t, "/pan")
	rec := b.do("GET", "/pan/panic", http.Header{"X-Request-Id": {"req-panic"}})
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.JSONEq(t, `{"error":"internal server error","code":"internal","docUrl":"`+httperr.DocURL(cryptointel.EINTERNAL)+`","requestId":"req-panic"}`, rec.Body.String())
	require.Equal(t, "req-panic", rec.Header().Get("X-Request-Id"))
	require.Equal(t, 1.0, testutil.ToFloat64(httpRequests.WithLabelValues("GET", "/pan/panic", "500")))

	var levels []any
	for _, l := range b.logs.lines(t) {
		require.Equal(t, "req-panic", l["request_id"])
		levels = append(levels, l["level"])
	}
	require.Equal(t, []any{"ERROR", "ERROR"}, levels)
}

func TestLogLevels(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	ready := true
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("GET /lvl/fail", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	})
	logs := &syncBuffer{}
	h := Middleware(NewLogger(logs, slog.LevelDebug), mux)
	serve := func(target string) {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
	}
	serve("/readyz")
	ready = false
	serve("/readyz")
	serve("/lvl/fail")
	serve("/lvl/missing")
	var levels []any
	for _, l := range logs.lines(t) {
		levels = append(levels, l["level"])
	}
	require.Equal(t, []any{"DEBUG", "WARN", "ERROR", "INFO"}, levels)
}

func TestRedact(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logger := NewLogger(&buf, slog.LevelInfo)
	logger.Info("x", slog.String("Authorization", "Bearer abc"), slog.String("webhook_secret", "s3"),
		slog.String("route", "/v1/x"))
	line := buf.lines(t)[0]
	require.Equal(t, "[REDACTED]", line["Authorization"])
	require.Equal(t, "[REDACTED]", line["webhook_secret"])
	require.Equal(t, "/v1/x", line["route"])
}

func TestRouteLabel(t *testing.T) {
	t.Parallel()
	require.Equal(t, "unmatched", routeLabel(""))
	require.Equal(t, "/v1/entities/{id}", routeLabel("GET /v1/entities/{id}"))
	require.Equal(t, "/playground/", routeLabel("/playground/"))
	require.Equal(t, "OTHER", methodLabel("BREW"))
}

func BenchmarkMiddleware(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bench/{id}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }) //nolint:errcheck
	h := Middleware(slog.New(slog.DiscardHandler), mux)
	req := httptest.NewRequest("GET", "/bench/1", nil)
	req.Header.Set("X-Request-Id", "bench-id")
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

func BenchmarkBaseline(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bench/{id}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }) //nolint:errcheck
	req := httptest.NewRequest("GET", "/bench/1", nil)
	req.Header.Set("X-Request-Id", "bench-id")
	b.ReportAllocs()
	for b.Loop() {
		mux.ServeHTTP(httptest.NewRecorder(), req)
	}
}
