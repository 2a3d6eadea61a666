package tests

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
)

// upgradeSpellings are the ways a request can ask to switch protocols:
// the canonical WebSocket handshake, every spelling RFC 6455 and RFC 9110
// allow for it (case, lists, repeated headers, whitespace), and upgrades
// to anything else. The WebSocket library accepts any Upgrade header that
// lists the token "websocket"; so must the access layer's meter.
var upgradeSpellings = []struct {
	name  string
	lines []string
}{
	{"canonical", []string{"Upgrade: websocket", "Connection: Upgrade"}},
	{"WebSocket", []string{"Upgrade: WebSocket", "Connection: upgrade"}},
	{"upper case", []string{"Upgrade: WEBSOCKET", "Connection: UPGRADE"}},
	{"listed second", []string{"Upgrade: foo, websocket", "Connection: Upgrade"}},
	{"listed first", []string{"Upgrade: websocket, foo", "Connection: keep-alive, Upgrade"}},
	{"two Upgrade headers", []string{"Upgrade: foo", "Upgrade: websocket", "Connection: Upgrade"}},
	{"Upgrade twice", []string{"Upgrade: websocket", "Upgrade: websocket", "Connection: Upgrade"}},
	{"padded", []string{"Upgrade:   websocket  ", "Connection:   Upgrade  "}},
	{"trailing comma", []string{"Upgrade: websocket,", "Connection: Upgrade,"}},
	{"two Connection headers", []string{"Upgrade: websocket", "Connection: keep-alive", "Connection: Upgrade"}},
	{"close and upgrade", []string{"Upgrade: websocket", "Connection: close, Upgrade"}},
	{"without Connection", []string{"Upgrade: websocket"}},
	{"Connection only", []string{"Connection: Upgrade"}},
	{"empty Upgrade", []string{"Upgrade: ", "Connection: Upgrade"}},
	{"h2c", []string{"Upgrade: h2c", "Connection: Upgrade, HTTP2-Settings", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"}},
	{"another protocol", []string{"Upgrade: foo", "Connection: Upgrade"}},
	{"versioned token", []string{"Upgrade: websocket/13", "Connection: Upgrade"}},
	{"with event-stream", []string{"Upgrade: websocket", "Connection: Upgrade", "Accept: text/event-stream"}},
	{"listed, with event-stream", []string{"Upgrade: foo, websocket", "Connection: Upgrade", "Accept: text/event-stream"}},
}

// unkeyedPaths are served outside the API-key access layer.
var unkeyedPaths = []string{"/healthz", "/readyz", "/metrics", "/openapi.json", "/playground", "/docs", "/",
	"/admin/ingest", "/v1/export/files/00000000-0000-0000-0000-000000000001?account=1&expires=1&sig=00"}

// TestUpgradeSpellings sends every spelling of a protocol upgrade to every
// path the service serves, with a key, and checks that each one is either
// metered or refused: a path of the access layer counts the request in
// the rate window; only /graphql ever switches protocols (101), and
// only for a WebSocket upgrade, whose handshake is counted in the window
// and whose every operation is then metered at its cost like a request.
// No other path upgrades, and none answers 5xx.
func TestUpgradeSpellings(t *testing.T) {
	t.Parallel()
	s := startHostileServer(t)
	key, keyID := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	auth := "Authorization: Bearer " + key
	ctx := context.Background()
	windowRequests := func() int {
		start := restNow.Add(time.Duration(s.offset.Load())).UTC().Truncate(time.Minute)
		var n int
		require.NoError(t, s.store.Pool.QueryRow(ctx,
			`SELECT coalesce(sum(requests), 0) FROM account_rate_windows
			WHERE account_id = (SELECT account_id FROM api_keys WHERE id = $1) AND window_start = $2`, keyID, start).Scan(&n))
		return n
	}
	credits := func() int64 {
		var n int64
		require.NoError(t, s.store.Pool.QueryRow(ctx,
			`SELECT coalesce(sum(credits), 0) FROM account_usage_monthly WHERE account_id = (SELECT account_id FROM api_keys WHERE id = $1)`, keyID).Scan(&n))
		return n
	}

	param := regexp.MustCompile(`\{[^}]+\}`)
	type target struct{ method, path string }
	keyed := []target{{http.MethodGet, "/graphql"}, {http.MethodPost, "/graphql"}}
	for _, r := range s.app.V1Routes() {
		keyed = append(keyed, target{r.Method, param.ReplaceAllString(r.Path, "101")})
	}
	var sockets, metered, unkeyed int
	for _, sp := range upgradeSpellings {
		for _, tg := range keyed {
			name := fmt.Sprintf("%s %s %s", sp.name, tg.method, tg.path)
			s.nextMinute() // a fresh rate window for each request
			before := credits()
			resp, body, sock := rawHandshake(t, s.base, tg.method, tg.path, append([]string{auth}, sp.lines...)...)
			require.Less(t, resp.StatusCode, 500, "%s: %s", name, body)
			if sock == nil {
				require.Equal(t, 1, windowRequests(), "%s answered %d without being counted in the rate window", name, resp.StatusCode)
				metered++
				continue
			}
			// Switched: only /graphql does, and only for WebSocket.
			sockets++
			require.Equal(t, "/graphql", tg.path, "%s switched protocols", name)
			require.Equal(t, 1, windowRequests(), "%s: the handshake is counted in the rate window", name)
			sock.init(t, nil)
			for i := 1; i <= 2; i++ {
				res := sock.query(t, fmt.Sprint(i), `{ entity(id: 101) { id canonicalName } }`)
				require.Nil(t, res["errors"], "%s: %v", name, res)
				cost := jsonNumber(res["extensions"].(map[string]any)["cost"])
				require.Equal(t, "3", cost, "%s", name)
				require.Equal(t, 1+i, windowRequests(), "%s: operation %d is counted in the rate window", name, i)
				require.Equal(t, before+int64(3*i), credits(), "%s: operation %d is charged its cost", name, i)
			}
			sock.closeNow()
		}
		for _, p := range unkeyedPaths {
			resp, body, sock := rawHandshake(t, s.base, http.MethodGet, p, append([]string{auth}, sp.lines...)...)
			if sock != nil {
				sock.closeNow()
			}
			require.Nil(t, sock, "%s %s switched protocols", sp.name, p)
			require.Less(t, resp.StatusCode, 500, "%s %s: %s", sp.name, p, body)
			unkeyed++
		}
	}
	// Every WebSocket spelling with Connection: Upgrade opened a socket on
	// GET /graphql.
	require.GreaterOrEqual(t, sockets, 11, "sockets opened")
	summary(t, "upgrade spellings: %d spellings × %d paths: %d sockets opened on /graphql (handshake and every operation metered), %d metered answers, %d unkeyed answers, 0 upgrades elsewhere, 0 5xx",
		len(upgradeSpellings), len(keyed)+len(unkeyedPaths), sockets, metered, unkeyed)
}
