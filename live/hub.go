// Package live pushes new events to the service's open streams (GraphQL
// subscriptions over graphql-ws and graphql-sse, and GET /v1/stream).
//
// Each server process runs one Hub. The hub LISTENs on the primary for the
// notification ingest sends when it commits events, then reads every event
// above its position once (with owners, participants and evidence, three
// statements per page of up to 500 events) and hands each to every
// matching subscriber's bounded buffer. Nothing depends on memory surviving:
// a subscriber resumes from its cursor (an ingest_seq position), reading
// what it missed from the database before it joins the live fan-out, and a
// hub that lost its LISTEN connection reads from its position when it is
// back. A subscriber whose buffer is full is closed with ErrSlowConsumer
// rather than let memory grow.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// MsgStreamInterrupted ends a live stream the server could not keep
// feeding (the database out of reach); the client resumes from its cursor.
const MsgStreamInterrupted = "The stream was interrupted. Resume from your last cursor."

// Stream close reasons: the code of the *cryptointel.Error a closed subscriber
// reports. The access layer's codes (quota_exceeded, unauthorized,
// forbidden) close streams too.
const (
	// CodeSlowConsumer: the subscriber did not keep up and its buffer
	// filled. Resume from the last cursor received.
	CodeSlowConsumer = "slow_consumer"
	// CodeShuttingDown: the server is shutting down. Reconnect (to any
	// server) and resume from the last cursor received.
	CodeShuttingDown = "shutting_down"
)

// Errors of the hub.
var (
	// ErrShuttingDown closes every stream when the server shuts down and
	// refuses new ones.
	ErrShuttingDown = &cryptointel.Error{Code: CodeShuttingDown, Message: "The server is shutting down. Reconnect and resume from your last cursor."}
	// ErrNotRunning refuses streams on a process whose hub is not running.
	ErrNotRunning = &cryptointel.Error{Code: cryptointel.EUNAVAILABLE, Message: "Live streams are not available on this server right now. Retry shortly."}
	// ErrNothingBefore is NextBefore's answer when no event came by its
	// deadline; the subscriber goes on.
	ErrNothingBefore = errors.New("live: no event before the deadline")
)

// slowConsumerError is the reason a subscriber whose buffer filled is closed.
func slowConsumerError(buffer int) *cryptointel.Error {
	return cryptointel.Errorf(CodeSlowConsumer, "The stream fell more than %d events behind and was closed. Resume from your last cursor.", buffer)
}

// Defaults of Config.
const (
	// DefaultBuffer is the default per-subscriber buffer: two pages of a
	// burst and then some, so a consumer that keeps up is never closed by
	// a large ingest.
	DefaultBuffer = 2048
	// DefaultPollInterval is the default period of the hub's safety read.
	DefaultPollInterval = 15 * time.Second
	// pageSize bounds the events one read returns.
	pageSize = 500
)

// Config configures a Hub.
type Config struct {
	// Store is the database; the hub reads the primary (Store.Pool and
	// Store.Bun), never a read replica, so it never reads behind a
	// notification. Required.
	Store *db.DB
	// Buffer is how many events a subscriber may have waiting before it is
	// closed as a slow consumer. Defaults to DefaultBuffer.
	Buffer int
	// PollInterval is how often the hub reads new events even without a
	// notification, bounding the delay should a notification be lost.
	// Defaults to DefaultPollInterval.
	PollInterval time.Duration
	// Logger logs read errors. Defaults to slog.Default().
	Logger *slog.Logger
}

// Hub fans new events out to the subscribers of one server process.
type Hub struct {
	cfg  Config
	page int // events per fan-out: at most a quarter of a buffer

	mu      sync.Mutex
	subs    map[*Subscriber]struct{}
	pos     int64 // the highest ingest_seq fanned out
	running bool
	closed  error // set by Close

	wake    chan struct{}
	stopped chan struct{}

	pushed   atomic.Uint64
	closedBy sync.Map // reason code → *atomic.Uint64
}

// New returns a hub; Run starts it.
func New(cfg Config) *Hub {
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Hub{cfg: cfg, page: min(max(cfg.Buffer/4, 1), pageSize), subs: map[*Subscriber]struct{}{}, wake: make(chan struct{}, 1)}
}

// Start positions the hub at the newest event and starts fanning out every
// event ingested after it, until ctx is done (Wait then returns). When the
// database cannot be read yet, the hub keeps trying in the background and
// refuses subscribers with ErrNotRunning meanwhile. Call it once.
func (h *Hub) Start(ctx context.Context) {
	h.stopped = make(chan struct{})
	positioned := h.position(ctx)
	go func() {
		defer close(h.stopped)
		for !positioned {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			positioned = h.position(ctx)
		}
		h.run(ctx)
	}()
}

// Wait returns once the goroutine Start began has stopped.
func (h *Hub) Wait() {
	if h.stopped != nil {
		<-h.stopped
	}
}

// position reads the stream head and marks the hub running.
func (h *Hub) position(ctx context.Context) bool {
	head, err := h.cfg.Store.StreamHead(ctx)
	if err != nil {
		if ctx.Err() == nil {
			h.cfg.Logger.WarnContext(ctx, "live: error reading stream head", "error", err)
		}
		return false
	}
	h.mu.Lock()
	h.pos, h.running = head, h.closed == nil
	h.mu.Unlock()
	return true
}

func (h *Hub) run(ctx context.Context) {
	defer func() {
		h.mu.Lock()
		h.running = false
		h.mu.Unlock()
	}()
	// ListenEvents signals after each notification and after every
	// reconnection, so a dropped LISTEN connection is followed by a read.
	listenDone := make(chan struct{})
	go func() {
		defer close(listenDone)
		h.cfg.Store.ListenEvents(ctx, h.Wake) //nolint:errcheck
	}()
	defer func() { <-listenDone }()
	tick := time.NewTicker(h.cfg.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-tick.C:
		}
		if err := h.advance(ctx); err != nil && ctx.Err() == nil {
			h.cfg.Logger.WarnContext(ctx, "live: error reading new events", "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			h.Wake()
		}
	}
}

// Wake makes the hub read new events now.
func (h *Hub) Wake() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Position returns the highest ingest_seq the hub has fanned out.
func (h *Hub) Position() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pos
}

// advance reads and fans out every event above the position, page by page.
func (h *Hub) advance(ctx context.Context) error {
	for {
		h.mu.Lock()
		pos := h.pos
		h.mu.Unlock()
		items, err := loadItems(ctx, h.cfg.Store, pos, 0, db.StreamFilter{}, h.page)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return nil
		}
		h.fanOut(items)
		if len(items) < h.page {
			return nil
		}
	}
}

// fanOut hands items to every matching subscriber and advances the
// position past them. A subscriber whose buffer is full is closed.
func (h *Hub) fanOut(items []*Item) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, it := range items {
		if it.Seq() <= h.pos {
			continue
		}
		for s := range h.subs {
			if !s.filter.matches(it) {
				continue
			}
			if !s.push(it, h.cfg.Buffer) {
				delete(h.subs, s)
				h.finish(s, slowConsumerError(h.cfg.Buffer))
			}
		}
		h.pos = it.Seq()
	}
}

// Subscribe registers a subscriber for events matching f. With after < 0
// the stream starts at the hub's position (events ingested from now on);
// otherwise it first reads, from the database, every matching event above
// after, then continues live without a gap or a duplicate.
//
// Returns ErrShuttingDown once Close ran and ErrNotRunning when the hub is
// not running.
func (h *Hub) Subscribe(f db.StreamFilter, after int64) (*Subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != nil {
		return nil, h.closed
	}
	if !h.running {
		return nil, ErrNotRunning
	}
	s := &Subscriber{
		hub:    h,
		filter: filter{f},
		ready:  make(chan struct{}, 1),
		done:   make(chan struct{}),
		join:   h.pos,
		pos:    h.pos,
	}
	if after >= 0 {
		s.pos = after
	}
	h.subs[s] = struct{}{}
	return s, nil
}

// Close closes every subscriber with reason (ErrShuttingDown when nil) and
// refuses new ones.
func (h *Hub) Close(reason error) {
	if reason == nil {
		reason = ErrShuttingDown
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = reason
	for s := range h.subs {
		delete(h.subs, s)
		h.finish(s, reason)
	}
}

// remove unregisters s; the subscriber is closed with reason when it was
// still open.
func (h *Hub) remove(s *Subscriber, reason error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
	h.finish(s, reason)
}

// finish closes s with reason once; h.mu is held.
func (h *Hub) finish(s *Subscriber, reason error) {
	if s.reason != nil {
		return
	}
	s.reason = reason
	close(s.done)
	code := cryptointel.ErrorCode(reason)
	c, _ := h.closedBy.LoadOrStore(code, new(atomic.Uint64))
	c.(*atomic.Uint64).Add(1)
}

// Stats are the hub's counters.
type Stats struct {
	// Subscribers is the number of open subscribers.
	Subscribers int
	// Buffered is the number of events waiting in subscribers' buffers.
	Buffered int
	// Position is the highest ingest_seq fanned out.
	Position int64
	// Pushed counts events handed to streams since start.
	Pushed uint64
	// Closed counts closed subscribers by reason code ("" for a client that
	// went away).
	Closed map[string]uint64
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	st := Stats{Subscribers: len(h.subs), Position: h.pos, Pushed: h.pushed.Load(), Closed: map[string]uint64{}}
	for s := range h.subs {
		st.Buffered += s.queued()
	}
	h.mu.Unlock()
	h.closedBy.Range(func(k, v any) bool {
		st.Closed[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return st
}

// Subscriber is one stream's place in the hub: a bounded buffer of live
// events and the position it has reached.
type Subscriber struct {
	hub    *Hub
	filter filter
	done   chan struct{}

	// The buffer: live items not yet taken, queue[head:]. It takes memory
	// only for what it holds, so a large bound costs idle subscribers
	// nothing.
	qmu    sync.Mutex
	queue  []*Item
	head   int
	ready  chan struct{} // signalled after a push
	reason error         // set under hub.mu before done is closed

	// Read only by the subscriber's consumer.
	join    int64   // the hub's position when the subscriber registered
	pos     int64   // the highest ingest_seq returned by Next
	pending []*Item // the rest of a catch-up page
	caught  bool    // caught up to join
}

// Next returns the subscriber's next event: first those above its starting
// position read from the database, then live ones. It blocks until one is
// available, and returns the close reason once the subscriber is closed
// (nil after Close by the consumer), or ctx's error. Call it from one
// goroutine at a time.
func (s *Subscriber) Next(ctx context.Context) (*Item, error) {
	return s.next(ctx, time.Time{})
}

// NextBefore is Next that stops waiting at deadline, returning
// ErrNothingBefore (the subscriber goes on). It sets a timer only when it
// has to wait: a stream's writer calls it for every event a burst does not
// have ready, and a context with a deadline each time was a good part of
// what pushing events to many streams allocated.
func (s *Subscriber) NextBefore(ctx context.Context, deadline time.Time) (*Item, error) {
	return s.next(ctx, deadline)
}

func (s *Subscriber) next(ctx context.Context, deadline time.Time) (*Item, error) {
	var expired <-chan time.Time
	for {
		if err := s.closedErr(); err != nil {
			return nil, err
		}
		if it := s.nextPending(); it != nil {
			return it, nil
		}
		if !s.caught {
			if s.pos >= s.join {
				s.caught = true
				continue
			}
			items, err := loadItems(ctx, s.hub.cfg.Store, s.pos, s.join, s.filter.StreamFilter, pageSize)
			if err != nil {
				return nil, fmt.Errorf("error reading missed events: %w", err)
			}
			if len(items) < pageSize {
				s.caught = true
			}
			s.pending = items
			continue
		}
		if it := s.pop(); it != nil {
			if it.Seq() <= s.pos {
				continue // already read while catching up, or before the cursor
			}
			s.pos = it.Seq()
			s.hub.pushed.Add(1)
			return it, nil
		}
		if expired == nil && !deadline.IsZero() {
			wait := time.Until(deadline)
			if wait <= 0 {
				return nil, ErrNothingBefore
			}
			t := time.NewTimer(wait)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-s.ready:
		case <-s.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-expired:
			return nil, ErrNothingBefore
		}
	}
}

// push appends it to the buffer unless it already holds max items; it
// reports whether it did.
func (s *Subscriber) push(it *Item, max int) bool {
	s.qmu.Lock()
	if len(s.queue)-s.head >= max {
		s.qmu.Unlock()
		return false
	}
	if s.head > 0 && s.head >= len(s.queue)/2 {
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
	s.queue = append(s.queue, it)
	s.qmu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest buffered item, or returns nil.
func (s *Subscriber) pop() *Item {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.head == len(s.queue) {
		return nil
	}
	it := s.queue[s.head]
	s.queue[s.head] = nil
	s.head++
	if s.head == len(s.queue) {
		s.queue, s.head = s.queue[:0], 0
	}
	return it
}

func (s *Subscriber) queued() int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(s.queue) - s.head
}

func (s *Subscriber) nextPending() *Item {
	for len(s.pending) > 0 {
		it := s.pending[0]
		s.pending = s.pending[1:]
		if it.Seq() <= s.pos {
			continue
		}
		s.pos = it.Seq()
		s.hub.pushed.Add(1)
		return it
	}
	return nil
}

// closedErr returns the close reason, or nil while open. A subscriber closed
// by its consumer reports errClosedByConsumer.
func (s *Subscriber) closedErr() error {
	select {
	case <-s.done:
		s.hub.mu.Lock()
		defer s.hub.mu.Unlock()
		return s.reason
	default:
		return nil
	}
}

// Waiting returns how many live events are buffered for the subscriber
// beyond the one being handled (catch-up events included).
func (s *Subscriber) Waiting() int { return s.queued() + len(s.pending) }

// Position returns the highest ingest_seq Next returned (or the starting
// position before the first).
func (s *Subscriber) Position() int64 { return s.pos }

// Done is closed when the subscriber is closed.
func (s *Subscriber) Done() <-chan struct{} { return s.done }

// CloseWith closes the subscriber with reason (for example the access
// layer's quota_exceeded); Next then returns reason. Closing twice keeps
// the first reason.
func (s *Subscriber) CloseWith(reason error) { s.hub.remove(s, reason) }

// Close unregisters the subscriber (its client went away).
func (s *Subscriber) Close() { s.hub.remove(s, errClosedByConsumer) }

// errClosedByConsumer is the reason of a subscriber its consumer closed.
var errClosedByConsumer = &cryptointel.Error{Code: "", Message: "stream closed"}

// IsClosedByConsumer reports whether err is the reason of a subscriber its
// own consumer closed.
func IsClosedByConsumer(err error) bool { return errors.Is(err, errClosedByConsumer) }
