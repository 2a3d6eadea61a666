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

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestDatabaseOutageUnderLoad takes the database away from a running
// service (a TCP proxy in front of PostgreSQL cuts every connection and
// refuses new ones) while clients keep requesting. Every request must be
// answered (no hang: the client timeout fails the test) with a 200 or a
// JSON 503 — never a 500 or a dropped connection — and the service must
// serve 200s again by itself once the database is back, without a restart.
func TestDatabaseOutageUnderLoad(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	target := strings.SplitN(strings.SplitN(dbURL, "@", 2)[1], "/", 2)[0]
	proxy := newFlakyProxy(t, target)
	proxied := strings.Replace(dbURL, "@"+target+"/", "@"+proxy.addr+"/", 1)

	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	a, err := app.New(ctx, app.Config{DatabaseURL: proxied, DBMaxConns: 8, ShutdownTimeout: 15 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), WebhookPollInterval: time.Hour, ExportDir: t.TempDir()})
	require.NoError(t, err)
	a.DB.Now = func() time.Time { return restNow }
	ingestLines(t, a.DB, restFixture())
	key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		a.Close() //nolint:errcheck
	})
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 20 * time.Second}
	paths := []string{"/v1/latest", "/v1/entities/byId?id=101", "/v1/webhooks", "/v1/usage", "/v1/search?query=ethereum"}

	type result struct {
		status int
		body   string
	}
	// request never fails the test itself (workers are not the test's
	// goroutine): no answer is status 0 with the error as body.
	request := func(path string) result {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			return result{0, err.Error()}
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			return result{0, path + ": no answer: " + err.Error()}
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return result{0, path + ": reading the answer: " + err.Error()}
		}
		return result{resp.StatusCode, string(b)}
	}
	for _, p := range paths {
		r := request(p)
		require.Equal(t, http.StatusOK, r.status, "%s before the outage: %s", p, r.body)
	}

	// Load: workers request round the paths until stopped.
	var (
		stop              atomic.Bool
		wg                sync.WaitGroup
		mu                sync.Mutex
		tried, ok, unavl  int
		unexpected        []string
		outageStarted     = make(chan struct{})
		sawDuringOutage   atomic.Int64
		loadCtx, stopLoad = context.WithCancel(context.Background())
	)
	defer stopLoad()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; !stop.Load() && loadCtx.Err() == nil; i++ {
				path := paths[i%len(paths)]
				r := request(path)
				mu.Lock()
				tried++
				switch r.status {
				case http.StatusOK:
					ok++
				case http.StatusServiceUnavailable:
					unavl++
					var body map[string]any
					if json.Unmarshal([]byte(r.body), &body) != nil || body["error"] == nil {
						unexpected = append(unexpected, path+": 503 without a JSON error: "+r.body)
					}
				default:
					unexpected = append(unexpected, fmt.Sprintf("%s: %d %s", path, r.status, r.body))
				}
				mu.Unlock()
				select {
				case <-outageStarted:
					sawDuringOutage.Add(1)
				default:
				}
			}
		}(w)
	}

	proxy.down()
	close(outageStarted)
	// Let the load run against the missing database for a while: until
	// every worker has had a number of answers during the outage.
	for sawDuringOutage.Load() < 80 {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	require.Positive(t, unavl, "no 503 while the database was away")
	mu.Unlock()
	proxy.up(t)

	// Recovery without a restart: a bounded number of tries until every
	// path answers 200 again.
	recovered := false
	for attempt := 0; attempt < 200 && !recovered; attempt++ {
		recovered = true
		for _, p := range paths {
			if r := request(p); r.status != http.StatusOK {
				recovered = false
				break
			}
		}
		if !recovered {
			time.Sleep(50 * time.Millisecond)
		}
	}
	stop.Store(true)
	wg.Wait()
	require.True(t, recovered, "the service did not recover after the database came back")
	summary(t, "outage: %d requests tried, %d answered 200, %d answered 503, %d other", tried, ok, unavl, len(unexpected))
	if len(unexpected) > 0 {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"ERROR"`) && !strings.Contains(line, "unavailable") {
				t.Log(line)
			}
		}
	}
	require.Empty(t, unexpected, "answers other than 200 and JSON 503")
	require.NotContains(t, logs.String(), key)
}
