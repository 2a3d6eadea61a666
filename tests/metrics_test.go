package tests

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/observe"
)

// observeServer is a running service for the observability tests.
type observeServer struct {
	app  *app.App
	base string
}

// startObserveServer runs app.New + Serve against databaseURL on a random
// loopback port and stops it when t ends.
func startObserveServer(t *testing.T, databaseURL string) *observeServer {
	t.Helper()
	return startObserveServerOn(t, databaseURL, nil)
}

// startObserveServerOn is startObserveServer serving through the listener
// wrap makes of the loopback one (nil: that one).
func startObserveServerOn(t *testing.T, databaseURL string, wrap func(net.Listener) net.Listener) *observeServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Config{
		DatabaseURL:     databaseURL,
		Logger:          testLogger(t),
		ShutdownTimeout: 15 * time.Second,
	})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		a.Close() //nolint:errcheck
	})
	return &observeServer{app: a, base: base}
}

// startObserveHandler serves only app.New's handler tree (no River workers,
// which need the database to start) on a random loopback port, for tests
// that take the database away.
func startObserveHandler(t *testing.T, databaseURL string) *observeServer {
	t.Helper()
	a, err := app.New(context.Background(), app.Config{
		DatabaseURL: databaseURL,
		Logger:      testLogger(t),
	})
	require.NoError(t, err)
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(func() {
		srv.Close()
		a.Close() //nolint:errcheck
	})
	return &observeServer{app: a, base: srv.URL}
}

func (s *observeServer) get(t *testing.T, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(s.base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), resp.Header
}

// scrape returns the sample lines of /metrics keyed by series (name and
// labels as exposed), valued by the sample text.
func (s *observeServer) scrape(t *testing.T) map[string]string {
	t.Helper()
	status, body, header := s.get(t, "/metrics")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, header.Get("Content-Type"), "text/plain")
	series := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		require.Positive(t, i, line)
		series[line[:i]] = line[i+1:]
	}
	return series
}

// hasSeries reports whether some series of metric name carries every one
// of the given label pairs (written as in the exposition, e.g. `route="/healthz"`).
func hasSeries(series map[string]string, name string, labels ...string) bool {
	for key := range series {
		if key != name && !strings.HasPrefix(key, name+"{") {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(key, l) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

type observeTestArgs struct{}

func (observeTestArgs) Kind() string { return "observe_test" }

func TestMetricsAfterTraffic(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	s := startObserveServer(t, url)

	// Traffic: probes, a playground asset, a miss, and a River job waiting
	// in the queue.
	for range 3 {
		status, _, header := s.get(t, "/healthz")
		require.Equal(t, http.StatusOK, status)
		require.NotEmpty(t, header.Get("X-Request-Id"))
	}
	status, _, _ := s.get(t, "/readyz")
	require.Equal(t, http.StatusOK, status)
	status, _, _ = s.get(t, "/playground/")
	require.Equal(t, http.StatusOK, status)
	status, _, _ = s.get(t, "/no/such/route/4711")
	require.Equal(t, http.StatusNotFound, status)

	riverClient, err := river.NewClient(riverpgxv5.New(s.app.DB.Pool), &river.Config{})
	require.NoError(t, err)
	_, err = riverClient.Insert(context.Background(), observeTestArgs{}, &river.InsertOpts{Queue: "observe_test_queue"})
	require.NoError(t, err)

	// Reports from workers, webhook delivery and the access layer.
	observe.JobOutcome("observe_test", "completed")
	observe.WebhookDelivery("success", 120*time.Millisecond)
	observe.RateLimited()

	series := s.scrape(t)
	// The counters are process-wide and other tests of this package run in
	// parallel, so this server's three probes are a lower bound.
	healthz, err := strconv.ParseFloat(series[`cryptointel_http_requests_total{method="GET",route="/healthz",status="200"}`], 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, healthz, 3.0)
	require.True(t, hasSeries(series, "cryptointel_http_requests_total", `route="/playground/"`, `status="200"`))
	require.True(t, hasSeries(series, "cryptointel_http_requests_total", `route="unmatched"`, `status="404"`))
	require.True(t, hasSeries(series, "cryptointel_http_request_duration_seconds_bucket", `route="/readyz"`, `le="0.005"`))
	require.True(t, hasSeries(series, "cryptointel_http_request_duration_seconds_count", `route="/healthz"`))
	require.Contains(t, series, "cryptointel_http_requests_in_flight")
	for key := range series {
		require.NotContains(t, key, "4711", "a raw URL became a label: %s", key)
	}

	for _, name := range []string{
		"cryptointel_db_pool_acquired_connections", "cryptointel_db_pool_idle_connections",
		"cryptointel_db_pool_total_connections", "cryptointel_db_pool_max_connections",
		"cryptointel_db_pool_acquires_total", "cryptointel_db_pool_new_connections_total",
	} {
		require.Contains(t, series, name)
	}
	require.Equal(t, "16", series["cryptointel_db_pool_max_connections"])

	require.Equal(t, "1", series["cryptointel_river_queue_up"])
	require.Equal(t, "1", series[`cryptointel_river_queue_jobs{queue="observe_test_queue",state="available"}`])
	require.Equal(t, "0", series[`cryptointel_river_queue_jobs{queue="observe_test_queue",state="running"}`])
	require.True(t, hasSeries(series, "cryptointel_river_job_outcomes_total", `kind="observe_test"`, `outcome="completed"`))
	require.True(t, hasSeries(series, "cryptointel_webhook_deliveries_total", `outcome="success"`))
	require.True(t, hasSeries(series, "cryptointel_webhook_delivery_duration_seconds_bucket", `outcome="success"`, `le="0.25"`))
	require.Contains(t, series, "cryptointel_rate_limited_total")
	require.Contains(t, series, "go_goroutines")
	require.Contains(t, series, "process_resident_memory_bytes")
}

// TestMetricsGraphQL checks the GraphQL series once /graphql is mounted
// with the observe.NewGraphQLMetrics extension.
func TestMetricsGraphQL(t *testing.T) {
	t.Parallel()
	s := startObserveServer(t, dbtest.NewURL(t))
	key := playgroundKey(t, s)
	req, err := http.NewRequest(http.MethodPost, s.base+"/graphql",
		strings.NewReader(`{"query":"{ resolveEntities(name: \"nothing-here\", first: 1) { entity { id } } }"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.NotEqual(t, http.StatusNotFound, resp.StatusCode, "/graphql is not mounted yet")

	series := s.scrape(t)
	require.True(t, hasSeries(series, "cryptointel_graphql_operations_total", `operation="query"`),
		"add srv.Use(observe.NewGraphQLMetrics()) to the gqlgen server")
	require.True(t, hasSeries(series, "cryptointel_graphql_operation_complexity_bucket", `operation="query"`))
}

// flakyProxy forwards TCP connections to a target while up and refuses
// them while down, to take the database away from a running service.
type flakyProxy struct {
	addr, target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newFlakyProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &flakyProxy{addr: ln.Addr().String(), target: target, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *flakyProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[u] = struct{}{}, struct{}{}
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }() //nolint:errcheck
			go func() { io.Copy(c, u); c.Close() }() //nolint:errcheck
		}
	}()
}

// down stops listening and cuts every forwarded connection.
func (p *flakyProxy) down() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// up listens again on the same address.
func (p *flakyProxy) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(t, err)
	p.serve(ln)
}

func TestReadyzFollowsDatabase(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	target := strings.SplitN(strings.SplitN(dbURL, "@", 2)[1], "/", 2)[0]
	proxy := newFlakyProxy(t, target)
	proxied := strings.Replace(dbURL, "@"+target+"/", "@"+proxy.addr+"/", 1)
	s := startObserveHandler(t, proxied)

	ready := func() (int, string) {
		status, body, _ := s.get(t, "/readyz")
		return status, body
	}
	// readyAfterRecovery asks a bounded number of times: the first ask after
	// the database returns may still draw a pooled connection the outage cut.
	readyAfterRecovery := func() int {
		var status int
		for range 3 {
			if status, _ = ready(); status == http.StatusOK {
				break
			}
		}
		return status
	}

	status, body := ready()
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"status":"ready"}`, body)

	status, _, _ = s.get(t, "/healthz")
	require.Equal(t, http.StatusOK, status)

	proxy.down()
	status, body = ready()
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.JSONEq(t, `{"status":"unavailable","error":"database unreachable"}`, body)
	// The process is still alive while the database is away.
	status, _, _ = s.get(t, "/healthz")
	require.Equal(t, http.StatusOK, status)

	proxy.up(t)
	require.Equal(t, http.StatusOK, readyAfterRecovery())
}

func TestReadyzWithoutDatabase(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())

	s := startObserveHandler(t, "postgres://cryptointel:cryptointel@"+closed+"/cryptointel?sslmode=disable")
	status, body, _ := s.get(t, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.JSONEq(t, `{"status":"unavailable","error":"database unreachable"}`, body)

	// /metrics still answers, reporting the queue as unreadable.
	series := s.scrape(t)
	require.Equal(t, "0", series["cryptointel_river_queue_up"])
	require.Contains(t, series, "cryptointel_db_pool_total_connections")
}
