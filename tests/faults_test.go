package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/ingest"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// faultAnswer is one request's outcome as a client saw it.
type faultAnswer struct {
	status  int // 0: no answer
	body    string
	elapsed time.Duration
}

// faultClient sends requests to a service and never fails the test itself,
// so load goroutines can use it.
type faultClient struct {
	base string
	http *http.Client
}

func (c *faultClient) do(method, path, key, body string) faultAnswer {
	start := time.Now()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return faultAnswer{body: err.Error()}
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return faultAnswer{body: "no answer: " + err.Error(), elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return faultAnswer{body: "reading the answer: " + err.Error(), elapsed: time.Since(start)}
	}
	return faultAnswer{status: resp.StatusCode, body: string(b), elapsed: time.Since(start)}
}

// jsonError reports whether body is a JSON object with an "error" string.
func jsonError(body string) bool {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil {
		return false
	}
	s, ok := m["error"].(string)
	return ok && s != ""
}

const faultGraphQLBody = `{"query":"{ events(first: 5, window: \"30d\") { nodes { id title } limit } }"}`

// outage is one way the database goes away from a running service.
type outage struct {
	// url is the database URL the service is given.
	url string
	// down takes the database away; up brings it back.
	down, up func(t *testing.T)
	// hold is how long the database stays away at least; answers is how
	// many answers the load must have had during the outage before it
	// comes back (0: no such wait).
	hold    time.Duration
	answers int64
	// minDuring is the least number of requests the load must have sent
	// during the outage.
	minDuring int
}

// TestDatabaseOutageUnderLoad takes the database away from a running
// service while clients keep requesting every kind of route (graph reads,
// search, account routes, /graphql), in the two ways a database goes away:
// every connection cut and new ones refused (a TCP proxy in front of
// PostgreSQL), and PostgreSQL shut down for 20 seconds (a private cluster,
// pg_ctl stop -m fast). In both, every request is answered quickly (under
// 5 s: never a hang) with a 200 or a JSON 503 — never a 500, a non-JSON
// body or a dropped connection; readiness follows the database; within 10 s
// of the database's return every kind of request succeeds again without
// restarting the service; River still works (an export requested after
// the outage completes); and no log line holds an API key.
func TestDatabaseOutageUnderLoad(t *testing.T) {
	t.Parallel()
	t.Run("connections cut", func(t *testing.T) {
		t.Parallel()
		dbURL := dbtest.NewURL(t)
		target := strings.SplitN(strings.SplitN(dbURL, "@", 2)[1], "/", 2)[0]
		proxy := newFlakyProxy(t, target)
		runOutage(t, outage{
			url:  strings.Replace(dbURL, "@"+target+"/", "@"+proxy.addr+"/", 1),
			down: func(*testing.T) { proxy.down() }, up: proxy.up,
			answers: 80,
		})
	})
	t.Run("postgres stopped", func(t *testing.T) {
		t.Parallel()
		cluster := newPGCluster(t)
		runOutage(t, outage{
			url:  cluster.URL,
			down: func(t *testing.T) { cluster.stop(t, "fast") }, up: cluster.start,
			hold: 20 * time.Second, minDuring: 50,
		})
	})
}

// runOutage serves the fixture from o.url under steady load, takes the
// database away as o says and brings it back, and checks the answers.
func runOutage(t *testing.T, o outage) {
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	a, err := app.New(ctx, app.Config{DatabaseURL: o.url, DBMaxConns: 8, ShutdownTimeout: 15 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), WebhookPollInterval: time.Hour, ExportDir: t.TempDir()})
	require.NoError(t, err)
	a.DB.Now = func() time.Time { return restNow }
	ingestLines(t, a.DB, restFixture())
	// The rate window allows 100 requests a minute per key: spread the load
	// over enough keys that it never limits.
	var keys []string
	for i := 0; i < 40; i++ {
		key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)
		keys = append(keys, key)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		a.Close() //nolint:errcheck
	})
	client := &faultClient{base: "http://" + ln.Addr().String(), http: &http.Client{Timeout: 30 * time.Second}}
	var requests []func(key string) faultAnswer
	for _, path := range []string{"/v1/latest", "/v1/entities/byId?id=101", "/v1/webhooks", "/v1/usage", "/v1/search?query=ethereum"} {
		requests = append(requests, func(key string) faultAnswer { return client.do(http.MethodGet, path, key, "") })
	}
	requests = append(requests, func(key string) faultAnswer { return client.do(http.MethodPost, "/graphql", key, faultGraphQLBody) })
	for _, r := range requests {
		ans := r(keys[0])
		require.Equal(t, http.StatusOK, ans.status, ans.body)
	}

	const (
		failFast   = 5 * time.Second
		recoverBy  = 10 * time.Second
		workers    = 4
		workerRest = 25 * time.Millisecond
	)
	// phase: 0 before the outage, 1 during it, 2 after the database is back.
	var (
		phase            atomic.Int32
		stop             atomic.Bool
		seq              atomic.Int64
		answeredDuring   atomic.Int64
		wg               sync.WaitGroup
		mu               sync.Mutex
		tried, ok, unavl int
		during           int
		slowest          time.Duration
		unexpected       []string
		restarted        time.Time
		firstOKAfter     time.Time
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				n := seq.Add(1)
				p := phase.Load()
				ans := requests[n%int64(len(requests))](keys[n%int64(len(keys))])
				now := time.Now()
				mu.Lock()
				tried++
				if p == 1 {
					during++
					answeredDuring.Add(1)
				}
				if ans.elapsed > slowest {
					slowest = ans.elapsed
				}
				switch {
				case ans.status == http.StatusOK:
					ok++
					if p == 2 && firstOKAfter.IsZero() {
						firstOKAfter = now
					}
				case ans.status == http.StatusServiceUnavailable && jsonError(ans.body):
					unavl++
				default:
					unexpected = append(unexpected, fmt.Sprintf("phase %d: %d %s", p, ans.status, abbreviate(ans.body)))
				}
				if ans.elapsed > failFast {
					unexpected = append(unexpected, fmt.Sprintf("phase %d: answered after %s", p, ans.elapsed))
				}
				mu.Unlock()
				time.Sleep(workerRest)
			}
		}()
	}

	// Steady load against a healthy database first.
	time.Sleep(time.Second)
	phase.Store(1)
	downAt := time.Now()
	o.down(t)
	// Readiness follows the database: 503 while it is away.
	time.Sleep(time.Second)
	readyDown := client.do(http.MethodGet, "/readyz", "", "")
	require.Equal(t, http.StatusServiceUnavailable, readyDown.status, "readyz while the database is away: %s", readyDown.body)
	require.True(t, jsonError(readyDown.body), "readyz body: %s", readyDown.body)
	time.Sleep(time.Until(downAt.Add(o.hold)))
	for deadline := time.Now().Add(60 * time.Second); answeredDuring.Load() < o.answers && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	o.up(t)
	mu.Lock()
	restarted = time.Now()
	unavlDuring := unavl
	mu.Unlock()
	phase.Store(2)

	// Recovery without a restart: every request kind answers 200 again.
	var recovered time.Time
	for time.Since(restarted) < 3*recoverBy {
		all := true
		for _, r := range requests {
			if ans := r(keys[0]); ans.status != http.StatusOK {
				all = false
			}
		}
		if all {
			recovered = time.Now()
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Readiness recovers with the database, with no restart.
	require.Eventually(t, func() bool {
		return client.do(http.MethodGet, "/readyz", "", "").status == http.StatusOK
	}, recoverBy, 50*time.Millisecond, "readyz did not recover after the database returned")
	// Keep the load on a little longer after recovery.
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	summary(t, "database outage: %d requests, %d answered 200, %d JSON 503 (%d sent during the outage), %d other answers or slow (5xx other than 503 included), slowest %s, first 200 after the return in %s, all kinds recovered in %s",
		tried, ok, unavl, during, len(unexpected), slowest.Round(time.Millisecond), firstOKAfter.Sub(restarted).Round(time.Millisecond), recovered.Sub(restarted).Round(time.Millisecond))
	if len(unexpected) > 0 {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"ERROR"`) && !strings.Contains(line, "unavailable") {
				t.Log(abbreviate(line))
			}
		}
	}
	require.Empty(t, unexpected, "answers other than 200 and JSON 503, or slower than %s", failFast)
	require.Positive(t, unavlDuring, "no JSON 503 while the database was away")
	require.Greater(t, during, o.minDuring, "too little load during the outage")
	require.False(t, recovered.IsZero(), "the service did not recover after the database returned")
	require.Less(t, recovered.Sub(restarted), recoverBy, "recovery took too long")

	// River survived the outage: an export requested now completes.
	ans := client.do(http.MethodPost, "/v1/export/jobs", keys[1], `{"scope":"radar.history","format":"jsonl","since":"2026-10-25T00:00:00Z"}`)
	require.Equal(t, http.StatusCreated, ans.status, ans.body)
	var created struct{ Data struct{ ID, Status string } }
	require.NoError(t, json.Unmarshal([]byte(ans.body), &created))
	require.Eventually(t, func() bool {
		got := client.do(http.MethodGet, "/v1/export/jobs/"+created.Data.ID, keys[1], "")
		var job struct{ Data struct{ Status string } }
		return got.status == http.StatusOK && json.Unmarshal([]byte(got.body), &job) == nil && job.Data.Status == exportjob.StatusCompleted
	}, 60*time.Second, 50*time.Millisecond, "an export requested after the outage never completed; log:\n%s", abbreviate(logs.String()))
	for _, key := range keys {
		require.NotContains(t, logs.String(), key, "an API key in the log")
	}
}

// serveProc is one `cryptointel serve` process and its base URL.
type serveProc struct {
	cmd  *exec.Cmd
	base string
	log  string
}

// buildServer builds the server binary into a temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cryptointel")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/cryptointel").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

var listeningAddr = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)

// startServeProc runs `cryptointel serve` with env (ADDR=127.0.0.1:0 is
// added) logging to logPath, and waits for its listening line.
func startServeProc(t *testing.T, bin string, env []string, logPath string) *serveProc {
	t.Helper()
	cmd := startServe(t, bin, append(append([]string(nil), env...), "ADDR=127.0.0.1:0"), logPath)
	// Watched until it listens (the test's own Wait may run after that:
	// the watcher must not read the command's state then).
	exited, listening := make(chan struct{}), make(chan struct{})
	defer close(listening)
	go func() {
		for {
			if p, err := os.FindProcess(cmd.Process.Pid); err != nil || p.Signal(syscall.Signal(0)) != nil {
				close(exited)
				return
			}
			select {
			case <-listening:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(logPath)
		if m := listeningAddr.FindSubmatch(b); m != nil {
			return &serveProc{cmd: cmd, base: "http://" + string(m[1]), log: logPath}
		}
		select {
		case <-exited:
			t.Fatalf("server exited before listening; log:\n%s", readLog(logPath))
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("server not listening after 90 s; log:\n%s", readLog(logPath))
	return nil
}

// TestServerSIGKILLUnderLoad SIGKILLs the server binary while clients make
// metered requests, ingest events through POST /admin/ingest and request
// exports, then restarts it on the same database. No acknowledged ingest is
// lost (every event of a 200 ingest is stored), the metered request count
// equals the metered answers received before the kill (requests in flight
// at the kill may count or not), and every export acknowledged before the
// kill completes after the restart — except one the kill caught running,
// which River retries only after the export worker's 30-minute timeout and
// its stuck-job rescue; the test then checks that it is still owned by its
// running River job, so the rescue will find it.
func TestServerSIGKILLUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := buildServer(t)
	dbURL := dbtest.NewURL(t)
	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })

	// 100 requests a minute per key: enough keys that no request is rate
	// limited, so every answer but a 5xx was metered.
	const keysN, perKey = 30, 90
	var keys []string
	for i := 0; i < keysN; i++ {
		key, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
		keys = append(keys, key)
	}
	const admin = "admin-sigkill-token"
	env := []string{"DATABASE_URL=" + dbURL, "ADMIN_TOKEN=" + admin, "WEBHOOK_POLL_INTERVAL=1h", "EXPORT_DIR=" + t.TempDir()}
	logDir := t.TempDir()
	first := startServeProc(t, bin, env, filepath.Join(logDir, "first.log"))
	client := &faultClient{base: first.base, http: &http.Client{Timeout: 30 * time.Second}}
	ans := client.do(http.MethodPost, "/admin/ingest", admin, `{"kind":"entity","id":1,"canonicalName":"Acme"}`+"\n")
	require.Equal(t, http.StatusOK, ans.status, ans.body)

	var (
		stop         atomic.Bool
		wg           sync.WaitGroup
		mu           sync.Mutex
		received     int // metered answers (2xx, 4xx but 429)
		rateLimited  int
		noAnswer     int
		other        []string
		ackedEvents  []int64
		ingests      int
		exports      []string
		nextEvent    atomic.Int64
		nextKeyUse   atomic.Int64
		meteredUsers = 3
	)
	// Metered readers.
	for w := 0; w < meteredUsers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				n := nextKeyUse.Add(1)
				if n > keysN*perKey {
					return
				}
				path := "/v1/latest"
				if n%3 == 0 {
					path = "/v1/latest?limit=abc" // a metered 400
				}
				ans := client.do(http.MethodGet, path, keys[n%keysN], "")
				mu.Lock()
				switch {
				case ans.status == 0:
					noAnswer++
				case ans.status == http.StatusTooManyRequests:
					rateLimited++
				case ans.status >= 200 && ans.status < 500:
					received++
				default:
					other = append(other, fmt.Sprintf("%d %s", ans.status, abbreviate(ans.body)))
				}
				mu.Unlock()
			}
		}()
	}
	// Ingesters: batches of 5 new events each.
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				var body strings.Builder
				var ids []int64
				for i := 0; i < 5; i++ {
					id := nextEvent.Add(1)
					ids = append(ids, id)
					b, _ := json.Marshal(whEventLine(id, nil, 1))
					body.Write(b)
					body.WriteByte('\n')
				}
				ans := client.do(http.MethodPost, "/admin/ingest", admin, body.String())
				if ans.status != http.StatusOK {
					continue
				}
				var sum ingest.Summary
				mu.Lock()
				if json.Unmarshal([]byte(ans.body), &sum) != nil || sum.FailedCount != 0 || sum.EventsChanged != len(ids) {
					other = append(other, "ingest: "+abbreviate(ans.body))
				} else {
					ingests++
					ackedEvents = append(ackedEvents, ids...)
				}
				mu.Unlock()
			}
		}()
	}
	// Exports until the kill, with keys of their own (also metered).
	var exportKeys []string
	for i := 0; i < 4; i++ {
		key, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
		exportKeys = append(exportKeys, key)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < len(exportKeys)*perKey && !stop.Load(); i++ {
			key := exportKeys[i%len(exportKeys)]
			ans := client.do(http.MethodPost, "/v1/export/jobs", key, `{"scope":"radar.history","format":"jsonl","since":"2026-11-01T00:00:00Z"}`)
			var created struct{ Data struct{ ID string } }
			mu.Lock()
			switch {
			case ans.status == http.StatusCreated && json.Unmarshal([]byte(ans.body), &created) == nil:
				received++
				exports = append(exports, created.Data.ID)
			case ans.status == 0:
				noAnswer++
			default:
				other = append(other, fmt.Sprintf("export: %d %s", ans.status, abbreviate(ans.body)))
			}
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
	}()

	// Kill once the load is well under way.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ackedEvents) >= 500 && received >= 300 && len(exports) >= 5
	}, 60*time.Second, 5*time.Millisecond, "load did not get going; log:\n%s", readLog(first.log))
	// Clients finish the request they have in flight (answered before the
	// kill or not at all) and stop.
	stop.Store(true)
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
	first.cmd.Wait() //nolint:errcheck
	wg.Wait()
	inFlightMax := meteredUsers + 1 // at most one request per metering client
	require.LessOrEqual(t, noAnswer, inFlightMax)

	var pendingAtKill int
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM export_jobs WHERE status <> 'completed'`).Scan(&pendingAtKill))

	// Exports the kill caught running report no more progress: the restarted
	// server's sweep reclaims them after EXPORT_STALE_AFTER (shortened here
	// from its 2-minute default).
	secondEnv := append(append([]string(nil), env...), "EXPORT_STALE_AFTER=3s")
	second := startServeProc(t, bin, secondEnv, filepath.Join(logDir, "second.log"))
	t.Cleanup(func() {
		second.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
		second.cmd.Wait()                          //nolint:errcheck
	})

	// No acknowledged event lost.
	var stored int
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE id = ANY($1)`, ackedEvents).Scan(&stored))
	lost := len(ackedEvents) - stored

	// The metered count matches what clients saw, within the requests in
	// flight at the kill.
	var metered int
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT coalesce(sum(requests), 0) FROM usage_daily`).Scan(&metered))

	// Every acknowledged export completes after the restart, including the
	// ones the kill caught running. (Read from the database: polling through the API would hit the
	// keys' rate window.)
	status := func(id string) string {
		var s string
		if err := store.Pool.QueryRow(ctx, `SELECT status FROM export_jobs WHERE id = $1`, id).Scan(&s); err != nil {
			return err.Error()
		}
		return s
	}
	riverState := func(id string) string {
		var state string
		if err := store.Pool.QueryRow(ctx, `SELECT state FROM river_job WHERE kind = 'export' AND args->>'job_id' = $1`, id).Scan(&state); err != nil {
			return err.Error()
		}
		return state
	}
	var completed int
	deadline := time.Now().Add(120 * time.Second)
	for _, id := range exports {
		for {
			s := status(id)
			if s == exportjob.StatusCompleted {
				completed++
				break
			}
			require.True(t, time.Now().Before(deadline), "export %s is %s (river job %s) after the restart; log:\n%s", id, s, riverState(id), readLog(second.log))
			time.Sleep(25 * time.Millisecond)
		}
	}

	summary(t, "SIGKILL under load: %d ingests acknowledged (%d events), %d lost; %d metered answers received, %d metered in the database (in flight at the kill: %d, at most %d), %d rate limited, %d 5xx or unexpected; %d exports acknowledged (%d not completed at the kill), %d completed after the restart (%d of them unfinished at the kill)",
		ingests, len(ackedEvents), lost, received, metered, noAnswer, inFlightMax, rateLimited, len(other), len(exports), pendingAtKill, completed, pendingAtKill)
	require.Empty(t, other, "unexpected answers before the kill")
	require.Zero(t, lost, "acknowledged events lost")
	require.Zero(t, rateLimited)
	require.GreaterOrEqual(t, metered, received, "metered answers missing from usage")
	require.LessOrEqual(t, metered, received+inFlightMax, "usage counts requests nobody made")
	require.Equal(t, len(exports), completed)
}

// TestHangingWebhookReceiversDoNotSlowTheAPI points webhooks at a receiver
// that never answers (each attempt hangs until the delivery's 10-second
// timeout) and one that answers slowly, so every delivery worker is busy
// waiting on a subscriber. Meanwhile API requests on /v1 and /graphql must
// answer as usual: deliveries hold no database connection while they wait.
func TestHangingWebhookReceiversDoNotSlowTheAPI(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	var hanging atomic.Int64
	release := make(chan struct{})
	recv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) //nolint:errcheck
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(2 * time.Second):
			case <-release:
			}
			w.WriteHeader(http.StatusOK)
			return
		}
		hanging.Add(1)
		defer hanging.Add(-1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() {
		close(release)
		recv.Close()
	})

	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Config{DatabaseURL: dbURL, DBMaxConns: 16, ShutdownTimeout: 2 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), WebhookPollInterval: time.Hour, ExportDir: t.TempDir(),
		WebhookAllowCIDRs: "127.0.0.0/8,::1", WebhookTimeScale: 0.001,
		WebhookTLSConfig: recv.Client().Transport.(*http.Transport).TLSClientConfig})
	require.NoError(t, err)
	a.DB.Now = func() time.Time { return restNow }
	ingestLines(t, a.DB, restFixture())
	var keys []string
	for i := 0; i < 4; i++ {
		key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)
		keys = append(keys, key)
	}
	_, owner, err := db.CreateAPIKey(ctx, a.DB.Bun, "hanging-receivers", cryptointel.PlanPro)
	require.NoError(t, err)
	for _, p := range []string{"/hang1", "/hang2", "/slow"} {
		_, err := webhookstore.CreateWebhook(ctx, a.DB.Bun, owner.AccountID, recv.URL+p, []string{"radar"}, "whsec_aGFuZw==")
		require.NoError(t, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		a.Close() //nolint:errcheck
	})
	client := &faultClient{base: "http://" + ln.Addr().String(), http: &http.Client{Timeout: 30 * time.Second}}

	// Ingesting through the app notifies the poller: 40 new events fan out
	// to 120 deliveries, more than the River workers.
	var lines []string
	lines = append(lines, `{"kind":"entity","id":9001,"canonicalName":"Hangco"}`)
	for i := 1; i <= 40; i++ {
		b, err := json.Marshal(whEventLine(int64(90000+i), nil, 9001))
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	ingestLines(t, a.DB, lines)
	require.Eventually(t, func() bool { return hanging.Load() >= 15 }, 30*time.Second, 10*time.Millisecond,
		"deliveries never reached the hanging receiver")

	// While the workers wait on subscribers, the API answers as usual.
	var slowest time.Duration
	var answered int
	for i := 0; i < 60 && hanging.Load() >= 10; i++ {
		var ans faultAnswer
		if i%2 == 0 {
			ans = client.do(http.MethodGet, "/v1/latest", keys[i%len(keys)], "")
		} else {
			ans = client.do(http.MethodPost, "/graphql", keys[i%len(keys)], faultGraphQLBody)
		}
		require.Equal(t, http.StatusOK, ans.status, ans.body)
		if ans.elapsed > slowest {
			slowest = ans.elapsed
		}
		answered++
	}
	summary(t, "hanging receivers: %d API requests answered while %d+ deliveries hung, slowest %s", answered, 10, slowest.Round(time.Millisecond))
	require.GreaterOrEqual(t, answered, 30, "the deliveries stopped hanging before the API was measured")
	require.Less(t, slowest, 2*time.Second, "hanging webhook receivers slowed the API")
}
