package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// shutdownTimeout is the SHUTDOWN_TIMEOUT the server runs with; the
// process must exit within it after SIGTERM.
const shutdownTimeout = 15 * time.Second

// shutdownKeys hands out enterprise keys, a fresh one every 90 requests, so
// the per-key rate window (100 a minute) never answers the load with a 429.
type shutdownKeys struct {
	mu   sync.Mutex
	keys []string
	n    int
}

func (k *shutdownKeys) next() (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := k.n / 90
	k.n++
	if i >= len(k.keys) {
		return "", false
	}
	return k.keys[i], true
}

// shutdownTally counts the load's outcomes.
type shutdownTally struct {
	mu           sync.Mutex
	ok           int // 2xx before or after SIGTERM
	okAfterTerm  int // 2xx answers that arrived after SIGTERM was sent
	refused      int // connection refused (after the listener closed)
	unexpected   []string
	refusedEarly int // connection refused before SIGTERM: a failure
}

// TestShutdownUnderLoad builds the real binary, serves a small fixture and
// drives steady concurrent load on /v1/latest and /graphql; SIGTERM lands
// while requests are in flight and the load continues until the listener
// refuses connections. Every request must either complete with a 2xx or
// fail to connect (connection refused): no 5xx, no 503, no connection reset
// or truncated body because of the shutdown. The process must exit 0 within
// SHUTDOWN_TIMEOUT.
func TestShutdownUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "cryptointel")
	build := exec.Command("go", "build", "-o", bin, "../cmd/cryptointel")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	dbURL := dbtest.NewURL(t)
	env := append(os.Environ(), "DATABASE_URL="+dbURL)
	run := func(stdin string, args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		require.NoError(t, err, "%v: %s", args, stderr.String())
		return string(stdout)
	}
	run("", "migrate")
	run(strings.Join(restFixture(), "\n")+"\n", "ingest", "-")
	var created struct {
		Key string `json:"key"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("", "keys", "create", "--plan", "enterprise", "--json")), &created))
	require.NotEmpty(t, created.Key)

	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	keys := &shutdownKeys{keys: []string{created.Key}}
	for i := 0; i < 300; i++ {
		k, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
		keys.keys = append(keys.keys, k)
	}

	// Serve on a free loopback port; the address comes from the JSON
	// "listening" log line.
	serve := exec.Command(bin, "serve")
	serve.Env = append(append(env, serveSecrets...), "ADDR=127.0.0.1:0", "SHUTDOWN_TIMEOUT="+shutdownTimeout.String(),
		"DB_MAX_CONNS=8", "EXPORT_DIR="+t.TempDir())
	stderr, err := serve.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, serve.Start())
	t.Cleanup(func() {
		if serve.ProcessState == nil {
			serve.Process.Kill() //nolint:errcheck
			serve.Wait()         //nolint:errcheck
		}
	})
	logs := &syncBuffer{}
	addrc := make(chan string, 1)
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			logs.Write([]byte(line + "\n")) //nolint:errcheck
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" && rec.Addr != "" {
				select {
				case addrc <- rec.Addr:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr) //nolint:errcheck
	}()
	var base string
	select {
	case addr := <-addrc:
		base = "http://" + addr
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen; log:\n%s", logs.String())
	}

	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 16},
	}
	const gqlQuery = `{"query":"{ entity(id: 101) { canonicalName relationships(first: 5) { relationshipType relatedEntity { displayName events(first: 3) { nodes { title owners { id displayName } } } } } events(first: 5) { nodes { title latestEvidenceTimestamp } } } }"}`
	// request sends one request and reports its outcome: the status (0 when
	// there was no answer) and, for failures, a description. GraphQL
	// queries are idempotent, so the POST says so (Idempotency-Key): the
	// transport then retries it, like a GET, when a kept-alive connection
	// the server closed as idle during shutdown was picked for it; that
	// request never reached the server.
	request := func(i int) (status int, refused bool, detail string) {
		key, ok := keys.next()
		if !ok {
			return 0, false, "out of keys"
		}
		var req *http.Request
		if i%2 == 0 {
			req, _ = http.NewRequest(http.MethodGet, base+"/v1/latest?window=30d&limit=10", nil)
		} else {
			req, _ = http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(gqlQuery))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprint(i))
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				return 0, true, err.Error()
			}
			return 0, false, req.URL.Path + ": " + err.Error()
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return resp.StatusCode, false, fmt.Sprintf("%s: %d, body cut: %v", req.URL.Path, resp.StatusCode, err)
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return resp.StatusCode, false, fmt.Sprintf("%s: %d %s", req.URL.Path, resp.StatusCode, body)
		}
		if !json.Valid(body) || bytes.Contains(body, []byte(`"errors"`)) {
			return resp.StatusCode, false, fmt.Sprintf("%s: %d with a bad body: %s", req.URL.Path, resp.StatusCode, body)
		}
		return resp.StatusCode, false, ""
	}

	var (
		tally     shutdownTally
		termSent  atomic.Bool
		inFlight  atomic.Int64
		done      atomic.Int64
		wg        sync.WaitGroup
		requestNo atomic.Int64
	)
	const workers = 8
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker runs until its own request is refused: the
			// listener is closed.
			for {
				inFlight.Add(1)
				_, refused, detail := request(int(requestNo.Add(1)))
				inFlight.Add(-1)
				done.Add(1)
				// A refusal is expected once SIGTERM was sent (the
				// listener closes at once); before, it is a failure.
				arrivedAfterTerm := termSent.Load()
				tally.mu.Lock()
				switch {
				case refused && arrivedAfterTerm:
					tally.refused++
				case refused:
					tally.refusedEarly++
					tally.unexpected = append(tally.unexpected, "refused before SIGTERM: "+detail)
				case detail != "":
					tally.unexpected = append(tally.unexpected, detail)
				default:
					tally.ok++
					if arrivedAfterTerm {
						tally.okAfterTerm++
					}
				}
				stop := refused || detail == "out of keys" || len(tally.unexpected) > 50
				tally.mu.Unlock()
				if stop {
					return
				}
			}
		}()
	}

	// Steady load for about a second (at least 200 answered requests),
	// then SIGTERM at a moment requests are in flight.
	started := time.Now()
	for time.Since(started) < time.Second || done.Load() < 200 {
		time.Sleep(10 * time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); inFlight.Load() < workers/2 && time.Now().Before(deadline); {
		runtime.Gosched() // the workers keep it high; a moment with few in flight is rare
	}
	inFlightAtTerm := inFlight.Load()
	termSent.Store(true)
	termAt := time.Now()
	require.NoError(t, serve.Process.Signal(syscall.SIGTERM))

	exited := make(chan error, 1)
	go func() {
		<-logDone
		exited <- serve.Wait()
	}()
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-time.After(shutdownTimeout + 10*time.Second):
		serve.Process.Signal(syscall.SIGQUIT) //nolint:errcheck
		t.Fatalf("serve did not exit within SHUTDOWN_TIMEOUT (%s) after SIGTERM; log:\n%s", shutdownTimeout, logs.String())
	}
	exitAfter := time.Since(termAt)
	wg.Wait()

	tally.mu.Lock()
	defer tally.mu.Unlock()
	summary(t, "shutdown under load: %d answered 2xx (%d of them after SIGTERM; %d in flight when it was sent), %d refused after the listener closed, %d unexpected; exit %v after %s",
		tally.ok, tally.okAfterTerm, inFlightAtTerm, tally.refused, len(tally.unexpected), waitErr, exitAfter.Round(time.Millisecond))
	require.Empty(t, tally.unexpected, "requests that neither completed 2xx nor failed to connect; log:\n%s", logs.String())
	require.NoError(t, waitErr, "serve must exit 0 after SIGTERM; log:\n%s", logs.String())
	require.Less(t, exitAfter, shutdownTimeout, "serve took longer than SHUTDOWN_TIMEOUT to exit")
	require.Positive(t, inFlightAtTerm)
	require.GreaterOrEqual(t, tally.ok, 200)
	require.Equal(t, workers, tally.refused, "every worker stops at its first refused connection")
	require.Contains(t, logs.String(), `"msg":"stopped"`)
	require.NotContains(t, logs.String(), `"level":"ERROR"`)
}
