package tests

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// writeCountingListener counts the writes to every connection it accepts.
type writeCountingListener struct {
	net.Listener
	mu     sync.Mutex
	counts []*atomic.Int64
}

type writeCountingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCountingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

func (l *writeCountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := new(atomic.Int64)
	l.mu.Lock()
	l.counts = append(l.counts, n)
	l.mu.Unlock()
	return writeCountingConn{c, n}, nil
}

func (l *writeCountingListener) writes() (total int64, conns int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.counts {
		total += n.Load()
	}
	return total, len(l.counts)
}

// TestGraphQLResponseSaysItsLength: a /graphql POST response is whole
// before it is written, so it carries its Content-Length and goes to the
// connection in two writes (net/http's buffer of the header and the
// body's first bytes, then the rest), not chunked in three.
func TestGraphQLResponseSaysItsLength(t *testing.T) {
	t.Parallel()
	var ln *writeCountingListener
	srv := startObserveServerOn(t, dbtest.NewURL(t), func(inner net.Listener) net.Listener {
		ln = &writeCountingListener{Listener: inner}
		return ln
	})
	a := srv.app
	key, _, err := db.CreateAPIKey(context.Background(), a.DB.Bun, "graphql-length-test", "enterprise")
	require.NoError(t, err)

	// The schema's types with their fields: tens of KB, past net/http's
	// 4 KB connection buffer twice over.
	query := `{"query":"{ __schema { types { name description fields { name description } } } }"}`
	req, err := http.NewRequest(http.MethodPost, srv.base+"/graphql", strings.NewReader(query))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Greater(t, len(body), 12<<10, "the response must outgrow the connection's buffer for the count to mean anything")
	require.Empty(t, resp.TransferEncoding, "a whole response is not chunked")
	require.Equal(t, strconv.Itoa(len(body)), resp.Header.Get("Content-Length"))
	writes, conns := ln.writes()
	require.Equal(t, 1, conns)
	require.LessOrEqual(t, writes, int64(2), "writes to the connection for one response")
}
