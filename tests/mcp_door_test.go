package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/mcp"
)

// windowLeft is what a key has left of its rate window, read from a /v1
// request (which itself takes one).
func windowLeft(t *testing.T, s *restServer, key string) int {
	t.Helper()
	r := s.doAs(t, key, http.MethodGet, "/v1/entities/byId?id=101")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	n, err := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining"))
	require.NoError(t, err)
	return n
}

// legacyMCP are the headers of a client of a protocol version that still
// has JSON-RPC batches.
func legacyMCP(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}, "Mcp-Protocol-Version": {"2025-03-26"}}
}

// TestMCPBatchBounded: a JSON-RPC batch of 5,000 tools/call is refused
// whole with a JSON-RPC error before any of it runs or is metered: the
// key's window is untouched. A batch within the bound runs.
func TestMCPBatchBounded(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	calls := make([]string, 5000)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"top_signals","arguments":{"limit":1}}}`, i+1)
	}
	status, _, body := mcpPost(t, s.base, "["+strings.Join(calls, ",")+"]", legacyMCP(key))
	require.Equal(t, http.StatusBadRequest, status, "%.300s", body)
	var resp struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &resp), "%.300s", body)
	require.Equal(t, -32600, resp.Error.Code)
	require.Equal(t, fmt.Sprintf(mcp.MsgBatchTooLargeFmt, 5000, mcp.MaxBatchMessages), resp.Error.Message)
	require.Equal(t, access.DefaultRateLimit-1, windowLeft(t, s, key), "nothing of the batch counted")

	status, _, body = mcpPost(t, s.base, "["+strings.Join(calls[:3], ",")+"]", legacyMCP(key))
	require.Equal(t, http.StatusOK, status, "%.300s", body)
	var answers []map[string]any
	require.NoError(t, json.Unmarshal(body, &answers), "%.300s", body)
	require.Len(t, answers, 3)
	require.Equal(t, access.DefaultRateLimit-5, windowLeft(t, s, key), "three calls, two /v1 reads")
}

// TestMCPRefusedCallsAndDiscoveryCount: a tool call refused for its
// arguments, a list request and a notification each count in the key's
// rate window (one request each), as every request of the key does.
func TestMCPRefusedCallsAndDiscoveryCount(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	h := http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}}
	bad := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search_events","arguments":{"limit":0}}}`
	for range 5 {
		status, _, body := mcpPost(t, s.base, bad, h)
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.Contains(t, string(body), `"isError":true`)
	}
	require.Equal(t, access.DefaultRateLimit-6, windowLeft(t, s, key), "five refused calls and the read")

	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for _, b := range []string{list, list, note} {
		status, _, body := mcpPost(t, s.base, b, h)
		require.Less(t, status, 300, "%.300s", body)
	}
	require.Equal(t, access.DefaultRateLimit-10, windowLeft(t, s, key), "two lists, a notification and the read")

	// Over the window, a list is refused like any request: 429 with
	// Retry-After.
	for windowLeft(t, s, key) > 0 {
	}
	status, header, body := mcpPost(t, s.base, list, h)
	require.Equal(t, http.StatusTooManyRequests, status, "%s", body)
	require.NotEmpty(t, header.Get("Retry-After"))
	require.JSONEq(t, `{"error":"`+access.MsgRateLimited+`"}`, errorOnly(t, body))

	// And a batch is refused whole, before any of it runs.
	status, header, body = mcpPost(t, s.base, `[`+bad+`,`+list+`]`, legacyMCP(key))
	require.Equal(t, http.StatusTooManyRequests, status, "%s", body)
	require.NotEmpty(t, header.Get("Retry-After"))
}

// TestMCPAnonymousDiscoveryThrottled: with pay-per-request on, discovery
// needs no key, but each anonymous message counts against the client
// address's limit (INVALID_KEY_LIMIT, 60 a minute): past it, 429. (On
// /mcp/x402: /mcp asks a client without any credential to authorize.)
func TestMCPAnonymousDiscoveryThrottled(t *testing.T) {
	t.Parallel()
	s := startAccessServer(t, dbtest.NewURL(t), accesstest.NewFacilitator(t))
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	h := http.Header{"Content-Type": {"application/json"}}
	for i := range access.DefaultAddressLimit {
		r := s.mcpPost(t, list, h)
		require.Equal(t, http.StatusOK, r.status, "%d: %.300s", i, r.body)
	}
	r := s.mcpPost(t, list, h)
	require.Equal(t, http.StatusTooManyRequests, r.status, "%.300s", r.body)
	require.NotEmpty(t, r.header.Get("Retry-After"))
	require.Contains(t, string(r.body), "Too many requests without a valid API key from your address: at most 60 per minute.")
}

// TestMCPPromptArgumentsBounded: a prompt argument over
// mcp.MaxPromptArgumentBytes is refused, not quoted back.
func TestMCPPromptArgumentsBounded(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	h := http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}}
	huge := strings.Repeat("a", 660<<10)
	status, _, body := mcpPost(t, s.base, `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"what_happened","arguments":{"subject":"`+huge+`"}}}`, h)
	require.Less(t, len(body), 4096, "the argument is not quoted back")
	require.Contains(t, string(body), fmt.Sprintf(mcp.MsgPromptArgumentTooLongFmt, "subject", mcp.MaxPromptArgumentBytes), "status %d", status)

	status, _, body = mcpPost(t, s.base, `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"what_happened","arguments":{"subject":"Aave"}}}`, h)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(body), "What happened to Aave")
}
