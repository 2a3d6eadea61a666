package tests

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
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
	require.JSONEq(t, `{"error":"`+access.MsgExpiredKey+`"}`, string(r.body))
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
