package tests

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
)

// monthCredits returns the credits a key's account used this month.
func monthCredits(t *testing.T, store *db.DB, keyID int64) int64 {
	t.Helper()
	var n int64
	require.NoError(t, store.Pool.QueryRow(context.Background(),
		`SELECT coalesce((SELECT credits FROM account_usage_monthly WHERE account_id = (SELECT account_id FROM api_keys WHERE id = $1) AND month = date_trunc('month', now() AT TIME ZONE 'UTC')::date), 0)`,
		keyID).Scan(&n))
	return n
}

// setMonthCredits sets the credits a key's account used this month.
func setMonthCredits(t *testing.T, store *db.DB, keyID, credits int64) {
	t.Helper()
	_, err := store.Pool.Exec(context.Background(), `
		INSERT INTO account_usage_monthly (account_id, month, requests, credits)
		SELECT account_id, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 0, $2 FROM api_keys WHERE id = $1
		ON CONFLICT (account_id, month) DO UPDATE SET credits = excluded.credits`, keyID, credits)
	require.NoError(t, err)
}

// TestStreamCharges checks how streams are metered: opening one is a
// request at the route's (or operation's) cost, every pushed event costs
// 1 credit on /v1/stream and the subscription's complexity on GraphQL, and
// a stream whose credits run out pushes nothing past them and closes with
// quota_exceeded — the same on graphql-ws, graphql-sse and /v1/stream.
func TestStreamCharges(t *testing.T) {
	t.Parallel()
	requireLiveClients(t)
	s := startStreamServer(t, "", app.Config{StreamSettleInterval: 100 * time.Millisecond})
	store := s.app.DB
	ingestEvents(t, store, streamFixtureEntities...)
	const proCredits = 50_000

	t.Run("v1 costs 1 per event", func(t *testing.T) {
		key, keyID := accesstest.NewKey(t, store, cryptointel.PlanPro)
		c, status, body := openSSE(t, s.base, "/v1/stream", key)
		require.Equal(t, http.StatusOK, status, "%s", body)
		c.next(t, 10*time.Second)
		require.EqualValues(t, 1, monthCredits(t, store, keyID), "opening costs the route's 1 credit")
		ingestEvents(t, store, streamEvent("funding", nil), streamEvent("funding", nil), streamEvent("funding", nil))
		c.events(t, 3)
		require.Eventually(t, func() bool { return monthCredits(t, store, keyID) == 4 }, 10*time.Second, 50*time.Millisecond)
		var requests int64
		require.NoError(t, store.Pool.QueryRow(context.Background(),
			`SELECT sum(requests) FROM usage_daily WHERE api_key_id = $1`, keyID).Scan(&requests))
		require.EqualValues(t, 1, requests, "pushed events are credits, not requests")
	})

	const query = `subscription($after: String) { events(after: $after) { id title } }` // complexity 3
	for _, transport := range []string{"ws", "sse"} {
		t.Run(transport+" costs the complexity per event", func(t *testing.T) {
			key, keyID := accesstest.NewKey(t, store, cryptointel.PlanPro)
			cursor := streamCursor(t, s.base, key) // a query of complexity 1
			c := startLiveClient(t, transport, s.base, key, query, map[string]any{"after": cursor}, map[string]string{"ws": "init", "sse": "header"}[transport])
			ingestEvents(t, store, streamEvent("funding", nil), streamEvent("funding", nil))
			for i := 0; i < 2; i++ {
				m := c.next(t, 20*time.Second)
				require.EqualValues(t, "3", fmt.Sprint(jobj(t, jobj(t, m["payload"])["extensions"])["cost"]))
			}
			require.Eventually(t, func() bool { return monthCredits(t, store, keyID) == 1+3+2*3 }, 10*time.Second, 50*time.Millisecond)
		})
	}

	// Credits running out: 4 credits left after opening.
	for _, transport := range []string{"v1", "ws", "sse"} {
		t.Run(transport+" stops at the allowance", func(t *testing.T) {
			key, keyID := accesstest.NewKey(t, store, cryptointel.PlanPro)
			cursor := streamCursor(t, s.base, key)
			var v1 *sseClient
			var gql *liveClient
			switch transport {
			case "v1":
				setMonthCredits(t, store, keyID, proCredits-5)
				var status int
				var body []byte
				v1, status, body = openSSE(t, s.base, "/v1/stream?cursor="+cursor, key)
				require.Equal(t, http.StatusOK, status, "%s", body)
				v1.next(t, 10*time.Second)
			default:
				// Opening costs 3, each event 3: 14 left is 4 events.
				setMonthCredits(t, store, keyID, proCredits-17)
				gql = startLiveClient(t, transport, s.base, key, query, map[string]any{"after": cursor}, map[string]string{"ws": "init", "sse": "header"}[transport])
			}
			var lines []any
			for i := 0; i < 6; i++ {
				lines = append(lines, streamEvent("funding", nil))
			}
			ids := ingestEvents(t, store, lines...)
			if v1 != nil {
				evs, _ := v1.events(t, 4)
				require.Equal(t, ids[:4], eventIDs(t, evs))
				closing := v1.next(t, 10*time.Second)
				require.Equal(t, "close", closing.Event)
				body := decodeJSON(t, closing.Data)
				require.Equal(t, cryptointel.EQUOTA, body["code"])
				require.Equal(t, "API usage limit reached. Please upgrade your plan or contact support.", body["error"])
			} else {
				got, _ := gql.events(t, 4)
				require.Equal(t, ids[:4], got)
				msg, code, _ := gql.finalError(t)
				require.Equal(t, cryptointel.EQUOTA, code)
				require.Equal(t, "API usage limit reached. Please upgrade your plan or contact support.", msg)
			}
			// Everything pushed is charged and nothing beyond the allowance:
			// /v1 uses it up; GraphQL stops 2 short (an event costs 3).
			want := int64(proCredits)
			if v1 == nil {
				want -= 2
			}
			require.Eventually(t, func() bool { return monthCredits(t, store, keyID) == want }, 10*time.Second, 50*time.Millisecond,
				"the events pushed are charged, the allowance is not passed")
			// Opening another is refused like any request.
			setMonthCredits(t, store, keyID, proCredits)
			_, status, body := openSSE(t, s.base, "/v1/stream", key)
			require.Equal(t, http.StatusForbidden, status)
			require.Equal(t, "API usage limit reached. Please upgrade your plan or contact support.", decodeJSON(t, string(body))["error"])
		})
	}
}

// TestStreamRevokedAndDowngraded closes the streams of a key that is
// revoked, and of an account moved to a plan without streams, at the next
// settlement, on every transport.
func TestStreamRevokedAndDowngraded(t *testing.T) {
	t.Parallel()
	requireLiveClients(t)
	s := startStreamServer(t, "", app.Config{StreamSettleInterval: 100 * time.Millisecond})
	store := s.app.DB
	ctx := context.Background()
	for _, tc := range []struct {
		name, code, msg string
		change          func(keyID int64)
	}{
		{"revoked", cryptointel.EUNAUTHORIZED, "API key has been revoked.", func(keyID int64) {
			_, err := store.Pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, keyID)
			require.NoError(t, err)
		}},
		{"downgraded", cryptointel.EFORBIDDEN, "This endpoint requires the pro plan or higher.", func(keyID int64) {
			_, err := store.Pool.Exec(ctx, `UPDATE accounts SET plan = 'free' WHERE id = (SELECT account_id FROM api_keys WHERE id = $1)`, keyID)
			require.NoError(t, err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, keyID := accesstest.NewKey(t, store, cryptointel.PlanPro)
			cursor := streamCursor(t, s.base, key)
			v1, status, body := openSSE(t, s.base, "/v1/stream", key)
			require.Equal(t, http.StatusOK, status, "%s", body)
			v1.next(t, 10*time.Second)
			ws := startLiveClient(t, "ws", s.base, key, subscribeEvents, map[string]any{"after": cursor}, "init")
			sse := startLiveClient(t, "sse", s.base, key, subscribeEvents, map[string]any{"after": cursor}, "header")
			require.Eventually(t, func() bool {
				var n int
				require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM stream_leases WHERE api_key_id = $1`, keyID).Scan(&n))
				return n == 3
			}, 10*time.Second, 20*time.Millisecond)
			tc.change(keyID)
			closing := v1.next(t, 10*time.Second)
			require.Equal(t, "close", closing.Event)
			body2 := decodeJSON(t, closing.Data)
			require.Equal(t, tc.code, body2["code"])
			require.Equal(t, tc.msg, body2["error"])
			for _, c := range []*liveClient{ws, sse} {
				msg, code, _ := c.finalError(t)
				require.Equal(t, tc.code, code)
				require.Equal(t, tc.msg, msg)
			}
		})
	}
}

// TestStreamGracefulShutdown shuts a server down under open streams: each
// gets its last message with code shutting_down and the cursor to resume
// from, graphql-ws connections are then closed with 1012 (Service
// Restart), and shutdown does not wait for the streams.
func TestStreamGracefulShutdown(t *testing.T) {
	t.Parallel()
	requireLiveClients(t)
	s := startStreamServer(t, "", app.Config{ShutdownTimeout: 20 * time.Second})
	ingestEvents(t, s.app.DB, streamFixtureEntities...)
	key := s.key(t, cryptointel.PlanEnterprise)
	cursor := streamCursor(t, s.base, key)
	v1, status, body := openSSE(t, s.base, "/v1/stream?cursor="+cursor, key)
	require.Equal(t, http.StatusOK, status, "%s", body)
	v1.next(t, 10*time.Second)
	ws := startLiveClient(t, "ws", s.base, key, subscribeEvents, map[string]any{"after": cursor}, "init")
	sse := startLiveClient(t, "sse", s.base, key, subscribeEvents, map[string]any{"after": cursor}, "header")
	ids := ingestEvents(t, s.app.DB, streamEvent("funding", nil))
	_, last := v1.events(t, 1)
	got, wsCursor := ws.events(t, 1)
	require.Equal(t, ids, got)
	sse.events(t, 1)

	began := time.Now()
	s.stop(t)
	require.Less(t, time.Since(began), 10*time.Second, "shutdown does not wait for open streams")

	closing := v1.next(t, 10*time.Second)
	require.Equal(t, "close", closing.Event)
	b := decodeJSON(t, closing.Data)
	require.Equal(t, "shutting_down", b["code"])
	require.Equal(t, "The server is shutting down. Reconnect and resume from your last cursor.", b["error"])
	require.Equal(t, last, b["cursor"])
	for _, c := range []*liveClient{ws, sse} {
		msg, code, ext := c.finalError(t)
		require.Equal(t, "shutting_down", code, msg)
		require.NotEmpty(t, ext["cursor"])
		if c == ws {
			require.Equal(t, wsCursor, ext["cursor"])
		}
	}
}
