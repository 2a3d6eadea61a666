package tests

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
)

// TestStreamBadInput sends the same bad subscriptions over graphql-ws,
// graphql-sse (the reference clients) and GET /v1/stream, and checks each
// gets the clear error a query would: unknown filters, bad, foreign and
// expired cursors, an unknown entity, a plan without streams, a bad key.
func TestStreamBadInput(t *testing.T) {
	t.Parallel()
	requireLiveClients(t)
	var offset atomic.Int64 // moves the server's clock
	s := startStreamServer(t, "", app.Config{})
	s.app.DB.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	ingestEvents(t, s.app.DB, streamFixtureEntities...)
	ingestEvents(t, s.app.DB, streamEvent("funding", nil), streamEvent("funding", nil))
	pro := s.key(t, cryptointel.PlanPro)
	free := s.key(t, cryptointel.PlanFree)
	business := s.key(t, cryptointel.PlanBusiness)

	// A genuine cursor of another query (the bulk feed), and one that will
	// have expired once the clock moves 8 days on.
	feed := gqlPost(t, s.base, business, `query($since: Time!) { feed(since: $since, first: 1) { nextCursor } }`,
		map[string]any{"since": time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)})
	require.Nil(t, feed["errors"], "%v", feed)
	foreign := jobj(t, jobj(t, feed["data"])["feed"])["nextCursor"].(string)
	old := streamCursor(t, s.base, pro)
	offset.Store(int64(8 * 24 * time.Hour))
	const (
		msgInvalidCursor = "invalid cursor"
		msgForeign       = "after is not a stream cursor: pass an extensions.cursor of a pushed result, streamCursor, or a /v1/stream event id"
		msgExpired       = "cursor has expired: streams resume from cursors up to 7 days old; start a new stream (backfill with the bulk feeds)"
		msgPlan          = "This endpoint requires the pro plan or higher."
		msgNoEntity      = "Entity not found"
	)

	type gqlCase struct {
		name, key, query string
		vars             map[string]any
		code, msg        string
	}
	for _, tc := range []gqlCase{
		{"unknown filter", pro, `subscription { events(organizationId: 1) { id } }`, nil, "GRAPHQL_VALIDATION_FAILED",
			`Unknown argument "organizationId" on field "Subscription.events".`},
		{"bad surface", pro, `subscription { events(surface: ALL) { id } }`, nil, "GRAPHQL_VALIDATION_FAILED",
			`Value "ALL" does not exist in "Surface" enum.`},
		{"garbage cursor", pro, subscribeEvents, map[string]any{"after": "not-a-cursor"}, cryptointel.EINVALID, msgInvalidCursor},
		{"foreign cursor", pro, subscribeEvents, map[string]any{"after": foreign}, cryptointel.EINVALID, msgForeign},
		{"expired cursor", pro, subscribeEvents, map[string]any{"after": old}, cryptointel.EINVALID, msgExpired},
		{"unknown entity", pro, subscribeEvents, map[string]any{"entityId": 424242}, cryptointel.ENOTFOUND, msgNoEntity},
		{"plan without streams", free, subscribeEvents, nil, cryptointel.EFORBIDDEN, msgPlan},
	} {
		for _, transport := range []string{"ws", "sse"} {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				c := startLiveClient(t, transport, s.base, tc.key, tc.query, tc.vars, map[string]string{"ws": "init", "sse": "header"}[transport])
				msg, code, _ := c.finalError(t)
				require.Equal(t, tc.code, code, msg)
				require.Equal(t, tc.msg, msg)
			})
		}
	}

	// A bad key: graphql-ws closes with 4403 and the access layer's message
	// (from the payload or the upgrade's header); graphql-sse gets the 401.
	for _, tc := range []struct{ key, auth, msg string }{
		{"ci_nope", "init", "Invalid API key."},
		{"ci_nope", "header", "Invalid API key."},
		{"", "none", "Missing API key. Send Authorization: Bearer <API_KEY> as a header or in the connection_init payload."},
	} {
		t.Run("ws/bad key "+tc.auth, func(t *testing.T) {
			c := startLiveClient(t, "ws", s.base, tc.key, subscribeEvents, nil, tc.auth)
			for {
				m := c.next(t, 20*time.Second)
				if m["type"] == "closed" {
					require.EqualValues(t, "4403", fmt.Sprint(m["code"]))
					require.Equal(t, tc.msg, m["reason"])
					return
				}
			}
		})
	}
	t.Run("sse/bad key", func(t *testing.T) {
		c := startLiveClient(t, "sse", s.base, "ci_nope", subscribeEvents, nil, "header")
		m := c.next(t, 20*time.Second)
		require.Equal(t, "error", m["type"], "%v", m)
		require.Contains(t, m["message"], "401")
		// The body the client saw the status of:
		req, err := http.NewRequest(http.MethodPost, s.base+"/graphql", strings.NewReader(`{"query":"subscription { events { id } }"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer ci_nope")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		require.Equal(t, "Invalid API key.", decodeJSON(t, string(body))["error"])
	})

	// A subscription on a transport that answers once is refused, not left
	// hanging.
	t.Run("plain POST", func(t *testing.T) {
		out := gqlPost(t, s.base, pro, `subscription { events { id } }`, nil)
		errs := jlist(t, out["errors"])
		require.Len(t, errs, 1)
		e := jobj(t, errs[0])
		require.Equal(t, "subscriptions need a streaming transport: graphql-ws (WebSocket, subprotocol graphql-transport-ws) or graphql-sse (POST with Accept: text/event-stream)", e["message"])
	})

	// GET /v1/stream: the same refusals as HTTP errors.
	for _, tc := range []struct {
		name, key, query string
		header           []string
		status           int
		msg              string
	}{
		{"unknown parameter", pro, "?organisationId=1", nil, 400,
			`unknown parameter "organisationId": /v1/stream accepts surface, category, organizationId, entityId, cursor, legacy`},
		{"bad surface", pro, "?surface=all", nil, 400, "surface must be one of: radar, signal"},
		{"bad organizationId", pro, "?organizationId=abc", nil, 400, "organizationId must be an integer"},
		{"unknown organization", pro, "?organizationId=424242", nil, 404, msgNoEntity},
		{"garbage cursor", pro, "?cursor=nope", nil, 400, msgInvalidCursor},
		{"garbage Last-Event-ID", pro, "", []string{"Last-Event-ID", "nope"}, 400, msgInvalidCursor},
		{"foreign cursor", pro, "?cursor=" + url.QueryEscape(foreign), nil, 400, msgForeign},
		{"expired cursor", pro, "", []string{"Last-Event-ID", old}, 400, msgExpired},
		{"plan without streams", free, "", nil, 403, msgPlan},
		{"no key", "", "", nil, 401, "Missing API key. Send Authorization: Bearer <API_KEY>."},
		{"foreign origin", pro, "", []string{"Origin", "https://evil.example"}, 403,
			"Origin https://evil.example may not open streams on this service; only its own origin and the hosts in STREAM_ALLOWED_ORIGINS may."},
	} {
		t.Run("v1/"+tc.name, func(t *testing.T) {
			_, status, body := openSSE(t, s.base, "/v1/stream"+tc.query, tc.key, tc.header...)
			require.Equal(t, tc.status, status, "%s", body)
			require.Equal(t, tc.msg, decodeJSON(t, string(body))["error"])
		})
	}
}

// TestStreamPerKeyCap opens a pro key's 5 streams over the three transports
// and checks the 6th is refused on each, until one closes.
func TestStreamPerKeyCap(t *testing.T) {
	t.Parallel()
	requireLiveClients(t)
	s := startStreamServer(t, "", app.Config{})
	key := s.key(t, cryptointel.PlanPro)
	const msg = "Too many open streams: the pro plan allows 5 at a time per API key. Close one (the place of a dropped connection frees itself within a minute) or upgrade your plan."

	var open []*sseClient
	for i := 0; i < 3; i++ {
		c, status, body := openSSE(t, s.base, "/v1/stream", key)
		require.Equal(t, http.StatusOK, status, "%s", body)
		c.next(t, 10*time.Second)
		open = append(open, c)
	}
	start := streamCursor(t, s.base, key)
	ws := startLiveClient(t, "ws", s.base, key, subscribeEvents, map[string]any{"after": start}, "init")
	sse := startLiveClient(t, "sse", s.base, key, subscribeEvents, map[string]any{"after": start}, "header")
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, s.app.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM stream_leases`).Scan(&n))
		return n == 5
	}, 10*time.Second, 20*time.Millisecond)

	_, status, body := openSSE(t, s.base, "/v1/stream", key)
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Equal(t, msg, decodeJSON(t, string(body))["error"])
	for _, transport := range []string{"ws", "sse"} {
		c := startLiveClient(t, transport, s.base, key, subscribeEvents, nil, map[string]string{"ws": "init", "sse": "header"}[transport])
		m, code, _ := c.finalError(t)
		require.Equal(t, cryptointel.ERATELIMIT, code)
		require.Equal(t, msg, m)
	}
	// Another key is not affected.
	other, status, body := openSSE(t, s.base, "/v1/stream", s.key(t, cryptointel.PlanPro))
	require.Equal(t, http.StatusOK, status, "%s", body)
	other.close()

	// Closing one frees its place.
	open[0].close()
	require.Eventually(t, func() bool {
		c, status, _ := openSSE(t, s.base, "/v1/stream", key)
		if status == http.StatusOK {
			c.close()
		}
		return status == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond)
	_, _ = ws, sse
}
