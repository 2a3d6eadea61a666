package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// crashReceiver records every request by (webhook path, event id) and
// delivery id.
type crashReceiver struct {
	mu    sync.Mutex
	ids   map[string]map[string]bool // pair → delivery ids
	total int
}

func (c *crashReceiver) record(pair, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids[pair] == nil {
		c.ids[pair] = map[string]bool{}
	}
	c.ids[pair][id] = true
	c.total++
}

func (c *crashReceiver) counts() (pairs, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.ids), c.total
}

// serveSecrets are the signing secrets every test that runs `cryptointel
// serve` gives it (serve refuses to start without them outside demo mode),
// the same across its restarts and replicas.
var serveSecrets = []string{
	"CURSOR_SECRET=tests-cursor-secret-0123456789abcdef",
	"EXPORT_URL_SECRET=tests-export-secret-0123456789abcdef",
	"MPP_SECRET=tests-mpp-secret-0123456789abcdef0123",
}

// startServe runs `cryptointel serve` with env (and serveSecrets) and
// returns the process.
func startServe(t *testing.T, bin string, env []string, logPath string) *exec.Cmd {
	t.Helper()
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { logFile.Close() })
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(append(os.Environ(), serveSecrets...), env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill() //nolint:errcheck
			cmd.Wait()         //nolint:errcheck
		}
	})
	return cmd
}

// TestWebhookCrashRecovery ingests 500 events for 3 subscribed webhooks,
// SIGKILLs the server binary mid-delivery and restarts it: every (webhook,
// event) pair is delivered at least once, and never under two delivery ids.
// Jobs the killed process was running are rescued by River's stuck-job
// rescue, so the test takes about two minutes.
func TestWebhookCrashRecovery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "cryptointel")
	build := exec.Command("go", "build", "-o", bin, "../cmd/cryptointel")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	dbURL := dbtest.NewURL(t)
	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })

	recv := &crashReceiver{ids: map[string]map[string]bool{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		// Slow enough that the kill lands while attempts are in flight.
		time.Sleep(15 * time.Millisecond)
		recv.record(fmt.Sprintf("%s/%d", r.URL.Path, b.Event.ID), r.Header.Get("X-Service-Delivery"))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))

	_, key, err := db.CreateAPIKey(ctx, store.Bun, "crash", cryptointel.PlanPro)
	require.NoError(t, err)
	for _, p := range []string{"/a", "/b", "/c"} {
		_, err := webhookstore.CreateWebhook(ctx, store.Bun, key.AccountID, srv.URL+p, []string{"radar"}, "whsec_Y3Jhc2g=")
		require.NoError(t, err)
	}

	env := []string{
		"DATABASE_URL=" + dbURL,
		"ADDR=127.0.0.1:0",
		"WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,::1",
		"WEBHOOK_CA_FILE=" + caFile,
		"WEBHOOK_TIME_SCALE=0.001",
		"WEBHOOK_POLL_INTERVAL=1s",
	}
	logPath := filepath.Join(t.TempDir(), "serve.log")
	first := startServe(t, bin, env, logPath)

	const events = 500
	var lines bytes.Buffer
	lines.WriteString(`{"kind":"entity","id":1,"canonicalName":"Acme"}` + "\n")
	for i := 1; i <= events; i++ {
		b, err := json.Marshal(whEventLine(int64(i), nil, 1))
		require.NoError(t, err)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	sum, err := ingest.Write(ctx, store, &lines, ingest.Options{BatchSize: 100})
	require.NoError(t, err)
	require.Zero(t, sum.FailedCount)

	// Kill the server once a fifth of the deliveries went out.
	if !assert.Eventually(t, func() bool { _, total := recv.counts(); return total >= 300 }, 60*time.Second, 5*time.Millisecond) {
		// Dump the server's goroutines into its log before failing.
		first.Process.Signal(syscall.SIGQUIT) //nolint:errcheck
		first.Wait()                          //nolint:errcheck
		t.Fatalf("no deliveries from the first process; %s; log:\n%s", crashDiag(store), readLog(logPath))
	}
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	first.Wait() //nolint:errcheck
	pairsAtKill, _ := recv.counts()
	require.Less(t, pairsAtKill, 3*events, "the kill must land mid-delivery")

	second := startServe(t, bin, env, logPath)
	// Every pair reaches the receiver, and every delivery is recorded as
	// succeeded (those running in the killed process after River rescues
	// them).
	succeeded := func() int {
		var n int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'`).Scan(&n))
		return n
	}
	require.Eventually(t, func() bool {
		pairs, _ := recv.counts()
		return pairs == 3*events && succeeded() == 3*events
	}, 4*time.Minute, 100*time.Millisecond, "not every pair was delivered; %s; log:\n%s", crashDiag(store), readLog(logPath))

	recv.mu.Lock()
	for pair, ids := range recv.ids {
		require.Len(t, ids, 1, "pair %s delivered under several delivery ids", pair)
	}
	recv.mu.Unlock()

	var n, distinct int
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (webhook_id, event_id)) FROM webhook_deliveries`).Scan(&n, &distinct))
	require.Equal(t, 3*events, n)
	require.Equal(t, 3*events, distinct)
	pairsAtEnd, _ := recv.counts()
	summary(t, "webhook SIGKILL: %d (webhook, event) pairs, %d received before the kill, %d in all after the restart, each under one delivery id; %d lost",
		3*events, pairsAtKill, pairsAtEnd, 3*events-pairsAtEnd)

	require.NoError(t, second.Process.Signal(syscall.SIGTERM))
	require.NoError(t, second.Wait())
}

// crashDiag summarizes deliveries and River jobs for a failure message.
func crashDiag(store *db.DB) string {
	ctx := context.Background()
	var out []string
	rows, err := store.Pool.Query(ctx, `SELECT 'delivery ' || status, count(*) FROM webhook_deliveries GROUP BY 1
		UNION ALL SELECT 'job ' || kind || ' ' || state, count(*) FROM river_job GROUP BY 1
		UNION ALL SELECT 'mark ' || name || ' ' || last_seq, 1 FROM poller_state ORDER BY 1`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		if rows.Scan(&k, &n) == nil {
			out = append(out, fmt.Sprintf("%s=%d", k, n))
		}
	}
	return strings.Join(out, ", ")
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	s := string(b)
	if len(s) > 60000 {
		s = "…" + s[len(s)-60000:]
	}
	return strings.TrimSpace(s)
}
