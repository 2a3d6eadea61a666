package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// streamServer is a running service for the live-push tests.
type streamServer struct {
	app    *app.App
	base   string
	cancel context.CancelFunc
	done   chan error
}

// startStreamServer runs app.New + Serve against databaseURL (a fresh
// database when empty) on a random loopback port; cfg's DatabaseURL and
// Logger are filled in. It stops when t ends unless stopped earlier.
func startStreamServer(t *testing.T, databaseURL string, cfg app.Config) *streamServer {
	t.Helper()
	if databaseURL == "" {
		databaseURL = dbtest.NewURL(t)
	}
	cfg.DatabaseURL = databaseURL
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 15 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &streamServer{app: a, base: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		s.stop(t)
		a.Close() //nolint:errcheck
	})
	return s
}

// stop shuts the server down gracefully (once).
func (s *streamServer) stop(t *testing.T) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	require.NoError(t, <-s.done)
}

func (s *streamServer) key(t *testing.T, plan string) string {
	t.Helper()
	key, _ := accesstest.NewKey(t, s.app.DB, plan)
	return key
}

// streamFixtureEntities are the entities stream events name.
var streamFixtureEntities = []any{
	map[string]any{"kind": "entity", "id": 1, "canonicalName": "Acme Protocol", "entityType": "project", "aliases": []string{"ACME"}},
	map[string]any{"kind": "entity", "id": 2, "canonicalName": "Beta Foundation", "entityType": "foundation"},
	map[string]any{"kind": "entity", "id": 3, "canonicalName": "Gamma Exchange", "entityType": "exchange"},
}

var streamEventSeq atomic.Int64

// streamEvent is an ingest line for a new event: owner 1, participant 2,
// scored when significance is non-nil.
func streamEvent(category string, significance *float64) map[string]any {
	id := 900_000 + streamEventSeq.Add(1)
	ev := map[string]any{
		"kind": "event", "id": id, "title": fmt.Sprintf("Live event %d", id),
		"eventCategory": category, "eventSubcategory": "general",
		"summary": fmt.Sprintf("Summary of %d.", id), "bullets": []string{"one", "two"},
		"owners": []int64{1}, "participants": []int64{2},
		"evidence": []map[string]any{{"id": id * 10, "content": "post", "url": "https://example.org/" + fmt.Sprint(id),
			"timestamp": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)}},
	}
	if significance != nil {
		ev["significance"] = *significance
	}
	return ev
}

func sig(v float64) *float64 { return &v }

// ingestEvents ingests lines through the store (which notifies like every
// ingest) and returns the ids of the events among them.
func ingestEvents(t *testing.T, store *db.DB, lines ...any) []int64 {
	t.Helper()
	ingestVia(t, store, lines...)
	var ids []int64
	for _, l := range lines {
		if m, ok := l.(map[string]any); ok && m["kind"] == "event" {
			ids = append(ids, m["id"].(int64))
		}
	}
	return ids
}

// gqlPost posts a GraphQL query with key and returns the decoded body.
func gqlPost(t *testing.T, base, key, query string, vars map[string]any) map[string]any {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return out
}

// streamCursor asks /graphql for the current stream cursor.
func streamCursor(t *testing.T, base, key string) string {
	t.Helper()
	out := gqlPost(t, base, key, `{ streamCursor }`, nil)
	require.Nil(t, out["errors"], "%v", out)
	return out["data"].(map[string]any)["streamCursor"].(string)
}

// sseMessage is one Server-Sent Events message.
type sseMessage struct {
	ID, Event, Data string
	Retry           string
}

// sseClient reads a text/event-stream response message by message.
type sseClient struct {
	resp     *http.Response
	msgs     chan sseMessage
	done     chan struct{}
	mu       sync.Mutex
	comments int
	err      error
}

// openSSE sends GET path with key (and extra headers as name, value
// pairs) and returns the response; for a 200 it starts reading messages.
func openSSE(t *testing.T, base, path, key string, header ...string) (*sseClient, int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return nil, resp.StatusCode, b
	}
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	c := &sseClient{resp: resp, msgs: make(chan sseMessage, 10_000), done: make(chan struct{})}
	go c.read()
	t.Cleanup(c.close)
	return c, resp.StatusCode, nil
}

func (c *sseClient) read() {
	defer close(c.done)
	defer close(c.msgs)
	r := bufio.NewReader(c.resp.Body)
	var m sseMessage
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if len(data) > 0 || m.ID != "" || m.Retry != "" || m.Event != "" {
				m.Data = strings.Join(data, "\n")
				c.msgs <- m
			}
			m, data = sseMessage{}, nil
		case strings.HasPrefix(line, ":"):
			c.mu.Lock()
			c.comments++
			c.mu.Unlock()
		default:
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "id":
				m.ID = value
			case "event":
				m.Event = value
			case "data":
				data = append(data, value)
			case "retry":
				m.Retry = value
			}
		}
	}
}

func (c *sseClient) close() {
	c.resp.Body.Close()
	<-c.done
}

// next returns the next message, failing after timeout.
func (c *sseClient) next(t *testing.T, timeout time.Duration) sseMessage {
	t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			t.Fatalf("stream ended: %v", err)
		}
		return m
	case <-time.After(timeout):
		t.Fatalf("no message within %s", timeout)
	}
	return sseMessage{}
}

// events reads n event messages (skipping none) and returns their data
// decoded, and the id of the last.
func (c *sseClient) events(t *testing.T, n int) ([]map[string]any, string) {
	t.Helper()
	var out []map[string]any
	last := ""
	for len(out) < n {
		m := c.next(t, 20*time.Second)
		require.Empty(t, m.Event, "unexpected %q message: %s", m.Event, m.Data)
		require.NotEmpty(t, m.ID)
		ev := decodeJSON(t, m.Data)
		out = append(out, ev)
		last = m.ID
	}
	return out, last
}

// quiet fails when a message arrives within d.
func (c *sseClient) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m, ok := <-c.msgs:
		if ok {
			t.Fatalf("unexpected message: %+v", m)
		}
	case <-time.After(d):
	}
}

func eventIDs(t *testing.T, evs []map[string]any) []int64 {
	t.Helper()
	ids := make([]int64, len(evs))
	for i, ev := range evs {
		ids[i] = int64(jint(t, ev["id"]))
	}
	return ids
}

// decodeJSON decodes an object with numbers as json.Number.
func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out map[string]any
	require.NoError(t, dec.Decode(&out), s)
	return out
}
