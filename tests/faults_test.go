package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
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

// TestPostgresOutageUnderLoad stops the service's PostgreSQL (a private
// cluster, pg_ctl stop -m fast) for 20 seconds under steady load on
// /v1/latest and /graphql, then starts it again. During the outage every
// request is answered quickly (under 5 s) with a JSON 503 — never a hang, a
// 500 or a non-JSON body; within 10 s of PostgreSQL's return requests
// succeed again without restarting the service, and River still works
// (an export requested after the outage completes).
func TestPostgresOutageUnderLoad(t *testing.T) {
	t.Parallel()
	cluster := newPGCluster(t)

	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	a, err := app.New(ctx, app.Config{DatabaseURL: cluster.URL, DBMaxConns: 8, ShutdownTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), WebhookPollInterval: time.Hour, ExportDir: t.TempDir()})
	require.NoError(t, err)
	a.DB.Now = func() time.Time { return restNow }
	ingestLines(t, a.DB, restFixture())
	// The rate window allows 100 requests a minute per key: spread the load
	// over enough keys that it never limits.
	var keys []string
	for i := 0; i < 40; i++ {
		key, _ := accesstest.NewKey(t, a.DB, db.PlanEnterprise)
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
	requests := []func(key string) faultAnswer{
		func(key string) faultAnswer { return client.do(http.MethodGet, "/v1/latest", key, "") },
		func(key string) faultAnswer { return client.do(http.MethodPost, "/graphql", key, faultGraphQLBody) },
	}
	for _, r := range requests {
		ans := r(keys[0])
		require.Equal(t, http.StatusOK, ans.status, ans.body)
	}

	const (
		outage     = 20 * time.Second
		failFast   = 5 * time.Second
		recoverBy  = 10 * time.Second
		workers    = 4
		workerRest = 25 * time.Millisecond
	)
	// phase: 0 before the stop, 1 stopping or stopped, 2 started again.
	var (
		phase            atomic.Int32
		stop             atomic.Bool
		seq              atomic.Int64
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
	cluster.stop(t, "fast")
	time.Sleep(outage)
	cluster.start(t)
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
	// Keep the load on a little longer after recovery.
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("postgres outage: %d requests, %d answered 200, %d JSON 503 (%d sent during the outage), %d other answers or slow (5xx other than 503 included), slowest %s, first 200 after restart in %s, all kinds recovered in %s",
		tried, ok, unavl, during, len(unexpected), slowest.Round(time.Millisecond), firstOKAfter.Sub(restarted).Round(time.Millisecond), recovered.Sub(restarted).Round(time.Millisecond))
	if len(unexpected) > 0 {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"ERROR"`) {
				t.Log(abbreviate(line))
			}
		}
	}
	require.Empty(t, unexpected, "answers other than 200 and JSON 503, or slower than %s", failFast)
	require.Positive(t, unavlDuring, "no JSON 503 while PostgreSQL was down")
	require.Greater(t, during, 50, "too little load during the outage")
	require.False(t, recovered.IsZero(), "the service did not recover after PostgreSQL returned")
	require.Less(t, recovered.Sub(restarted), recoverBy, "recovery took too long")

	// River survived the outage: an export requested now completes.
	ans := client.do(http.MethodPost, "/v1/export/jobs", keys[1], `{"scope":"radar.history","format":"jsonl","since":"2026-10-25T00:00:00Z"}`)
	require.Equal(t, http.StatusCreated, ans.status, ans.body)
	var created struct{ Data struct{ ID, Status string } }
	require.NoError(t, json.Unmarshal([]byte(ans.body), &created))
	require.Eventually(t, func() bool {
		got := client.do(http.MethodGet, "/v1/export/jobs/"+created.Data.ID, keys[1], "")
		var job struct{ Data struct{ Status string } }
		return got.status == http.StatusOK && json.Unmarshal([]byte(got.body), &job) == nil && job.Data.Status == db.ExportStatusCompleted
	}, 60*time.Second, 50*time.Millisecond, "an export requested after the outage never completed; log:\n%s", abbreviate(logs.String()))
}
