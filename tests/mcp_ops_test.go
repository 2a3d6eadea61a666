package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/mcp"
)

// mcpGoroutines counts the goroutines running the MCP surface: the SDK's
// and this service's mcp package.
func mcpGoroutines() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "modelcontextprotocol/go-sdk") || strings.Contains(g, "cryptointel/mcp.") {
			n++
		}
	}
	return n
}

// TestMCPAbruptDisconnectsLeakNothing: clients that vanish mid-call (the
// request sent and the connection closed, or closed half way through the
// body, or after the first bytes of the answer) leave no MCP goroutine and
// no database connection behind: the server is stateless (no session
// outlives its request) and a call's context ends with its request. Not
// parallel: it counts the process's goroutines.
func TestMCPAbruptDisconnectsLeakNothing(t *testing.T) {
	s := startRESTServer(t)
	key := s.apiKey(t)
	cs := mcpSession(t, s.base, key)
	structured(t, callTool(t, cs, "search_events", map[string]any{"query": "Ethereum"}))
	cs.Close()
	// Background work (the job workers) may hold connections of its own
	// at any moment. The LISTEN connections (the live hub's, the webhook
	// poller's, River's) are not the pool's: the baseline does not depend
	// on whether they have connected yet.
	held := s.app.DB.Pool.Stat().AcquiredConns()
	addr := strings.TrimPrefix(s.base, "http://")
	call := func(id int) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"latest_events","arguments":{"window":"30d","limit":25,"detail":"full"}}}`, id)
		return "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + key +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: " +
			fmt.Sprint(len(body)) + "\r\n\r\n" + body
	}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer conn.Close()
			req := call(i)
			switch i % 3 {
			case 0: // the whole request, then gone
				conn.Write([]byte(req)) //nolint:errcheck
			case 1: // half the body, then gone
				conn.Write([]byte(req[:len(req)-40])) //nolint:errcheck
			case 2: // the first bytes of the answer, then gone
				conn.Write([]byte(req))          //nolint:errcheck
				bufio.NewReader(conn).ReadByte() //nolint:errcheck
			}
		}()
	}
	wg.Wait()

	// One sample decides: background work may take a connection for a
	// moment at any time, so the figures asserted are those of the sample
	// that ended the wait, not a second reading after it.
	deadline := time.Now().Add(30 * time.Second)
	goroutines, acquired := mcpGoroutines(), s.app.DB.Pool.Stat().AcquiredConns()
	for (goroutines > 0 || acquired > held) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		goroutines, acquired = mcpGoroutines(), s.app.DB.Pool.Stat().AcquiredConns()
	}
	require.Zero(t, goroutines, "no MCP goroutine outlives its request")
	require.LessOrEqual(t, acquired, held, "every database connection the calls took is back in the pool")
	// And the server serves the next client as usual.
	structured(t, callTool(t, mcpSession(t, s.base, key), "top_signals", map[string]any{"limit": 1}))
}

// TestMCPLogsAndMetrics: each tool call is one log line (tool, key
// prefix, bytes, duration, outcome, request id: its /mcp request's own) and is counted in /metrics
// per tool and outcome; the /mcp request's own line names the route /mcp,
// not the /v1 route it called. Not parallel: the metrics are the
// process's, and other tests call the same tools.
func TestMCPLogsAndMetrics(t *testing.T) {
	logs := &syncBuffer{}
	s := startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, restFixture()) }, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	key := s.apiKey(t)
	cs := mcpSession(t, s.base, key)
	before := string(s.metrics(t)) // the metrics are process-wide: other tests' calls count too
	structured(t, callTool(t, cs, "search_events", map[string]any{"query": "Ethereum"}))
	res := callTool(t, cs, "search_events", map[string]any{"limit": 3})
	require.True(t, res.IsError)
	res = callTool(t, cs, "get_entity", map[string]any{"id": 999999})
	require.True(t, res.IsError)

	var lines []map[string]any
	var routes []string
	for _, l := range strings.Split(logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch m["msg"] {
		case "mcp tool":
			lines = append(lines, m)
		case "http request":
			if m["path"] == "/mcp" {
				routes = append(routes, m["route"].(string))
			}
		}
	}
	require.Len(t, lines, 3, logs.String())
	for i, want := range []struct{ tool, outcome string }{
		{"search_events", "ok"}, {"search_events", "invalid_arguments"}, {"get_entity", "not_found"},
	} {
		l := lines[i]
		require.Equal(t, want.tool, l["tool"])
		require.Equal(t, want.outcome, l["outcome"])
		require.Equal(t, key[:cryptointel.APIKeyVisiblePrefix], l["key_prefix"], "the key's support prefix, never the key")
		require.NotEmpty(t, l["request_id"])
		require.Contains(t, l, "duration_ms")
		require.Contains(t, l, "bytes")
	}
	require.Greater(t, lines[0]["bytes"], float64(100))
	// A request that is one tool call has one line: the request's own,
	// named "mcp tool", not an "http request" line beside it.
	requests := map[any]bool{}
	for _, l := range strings.Split(logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "http request" {
			requests[m["request_id"]] = true
		}
	}
	for _, l := range lines {
		require.Equal(t, "/mcp", l["route"], "the tool call's line is its /mcp request's")
		require.Equal(t, float64(200), l["status"])
		require.False(t, requests[l["request_id"]], "one line per tool call: %v", l)
	}
	require.NotContains(t, logs.String(), key, "the key is never logged")
	for _, r := range routes {
		require.Equal(t, "/mcp", r)
	}

	after := string(s.metrics(t))
	for series, want := range map[string]float64{
		`cryptointel_mcp_calls_total{kind="tool",name="search_events",outcome="ok"}`:                1,
		`cryptointel_mcp_calls_total{kind="tool",name="search_events",outcome="invalid_arguments"}`: 1,
		`cryptointel_mcp_calls_total{kind="tool",name="get_entity",outcome="not_found"}`:            1,
		`cryptointel_mcp_call_duration_seconds_count{kind="tool",name="search_events"}`:             2,
	} {
		require.Equal(t, want, seriesValue(after, series)-seriesValue(before, series), "%s\n%s", series, mcpSeries(after))
	}
}

// seriesValue is the value of a series in a /metrics body (0 when absent).
func seriesValue(metrics, series string) float64 {
	for _, l := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			var f float64
			fmt.Sscan(v, &f) //nolint:errcheck
			return f
		}
	}
	return 0
}

// TestMCPResultsAreBounded: a result over mcp.MaxResultBytes keeps, in
// every list, the first items that fit, and its hint says so and what to
// call instead; detail summary of the same call fits whole.
func TestMCPResultsAreBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("A long evidence post that makes this event heavy. ", 40)
	s := startRESTServerWith(t, func(store *db.DB) {
		lines := restFixture()
		for i := range 25 {
			lines = append(lines, fmt.Sprintf(`{"kind":"event","id":%d,"title":"Heavy %d","eventCategory":"analysis","eventSubcategory":"report","summary":"Heavy event.","owners":[101],"significance":5,"evidence":[{"id":%d,"content":%q,"url":"https://example.org/h","timestamp":%q}]}`,
				9000+i, i, 90000+i, long, ts(-time.Duration(i+1)*time.Second)))
		}
		ingestLines(t, store, lines)
	})
	cs := mcpSession(t, s.base, s.apiKey(t))
	full := callTool(t, cs, "latest_events", map[string]any{"window": "24h", "limit": 25, "detail": "full", "sort": "recency"})
	got := structured(t, full)
	b, _ := json.Marshal(full.StructuredContent)
	require.LessOrEqual(t, len(b), mcp.MaxResultBytes)
	data := got["data"].([]any)
	require.Greater(t, len(data), 0)
	require.Less(t, len(data), 25, "cut to fit")
	require.Contains(t, got["hint"], "cut to fit the output budget")
	require.Contains(t, got["hint"], fmt.Sprintf("first %d items", len(data)))
	require.Equal(t, "Heavy 0", data[0].(map[string]any)["title"], "the first items are kept, in order")

	summary := structured(t, callTool(t, cs, "latest_events", map[string]any{"window": "24h", "limit": 25, "sort": "recency"}))
	require.Len(t, summary["data"], 25)
	require.NotContains(t, summary["hint"], "cut to fit")
}

// mcpSeries are the MCP lines of a /metrics body.
func mcpSeries(metrics string) string {
	var out []string
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "cryptointel_mcp_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMCPTimeBudget: /mcp requests are held to the request time budget
// like /v1's (its clients accept text/event-stream, as the protocol
// requires, but it never streams): a tool call over budget is the route's
// timeout message, as a tool error.
func TestMCPTimeBudget(t *testing.T) {
	t.Parallel()
	a, addr := startLimitsServer(t, app.Config{RequestTimeout: time.Nanosecond})
	key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)
	status, _, body := mcpPost(t, "http://"+addr, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"top_signals","arguments":{}}}`,
		http.Header{"Authorization": {"Bearer " + key}})
	require.Equal(t, http.StatusOK, status, "%s", body)
	var res struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &res), "%s", body)
	require.True(t, res.Result.IsError, "%s", body)
	require.Equal(t, cryptointel.MsgTimeout, res.Result.Content[0].Text)
}
