package tests

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// TestThreeReplicas runs three server processes (each with its own pool,
// River client, poller and notification listener) on one database, with no
// proxy in front: the test spreads requests round-robin. Across them the
// rate window of a key is exact (exactly 100 of 150 concurrent requests
// pass, on a metered graph route and on a free account route), each
// (webhook, event) pair is fanned out and delivered once (webhooks
// registered through the API or directly, pollers woken again after the
// deliveries), each export job runs once, and periodic jobs are enqueued by
// one leader only.
func TestThreeReplicas(t *testing.T) {
	// Not parallel: it runs before the suite's parallel tests, so that three
	// replicas, their River workers and the once-only counts are not judged on
	// a machine the suite's heaviest tests (release builds, megabyte floods)
	// keep busy: on two cores a starved first attempt was retried.
	ctx := context.Background()
	bin := buildServer(t)
	dbURL := dbtest.NewURL(t)
	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })

	// The subscribers' HTTPS endpoint, allowlisted on loopback.
	var (
		recvMu   sync.Mutex
		received = map[string]map[string]int{} // pair → delivery id → requests
		requests int
	)
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b struct {
			Event struct {
				ID int64 `json:"id"`
			} `json:"event"`
		}
		if json.Unmarshal(body, &b) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		pair := fmt.Sprintf("%s/%d", r.URL.Path, b.Event.ID)
		recvMu.Lock()
		if received[pair] == nil {
			received[pair] = map[string]int{}
		}
		received[pair][r.Header.Get("X-Service-Delivery")]++
		requests++
		recvMu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recv.Certificate().Raw}), 0o600))

	const admin = "admin-replicas-token"
	env := []string{
		"DATABASE_URL=" + dbURL,
		"ADMIN_TOKEN=" + admin,
		"WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,::1",
		"WEBHOOK_CA_FILE=" + caFile,
		"WEBHOOK_TIME_SCALE=0.001",
		"WEBHOOK_POLL_INTERVAL=1s",
		// One export directory, as replicas would share an object store.
		"EXPORT_DIR=" + t.TempDir(),
		// Thirty jobs of one account in flight at once: the per-account
		// bound (its own test is TestExportBoundsPerAccount) is lifted.
		"EXPORT_MAX_ACTIVE_JOBS=1000",
	}
	logDir := t.TempDir()
	var procs []*serveProc
	for i := 0; i < 3; i++ {
		p := startServeProc(t, bin, env, filepath.Join(logDir, fmt.Sprintf("replica%d.log", i)))
		t.Cleanup(func() {
			p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
			p.cmd.Wait()                          //nolint:errcheck
		})
		procs = append(procs, p)
	}
	clients := make([]*faultClient, len(procs))
	for i, p := range procs {
		clients[i] = &faultClient{base: p.base, http: &http.Client{Timeout: 30 * time.Second}}
	}
	logs := func() string {
		var b strings.Builder
		for _, p := range procs {
			fmt.Fprintf(&b, "== %s\n%s\n", p.log, abbreviate(readLog(p.log)))
		}
		return b.String()
	}

	t.Run("rate window exact across replicas", func(t *testing.T) {
		key, keyID := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
		usageKey, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
		// The window is the clock minute: start early enough in one that
		// the bursts cannot straddle two.
		if s := time.Now().Second(); s >= 45 {
			time.Sleep(time.Duration(61-s) * time.Second)
		}
		const burst = 150
		var wg sync.WaitGroup
		codes := make([]int, burst)
		bodies := make([]string, burst)
		for i := 0; i < burst; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				ans := clients[i%len(clients)].do(http.MethodGet, "/v1/latest", key, "")
				codes[i], bodies[i] = ans.status, ans.body
			}(i)
		}
		// The same burst on a free account route (/v1/usage) with another
		// key, three clients at a time, in the same minute.
		var usageMu sync.Mutex
		usageCounts := map[int]int{}
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < burst; i += 3 {
					ans := clients[i%len(clients)].do(http.MethodGet, "/v1/usage", usageKey, "")
					usageMu.Lock()
					usageCounts[ans.status]++
					usageMu.Unlock()
				}
			}(w)
		}
		wg.Wait()
		summary(t, "rate window on /v1/usage: 150 requests over 3 replicas, answers %v", usageCounts)
		require.Equal(t, map[int]int{http.StatusOK: 100, http.StatusTooManyRequests: 50}, usageCounts,
			"the per-key window must admit exactly 100 requests across the replicas")
		count := map[int]int{}
		perReplica := make([]int, len(clients))
		// A replica runs DB_KEY_SHARE (8) requests of a key at once and
		// queues four times as many: of its 50, the ones past those 40 are
		// refused for the key's share before the key is checked, so they
		// are not counted in the window (docs/api/plans-and-limits.md,
		// "Concurrency share"). Every other request is.
		busyMsg := fmt.Sprintf(access.MsgKeyBusyFmt, 8)
		busy := 0
		for i, c := range codes {
			count[c]++
			if c == http.StatusOK {
				perReplica[i%len(clients)]++
			}
			if c == http.StatusTooManyRequests {
				require.True(t, jsonError(bodies[i]), bodies[i])
				if strings.Contains(bodies[i], busyMsg) {
					busy++
				}
			}
		}
		summary(t, "rate window: %d concurrent requests over 3 replicas: %d answered 200 (per replica %v), %d answered 429 (%d of them over the key's share), other %v",
			burst, count[200], perReplica, count[429], busy, count)
		require.Equal(t, 100, count[http.StatusOK])
		require.Equal(t, burst-100, count[http.StatusTooManyRequests])
		require.LessOrEqual(t, busy, burst-100)
		var metered, windowed, accountWindow int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT coalesce(sum(requests), 0) FROM usage_daily WHERE api_key_id = $1`, keyID).Scan(&metered))
		// The key's requests counted in its windows: those not charged in
		// its window rows, the charged ones in its day rows (migration 025).
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT (SELECT coalesce(sum(requests), 0) FROM rate_windows WHERE api_key_id = $1)
			+ (SELECT coalesce(sum(requests), 0) FROM usage_daily WHERE api_key_id = $1)`, keyID).Scan(&windowed))
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT coalesce(sum(requests), 0) FROM account_rate_windows
			WHERE account_id = (SELECT account_id FROM api_keys WHERE id = $1)`, keyID).Scan(&accountWindow))
		require.Equal(t, 100, metered, "metered requests")
		require.Equal(t, burst-busy, windowed, "requests counted in the key's window: all but those refused for the key's share")
		require.Equal(t, burst-busy, accountWindow, "requests counted in the account's window: all but those refused for the key's share")
	})

	t.Run("periodic jobs led by one replica", func(t *testing.T) {
		// Every client runs the periodic enqueuer, but only the elected
		// leader enqueues: the export expiry sweep runs on start once, and
		// the one-second webhook poll about once a second, not three times.
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'export_expire'`).Scan(&n))
			return n > 0
		}, 30*time.Second, 20*time.Millisecond, "no export expiry sweep was enqueued; %s", logs())
		var leaders int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM river_leader`).Scan(&leaders))
		const window = 5 * time.Second
		var before, after, sweeps int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'webhook_poll'`).Scan(&before))
		time.Sleep(window)
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'webhook_poll'`).Scan(&after))
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'export_expire'`).Scan(&sweeps))
		polls := after - before
		summary(t, "leadership: %d river_leader row, %d export expiry sweeps enqueued on start, %d webhook polls in %s at a 1 s interval", leaders, sweeps, polls, window)
		require.Equal(t, 1, leaders)
		require.Equal(t, 1, sweeps, "the run-on-start sweep was enqueued by more than one replica")
		require.GreaterOrEqual(t, polls, 3, "the periodic poll is not running")
		require.LessOrEqual(t, polls, int(window/time.Second)+2, "periodic polls enqueued by more than one replica")
	})

	t.Run("each webhook and event fanned out once", func(t *testing.T) {
		plaintext, key, err := db.CreateAPIKey(ctx, store.Bun, "replicas-webhooks", cryptointel.PlanPro)
		require.NoError(t, err)
		paths := []string{"/a", "/b", "/c"}
		// One webhook registered through the API of a replica, the others
		// directly.
		ans := clients[1].do(http.MethodPost, "/v1/webhooks", plaintext, `{"url":"`+recv.URL+paths[0]+`","event_types":["radar"]}`)
		require.Equal(t, http.StatusCreated, ans.status, ans.body)
		for _, p := range paths[1:] {
			_, err := webhookstore.CreateWebhook(ctx, store.Bun, key.AccountID, recv.URL+p, []string{"radar"}, "whsec_cmVwbGljYXM=")
			require.NoError(t, err)
		}
		ans = clients[0].do(http.MethodPost, "/admin/ingest", admin, `{"kind":"entity","id":1,"canonicalName":"Acme"}`+"\n")
		require.Equal(t, http.StatusOK, ans.status, ans.body)
		// 150 events in batches of 10, round-robin over the replicas, two
		// batches at a time.
		const events, batch = 150, 10
		var wg sync.WaitGroup
		errs := make(chan string, events/batch)
		for b := 0; b < events/batch; b++ {
			wg.Add(1)
			go func(b int) {
				defer wg.Done()
				var body strings.Builder
				for i := 1; i <= batch; i++ {
					line, _ := json.Marshal(whEventLine(int64(b*batch+i), nil, 1))
					body.Write(line)
					body.WriteByte('\n')
				}
				if ans := clients[b%len(clients)].do(http.MethodPost, "/admin/ingest", admin, body.String()); ans.status != http.StatusOK {
					errs <- fmt.Sprintf("ingest batch %d: %d %s", b, ans.status, ans.body)
				}
			}(b)
			if b%2 == 1 {
				wg.Wait()
			}
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
		want := len(paths) * events
		succeeded := func() int {
			var n int
			require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`).Scan(&n))
			return n
		}
		require.Eventually(t, func() bool {
			recvMu.Lock()
			pairs := len(received)
			recvMu.Unlock()
			return pairs == want && succeeded() == want
		}, 90*time.Second, 50*time.Millisecond, "not every pair was delivered; %s; %s", crashDiag(store), logs())
		// Wake every replica's poller again, so a late duplicate fan-out
		// would show; late duplicates would arrive right after: give them
		// a moment.
		for i, c := range clients {
			ans := c.do(http.MethodPost, "/admin/ingest", admin, fmt.Sprintf(`{"kind":"entity","id":%d,"canonicalName":"Wake %d"}`, 2+i, i)+"\n")
			require.Equal(t, http.StatusOK, ans.status, ans.body)
		}
		time.Sleep(500 * time.Millisecond)
		recvMu.Lock()
		defer recvMu.Unlock()
		for pair, ids := range received {
			require.Len(t, ids, 1, "pair %s delivered under several delivery ids", pair)
			for id, n := range ids {
				require.Equal(t, 1, n, "pair %s delivery %s sent %d times", pair, id, n)
			}
		}
		var rows, distinct int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (webhook_id, event_id)) FROM webhook_deliveries`).Scan(&rows, &distinct))
		var workers int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(DISTINCT attempted_by[1]) FROM river_job WHERE kind = 'webhook_delivery'`).Scan(&workers))
		summary(t, "webhooks: %d events ingested over 3 replicas for %d webhooks: %d pairs received, %d requests, %d delivery rows (%d distinct pairs), delivered by %d replicas",
			events, len(paths), len(received), requests, rows, distinct, workers)
		require.Equal(t, want, requests, "a pair was sent more than once")
		require.Equal(t, want, rows)
		require.Equal(t, want, distinct)
	})

	t.Run("each export job runs once", func(t *testing.T) {
		key, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
		const exports = 30
		var ids []string
		for i := 0; i < exports; i++ {
			ans := clients[i%len(clients)].do(http.MethodPost, "/v1/export/jobs", key, `{"scope":"radar.history","format":"jsonl","since":"2026-11-01T00:00:00Z"}`)
			require.Equal(t, http.StatusCreated, ans.status, ans.body)
			var created struct{ Data struct{ ID string } }
			require.NoError(t, json.Unmarshal([]byte(ans.body), &created))
			ids = append(ids, created.Data.ID)
		}
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM export_jobs WHERE id = ANY($1::uuid[]) AND status = 'completed'`, ids).Scan(&n))
			if n != exports {
				return false
			}
			// River records the job's completion in batches, just after
			// the worker returns.
			require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'export' AND args->>'job_id' = ANY($1) AND state = 'completed'`, ids).Scan(&n))
			return n == exports
		}, 60*time.Second, 20*time.Millisecond, "not every export completed; %s", logs())
		var jobs, once, runners int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE attempt = 1 AND cardinality(attempted_by) = 1 AND state = 'completed'),
				count(DISTINCT attempted_by[1])
			FROM river_job WHERE kind = 'export' AND args->>'job_id' = ANY($1)`, ids).Scan(&jobs, &once, &runners))
		summary(t, "exports: %d requested over 3 replicas, %d River jobs, %d run exactly once, run by %d replicas", exports, jobs, once, runners)
		require.Equal(t, exports, jobs)
		if once != exports {
			rows, err := store.Pool.Query(ctx, `SELECT id, state, attempt, attempted_by::text, coalesce(errors::text, '') FROM river_job WHERE kind = 'export' AND args->>'job_id' = ANY($1)`, ids)
			require.NoError(t, err)
			for rows.Next() {
				var id int64
				var state, by, errs string
				var attempt int
				require.NoError(t, rows.Scan(&id, &state, &attempt, &by, &errs))
				t.Logf("river job %d: %s, attempt %d, attempted by %s, errors %s", id, state, attempt, by, errs)
			}
			rows.Close()
		}
		require.Equal(t, exports, once, "an export job ran more than once")
		// Registry exports requested through each replica are each run
		// once too: one River job, one attempt, completed.
		for i := range clients {
			ans := clients[i].do(http.MethodPost, "/v1/export/jobs", key, `{"scope":"organizations.registry","format":"jsonl"}`)
			require.Equal(t, http.StatusCreated, ans.status, ans.body)
			var created struct{ Data struct{ ID string } }
			require.NoError(t, json.Unmarshal([]byte(ans.body), &created))
			id := created.Data.ID
			var state string
			require.Eventually(t, func() bool {
				require.NoError(t, store.Pool.QueryRow(ctx, `SELECT status FROM export_jobs WHERE id = $1`, id).Scan(&state))
				return state != exportjob.StatusRequested && state != exportjob.StatusRunning
			}, 60*time.Second, 25*time.Millisecond, "export %s still %s", id, state)
			require.Equal(t, exportjob.StatusCompleted, state, "export %s", id)
			var runs, attempts int
			require.NoError(t, store.Pool.QueryRow(ctx,
				`SELECT count(*), coalesce(max(attempt), 0) FROM river_job WHERE kind = 'export' AND args->>'job_id' = $1`, id).Scan(&runs, &attempts))
			require.Equal(t, 1, runs, "River jobs of export %s", id)
			require.Equal(t, 1, attempts, "attempts of export %s", id)
		}
		// Each is downloadable through any replica.
		for i, id := range ids[:3] {
			ans := clients[(i+1)%len(clients)].do(http.MethodGet, "/v1/export/jobs/"+id, key, "")
			require.Equal(t, http.StatusOK, ans.status, ans.body)
			var job struct{ Data struct{ DownloadURL string } }
			require.NoError(t, json.Unmarshal([]byte(ans.body), &job))
			u := job.Data.DownloadURL
			if i := strings.Index(u, "/v1/export/files/"); i >= 0 {
				u = u[i:]
			}
			got := clients[(i+2)%len(clients)].do(http.MethodGet, u, "", "")
			require.Equal(t, http.StatusOK, got.status, got.body)
		}
	})
}
