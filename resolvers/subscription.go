package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/live"
)

// How a subscription runs. The resolver checks the arguments, registers a
// subscriber with the process's live.Hub and admits the stream with the
// access layer (plan, per-key cap, credits); it returns a channel that
// gqlgen's executor reads one event from per result. The streams extension
// below drives the stream from the response side: for each result the
// transport asks for, it takes the subscriber's next event, charges it,
// and hands it to the executor — or, when every subscriber with the same
// selection shares the work, reuses the result another subscriber built
// for that event. So an event is loaded once per process and encoded once
// per distinct selection, whatever the number of subscribers, and the
// transport's pace is the stream's pace: a subscriber that falls behind
// fills its bounded buffer and is closed by the hub.

// StreamCursorMaxAge is how old a stream cursor may be to resume from:
// cryptointel.StreamResumeLookback.
const StreamCursorMaxAge = cryptointel.StreamResumeLookback

// streamCursorContext is the query context of stream cursors: one position
// in the event sequence, valid for any filters.
const streamCursorContext = "live-stream"

// msgStreamCursorExpired refuses a cursor older than StreamCursorMaxAge.
var msgStreamCursorExpired = "cursor has expired: streams resume from cursors up to " + cryptointel.Days(StreamCursorMaxAge) +
	" old; start a new stream (backfill with the bulk feeds)"

// Messages of refused stream arguments.
const (
	msgStreamCursorMismatch = "after is not a stream cursor: pass an extensions.cursor of a pushed result, streamCursor, or a /v1/stream event id"

	msgStreamServerStopping = "The server is shutting down. Retry shortly."
)

type subscriptionResolver struct{ *Resolver }

var _ graph.SubscriptionResolver = (*subscriptionResolver)(nil)

// Subscription returns the Subscription type's resolver.
func (r *Resolver) Subscription() graph.SubscriptionResolver { return &subscriptionResolver{r} }

// encodeStreamCursor returns the cursor of position seq.
func (r *Resolver) encodeStreamCursor(seq int64) string {
	return r.cursors.EncodeCursor(streamCursorContext, Cursor{AtMicro: r.now().UnixMicro(), ID: seq})
}

// decodeStreamCursor returns the position of a stream cursor.
func (r *Resolver) decodeStreamCursor(token string) (int64, error) {
	cur, err := r.cursors.DecodeCursor(streamCursorContext, strings.TrimSpace(token))
	switch {
	case err == ErrCursorMismatch:
		return 0, cryptointel.Errorf(cryptointel.EINVALID, "%s", msgStreamCursorMismatch)
	case err != nil:
		return 0, err
	case cur.ID < 0:
		return 0, ErrInvalidCursor
	case r.now().Sub(time.UnixMicro(cur.AtMicro)) > StreamCursorMaxAge:
		return 0, cryptointel.Errorf(cryptointel.EINVALID, "%s", msgStreamCursorExpired)
	}
	return cur.ID, nil
}

// StreamCursor returns the cursor of the newest event ingested so far.
func (r *queryResolver) StreamCursor(ctx context.Context) (string, error) {
	head, err := r.store.StreamHead(ctx)
	if err != nil {
		return "", err
	}
	return r.encodeStreamCursor(head), nil
}

// Events opens a stream of new events. A stream that does not open
// (arguments, the per-key cap, credits, shutdown) is a refusal: the
// credits its operation was charged are given back.
func (r *subscriptionResolver) Events(ctx context.Context, surface *graph.Surface, category *string, entityID *int, minSignificance *float64, after *string) (<-chan *cryptointel.Event, error) {
	ch, err := r.events(ctx, surface, category, entityID, minSignificance, after)
	if err != nil {
		access.Refund(ctx)
	}
	return ch, err
}

func (r *subscriptionResolver) events(ctx context.Context, surface *graph.Surface, category *string, entityID *int, minSignificance *float64, after *string) (<-chan *cryptointel.Event, error) {
	st := streamStateFrom(ctx)
	if st == nil {
		return nil, fmt.Errorf("error opening stream: subscription run outside the streams extension")
	}
	f := db.StreamFilter{
		SignalOnly:      isSignal(surface, graph.SurfaceRadar),
		Category:        strOr(category, ""),
		MinSignificance: minSignificance,
	}
	from := int64(-1)
	if after != nil && strings.TrimSpace(*after) != "" {
		seq, err := r.decodeStreamCursor(*after)
		if err != nil {
			return nil, err
		}
		from = seq
	}
	if entityID != nil {
		ents, err := db.EntitiesByIDs(ctx, r.store.Pool, []int64{int64(*entityID)})
		if err != nil {
			return nil, err
		}
		if len(ents) == 0 {
			return nil, &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: cryptointel.MsgEntityNotFound}
		}
		f.EntityID = int64(*entityID)
	}
	if r.hub == nil {
		return nil, live.ErrNotRunning
	}
	opCtx := graphql.GetOperationContext(ctx)
	cost := access.StreamEventCost(ctx, operationCost(opCtx))
	sub, err := r.hub.Subscribe(f, from)
	if errors.Is(err, live.ErrShuttingDown) {
		// Open streams are told shutting_down; a new one is simply
		// refused, to be retried on another server.
		return nil, cryptointel.Errorf(cryptointel.EUNAVAILABLE, "%s", msgStreamServerStopping)
	} else if err != nil {
		return nil, err
	}
	grant, err := access.OpenStream(ctx, cost, sub.CloseWith)
	if err != nil {
		sub.Close()
		return nil, err
	}
	plan := ""
	if c, ok := access.CallerFrom(ctx); ok && c != nil {
		plan = c.Plan.Name
	}
	start := r.encodeStreamCursor(sub.Position())
	if from >= 0 {
		start = strings.TrimSpace(*after) // the position the client asked for, as it spelt it
	}
	st.open(r.Resolver, sub, grant, cost, memoKey(opCtx, plan), start)
	context.AfterFunc(ctx, st.release)
	return st.ch, nil
}

// operationCost is the operation's complexity as the access layer charged
// it (GraphQLCost), or 1.
func operationCost(opCtx *graphql.OperationContext) int {
	if c, ok := opCtx.Stats.GetExtension("AccessCost").(int); ok {
		return c
	}
	return 1
}

// memoKey identifies what a subscription makes of an event: subscribers
// with the same key get byte-identical results, so one builds each
// result and the others reuse it. It is the document, the operation name,
// the caller's plan (fields marked @access depend on it) and the values of
// the variables used below the root field (the root field's own arguments
// only filter which events arrive).
func memoKey(opCtx *graphql.OperationContext, plan string) string {
	var b strings.Builder
	b.WriteString(plan)
	b.WriteByte(0)
	b.WriteString(opCtx.OperationName)
	b.WriteByte(0)
	b.WriteString(opCtx.RawQuery)
	names := map[string]bool{}
	if op := opCtx.Operation; op != nil {
		w := varWalk{frags: opCtx.Doc.Fragments, names: names, seen: map[string]bool{}}
		for _, sel := range op.SelectionSet {
			if f, ok := sel.(*ast.Field); ok {
				for _, d := range f.Directives {
					for _, a := range d.Arguments {
						w.value(a.Value)
					}
				}
				w.set(f.SelectionSet)
			} else {
				w.set(ast.SelectionSet{sel})
			}
		}
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, _ := json.Marshal(opCtx.Variables[k])
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte('=')
		b.Write(v)
	}
	return b.String()
}

// varWalk collects the variables a selection set uses.
type varWalk struct {
	frags ast.FragmentDefinitionList
	names map[string]bool
	seen  map[string]bool
}

func (w *varWalk) set(set ast.SelectionSet) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			for _, a := range s.Arguments {
				w.value(a.Value)
			}
			w.directives(s.Directives)
			w.set(s.SelectionSet)
		case *ast.InlineFragment:
			w.directives(s.Directives)
			w.set(s.SelectionSet)
		case *ast.FragmentSpread:
			w.directives(s.Directives)
			if w.seen[s.Name] {
				continue
			}
			w.seen[s.Name] = true
			if f := w.frags.ForName(s.Name); f != nil {
				w.set(f.SelectionSet)
			}
		}
	}
}

func (w *varWalk) directives(ds ast.DirectiveList) {
	for _, d := range ds {
		for _, a := range d.Arguments {
			w.value(a.Value)
		}
	}
}

func (w *varWalk) value(v *ast.Value) {
	if v == nil {
		return
	}
	if v.Kind == ast.Variable {
		w.names[v.Raw] = true
	}
	for _, c := range v.Children {
		w.value(c.Value)
	}
}

// streamState is one subscription's state, shared by its resolver (which
// opens it) and the streams extension (which drives it).
type streamState struct {
	r        *Resolver
	sub      *live.Subscriber
	grant    *access.StreamGrant
	budget   time.Duration // of each event's rendering; 0: none
	cost     int
	key      string
	ch       chan *cryptointel.Event
	cursor   string // of the last event delivered, or the starting position
	current  *renderedEvent
	finished bool

	// In-process streams only (Stream.NextWithin): when set, waiting for
	// an event stops at idleDeadline and idled reports it.
	idleDeadline time.Time
	idled        bool

	releaseOnce sync.Once
}

type streamStateKey struct{}

func streamStateFrom(ctx context.Context) *streamState {
	st, _ := ctx.Value(streamStateKey{}).(*streamState)
	return st
}

func (st *streamState) open(r *Resolver, sub *live.Subscriber, grant *access.StreamGrant, cost int, key, cursor string) {
	st.r, st.sub, st.grant, st.cost, st.key, st.cursor = r, sub, grant, cost, key, cursor
	st.ch = make(chan *cryptointel.Event, 1)
	r.streams.Add(1)
}

// release unregisters the subscriber and frees the stream's place.
func (st *streamState) release() {
	st.releaseOnce.Do(func() {
		st.sub.Close()
		st.grant.Close()
		st.r.streams.Add(-1)
	})
}

// next returns the subscription's next result: the next event, charged and
// rendered, or the result that reports why the server closed the stream,
// or nil when the stream is over.
func (st *streamState) next(ctx context.Context, render graphql.ResponseHandler) *graphql.Response {
	if st.finished {
		st.release()
		return nil
	}
	it, err := st.nextItem(ctx)
	if err == errIdle {
		return nil // not finished: the caller writes a heartbeat
	}
	if err == nil {
		if err = st.grant.Spend(st.cost); err != nil {
			st.sub.CloseWith(err)
		}
	}
	if err != nil {
		st.finished = true
		st.current = nil
		if ctx.Err() != nil || live.IsClosedByConsumer(err) {
			st.release()
			return nil
		}
		return st.closing(err)
	}
	shared := st.shared(ctx, it, render)
	if shared == nil {
		st.finished = true
		st.release()
		return nil
	}
	st.cursor = shared.cursor
	st.current = shared
	return shared.delivered
}

// errIdle reports that no event came before the idle deadline.
var errIdle = errors.New("no event before the deadline")

// nextItem is the subscriber's next event; with an idle deadline set (an
// in-process stream waiting for its heartbeat), errIdle when none comes by
// then.
func (st *streamState) nextItem(ctx context.Context) (*live.Item, error) {
	if st.idleDeadline.IsZero() {
		return st.sub.Next(ctx)
	}
	it, err := st.sub.NextBefore(ctx, st.idleDeadline)
	if errors.Is(err, live.ErrNothingBefore) {
		st.idled = true
		return nil, errIdle
	}
	return it, err
}

// renderedEvent is one event's result for one memo key.
type renderedEvent struct {
	// delivered is the result every subscriber sharing the event gets
	// (extensions.cursor: cursor): the same value, built once, since a
	// thousand streams may share an event and a result each was most of
	// what pushing it allocated. So the extensions outside streamsExtension
	// must not modify a result they are given (access.GraphQLCost adds its
	// cost to a copy).
	delivered *graphql.Response
	cursor    string

	derivedMu sync.Mutex
	derived   map[string]any
}

// derive returns what compute makes of the result, computed once for every
// subscriber sharing it.
func (v *renderedEvent) derive(name string, compute func() any) any {
	v.derivedMu.Lock()
	defer v.derivedMu.Unlock()
	if d, ok := v.derived[name]; ok {
		return d
	}
	if v.derived == nil {
		v.derived = map[string]any{}
	}
	d := compute()
	v.derived[name] = d
	return d
}

// shared returns the result for it: built here (and offered to the other
// subscribers with the same key) or reused.
func (st *streamState) shared(ctx context.Context, it *live.Item, render graphql.ResponseHandler) *renderedEvent {
	fut, owner := it.Memo(st.key)
	if !owner {
		if v, ok := fut.Wait(ctx).(*renderedEvent); ok && v != nil {
			return v
		}
		if ctx.Err() != nil {
			return nil
		}
		// The owner could not build it: build our own.
		return st.render(ctx, it, render)
	}
	v := st.render(ctx, it, render)
	if v == nil {
		fut.Set(nil)
		return nil
	}
	fut.Set(v)
	return v
}

// render runs the executor on it with loaders primed with the event's
// entities and evidence.
func (st *streamState) render(ctx context.Context, it *live.Item, render graphql.ResponseHandler) *renderedEvent {
	l := NewLoaders(st.r.store)
	l.RolesByEventID.Prime(ctx, it.Event.ID, EventRoles{Owners: it.Owners, Participants: it.Participants})
	l.EvidenceByEventID.Prime(ctx, it.Event.ID, it.Evidence)
	l.EntitiesOf(append(append([]*cryptointel.Entity(nil), it.Owners...), it.Participants...))
	select {
	case st.ch <- it.Event:
	case <-ctx.Done():
		return nil
	}
	if st.budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, st.budget)
		defer cancel()
	}
	resp := render(WithLoaders(ctx, l))
	if resp == nil {
		return nil
	}
	cursor := st.r.encodeStreamCursor(it.Seq())
	ext := map[string]any{"cursor": cursor}
	// The cost the access layer reports for each result: the subscribers
	// sharing it have the same operation, so the same cost, and it is not
	// added to a copy of the result for each of them.
	if cost, ok := access.OperationCost(ctx); ok {
		ext["cost"] = cost
	}
	return &renderedEvent{cursor: cursor, delivered: &graphql.Response{
		// The executor reuses its buffer for the next result.
		Data:       bytes.Clone(resp.Data),
		Errors:     resp.Errors,
		Extensions: ext,
	}}
}

// closing is the last result of a stream the server closed: reason as an
// error with its code, and the cursor to resume from.
func (st *streamState) closing(reason error) *graphql.Response {
	code := cryptointel.ErrorCode(reason)
	msg := cryptointel.ErrorMessage(reason)
	if code == cryptointel.EINTERNAL || code == cryptointel.EUNAVAILABLE {
		code, msg = cryptointel.EUNAVAILABLE, live.MsgStreamInterrupted
	}
	return &graphql.Response{Errors: gqlerror.List{{
		Message:    msg,
		Extensions: map[string]any{"code": code, "cursor": st.cursor},
	}}}
}

// Waiting returns how many events are ready to be pushed beyond the
// current one.
func (st *streamState) Waiting() int { return st.sub.Waiting() }

// streamsExtension runs subscriptions: it gives every subscription its
// state (and every operation of a streaming transport its own loaders and
// time budget) and produces each result of a stream (see
// streamState.next).
type streamsExtension struct{ e *Executor }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = streamsExtension{}

// msgSubscriptionTransport refuses a subscription sent on a transport that
// answers once (plain POST or GET).
const msgSubscriptionTransport = "subscriptions need a streaming transport: graphql-ws (WebSocket, subprotocol graphql-transport-ws) or graphql-sse (POST with Accept: text/event-stream)"

type streamingKey struct{}

// withStreaming marks ctx as carried by a streaming transport.
func withStreaming(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamingKey{}, true)
}

// subscriptionTransport refuses a subscription that arrived on a transport
// that cannot stream its results: a refusal of the document, made before
// the extensions that charge an operation run.
type subscriptionTransport struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = subscriptionTransport{}

// ExtensionName implements graphql.HandlerExtension.
func (subscriptionTransport) ExtensionName() string { return "SubscriptionTransport" }

// Validate implements graphql.HandlerExtension.
func (subscriptionTransport) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses a subscription that arrived on a
// transport that cannot stream its results.
func (subscriptionTransport) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if op := opCtx.Operation; op != nil && op.Operation == ast.Subscription {
		if streaming, _ := ctx.Value(streamingKey{}).(bool); !streaming {
			return invalidInput(msgSubscriptionTransport)
		}
	}
	return nil
}

// ExtensionName implements graphql.HandlerExtension.
func (streamsExtension) ExtensionName() string { return "LiveStreams" }

// Validate implements graphql.HandlerExtension.
func (streamsExtension) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation attaches loaders to an operation that has none (one
// sent on a streaming transport) and a state to a subscription. On a
// streaming transport, whose connection has no time budget, a query gets
// the operation budget, and a subscription budgets each event it renders
// (streamState.render); an operation on a WebSocket connection stops its
// idle clock while it runs.
func (x streamsExtension) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if act := socketActivityFrom(ctx); act != nil {
		act.begin(ctx)
	}
	if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Subscription {
		// Each result gets loaders of its own (streamState.render).
		return next(context.WithValue(ctx, streamStateKey{}, &streamState{budget: x.e.opTimeout}))
	}
	ctx = x.e.WithRequestLoaders(ctx)
	if streaming, _ := ctx.Value(streamingKey{}).(bool); !streaming || x.e.opTimeout <= 0 {
		return next(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, x.e.opTimeout)
	h := next(ctx)
	answered := false
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if resp == nil && !answered && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Out of budget before it produced anything: say so.
			resp = &graphql.Response{Errors: gqlerror.List{{Message: cryptointel.ErrorMessage(ctx.Err()),
				Extensions: map[string]any{"code": cryptointel.ErrorCode(ctx.Err())}}}}
		}
		answered = true
		cancel() // a query has one result: later calls end the stream
		return resp
	}
}

// InterceptResponse produces a stream's results.
func (x streamsExtension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	st := streamStateFrom(ctx)
	if st == nil || st.sub == nil {
		return next(ctx)
	}
	return st.next(ctx, next)
}
