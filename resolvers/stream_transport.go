package resolvers

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
)

// Defaults of StreamConfig.
const (
	// DefaultStreamHeartbeat is the default keep-alive period of streams.
	DefaultStreamHeartbeat = 15 * time.Second
	// DefaultStreamWriteTimeout is the default bound of one stream write.
	DefaultStreamWriteTimeout = 30 * time.Second
	// DefaultStreamIdleTimeout is how long a WebSocket connection may carry
	// no operation before it is closed.
	DefaultStreamIdleTimeout = 60 * time.Second
)

// WebSocket close codes.
const (
	// closeForbidden closes a connection whose connection_init payload did
	// not authenticate (graphql-ws's 4403 Forbidden).
	closeForbidden = 4403
	// closeServiceRestart closes connections at shutdown: RFC 6455's 1012
	// Service Restart, which clients take as "reconnect".
	closeServiceRestart = 1012

	// closeTooManyRequests closes a connection whose key is over its rate
	// window or connection cap at connection_init (graphql-ws's 4429).
	closeTooManyRequests = 4429
	// closeIdle closes a connection that carried no operation for the
	// idle timeout: a normal closure.
	closeIdle = 1000
)

// websocketInit authenticates a WebSocket connection from its
// connection_init payload when the upgrade did not (access.InitWebSocket);
// a refusal closes the connection with 4403 (4429 for a key over its rate
// window or connection cap) and the access layer's message.
func websocketInit(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	ctx, err := access.InitWebSocket(ctx, payload)
	if err != nil {
		msg, code := cryptointel.ErrorMessage(err), cryptointel.ErrorCode(err)
		closeCode := closeForbidden
		if code == cryptointel.ERATELIMIT {
			closeCode = closeTooManyRequests
		}
		ctx = transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, msg), closeCode)
		return ctx, nil, &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": code}}
	}
	return ctx, nil, nil
}

// websocketTransport is gqlgen's graphql-ws transport, taking exactly the
// requests the access layer meters as WebSocket upgrades.
type websocketTransport struct{ transport.Websocket }

// Supports implements graphql.Transport.
func (websocketTransport) Supports(r *http.Request) bool { return access.IsWebSocketUpgrade(r) }

// getTransport is gqlgen's GET transport for every GET that is not a
// WebSocket upgrade: an Upgrade header naming another protocol (curl
// --http2 sends "h2c") is ignored, as the HTTP server ignores it.
type getTransport struct{ transport.GET }

// Supports implements graphql.Transport.
func (getTransport) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && !access.IsWebSocketUpgrade(r)
}

// sseTransport is gqlgen's graphql-sse transport, taking exactly the
// requests the access layer meters as event streams.
type sseTransport struct{ transport.SSE }

// Supports implements graphql.Transport.
func (sseTransport) Supports(r *http.Request) bool { return access.IsEventStreamRequest(r) }

// socketSet accepts WebSocket connections (coder/websocket through gqlgen's
// adapter) that the access layer admitted as such (access.CheckWebSocket),
// bounds every write by a timeout, closes connections idle for the idle
// timeout, and keeps the open connections so shutdown can close them with
// a reconnect hint. The origin was checked by the access layer
// (access.CheckOrigin) before the upgrade.
type socketSet struct {
	inner        transport.CoderWebsocketImplementation
	writeTimeout time.Duration
	idleTimeout  time.Duration

	mu    sync.Mutex
	conns map[*timedSocket]struct{}
}

func newSocketSet(writeTimeout, idleTimeout time.Duration) *socketSet {
	return &socketSet{
		inner:        transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true}},
		writeTimeout: writeTimeout,
		idleTimeout:  idleTimeout,
		conns:        map[*timedSocket]struct{}{},
	}
}

var _ transport.WebsocketImplementation = (*socketSet)(nil)

// Accept upgrades the request, unless the access layer did not admit it as
// a WebSocket connection: then it answers 400 and nothing is served.
func (s *socketSet) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	if err := access.CheckWebSocket(r.Context()); err != nil {
		writeRequestError(w, http.StatusBadRequest, cryptointel.ErrorMessage(err), cryptointel.ErrorCode(err))
		return nil, err
	}
	c, err := s.inner.Accept(w, r, opts)
	if err != nil {
		return nil, err
	}
	ts := &timedSocket{WebsocketConn: c, set: s}
	s.mu.Lock()
	s.conns[ts] = struct{}{}
	s.mu.Unlock()
	// A key revoked or expired while the connection is open: closed at its
	// first refused operation with the access layer's message, as an
	// unusable key is at connection_init.
	access.OnKeyRefused(r.Context(), func(msg string) {
		ts.WriteClose(closeForbidden, msg) //nolint:errcheck
		ts.Close()                         //nolint:errcheck
	})
	if act := socketActivityFrom(r.Context()); act != nil && s.idleTimeout > 0 {
		ts.activity = act
		act.watch(s.idleTimeout, func() {
			ts.WriteClose(closeIdle, fmt.Sprintf("idle: no operation for %s; reconnect when you need one", s.idleTimeout)) //nolint:errcheck
			ts.Close()                                                                                                     //nolint:errcheck
		})
	}
	return ts, nil
}

// closeAll closes every open connection with code and reason.
func (s *socketSet) closeAll(code int, reason string) {
	s.mu.Lock()
	conns := make([]*timedSocket, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.WriteClose(code, reason) //nolint:errcheck
	}
}

func (s *socketSet) forget(c *timedSocket) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// timedSocket is a WebSocket connection whose writes are bounded by the
// write timeout: a write that cannot finish in time closes the connection,
// so a client that stops reading cannot hold the server's writer forever.
type timedSocket struct {
	transport.WebsocketConn
	set      *socketSet
	activity *socketActivity
}

var (
	_ transport.WebsocketReadLimiter   = (*timedSocket)(nil)
	_ transport.WebsocketReadDeadliner = (*timedSocket)(nil)
)

// WriteJSON writes one message within the write timeout.
func (c *timedSocket) WriteJSON(v any) error {
	t := time.AfterFunc(c.set.writeTimeout, func() { c.WebsocketConn.Close() }) //nolint:errcheck
	defer t.Stop()
	return c.WebsocketConn.WriteJSON(v)
}

// Close closes the connection.
func (c *timedSocket) Close() error {
	c.set.forget(c)
	if c.activity != nil {
		c.activity.stop()
	}
	return c.WebsocketConn.Close()
}

// socketActivity is a WebSocket connection's idle clock: it runs while no
// operation is in progress and closes the connection when it reaches the
// idle timeout.
type socketActivity struct {
	mu     sync.Mutex
	active int
	idle   time.Duration
	timer  *time.Timer
	done   bool
}

type socketActivityKey struct{}

// withSocketActivity returns ctx carrying a new idle clock for the
// WebSocket connection it will serve.
func withSocketActivity(ctx context.Context) context.Context {
	return context.WithValue(ctx, socketActivityKey{}, &socketActivity{})
}

func socketActivityFrom(ctx context.Context) *socketActivity {
	a, _ := ctx.Value(socketActivityKey{}).(*socketActivity)
	return a
}

// watch starts the clock: onIdle runs when no operation has been in
// progress for idle.
func (a *socketActivity) watch(idle time.Duration, onIdle func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.idle = idle
	a.timer = time.AfterFunc(idle, func() {
		a.mu.Lock()
		fire := a.active == 0 && !a.done
		a.mu.Unlock()
		if fire {
			onIdle()
		}
	})
}

// begin marks an operation in progress, until ctx is done.
func (a *socketActivity) begin(ctx context.Context) {
	a.mu.Lock()
	a.active++
	if a.timer != nil {
		a.timer.Stop()
	}
	a.mu.Unlock()
	context.AfterFunc(ctx, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.active--; a.active == 0 && a.timer != nil && !a.done {
			a.timer.Reset(a.idle)
		}
	})
}

// stop ends the clock of a closed connection.
func (a *socketActivity) stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done = true
	if a.timer != nil {
		a.timer.Stop()
	}
}

// SetReadLimit implements transport.WebsocketReadLimiter.
func (c *timedSocket) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

// SetReadDeadline implements transport.WebsocketReadDeadliner.
func (c *timedSocket) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// Stream is a subscription run in process (Executor.Subscribe).
type Stream struct {
	next graphql.ResponseHandler
	ctx  context.Context
	st   *streamState
}

// Subscribe opens a subscription in process, through the same executor,
// extensions and stream machinery as /graphql. When the operation is
// refused (invalid arguments, access), it returns nil and the response
// carrying the errors.
func (e *Executor) Subscribe(ctx context.Context, query, operationName string, variables map[string]any) (*Stream, *graphql.Response) {
	ctx = graphql.StartOperationTrace(withStreaming(ctx))
	params := &graphql.RawParams{Query: query, OperationName: operationName, Variables: variables}
	now := graphql.Now()
	params.ReadTime = graphql.TraceTiming{Start: now, End: now}
	opCtx, errs := e.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return nil, e.exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
	}
	handler, ctx := e.exec.DispatchOperation(ctx, opCtx)
	st := streamStateFrom(ctx)
	if st == nil || st.sub == nil {
		resp := handler(ctx)
		if resp == nil {
			resp = &graphql.Response{Errors: gqlerror.List{gqlerror.Errorf("operation %s is not a subscription", operationName)}}
		}
		return nil, resp
	}
	return &Stream{next: handler, ctx: ctx, st: st}, nil
}

// Next returns the stream's next result (an event with extensions.cursor,
// or the last one, with errors, when the server closed the stream), or nil
// when the stream is over or its context is done.
func (s *Stream) Next() *graphql.Response { return s.next(s.ctx) }

// NextWithin is Next that gives up waiting after d: it then returns nil
// and idle true, and the stream goes on (the caller sends a heartbeat and
// calls again). It lets a stream writer keep its heartbeats without a
// goroutine of its own.
func (s *Stream) NextWithin(d time.Duration) (resp *graphql.Response, idle bool) {
	s.st.idleDeadline, s.st.idled = time.Now().Add(d), false
	resp = s.next(s.ctx)
	s.st.idleDeadline = time.Time{}
	return resp, resp == nil && s.st.idled
}

// Cursor returns the cursor of the last event delivered, or of the
// stream's starting position before the first.
func (s *Stream) Cursor() string { return s.st.cursor }

// Shared returns what compute makes of the current result (the one Next
// last returned), computed once for every stream that received the same
// result — for example its /v1 encoding. Without a current event it
// computes afresh.
func (s *Stream) Shared(name string, compute func() any) any {
	if cur := s.st.current; cur != nil {
		return cur.derive(name, compute)
	}
	return compute()
}

// Waiting returns how many events are ready beyond the current one, so a
// writer can flush once per burst.
func (s *Stream) Waiting() int { return s.st.Waiting() }

// Close ends the stream and frees its place.
func (s *Stream) Close() { s.st.release() }

// ActiveStreams returns the number of subscriptions open in this process
// (over any transport, or in process) that have not ended yet.
func (e *Executor) ActiveStreams() int64 { return e.root.streams.Load() }

// CloseStreams ends the WebSocket connections at shutdown, with 1012
// (Service Restart) and a reason telling clients to reconnect and resume;
// call it after the hub closed the subscriptions.
func (e *Executor) CloseStreams() {
	e.sockets.closeAll(closeServiceRestart, "server restarting: reconnect and resume from your last cursor")
}
