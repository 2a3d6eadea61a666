package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAttackerInputNotEchoedWhole: an error never quotes a client's input
// at full size, nor names Go types: a 100 KB argument name, a 750 KB
// params and an id beyond 32 bits are answered with short, plain messages.
func TestAttackerInputNotEchoedWhole(t *testing.T) {
	s := testServer(t)
	big := strings.Repeat("n", 100<<10)
	for name, body := range map[string]string{
		"argument name": `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"q","` + big + `":1}}}`,
		"params string": `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"` + strings.Repeat("p", 750<<10) + `"}`,
		"params array":  `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":["` + strings.Repeat("p", 700<<10) + `"]}`,
		"tool name":     `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + big + `","arguments":{}}}`,
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2025-06-18")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		out := w.Body.String()
		require.Less(t, len(out), 2048, "%s: %d bytes: %.300s", name, len(out), out)
		require.NotContains(t, out, "Go value", name)
		require.NotContains(t, out, "mcp.", name)
	}
	res := post(t, s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_entity","arguments":{"id":9223372036854775807}}}`)
	require.Contains(t, fmtJSON(res), "id must be at most 2147483647 (got 9223372036854775808)")
}

// fmtJSON renders a decoded JSON value as text for matching.
func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
