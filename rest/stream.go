package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/live"
)

// EventStream is a subscription opened in process: the executor's stream
// machinery, shared with /graphql's subscriptions.
type EventStream interface {
	// Next returns the next result (an event with extensions.cursor, or
	// the last one, with errors, when the server closed the stream), or nil
	// when the stream is over.
	Next() *graphql.Response
	// NextWithin is Next giving up after d with idle true (the stream goes
	// on).
	NextWithin(d time.Duration) (resp *graphql.Response, idle bool)
	// Cursor is the cursor of the last event delivered, or of the starting
	// position before the first.
	Cursor() string
	// Waiting is how many events are ready beyond the current one.
	Waiting() int
	// Shared returns what compute makes of the current result, computed
	// once for every stream that received the same result.
	Shared(name string, compute func() any) any
	// Close ends the stream.
	Close()
}

// SubscribeFunc opens a subscription in process; a refused one returns a
// nil stream and the response carrying the errors.
type SubscribeFunc func(ctx context.Context, query, operationName string, variables map[string]any) (EventStream, *graphql.Response)

// StreamConfig configures GET /v1/stream.
type StreamConfig struct {
	// Subscribe opens the route's subscription; nil leaves the route out.
	Subscribe SubscribeFunc
	// Heartbeat is how often an idle stream gets a comment line. Defaults
	// to 15 seconds.
	Heartbeat time.Duration
	// WriteTimeout bounds one write; a client that stops reading is
	// disconnected after it. Defaults to 30 seconds.
	WriteTimeout time.Duration
}

// streamEventCost is what one event pushed on /v1/stream costs, in credits.
const streamEventCost = 1

// streamRetryMillis is the reconnection delay /v1/stream asks EventSource
// clients to wait.
const streamRetryMillis = 2000

// streamOperation is the fixed subscription /v1/stream runs.
const streamOperation = "stream"

// streamRoute is GET /v1/stream: the live stream of new events in the /v1
// event shape, as Server-Sent Events.
func (rt *Router) streamRoute() Route {
	d, err := derived()
	if err != nil {
		panic(err.Error())
	}
	r := Route{
		Method: http.MethodGet, Path: "/v1/stream",
		Summary: "Live stream of new events (Server-Sent Events)",
		Description: "Pushes radar events (or signal events with surface=signal) as they are ingested, in ingest order, " +
			"as `text/event-stream`. Each event is one message whose `data` is the event in the /v1 shape (canonical and " +
			"legacy fields) and whose `id` is a cursor: reconnect with `Last-Event-ID` (EventSource does it by itself) or " +
			"`cursor` to resume with no gap and no duplicate (cursors expire after " + cryptointel.Days(cryptointel.StreamResumeLookback) + "). The stream opens with an `id` " +
			"line for its starting position and a `retry` hint, and sends a comment line (`: heartbeat`) when idle so " +
			"proxies keep it open. An event is pushed when first ingested and again when it changes. When the server ends " +
			"the stream (slow consumer, shutdown, credits used up, key revoked, plan changed) it sends one `event: close` " +
			"message whose data is {\"error\", \"code\", \"cursor\"} and closes; codes slow_consumer and shutting_down mean " +
			"reconnect and resume. Opening costs 1 credit and counts as a request; every event pushed costs 1 credit " +
			"(charged to monthly and daily credits, not to request counts). A key holds at most its plan's max open " +
			"streams (" + cryptointel.StreamCapsText() + "); one more is a 429. Unknown parameters are a 400. Browser " +
			"requests must come from the service's origin, STREAM_ALLOWED_ORIGINS or CORS_ALLOWED_ORIGINS. An EventSource, which " +
			"cannot send Authorization, opens the `url` of a ticket from POST /v1/stream/tickets instead: this route with its " +
			"parameters and `ticket=` (the stream is then the key's).",
		Policy: access.StreamPolicy,
		Params: []Param{
			{Name: "surface", In: "query", Type: TypeString, Default: cryptointel.SurfaceRadar, Enum: []string{cryptointel.SurfaceRadar, cryptointel.SurfaceSignal},
				Description: "radar for every event, signal for scored events only. Default radar."},
			{Name: "category", In: "query", Type: TypeString, Var: "category", Description: "Only events of this category."},
			{Name: "organizationId", Aliases: []string{"entityId"}, In: "query", Type: TypeInteger, Var: "entityId",
				Description: "Only events this organization (entity) owns or takes part in; an unknown id is a 404."},
			{Name: "cursor", In: "query", Type: TypeString, Var: "after",
				Description: "Resume after this cursor: an event's `id` (or a GraphQL stream cursor). Last-Event-ID wins when both are given."},
			{Name: "Last-Event-ID", In: "header", Type: TypeString, Var: "after",
				Description: "Resume after this cursor: the `id` of the last event received; EventSource sends it when it reconnects."},
		},
		Operation:     streamOperation,
		Handler:       rt.serveStream,
		ContentType:   "text/event-stream",
		Response:      d.stream,
		ErrorStatuses: []int{http.StatusNotFound},
	}
	withLegacyParam(&r)
	return r
}

// serveStream serves GET /v1/stream.
func (rt *Router) serveStream(w http.ResponseWriter, r *http.Request) error {
	route := rt.stream
	c, err := parseCall(route, r, rt.now())
	if err != nil {
		return err
	}
	c.Vars["surface"] = strings.ToUpper(c.String("surface"))
	op := rt.ops[streamOperation]
	ctx := access.WithStreamEventCost(r.Context(), streamEventCost)
	s, refused := rt.streamCfg.Subscribe(ctx, op.Query, op.Name, c.Vars)
	if refused != nil {
		return graphError(op.Name, refused.Errors)
	}
	defer s.Close()
	if r.Method == http.MethodHead {
		return nil
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	out := live.NewWriter(w, rt.streamCfg.WriteTimeout)

	send := func(b []byte, flush bool) bool {
		if _, err := out.Write(b); err != nil {
			return false
		}
		return !flush || out.FlushError() == nil
	}
	if !send(fmt.Appendf(nil, "retry: %d\nid: %s\n\n", streamRetryMillis, s.Cursor()), true) {
		return nil
	}
	var (
		burst [][]byte
		size  int
	)
	for {
		var resp *graphql.Response
		if s.Waiting() > 0 {
			resp = s.Next()
		} else {
			// Wait for the next event at most a heartbeat: an idle stream
			// gets a comment line so proxies keep it open (and a client that
			// went away is noticed).
			var idle bool
			if resp, idle = s.NextWithin(rt.streamCfg.Heartbeat); idle {
				if !send([]byte(": heartbeat\n\n"), true) {
					return nil
				}
				continue
			}
		}
		var frame []byte
		last := resp == nil || len(resp.Errors) > 0
		if !last {
			frame, _ = s.Shared("v1/stream", func() any { return eventFrame(resp) }).([]byte)
			last = frame == nil
		}
		if last {
			// The events gathered so far, then why the stream ends.
			if resp != nil {
				frame = closeFrame(resp)
			}
		}
		// A burst of events (ingest commits them together) goes out in one
		// write and one flush. Its frames (shared by every stream that got
		// the same events) are only referenced until then, and copied into
		// a pooled buffer just for the write.
		if frame != nil {
			burst = append(burst, frame)
			size += len(frame)
		}
		if last || s.Waiting() == 0 || size >= maxBurst {
			ok := writeBurst(send, burst, size)
			clear(burst)
			burst, size = burst[:0], 0
			if !ok || last {
				return nil
			}
		}
	}
}

// writeBurst writes frames in one write (a few in a row when they are
// larger than maxBurst) and flushes.
func writeBurst(send func([]byte, bool) bool, frames [][]byte, size int) bool {
	if len(frames) == 0 {
		return true
	}
	if len(frames) == 1 || size > maxBurst {
		for i, f := range frames {
			if !send(f, i == len(frames)-1) {
				return false
			}
		}
		return true
	}
	buf := burstPool.Get().(*bytes.Buffer)
	defer burstPool.Put(buf)
	buf.Reset()
	for _, f := range frames {
		buf.Write(f)
	}
	return send(buf.Bytes(), true)
}

// maxBurst bounds the bytes of events /v1/stream gathers into one write.
const maxBurst = 16 << 10

// burstPool holds the buffers bursts of events are copied into; a stream
// holds one only for the duration of a write.
var burstPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// eventFrame is the SSE message of one event: its cursor as id and the
// event in the /v1 shape (the operation selects its legacy aliases) as
// data; nil when the result cannot be encoded.
func eventFrame(resp *graphql.Response) []byte {
	marks, err := jsonw.MarkData(resp.Data, 0)
	if err != nil {
		return nil
	}
	ev := newData(resp.Data, marks).Get("events")
	if ev.isNull() {
		return nil
	}
	cursor, _ := resp.Extensions["cursor"].(string)
	var b bytes.Buffer
	b.Grow(len(ev) + len(cursor) + 16)
	b.WriteString("id: ")
	b.WriteString(cursor)
	b.WriteString("\ndata: ")
	b.Write(ev) // compact JSON: one line
	b.WriteString("\n\n")
	return b.Bytes()
}

// streamClose is the data of a stream's close message (documented as the
// StreamClose component, derived from this type).
type streamClose struct {
	Error  string `json:"error"`
	Code   string `json:"code"`
	Cursor string `json:"cursor"`
}

// closeFrame is the `close` message that ends a stream the server closed:
// {"error", "code", "cursor"} from the result's first error.
func closeFrame(resp *graphql.Response) []byte {
	msg, code, cursor := live.MsgStreamInterrupted, cryptointel.EUNAVAILABLE, ""
	if len(resp.Errors) > 0 {
		e := resp.Errors[0]
		msg = e.Message
		if c, ok := e.Extensions["code"].(string); ok && c != "" {
			code = c
		}
		cursor, _ = e.Extensions["cursor"].(string)
	}
	body, _ := json.Marshal(streamClose{msg, code, cursor})
	var b bytes.Buffer
	if cursor != "" {
		b.WriteString("id: " + cursor + "\n")
	}
	b.WriteString("event: close\ndata: ")
	b.Write(body)
	b.WriteString("\n\n")
	return b.Bytes()
}
