package tests

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
)

// liveClientsDir holds the pinned reference clients (make live-clients).
const liveClientsDir = "interop/live"

// requireLiveClients fails unless make test installed the reference
// clients from the committed lock file.
func requireLiveClients(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node not found: the live-push interop tests drive the npm clients graphql-ws and graphql-sse")
	}
	for _, pkg := range []string{"graphql-ws", "graphql-sse", "ws", "graphql"} {
		if _, err := os.Stat(filepath.Join(liveClientsDir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("%s is not installed in tests/%s: run make test (or make interop-live)", pkg, liveClientsDir)
		}
	}
}

// liveClient is one subscription driven by a reference client
// (tests/interop/live/client.mjs) in a Node process.
type liveClient struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan map[string]any
	done  chan struct{}
}

// startLiveClient subscribes with the reference client of transport (ws:
// graphql-ws, sse: graphql-sse), auth being header, init or none.
func startLiveClient(t *testing.T, transport, base, key, query string, vars map[string]any, auth string) *liveClient {
	t.Helper()
	requireLiveClients(t)
	if vars == nil {
		vars = map[string]any{}
	}
	v, err := json.Marshal(vars)
	require.NoError(t, err)
	cmd := exec.Command("node", "client.mjs", transport, base, key, query, string(v), auth)
	cmd.Dir = liveClientsDir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &liveClient{cmd: cmd, stdin: stdin, lines: make(chan map[string]any, 10_000), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			c.lines <- decodeJSON(t, sc.Text())
		}
	}()
	t.Cleanup(c.stop)
	return c
}

// stop disposes of the client and waits for its process.
func (c *liveClient) stop() {
	io.WriteString(c.stdin, "stop\n") //nolint:errcheck
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill() //nolint:errcheck
		<-c.done
	}
	c.cmd.Wait() //nolint:errcheck
}

// next returns the next line that is not a connection notice.
func (c *liveClient) next(t *testing.T, timeout time.Duration) map[string]any {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-c.lines:
			require.True(t, ok, "the client exited")
			if m["type"] == "connected" {
				continue
			}
			return m
		case <-deadline:
			t.Fatalf("nothing from the client within %s", timeout)
		}
	}
}

// events reads n results, each an event, and returns their ids and the
// cursor of the last.
func (c *liveClient) events(t *testing.T, n int) ([]int64, string) {
	t.Helper()
	var ids []int64
	cursor := ""
	for len(ids) < n {
		m := c.next(t, 20*time.Second)
		require.Equal(t, "next", m["type"], "%v", m)
		p := jobj(t, m["payload"])
		require.Nil(t, p["errors"], "%v", p)
		ev := jobj(t, jobj(t, p["data"])["events"])
		ids = append(ids, int64(jint(t, ev["id"])))
		ext := jobj(t, p["extensions"])
		cursor, _ = ext["cursor"].(string)
		require.NotEmpty(t, cursor, "every result carries extensions.cursor")
		require.NotNil(t, ext["cost"], "and its cost")
	}
	return ids, cursor
}

// quiet fails when the client reports anything but a connection notice
// within d.
func (c *liveClient) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-c.lines:
			if ok && m["type"] != "connected" {
				t.Fatalf("unexpected %v", m)
			}
			if !ok {
				return
			}
		case <-deadline:
			return
		}
	}
}

// finalError reads the result that ends a stream with an error and returns
// its message and extensions.code, checking the stream then ends.
func (c *liveClient) finalError(t *testing.T) (msg, code string, ext map[string]any) {
	t.Helper()
	m := c.next(t, 20*time.Second)
	var e map[string]any
	switch m["type"] {
	case "next":
		p := jobj(t, m["payload"])
		require.Nil(t, p["data"], "%v", p)
		errs := jlist(t, p["errors"])
		require.Len(t, errs, 1, "%v", p)
		e = jobj(t, errs[0])
	case "error":
		errs := jlist(t, m["errors"])
		require.NotEmpty(t, errs, "%v", m)
		e = jobj(t, errs[0])
	default:
		t.Fatalf("expected an error, got %v", m)
	}
	ext = jobj(t, e["extensions"])
	code, _ = ext["code"].(string)
	msg, _ = e["message"].(string)
	if m["type"] == "next" {
		require.Equal(t, "complete", c.next(t, 10*time.Second)["type"])
	}
	return msg, code, ext
}

const subscribeEvents = `subscription($after: String, $surface: Surface, $category: String, $entityId: Int, $min: Float) {
  events(after: $after, surface: $surface, category: $category, entityId: $entityId, minSignificance: $min) {
    id title eventCategory significance owners { id label } evidence { id url }
  }
}`

// TestStreamReferenceClientsResume drives graphql-ws (key in the
// connection_init payload, and in the upgrade's header) and graphql-sse:
// subscribe, ingest, receive; disconnect, ingest more, resume from the last
// cursor and receive exactly the missed events, in order.
func TestStreamReferenceClientsResume(t *testing.T) {
	t.Parallel()
	requireLiveClients(t)
	s := startStreamServer(t, "", app.Config{})
	ingestEvents(t, s.app.DB, streamFixtureEntities...)
	key := s.key(t, cryptointel.PlanBusiness)

	for _, tc := range []struct{ transport, auth string }{{"ws", "init"}, {"ws", "header"}, {"sse", "header"}} {
		t.Run(tc.transport+"-"+tc.auth, func(t *testing.T) {
			start := streamCursor(t, s.base, key)
			c := startLiveClient(t, tc.transport, s.base, key, subscribeEvents, map[string]any{"after": start}, tc.auth)
			first := ingestEvents(t, s.app.DB, streamEvent("funding", nil), streamEvent("listing", sig(2.5)), streamEvent("funding", nil))
			got, cursor := c.events(t, 3)
			require.Equal(t, first, got)
			c.stop()

			missed := ingestEvents(t, s.app.DB, streamEvent("funding", nil), streamEvent("partnership", sig(9)))
			c2 := startLiveClient(t, tc.transport, s.base, key, subscribeEvents, map[string]any{"after": cursor}, tc.auth)
			got, _ = c2.events(t, 2)
			require.Equal(t, missed, got, "exactly the missed events")
			c2.quiet(t, 300*time.Millisecond)
			more := ingestEvents(t, s.app.DB, streamEvent("funding", nil))
			got, _ = c2.events(t, 1)
			require.Equal(t, more, got, "then live again")
		})
	}
}

// TestStreamReferenceClientsFilter checks the filters with the reference
// clients: surface SIGNAL, category, entityId and minSignificance.
func TestStreamReferenceClientsFilter(t *testing.T) {
	t.Parallel()
	requireLiveClients(t)
	s := startStreamServer(t, "", app.Config{})
	ingestEvents(t, s.app.DB, streamFixtureEntities...)
	key := s.key(t, cryptointel.PlanEnterprise)
	start := streamCursor(t, s.base, key)

	other := streamEvent("funding", sig(5))
	other["owners"], other["participants"] = []int64{3}, []int64{}
	lines := []any{
		streamEvent("funding", nil),      // 0 radar
		streamEvent("funding", sig(2)),   // 1 signal, low
		streamEvent("listing", sig(8)),   // 2 signal, high, listing
		other,                            // 3 signal, entity 3 only
		streamEvent("funding", sig(9.5)), // 4 signal, high
	}
	ids := ingestEvents(t, s.app.DB, lines...)
	for _, tc := range []struct {
		name string
		vars map[string]any
		want []int64
	}{
		{"signal", map[string]any{"surface": "SIGNAL"}, ids[1:]},
		{"category", map[string]any{"category": "listing"}, ids[2:3]},
		{"entity", map[string]any{"entityId": 3}, ids[3:4]},
		{"minSignificance", map[string]any{"min": 8.0}, []int64{ids[2], ids[4]}},
		{"radar", map[string]any{"entityId": 1}, []int64{ids[0], ids[1], ids[2], ids[4]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.vars["after"] = start
			c := startLiveClient(t, "sse", s.base, key, subscribeEvents, tc.vars, "header")
			got, _ := c.events(t, len(tc.want))
			require.Equal(t, tc.want, got)
			c.quiet(t, 300*time.Millisecond)
		})
	}
}
