package access

import (
	"encoding/hex"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/cryptointel/cryptointel"
)

// Streaming connections (WebSocket connections to /graphql, graphql-sse
// requests and GET /v1/stream) hold a socket, a file descriptor and
// goroutines for as long as they last, whatever they carry. Each server
// process caps them three ways before any database work: per API key, per
// client address and in total. The total stays well below the process's
// open-file limit, so a server at its connection limit still has
// descriptors for ordinary requests (and /healthz) to come in. A connection
// refused by a cap is answered before the upgrade, with Connection: close:
// 429 for the per-key and per-address caps, 503 with Retry-After for the
// total. (Subscriptions are capped besides, across every process, by the
// plan's max_streams: see stream.go.)

// Defaults of the connection caps (Config.MaxConnectionsPerKey,
// MaxConnectionsPerAddress).
const (
	// DefaultMaxConnectionsPerKey is above the largest plan's max_streams
	// (cryptointel.PlanStreamCaps), so a key can hold every stream its plan
	// allows on a connection of its own, with room for query sockets.
	DefaultMaxConnectionsPerKey = 128
	// DefaultMaxConnectionsPerAddress bounds one client address.
	DefaultMaxConnectionsPerAddress = 256
)

// Messages of refused streaming connections.
const (
	// MsgTooManyConnectionsPerKeyFmt: the per-key cap.
	MsgTooManyConnectionsPerKeyFmt = "Too many open streaming connections for this API key: at most %d WebSocket and event-stream connections at a time per server. Close one, or send queries as plain HTTP requests."
	// MsgTooManyConnectionsPerAddressFmt: the per-address cap.
	MsgTooManyConnectionsPerAddressFmt = "Too many open streaming connections from your address: at most %d WebSocket and event-stream connections at a time per server. Close one, or send queries as plain HTTP requests."
	// MsgServerConnectionsFull: the process's total cap.
	MsgServerConnectionsFull = "The server is at its limit of open streaming connections. Retry shortly, or send queries as plain HTTP requests."
)

// connectionsRetryAfter is the Retry-After of a connection refused by the
// total cap, in seconds.
const connectionsRetryAfter = 5

// connCaps counts this process's open streaming connections.
type connCaps struct {
	perKey, perAddr, total int // 0: no cap

	mu    sync.Mutex
	keys  map[string]int
	addrs map[string]int
	open  int
}

func newConnCaps(perKey, perAddr, total int) *connCaps {
	return &connCaps{perKey: max(perKey, 0), perAddr: max(perAddr, 0), total: max(total, 0),
		keys: map[string]int{}, addrs: map[string]int{}}
}

// admitAddress takes a place for a connection from addr (and one of the
// total), or returns the refusal.
func (c *connCaps) admitAddress(addr string) (func(), *cryptointel.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total > 0 && c.open >= c.total {
		return nil, cryptointel.Errorf(cryptointel.EUNAVAILABLE, "%s", MsgServerConnectionsFull)
	}
	if c.perAddr > 0 && c.addrs[addr] >= c.perAddr {
		return nil, cryptointel.Errorf(cryptointel.ERATELIMIT, MsgTooManyConnectionsPerAddressFmt, c.perAddr)
	}
	c.open++
	c.addrs[addr]++
	return sync.OnceFunc(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.open--
		if c.addrs[addr]--; c.addrs[addr] <= 0 {
			delete(c.addrs, addr)
		}
	}), nil
}

// admitKey takes a place for a connection of the key whose hash is hash.
func (c *connCaps) admitKey(hash []byte) (func(), *cryptointel.Error) {
	k := hex.EncodeToString(hash)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.perKey > 0 && c.keys[k] >= c.perKey {
		return nil, cryptointel.Errorf(cryptointel.ERATELIMIT, MsgTooManyConnectionsPerKeyFmt, c.perKey)
	}
	c.keys[k]++
	return sync.OnceFunc(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.keys[k]--; c.keys[k] <= 0 {
			delete(c.keys, k)
		}
	}), nil
}

// OpenConnections returns the number of streaming connections open in this process.
func (s *Service) OpenConnections() int {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return s.conns.open
}

// ClientAddress is the address a request comes from: the IP of the peer
// (behind a reverse proxy, the proxy's: the per-address guards must be
// raised or turned off there).
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// refuseConnection answers a streaming connection refused by a cap or the
// rate window before it is upgraded, with Retry-After when retryAfter (in
// seconds) is set, and closes the TCP connection so that a flood of
// refused attempts holds no descriptors.
func refuseConnection(w http.ResponseWriter, e *cryptointel.Error, retryAfter int) {
	h := w.Header()
	h.Set("Connection", "close")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	writeError(w, StatusFor(e.Code), e.Message)
}

// capRetryAfter is the Retry-After of a refusal by a connection cap: the
// total cap's, none for the per-key and per-address caps (a place frees
// when one of the client's own connections closes).
func capRetryAfter(e *cryptointel.Error) int {
	if e.Code == cryptointel.EUNAVAILABLE {
		return connectionsRetryAfter
	}
	return 0
}
