package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
)

// rssBytes is this process's resident set after a full collection that
// returns freed memory to the system.
func rssBytes(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status on this system")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Skip("no VmRSS in /proc/self/status")
	return 0
}

// cpuTime is this process's CPU time, user and system.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postGraphQL posts body to /graphql with key and returns the status (0
// for a transport error: the server may answer and close before a large
// body is sent whole).
func postGraphQL(client *http.Client, base, key string, body []byte) int {
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body) //nolint:errcheck
	resp.Body.Close()
	return resp.StatusCode
}

// TestInvalidKeyDocumentsRetainNothing: 1,100 POST /graphql with an
// invalid key, each a valid document of about 1 MB with a unique comment,
// leave the resident set within 50 MB of where it started: a refused
// request is answered before its document is read, and no document of a
// refused request enters a cache.
func TestInvalidKeyDocumentsRetainNothing(t *testing.T) {
	s := startHostileServer(t)
	before := rssBytes(t)
	filler := strings.Repeat("x", 1_000_000)
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
		next     = make(chan int)
	)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				query := fmt.Sprintf("# %d %s\n{ __typename }", i, filler)
				body, _ := json.Marshal(map[string]string{"query": query})
				st := postGraphQL(s.client, s.base, "ci_invalidinvalidinvalidinvalid0000", body)
				mu.Lock()
				statuses[st]++
				mu.Unlock()
			}
		})
	}
	for i := range 1100 {
		next <- i
	}
	close(next)
	wg.Wait()
	after := rssBytes(t)
	t.Logf("statuses %v; RSS %d MB → %d MB", statuses, before>>20, after>>20)
	for st := range statuses {
		require.Contains(t, []int{0, http.StatusUnauthorized, http.StatusTooManyRequests}, st, "statuses %v", statuses)
	}
	require.Greater(t, statuses[http.StatusUnauthorized]+statuses[http.StatusTooManyRequests], 1000, "statuses %v", statuses)
	require.Less(t, after-before, int64(50<<20), "RSS grew from %d MB to %d MB", before>>20, after>>20)
}

// nestedDocument is a GraphQL document of about size bytes whose argument
// is a deeply nested list literal: costly to parse and validate.
func nestedDocument(size int) string {
	depth := (size - 40) / 2
	return "{ __typename(x: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + ") }"
}

// TestSpentWindowRefusesBeforeParsing: once a key's rate window is spent,
// a 10 KB nested-literal document costs the server less than 2 ms of CPU
// (process CPU, not wall time, over a few hundred refusals): the window is
// checked before the document is read.
func TestSpentWindowRefusesBeforeParsing(t *testing.T) {
	s := startHostileServer(t)
	key := s.newKey(t, cryptointel.PlanEnterprise)
	cheap, _ := json.Marshal(map[string]string{"query": "{ __typename }"})
	for i := 0; ; i++ {
		require.Less(t, i, 200, "the window never ran out")
		if postGraphQL(s.client, s.base, key, cheap) == http.StatusTooManyRequests {
			break
		}
	}
	doc := nestedDocument(10 << 10)
	const n = 300
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i], _ = json.Marshal(map[string]string{"query": "# " + strconv.Itoa(i) + "\n" + doc})
	}
	// Ten clients at once: a refusal past the window's worth waits
	// (tarpit) without CPU, and the background's CPU over the wall time
	// stays small beside the measured work.
	start := cpuTime(t)
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for c := range 10 {
		wg.Go(func() {
			for i := c; i < n; i += 10 {
				statuses[i] = postGraphQL(s.client, s.base, key, bodies[i])
			}
		})
	}
	wg.Wait()
	per := (cpuTime(t) - start) / n
	for _, st := range statuses {
		require.Equal(t, http.StatusTooManyRequests, st)
	}
	t.Logf("CPU per refused 10 KB document: %v", per)
	require.Less(t, per, 2*time.Millisecond)
}

// TestInvalidKeysThrottledPerAddress: past INVALID_KEY_LIMIT requests
// with invalid keys in a minute, an address is answered 429 with
// Retry-After and the message, whatever key it sends next (even an
// unknown valid-looking one), while a key seen valid still passes; the
// next minute starts over.
func TestInvalidKeysThrottledPerAddress(t *testing.T) {
	s := startHostileServer(t, func(c *app.Config) { c.InvalidKeyLimit = 5 })
	good := s.newKey(t, cryptointel.PlanEnterprise)
	require.Equal(t, http.StatusOK, s.send(t, good, hostileRequest{Method: "GET", Path: "/v1/entities/byId?id=101"}).Status)
	for i := range 5 {
		r := s.send(t, fmt.Sprintf("ci_unknown%030d", i), hostileRequest{Method: "GET", Path: "/v1/entities/byId?id=101"})
		require.Equal(t, http.StatusUnauthorized, r.Status, "%d: %s", i, r.Body)
	}
	r := s.send(t, "ci_unknown-next", hostileRequest{Method: "GET", Path: "/v1/entities/byId?id=101"})
	require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	require.Contains(t, r.Error(t), "Too many requests without a valid API key from your address: at most 5 per minute.")
	r = s.send(t, "ci_unknown-next", hostileRequest{Method: "POST", Path: "/graphql", ContentType: "application/json", Body: []byte(`{"query":"{ __typename }"}`)})
	require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
	require.Equal(t, http.StatusOK, s.send(t, good, hostileRequest{Method: "GET", Path: "/v1/entities/byId?id=101"}).Status, "a key seen valid still passes")
	s.nextMinute()
	require.Equal(t, http.StatusUnauthorized, s.send(t, "ci_unknown-next", hostileRequest{Method: "GET", Path: "/v1/entities/byId?id=101"}).Status)
}
