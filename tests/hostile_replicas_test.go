package tests

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestReplicas runs three service instances (each with its own pool,
// River client, poller and notification listener) on one database, with
// requests spread round-robin and no proxy in front: the per-key rate
// window is exact across them, and each (webhook, event) is delivered once.
func TestReplicas(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	recv := newWebhookReceiver(t, nil)
	tlsCfg := recv.srv.Client().Transport.(*http.Transport).TLSClientConfig
	pinned := time.Date(2026, 11, 18, 9, 30, 20, 0, time.UTC) // 20 s into a minute
	var bases []string
	var apps []*app.App
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		a, err := app.New(ctx, app.Config{
			DatabaseURL: dbURL, DBMaxConns: 6, ShutdownTimeout: 15 * time.Second,
			Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
			WebhookAllowCIDRs: "127.0.0.0/8,::1/128", WebhookTLSConfig: tlsCfg,
			WebhookTimeScale: 0.001, WebhookPollInterval: time.Hour, ExportDir: t.TempDir(),
		})
		require.NoError(t, err)
		a.DB.Now = func() time.Time { return pinned }
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx, ln) }()
		t.Cleanup(func() {
			cancel()
			<-done
			a.Close() //nolint:errcheck
		})
		apps = append(apps, a)
		bases = append(bases, "http://"+ln.Addr().String())
	}
	client := &http.Client{Timeout: 20 * time.Second}
	send := func(i int, key, method, path, body string) (int, []byte) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, bases[i%len(bases)]+path, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}

	// Rate window: 150 requests of one key, round-robin, concurrently.
	key, _ := accesstest.NewKey(t, apps[0].DB, cryptointel.PlanEnterprise)
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < 150; i += 3 {
				req, _ := http.NewRequest(http.MethodGet, bases[i%3]+"/v1/usage", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				status := 0
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body) //nolint:errcheck
					resp.Body.Close()
					status = resp.StatusCode
				}
				mu.Lock()
				counts[status]++
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	summary(t, "replicas: rate window answers %v", counts)
	require.Equal(t, map[int]int{http.StatusOK: 100, http.StatusTooManyRequests: 50}, counts,
		"the per-key window must admit exactly 100 requests across the replicas")

	// Fan-out: a webhook, then events ingested through one replica; every
	// replica's poller wakes on the notification.
	hookKey, _ := accesstest.NewKey(t, apps[0].DB, cryptointel.PlanEnterprise)
	status, body := send(1, hookKey, http.MethodPost, "/v1/webhooks", `{"url":"`+recv.srv.URL+`/r","event_types":["radar"]}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	lines := []any{whEntityLine(9001, "Replica Org")}
	const events = 30
	for i := 0; i < events; i++ {
		lines = append(lines, whEventLine(int64(70000+i), nil, 9001))
	}
	ingestVia(t, apps[2].DB, lines...)
	// Bounded wait for the deliveries (the guard against a hung test).
	for deadline := time.Now().Add(60 * time.Second); len(byDelivery(recv.all())) < events && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	// Wake every poller again, so a late duplicate fan-out would show.
	ingestVia(t, apps[0].DB, whEntityLine(9002, "Another Org"))
	time.Sleep(200 * time.Millisecond) // settle: duplicates, if any, arrive now
	got := recv.all()
	perEvent := map[int64]int{}
	for _, g := range got {
		var payload struct {
			Event struct {
				ID int64 `json:"id"`
			} `json:"event"`
		}
		require.NoError(t, json.Unmarshal(g.Body, &payload))
		perEvent[payload.Event.ID]++
	}
	require.Len(t, byDelivery(got), events, "one delivery per (webhook, event)")
	require.Len(t, perEvent, events)
	for id, n := range perEvent {
		require.Equal(t, 1, n, "event %d delivered %d times", id, n)
	}
	summary(t, "replicas: %d events fanned out to one webhook by 3 replicas, %d deliveries received", events, len(got))

	// Export jobs requested through different replicas are each run once:
	// one River job, one attempt, completed.
	var jobIDs []string
	for i := 0; i < 3; i++ {
		status, body := send(i, hookKey, http.MethodPost, "/v1/export/jobs", `{"scope":"organizations.registry","format":"jsonl"}`)
		require.Equal(t, http.StatusCreated, status, "%s", body)
		var created struct{ Data struct{ ID string } }
		require.NoError(t, json.Unmarshal(body, &created))
		jobIDs = append(jobIDs, created.Data.ID)
	}
	for i, id := range jobIDs {
		// Poll the row, not the API: the key's rate window is pinned.
		var state string
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
			require.NoError(t, apps[i].DB.Pool.QueryRow(context.Background(), `SELECT status FROM export_jobs WHERE id = $1`, id).Scan(&state))
			if state != cryptointel.ExportStatusRequested && state != cryptointel.ExportStatusRunning {
				break
			}
		}
		require.Equal(t, cryptointel.ExportStatusCompleted, state, "export %s", id)
		var runs, attempts int
		require.NoError(t, apps[0].DB.Pool.QueryRow(context.Background(),
			`SELECT count(*), coalesce(max(attempt), 0) FROM river_job WHERE kind = 'export' AND args->>'job_id' = $1`, id).Scan(&runs, &attempts))
		require.Equal(t, 1, runs, "River jobs of export %s", id)
		require.Equal(t, 1, attempts, "attempts of export %s", id)
	}
}

// ingestVia ingests JSON lines through store.
func ingestVia(t *testing.T, store *db.DB, lines ...any) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		raw, err := json.Marshal(l)
		require.NoError(t, err)
		b.Write(raw)
		b.WriteByte('\n')
	}
	sum, err := store.Ingest(context.Background(), strings.NewReader(b.String()), db.IngestOptions{})
	require.NoError(t, err)
	require.Zero(t, sum.FailedCount, "%+v", sum.Failed)
}
