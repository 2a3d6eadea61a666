package tests

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/rest"
)

// TestMCPExpiredKeyCalledExpired: an expired key on the MCP endpoint's
// free requests (tools/list) is told it expired, not that it was revoked.
func TestMCPExpiredKeyCalledExpired(t *testing.T) {
	t.Parallel()
	s := startAccessServer(t, dbtest.NewURL(t), accesstest.NewFacilitator(t))
	key, id := accesstest.NewKey(t, s.app.DB, "free")
	_, err := s.app.DB.Pool.Exec(context.Background(), `UPDATE api_keys SET expires_at = now() - interval '1 hour' WHERE id = $1`, id)
	require.NoError(t, err)
	r := s.mcpPost(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, http.Header{"Authorization": {"Bearer " + key}})
	require.Equal(t, http.StatusUnauthorized, r.status, "%s", r.body)
	require.JSONEq(t, `{"error":"`+access.MsgExpiredKey+`"}`, errorOnly(t, r.body))
}

// TestMetricsBehindToken: with METRICS_TOKEN set, /metrics answers only a
// scrape carrying it (it was open to anyone reaching the port).
func TestMetricsBehindToken(t *testing.T) {
	t.Parallel()
	s := startRESTServerWith(t, func(*db.DB) {}, func(c *app.Config) { c.MetricsToken = "scrape-secret" })
	for _, auth := range []string{"", "Bearer wrong", "scrape-secret"} {
		req, err := http.NewRequest(http.MethodGet, s.base+"/metrics", nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%q: %s", auth, body)
		require.JSONEq(t, `{"error":"`+app.MsgMetricsToken+`"}`, string(body))
	}
	req, err := http.NewRequest(http.MethodGet, s.base+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer scrape-secret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "cryptointel_")
}

// TestQueryEdgesAnsweredPlainly: a ';' in a query string is a clear 400
// (Go's URL parser dropped its pair without a word); an id beyond 32 bits
// is out of range, never another id (/v1/keys/9223372036854775808 named
// key 2147483647); a 100 KB parameter name is quoted cut, not whole.
func TestQueryEdgesAnsweredPlainly(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	r := s.get(t, "/v1/latest?limit=5;category=funding")
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, rest.MsgQuerySemicolon, r.Error(t))

	r = s.get(t, "/v1/entities/byId?id=2147483648")
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, "id must be at most 2147483647", r.Error(t))
	r = s.do(t, http.MethodDelete, "/v1/keys/9223372036854775808")
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, "id must be at most 2147483647", r.Error(t))
	r = s.get(t, "/v1/entities/byId?id=-9223372036854775809")
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, "id must be at least -2147483648", r.Error(t))

	r = s.get(t, "/v1/latest?"+strings.Repeat("n", 100<<10)+"=1")
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Less(t, len(r.Body), 512, "%.200s", r.Body)
	require.Contains(t, r.Error(t), `unknown parameter "nnnn`)
	require.Contains(t, r.Error(t), `…"`)
}

// TestRevokedKeyClosesItsWebSocket: a key revoked while its WebSocket
// connection is open has the connection closed (4403, the access layer's
// message) at its next operation, instead of left open answering each
// operation with an error.
func TestRevokedKeyClosesItsWebSocket(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, id := accesstest.NewKey(t, s.store, "pro")
	_, _, sock := rawHandshake(t, s.base, http.MethodGet, "/graphql", "Authorization: Bearer "+key, "Upgrade: websocket", "Connection: Upgrade")
	require.NotNil(t, sock)
	defer sock.closeNow()
	sock.init(t, nil)
	res := sock.query(t, "1", "{ __typename }")
	require.Nil(t, res["errors"], "%v", res)

	_, err := s.store.Pool.Exec(context.Background(), `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, id)
	require.NoError(t, err)
	sock.send(t, map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"query": "{ __typename }"}})
	for {
		m, closed, err := sock.recv(20 * time.Second)
		require.NoError(t, err, "the connection is closed with a close frame, in bounded time")
		if closed != nil {
			require.Equal(t, 4403, closed.code)
			require.Equal(t, access.MsgRevokedKey, closed.reason)
			return
		}
		if p, ok := m["payload"].(map[string]any); ok && m["type"] == "next" {
			require.Nil(t, p["data"], "a revoked key is served nothing: %v", m)
		}
	}
}
