package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// hostileServer is one running service (app.New + Serve on a loopback
// port) with the /v1 fixture loaded, every log line captured, and a clock
// that tests move forward so the per-minute rate window never refuses a
// long run of requests from one key.
type hostileServer struct {
	app    *app.App
	base   string
	store  *db.DB
	logs   *syncBuffer
	offset atomic.Int64 // nanoseconds added to restNow
	client *http.Client
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent loggers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The hostile server's secrets: tests forge cursors and links with them to
// reach the checks behind the signatures.
const (
	hostileCursorSecret = "hostile-test-cursor-secret-0123456789"
	hostileExportSecret = "hostile-test-export-secret-0123456789"
	hostileAdminToken   = "hostile-test-admin-token"
)

// startHostileServer starts the service over a fresh database holding
// restFixture. Webhooks may target loopback (so a webhook can be
// registered without the network) and the poller waits an hour between
// periodic polls. Each configure function may change the configuration
// before the service starts.
func startHostileServer(t *testing.T, configure ...func(*app.Config)) *hostileServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	cfg := app.Config{
		DatabaseURL:         dbtest.NewURL(t),
		DBMaxConns:          8,
		Logger:              slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ShutdownTimeout:     15 * time.Second,
		WebhookAllowCIDRs:   "127.0.0.0/8,::1/128",
		WebhookPollInterval: time.Hour,
		ExportDir:           t.TempDir(),
		CursorSecret:        hostileCursorSecret,
		ExportURLSecret:     hostileExportSecret,
		AdminToken:          hostileAdminToken,
	}
	for _, f := range configure {
		f(&cfg)
	}
	a, err := app.New(ctx, cfg)
	require.NoError(t, err)
	s := &hostileServer{app: a, store: a.DB, logs: logs,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true}}}
	a.DB.Now = func() time.Time { return restNow.Add(time.Duration(s.offset.Load())) }
	ingestLines(t, a.DB, restFixture())
	// Age the fixture's ingest time by a day: a webhook receives events
	// ingested at most five minutes before it was created, and the webhooks
	// these tests register must not start deliveries (whose attempts would
	// change webhook tables while the tables are compared).
	_, err = a.DB.Pool.Exec(ctx, `UPDATE events SET updated_at = updated_at - interval '1 day'`)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		a.Close() //nolint:errcheck
	})
	s.base = "http://" + ln.Addr().String()
	return s
}

// newKey creates an account on plan with one key.
func (s *hostileServer) newKey(t *testing.T, plan string) string {
	t.Helper()
	key, _ := accesstest.NewKey(t, s.store, plan)
	return key
}

// nextMinute moves the service clock past the current rate window.
func (s *hostileServer) nextMinute() { s.offset.Add(int64(61 * time.Second)) }

// hostileRequest is one request of a hostile run.
type hostileRequest struct {
	Method string
	Path   string // raw path and query, sent as written (already escaped)
	Body   []byte
	// ContentType is sent when non-empty.
	ContentType string
	// Header holds extra headers; an "Authorization" entry replaces the key.
	Header map[string]string
}

// send sends req with key and reads the whole answer. A transport error
// (including the client timeout, which would mean a hang) fails the test.
func (s *hostileServer) send(t *testing.T, key string, req hostileRequest) *restResponse {
	t.Helper()
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequest(req.Method, s.base+req.Path, body)
	require.NoError(t, err, "%s %s", req.Method, abbreviate(req.Path))
	if key != "" {
		hr.Header.Set("Authorization", "Bearer "+key)
	}
	if req.ContentType != "" {
		hr.Header.Set("Content-Type", req.ContentType)
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	resp, err := s.client.Do(hr)
	require.NoError(t, err, "%s %s: no answer (hang or dropped connection)", req.Method, abbreviate(req.Path))
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "%s %s: reading the answer", req.Method, abbreviate(req.Path))
	return &restResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// domainTables are the tables whose content no refused request may change.
// Usage and rate counters (rate_windows, usage_daily,
// account_rate_windows, account_usage_monthly) and the poller's
// bookkeeping legitimately change on every request and are left out.
var domainTables = []string{
	"entities", "entity_names", "relationships", "entity_references", "events", "event_entities", "evidence",
	"markets", "market_subevents", "market_posts", "plans", "accounts", "api_keys",
	"webhooks", "webhook_deliveries", "webhook_attempts", "export_jobs",
}

// snapshotDomain returns "table: rows md5" for every domain table: the
// row count and a checksum over every row's text, in a stable order.
func snapshotDomain(t *testing.T, store *db.DB) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, table := range domainTables {
		var n int64
		var sum string
		q := fmt.Sprintf(`SELECT count(*), coalesce(md5(string_agg(r::text, '|' ORDER BY r::text)), '') FROM %s r`, table)
		require.NoError(t, store.Pool.QueryRow(ctx, q).Scan(&n, &sum), table)
		out = append(out, fmt.Sprintf("%s: %d %s", table, n, sum))
	}
	sort.Strings(out)
	return out
}

// leakMarkers are strings that must never reach a client: stack traces,
// panics, Go source positions, database and driver internals.
var leakMarkers = []string{
	"goroutine ", "panic", "runtime error", ".go:", "SQLSTATE", "pgx", "pq:", "ERROR:", "bun:", "sql:",
	"syntax error at", "/work/", "nil pointer",
}

// requireNoLeak fails when body carries any leak marker.
func requireNoLeak(t *testing.T, name string, body []byte) {
	t.Helper()
	for _, m := range leakMarkers {
		require.NotContains(t, string(body), m, "%s: response leaks internals: %s", name, abbreviate(string(body)))
	}
}

// abbreviate shortens s for failure messages.
func abbreviate(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// repeat returns s repeated until n bytes.
func repeat(s string, n int) string {
	return strings.Repeat(s, n/len(s)+1)[:n]
}

// errorOnly returns the message member of an error body as the JSON
// object {"error": …}, for comparing messages word for word; the members
// for programs (code, param, docUrl, requestId) are checked where their
// tests are (requireErrorCode).
func errorOnly(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error *string `json:"error"`
		Code  string  `json:"code"`
	}
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	require.NotNil(t, e.Error, "no error member: %s", body)
	require.NotEmpty(t, e.Code, "no code member: %s", body)
	b, err := json.Marshal(map[string]string{"error": *e.Error})
	require.NoError(t, err)
	return string(b)
}
