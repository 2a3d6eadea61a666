package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
)

// TestStreamAcrossReplicas runs two `serve` processes on one database with
// subscribers on each (graphql-ws, graphql-sse and /v1/stream): every event
// ingested through one replica reaches the subscribers of both. Then the
// replicas' LISTEN connections are killed: ingests made while they are down
// still arrive (each hub reads from its position when it is back). Last,
// one replica shuts down: its subscriber is told to reconnect, resumes on
// the restarted replica from its cursor, and gets exactly what it missed.
func TestStreamAcrossReplicas(t *testing.T) {
	t.Parallel()
	requireLiveClients(t)
	ctx := context.Background()
	bin := buildServer(t)
	dbURL := dbtest.NewURL(t)
	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })

	const admin = "admin-stream-replicas"
	env := []string{"DATABASE_URL=" + dbURL, "ADMIN_TOKEN=" + admin, "WEBHOOK_POLL_INTERVAL=1h",
		"EXPORT_DIR=" + t.TempDir(), "STREAM_HEARTBEAT=1s"}
	logDir := t.TempDir()
	start := func(name string) *serveProc {
		p := startServeProc(t, bin, env, filepath.Join(logDir, name+".log"))
		t.Cleanup(func() {
			p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
			p.cmd.Wait()                          //nolint:errcheck
		})
		return p
	}
	a, b := start("a"), start("b")
	client := &http.Client{Timeout: 30 * time.Second}
	ingestThrough := func(p *serveProc, lines ...any) []int64 {
		var body strings.Builder
		var ids []int64
		for _, l := range lines {
			raw, err := json.Marshal(l)
			require.NoError(t, err)
			body.Write(raw)
			body.WriteByte('\n')
			if m, ok := l.(map[string]any); ok && m["kind"] == "event" {
				ids = append(ids, m["id"].(int64))
			}
		}
		req, err := http.NewRequest(http.MethodPost, p.base+"/admin/ingest", strings.NewReader(body.String()))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var sum ingest.Summary
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&sum))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Zero(t, sum.FailedCount, "%+v", sum.Failed)
		return ids
	}
	ingestThrough(a, streamFixtureEntities...)
	key, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
	cursor := streamCursor(t, a.base, key)

	// Subscribers on each replica.
	wsA := startLiveClient(t, "ws", a.base, key, subscribeEvents, map[string]any{"after": cursor}, "init")
	sseB := startLiveClient(t, "sse", b.base, key, subscribeEvents, map[string]any{"after": cursor}, "header")
	v1A, status, body := openSSE(t, a.base, "/v1/stream?cursor="+cursor, key)
	require.Equal(t, http.StatusOK, status, "%s", body)
	v1B, status, body := openSSE(t, b.base, "/v1/stream?cursor="+cursor, key)
	require.Equal(t, http.StatusOK, status, "%s", body)
	v1A.next(t, 10*time.Second)
	v1B.next(t, 10*time.Second)

	var want []int64
	check := func(n int) string {
		t.Helper()
		got, _ := wsA.events(t, n)
		require.Equal(t, want[len(want)-n:], got, "graphql-ws on a")
		got, _ = sseB.events(t, n)
		require.Equal(t, want[len(want)-n:], got, "graphql-sse on b")
		evs, _ := v1A.events(t, n)
		require.Equal(t, want[len(want)-n:], eventIDs(t, evs), "/v1/stream on a")
		evs, last := v1B.events(t, n)
		require.Equal(t, want[len(want)-n:], eventIDs(t, evs), "/v1/stream on b")
		return last
	}
	batch := func() []any {
		return []any{streamEvent("funding", nil), streamEvent("listing", sig(3)), streamEvent("funding", nil)}
	}
	want = append(want, ingestThrough(a, batch()...)...)
	check(3)
	want = append(want, ingestThrough(b, batch()...)...)
	check(3)

	// Kill every LISTEN connection (both replicas' hubs and webhook
	// listeners) and ingest at once, through both: the notifications are
	// lost, the events are not.
	var killed int
	require.NoError(t, store.Pool.QueryRow(ctx, `
		SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query ILIKE 'LISTEN%'`).Scan(&killed))
	require.GreaterOrEqual(t, killed, 2, "each replica's hub listens")
	want = append(want, ingestThrough(a, batch()...)...)
	want = append(want, ingestThrough(b, batch()...)...)
	last := check(6)

	// Replica b shuts down: its /v1 subscriber is told to reconnect, with
	// the cursor to resume from.
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	closing := v1B.next(t, 20*time.Second)
	require.Equal(t, "close", closing.Event, "%+v", closing)
	closed := decodeJSON(t, closing.Data)
	require.Equal(t, "shutting_down", closed["code"])
	require.Equal(t, last, closed["cursor"])
	require.NoError(t, b.cmd.Wait())
	msg, code, ext := sseB.finalError(t)
	require.Equal(t, "shutting_down", code, msg)
	require.NotEmpty(t, ext["cursor"])

	missed := ingestThrough(a, batch()...)
	want = append(want, missed...)
	got, _ := wsA.events(t, 3)
	require.Equal(t, missed, got)
	b2 := start("b2")
	resumed, status, body := openSSE(t, b2.base, "/v1/stream", key, "Last-Event-ID", last)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.Equal(t, last, resumed.next(t, 10*time.Second).ID)
	evs, _ := resumed.events(t, 3)
	require.Equal(t, missed, eventIDs(t, evs), "exactly the events ingested while b was down")
	resumed.quiet(t, 300*time.Millisecond)
	summary(t, "stream replicas: %d events ingested through two replicas reached 4 subscribers on both; %d LISTEN connections killed, none lost; a shut-down replica's subscriber resumed %d missed events on its restart",
		len(want), killed, len(missed))
	_ = fmt.Sprint
}
