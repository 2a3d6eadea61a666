package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	coderws "github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// smallReceiveBuffer makes a client socket's receive buffer tiny, so a
// client that stops reading stalls the server's writes quickly.
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
	})
	if err != nil {
		return err
	}
	return serr
}

// rawSSE is a /v1/stream client on a socket with a tiny receive buffer
// that reads only when told to.
type rawSSE struct {
	conn net.Conn
	r    *bufio.Reader
}

func dialRawSSE(t *testing.T, base, path, key string) *rawSSE {
	t.Helper()
	d := net.Dialer{Control: smallReceiveBuffer}
	conn, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n",
		path, strings.TrimPrefix(base, "http://"), key)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return &rawSSE{conn: conn, r: bufio.NewReader(resp.Body)}
}

// message reads one SSE message (skipping comments); io.EOF at the end.
func (c *rawSSE) message() (sseMessage, error) {
	var m sseMessage
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return m, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if m.ID != "" || m.Data != "" || m.Event != "" || m.Retry != "" {
				return m, nil
			}
		case strings.HasPrefix(line, ":"):
		default:
			name, value, _ := strings.Cut(line, ": ")
			switch name {
			case "id":
				m.ID = value
			case "event":
				m.Event = value
			case "data":
				m.Data = value
			case "retry":
				m.Retry = value
			}
		}
	}
}

// TestStreamSlowConsumer stalls two subscribers (a /v1/stream client and a
// graphql-ws client, both on tiny socket buffers) while 12,000 events are
// ingested and a third subscriber reads normally. The stalled ones are
// closed as slow consumers and the server's live heap stays bounded (with
// an unbounded buffer the stalled subscribers would hold every event); the
// /v1 one, reading again, gets the close message with code slow_consumer
// and a cursor, and resuming from it receives exactly the rest; the
// WebSocket one is disconnected by the write timeout. The reader that keeps
// up receives every event exactly once.
func TestStreamSlowConsumer(t *testing.T) {
	// Not parallel: the stalled subscribers must be closed after the events
	// they buffered, which needs their writers scheduled; the suite's
	// parallel tests starve them on two cores.
	ctx := context.Background()
	bin := buildServer(t)
	dbURL := dbtest.NewURL(t)
	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	ingestEvents(t, store, streamFixtureEntities...)

	pprof := freeLoopbackAddr(t)
	const buffer = 256
	// The write timeout must outlast the ingest and the healthy reader's
	// walk (on a loaded machine, well over 20 s), since the /v1 subscriber's
	// close message waits in a blocked write until the test reads again.
	srv := startServeProc(t, bin, []string{"DATABASE_URL=" + dbURL, "WEBHOOK_POLL_INTERVAL=1h", "EXPORT_DIR=" + t.TempDir(),
		"STREAM_BUFFER=" + strconv.Itoa(buffer), "STREAM_WRITE_TIMEOUT=60s", "STREAM_HEARTBEAT=5s", "PPROF_ADDR=" + pprof,
		"GOGC=100"}, filepath.Join(t.TempDir(), "serve.log"))
	t.Cleanup(func() {
		srv.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
		srv.cmd.Wait()                          //nolint:errcheck
	})
	key, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
	start := streamCursor(t, srv.base, key)

	// The healthy reader resumes whenever it is closed, like a client
	// would, and collects every event id.
	const total = 12_000
	healthy := make(chan []int64, 1)
	go func() {
		var ids []int64
		cursor := start
		for len(ids) < total {
			c, status, _ := openSSE(t, srv.base, "/v1/stream?cursor="+cursor, key)
			if status != http.StatusOK {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for m := range c.msgs {
				if m.Event == "close" || m.Data == "" {
					continue
				}
				var ev struct {
					ID int64 `json:"id"`
				}
				if json.Unmarshal([]byte(m.Data), &ev) == nil {
					ids = append(ids, ev.ID)
					cursor = m.ID
				}
				if len(ids) == total {
					break
				}
			}
			c.close()
		}
		healthy <- ids
	}()

	stalled := dialRawSSE(t, srv.base, "/v1/stream?cursor="+start, key)
	open, err := stalled.message()
	require.NoError(t, err)
	require.Equal(t, start, open.ID)

	ws := dialStalledWebSocket(t, srv.base, key, start)

	// The live heap: the bytes of live objects (heap_alloc) after two
	// collections, since what a sync.Pool held survives the first one (in
	// the pool's victim cache) and is no subscriber's. The spans in use
	// (heap_inuse) also count the free room of partly used spans, which
	// moved this figure by 6 to 25 MB from run to run. Two stalled
	// subscribers holding the 12,000 events would hold over 30 MB.
	gcHeap := func() float64 {
		for range 2 {
			resp, err := http.Get("http://" + pprof + "/debug/pprof/heap?gc=1")
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
		}
		return scrapeValue(t, srv.base, "go_memstats_heap_alloc_bytes")
	}
	before := gcHeap()

	var lines []any
	var want []int64
	for i := 0; i < total; i++ {
		ev := streamEvent("funding", nil)
		ev["summary"] = strings.Repeat("A long summary to give every event some weight. ", 20)
		lines = append(lines, ev)
		want = append(want, ev["id"].(int64))
	}
	ingestEvents(t, store, lines...)

	// Both stalled subscribers are closed as slow consumers.
	// (The healthy reader may have been closed too, and resumed.)
	require.Eventually(t, func() bool {
		return scrapeValue(t, srv.base, `cryptointel_stream_closed_total{reason="slow_consumer"}`) >= 2 &&
			scrapeValue(t, srv.base, "cryptointel_stream_subscribers") <= 1
	}, 60*time.Second, 100*time.Millisecond)
	var got []int64
	select {
	case got = <-healthy:
	case <-time.After(2 * time.Minute):
		t.Fatal("the healthy reader did not receive every event")
	}
	require.Equal(t, want, got, "the reader that keeps up gets every event once, in order (across resumes if any)")
	after := gcHeap()
	buffered := scrapeValue(t, srv.base, "cryptointel_stream_buffered_events")
	summary(t, "slow consumers: %d events ingested past 2 stalled subscribers (buffer %d): both closed as slow_consumer; live heap %.1f MB before, %.1f MB after",
		total, buffer, before/(1<<20), after/(1<<20))
	require.Less(t, after-before, float64(24<<20), "the stalled subscribers must not hold the events (%d of about 1.3 KB each)", total)
	require.LessOrEqual(t, buffered, float64(2*buffer))

	// Reading again, the /v1 subscriber gets what was written before the
	// close, then the reason and its cursor.
	require.NoError(t, stalled.conn.SetReadDeadline(time.Now().Add(time.Minute)))
	var seen []int64
	var closing sseMessage
	for {
		m, err := stalled.message()
		require.NoError(t, err, "the close message must come before the end")
		if m.Event == "close" {
			closing = m
			break
		}
		var ev struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(m.Data), &ev))
		seen = append(seen, ev.ID)
	}
	body := decodeJSON(t, closing.Data)
	require.Equal(t, "slow_consumer", body["code"])
	require.Equal(t, fmt.Sprintf("The stream fell more than %d events behind and was closed. Resume from your last cursor.", buffer), body["error"])
	require.NotEmpty(t, seen)
	require.Less(t, len(seen), total)
	require.Equal(t, want[:len(seen)], seen)
	_, err = stalled.message()
	require.ErrorIs(t, err, io.EOF)

	resumed, status, b := openSSE(t, srv.base, "/v1/stream", key, "Last-Event-ID", body["cursor"].(string))
	require.Equal(t, http.StatusOK, status, "%s", b)
	resumed.next(t, 10*time.Second)
	rest, _ := resumed.events(t, total-len(seen))
	require.Equal(t, want[len(seen):], eventIDs(t, rest), "resuming from the cursor gives exactly the rest")

	// The stalled WebSocket is disconnected by the write timeout.
	ws.waitClosed(t, 2*time.Minute)
}

// stalledWebSocket is a graphql-ws subscription on a tiny socket buffer
// that is not read.
type stalledWebSocket struct {
	conn *coderws.Conn
}

func dialStalledWebSocket(t *testing.T, base, key, after string) *stalledWebSocket {
	t.Helper()
	d := net.Dialer{Control: smallReceiveBuffer}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := coderws.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql",
		&coderws.DialOptions{HTTPClient: client, Subprotocols: []string{"graphql-transport-ws"}})
	require.NoError(t, err)
	conn.SetReadLimit(16 << 20)
	t.Cleanup(func() { conn.CloseNow() }) //nolint:errcheck
	send := func(v any) {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, conn.Write(ctx, coderws.MessageText, b))
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + key}})
	_, ack, err := conn.Read(ctx)
	require.NoError(t, err)
	require.Contains(t, string(ack), "connection_ack")
	send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query":     `subscription($after: String) { events(after: $after) { id title summary owners { id label } evidence { id content url } } }`,
		"variables": map[string]any{"after": after},
	}})
	return &stalledWebSocket{conn: conn}
}

// waitClosed reads (the data the server managed to write, then) until the
// connection ends, which must happen within d.
func (w *stalledWebSocket) waitClosed(t *testing.T, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		if _, _, err := w.conn.Read(ctx); err != nil {
			require.NoError(t, ctx.Err(), "the stalled connection was not closed within %s", d)
			return
		}
	}
}

// freeLoopbackAddr returns a loopback address with a free port.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// scrapeValue returns the value of one series of base's /metrics (0 when
// absent).
func scrapeValue(t *testing.T, base, series string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, value, ok := strings.Cut(line, " "); ok && name == series {
			v, err := strconv.ParseFloat(value, 64)
			require.NoError(t, err)
			return v
		}
	}
	return 0
}
