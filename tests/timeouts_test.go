package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// startLimitsServer starts the service with cfg's time limits.
func startLimitsServer(t *testing.T, cfg app.Config) (*app.App, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg.DatabaseURL = dbtest.NewURL(t)
	cfg.DBMaxConns = 6
	cfg.Logger = testLogger(t)
	cfg.ShutdownTimeout = 15 * time.Second
	cfg.ExportDir = t.TempDir()
	cfg.AdminToken = hostileAdminToken
	a, err := app.New(ctx, cfg)
	require.NoError(t, err)
	require.NoError(t, a.Migrate(ctx))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		a.Close() //nolint:errcheck
	})
	return a, ln.Addr().String()
}

// TestBodyReadTimeout: a client that promises a body and stalls is answered
// 408 once BODY_READ_TIMEOUT has passed, and its connection is closed — on
// every route that reads a body. (Before, such a request held its
// connection open for as long as the client liked.)
func TestBodyReadTimeout(t *testing.T) {
	t.Parallel()
	a, addr := startLimitsServer(t, app.Config{BodyReadTimeout: 300 * time.Millisecond})
	key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)
	for _, c := range []struct{ path, auth string }{
		{"/graphql", "Bearer " + key},
		{"/v1/webhooks", "Bearer " + key},
		{"/v1/export/jobs", "Bearer " + key},
		{"/admin/ingest", "Bearer " + hostileAdminToken},
	} {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer conn.Close()
			// Promise 100 bytes, send 8.
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"query\"", c.path, addr, c.auth)
			// A generous guard: without the limit the server never answers.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err, "no answer to a stalled body")
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, string(body))
			require.Contains(t, string(body), "Request body not received within 300ms", string(body))
			require.True(t, resp.Close || resp.Header.Get("Connection") == "close", "connection kept open")
		})
	}
}

// TestRequestTimeBudget: a request whose time budget is spent answers 503
// with the budget's message, on /v1 and /graphql alike; with the budget
// spent before it starts, a GraphQL document is not even parsed. Liveness
// still answers.
func TestRequestTimeBudget(t *testing.T) {
	t.Parallel()
	a, addr := startLimitsServer(t, app.Config{RequestTimeout: time.Nanosecond})
	key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)
	do := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/latest", ""},
		{http.MethodGet, "/v1/usage", ""},
		{http.MethodPost, "/graphql", `{"query":"{ __typename }"}`},
		{http.MethodPost, "/graphql", `{"query":"{ not a document"}`},
	} {
		status, body := do(c.method, c.path, c.body)
		require.Equal(t, http.StatusServiceUnavailable, status, "%s %s: %s", c.method, c.path, body)
		require.Contains(t, body, cryptointel.MsgTimeout, "%s %s", c.method, c.path)
	}
	status, _ := do(http.MethodGet, "/healthz", "")
	require.Equal(t, http.StatusOK, status)
}

// TestStreamsOutliveTheTimeLimits: long-lived streams are exempt from the
// request time budget, and a stream whose request had a body (graphql-sse)
// is not cut when the body read timeout passes: /v1/stream (asked for the
// way curl does, without Accept) and a graphql-sse subscription both keep
// sending heartbeats well past both limits.
func TestStreamsOutliveTheTimeLimits(t *testing.T) {
	t.Parallel()
	const limit = 200 * time.Millisecond
	s := startStreamServer(t, "", app.Config{RequestTimeout: limit, BodyReadTimeout: limit, StreamHeartbeat: 50 * time.Millisecond})
	key := s.key(t, cryptointel.PlanEnterprise)
	for _, c := range []struct{ name, method, path, accept, body string }{
		{"/v1/stream", http.MethodGet, "/v1/stream", "", ""},
		{"graphql-sse", http.MethodPost, "/graphql", "text/event-stream", `{"query":"subscription { events { id } }"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(c.method, s.base+c.path, strings.NewReader(c.body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+key)
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			// Read until five times the limits have passed: the stream must
			// still be open then (it sends a heartbeat every 50 ms).
			start := time.Now()
			r := bufio.NewReader(resp.Body)
			lines := 0
			for time.Since(start) < 5*limit {
				_, err := r.ReadString('\n')
				require.NoError(t, err, "the stream ended after %s (%d lines)", time.Since(start), lines)
				lines++
			}
		})
	}
}
