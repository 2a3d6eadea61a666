package mcp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

// TestOriginChecked: /mcp refuses 403 a browser request from a foreign
// Origin, as the MCP transport requires, and — listening on loopback — a
// request naming another Host (DNS rebinding); requests without Origin,
// from its own origin or from an allowed one pass.
func TestOriginChecked(t *testing.T) {
	s := testServer(t)
	s.cfg.AllowedOrigins = []string{"*.allowed.example"}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	own := strings.TrimPrefix(srv.URL, "http://")
	send := func(host, origin string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		host, origin string
		want         int
		msg          string
	}{
		{"", "", http.StatusOK, ""},
		{"", "http://" + own, http.StatusOK, ""},
		{"", "https://app.allowed.example", http.StatusOK, ""},
		{"localhost", "http://localhost", http.StatusOK, ""},
		{"", "http://evil.example", http.StatusForbidden, MsgOriginForbidden},
		{"", "null", http.StatusForbidden, MsgOriginForbidden},
		{"evil.example:8080", "", http.StatusForbidden, MsgHostForbidden},
		{"evil.example:8080", "http://evil.example:8080", http.StatusForbidden, MsgHostForbidden},
	} {
		status, body := send(c.host, c.origin)
		require.Equal(t, c.want, status, "Host %q Origin %q: %s", c.host, c.origin, body)
		if c.msg != "" {
			var e map[string]any
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			require.Equal(t, c.msg, e["error"], body)
			require.Equal(t, cryptointel.EFORBIDDEN, e["code"], body)
		}
	}
}
