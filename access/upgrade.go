package access

import (
	"context"
	"mime"
	"net/http"
	"net/textproto"
	"strings"
	"sync"

	"github.com/cryptointel/cryptointel"
)

// What a streaming request is has one definition, here; the access layer
// meters by it, the GraphQL handler picks its transport by it, the
// WebSocket transport accepts only what it admitted, and the time budget
// exempts only what it names (and only on the paths that stream).
//
// A WebSocket upgrade is a request any of whose Upgrade header fields lists
// the token "websocket", compared case-insensitively (RFC 9110 section
// 7.8: a comma-separated list, possibly over several fields) — exactly
// what the WebSocket library accepts. Any other upgrade ("h2c", "foo") is
// an ordinary request: no handler switches protocols for it, and it is
// metered and budgeted like one.

// IsWebSocketUpgrade reports whether r asks to switch to the WebSocket
// protocol.
func IsWebSocketUpgrade(r *http.Request) bool {
	for _, v := range r.Header[textproto.CanonicalMIMEHeaderKey("Upgrade")] {
		for _, token := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(token), "websocket") {
				return true
			}
		}
	}
	return false
}

// IsEventStreamRequest reports whether r asks /graphql for a graphql-sse
// stream: a POST of an application/json body that accepts
// text/event-stream (the graphql-sse transport's own test).
func IsEventStreamRequest(r *http.Request) bool {
	if r.Method != http.MethodPost || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// IsStreamRequest reports whether r opens a stream on a GraphQL endpoint:
// a WebSocket upgrade or a graphql-sse request.
func IsStreamRequest(r *http.Request) bool {
	return IsWebSocketUpgrade(r) || IsEventStreamRequest(r)
}

// errUnmeteredUpgrade refuses a WebSocket handshake the access layer did
// not admit as one.
var errUnmeteredUpgrade = cryptointel.Errorf(cryptointel.EINVALID,
	"This request cannot switch protocols here: open WebSocket connections with GET /graphql, Upgrade: websocket and Connection: Upgrade.")

// CheckWebSocket returns nil when the WebSocket connection being accepted
// in ctx was admitted as one by the access layer (its handshake counted,
// its operations metered one by one), or when no access layer governs ctx
// (unit tests of the handler); otherwise an EINVALID error: the WebSocket
// transport must refuse the handshake rather than serve operations nobody
// meters.
func CheckWebSocket(ctx context.Context) error {
	st, ok := ctx.Value(governedKey{}).(*governed)
	if !ok {
		return nil
	}
	if st.socket {
		return nil
	}
	return errUnmeteredUpgrade
}

// governedKey marks a request the access layer wrapped.
type governedKey struct{}

// governed is what Wrap records about a request for the layers below it.
type governed struct {
	// socket is true when Wrap admitted the request as a WebSocket
	// connection, metered operation by operation.
	socket bool

	mu        sync.Mutex
	releases  []func()
	onRefused func(msg string) // OnKeyRefused's
}

// OnKeyRefused registers f to run, once and on its own goroutine, when an
// operation of the WebSocket connection ctx serves is refused because its
// key is no longer usable (revoked or expired), with the refusal's
// message: the transport closes the connection rather than leave it open
// answering errors. It does nothing for another request.
func OnKeyRefused(ctx context.Context, f func(msg string)) {
	if g, ok := ctx.Value(governedKey{}).(*governed); ok {
		g.mu.Lock()
		g.onRefused = f
		g.mu.Unlock()
	}
}

// keyRefused runs the OnKeyRefused function, once.
func (g *governed) keyRefused(msg string) {
	g.mu.Lock()
	f := g.onRefused
	g.onRefused = nil
	g.mu.Unlock()
	if f != nil {
		go f(msg)
	}
}

// onRelease registers f (freeing a connection's place) to run when the
// request ends.
func (g *governed) onRelease(f func()) {
	g.mu.Lock()
	g.releases = append(g.releases, f)
	g.mu.Unlock()
}

// release runs the registered functions.
func (g *governed) release() {
	g.mu.Lock()
	fs := g.releases
	g.releases = nil
	g.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
