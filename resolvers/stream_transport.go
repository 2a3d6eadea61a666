package resolvers

import (
	"context"
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
)

// WebSocket close codes.
const (
	// closeForbidden closes a connection whose connection_init payload did
	// not authenticate (graphql-ws's 4403 Forbidden).
	closeForbidden = 4403
	// closeServiceRestart closes connections at shutdown: RFC 6455's 1012
	// Service Restart, which clients take as "reconnect".
	closeServiceRestart = 1012
)

// websocketInit authenticates a WebSocket connection from its
// connection_init payload when the upgrade did not (access.InitWebSocket);
// a refusal closes the connection with 4403 and the access layer's message.
func websocketInit(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	ctx, err := access.InitWebSocket(ctx, payload)
	if err != nil {
		msg := cryptointel.ErrorMessage(err)
		ctx = transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, msg), closeForbidden)
		return ctx, nil, &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": cryptointel.ErrorCode(err)}}
	}
	return ctx, nil, nil
}

func isWebSocket(r *http.Request) bool { return r.Header.Get("Upgrade") != "" }

// socketSet accepts WebSocket connections (coder/websocket through gqlgen's
// adapter), bounds every write by a timeout, and keeps the open connections
// so shutdown can close them with a reconnect hint. The origin was checked
// by the access layer (access.CheckOrigin) before the upgrade.
type socketSet struct {
	inner        transport.CoderWebsocketImplementation
	writeTimeout time.Duration

	mu    sync.Mutex
	conns map[*timedSocket]struct{}
}

func newSocketSet(writeTimeout time.Duration) *socketSet {
	return &socketSet{
		inner:        transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true}},
		writeTimeout: writeTimeout,
		conns:        map[*timedSocket]struct{}{},
	}
}

var _ transport.WebsocketImplementation = (*socketSet)(nil)

// Accept upgrades the request.
func (s *socketSet) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := s.inner.Accept(w, r, opts)
	if err != nil {
		return nil, err
	}
	ts := &timedSocket{WebsocketConn: c, set: s}
	s.mu.Lock()
	s.conns[ts] = struct{}{}
	s.mu.Unlock()
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
	set *socketSet
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
	return c.WebsocketConn.Close()
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
