package access

import (
	"context"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// Live streams (GraphQL subscriptions over graphql-ws and graphql-sse, and
// GET /v1/stream) follow one set of rules, whatever the transport:
//
//   - Plans: a plan includes streams when its max_streams is above 0 (the
//     feature FeatureStreams, in the operational layer): pro, business and
//     enterprise. Another plan, or a pay-per-request caller, is refused with
//     forbidden "This endpoint requires the pro plan or higher.".
//   - Opening a stream is a request like any other: it counts in the
//     per-minute rate window and costs its credits (GET /v1/stream: 1; a
//     GraphQL subscription: its operation's complexity, like a query). A
//     stream that does not open (its arguments, the cap, credits) is a
//     refusal and costs nothing (Refund).
//   - Per-key cap: a key holds at most its plan's max_streams open streams
//     (cryptointel.PlanStreamCaps) across every server process.
//     One more is refused with rate_limited (HTTP 429 on /v1/stream) and a
//     message naming the cap. A stream's place is a lease renewed while it
//     runs, so the places of a server that died free themselves within
//     StreamLeaseTTL.
//   - Charging: every event pushed costs credits — 1 on /v1/stream, the
//     subscription's complexity on GraphQL (what a query for that one event
//     costs) — added to the key's monthly and daily credits (not to its
//     request counts) in one statement per server per settlement interval.
//     An event is charged when it is handed to the transport.
//   - Credits running out: a stream pushes only while the credits known at
//     the last settlement cover the event; the next event is not pushed and
//     the stream closes with quota_exceeded "API usage limit reached. Please
//     upgrade your plan or contact support.". Only concurrent use of the same
//     key elsewhere during one settlement interval can overrun the
//     allowance.
//   - Revocation and downgrades: a settlement that finds the key revoked, or
//     its plan without streams, closes the key's streams with unauthorized
//     or forbidden.
//   - Browsers: a stream request that carries an Origin header must come
//     from the service's own origin or from a host listed in
//     Config.StreamOrigins; others get 403.

// FeatureStreams is the plan feature of live streams: plans whose
// max_streams is above 0.
const FeatureStreams = "streams"

// StreamPolicy is the policy of GET /v1/stream.
var StreamPolicy = Policy{Surface: "stream", Layer: LayerOperational, Name: "stream", CreditCost: 1, Feature: FeatureStreams}

// Defaults of the stream settings of Config.
const (
	// DefaultStreamSettleInterval is how often pushed events are charged.
	DefaultStreamSettleInterval = time.Second
	// DefaultStreamLeaseTTL is how long a stream's place outlives its last
	// renewal.
	DefaultStreamLeaseTTL = 60 * time.Second
)

// MsgTooManyStreamsFmt is the message of a stream refused by the per-key
// cap: plan, cap.
const MsgTooManyStreamsFmt = "Too many open streams: the %s plan allows %d at a time per API key. Close one (the place of a dropped connection frees itself within a minute) or upgrade your plan."

type streamCostKey struct{}

// WithStreamEventCost returns ctx in which a stream opened by a GraphQL
// subscription charges cost credits per pushed event instead of the
// operation's complexity. GET /v1/stream sets 1.
func WithStreamEventCost(ctx context.Context, cost int) context.Context {
	return context.WithValue(ctx, streamCostKey{}, cost)
}

// StreamEventCost returns what one pushed event costs in ctx: the cost set
// by WithStreamEventCost, else the operation's complexity (at least 1).
func StreamEventCost(ctx context.Context, complexity int) int {
	if c, ok := ctx.Value(streamCostKey{}).(int); ok {
		return c
	}
	return max(complexity, 1)
}

// StreamGrant is one open stream's standing with the access layer: its
// place among the key's streams and its share of the key's credits.
type StreamGrant struct {
	st      *streams
	acct    *streamAccount
	lease   string
	onClose func(error)

	mu     sync.Mutex
	closed bool
}

// OpenStream admits a new stream for the caller in ctx, which will charge
// eventCost credits per pushed event: it checks the plan (forbidden), takes
// one of the key's places (rate_limited past the plan's max_streams) and
// checks that the month's credits cover one event (quota_exceeded).
// onClose is called, at most once, when the access layer closes the stream
// (credits exhausted, key revoked, plan downgraded); the grant must be
// released with Close when the stream ends. Without a caller in ctx (no
// access layer, as in unit tests) the grant is unlimited and free.
func OpenStream(ctx context.Context, eventCost int, onClose func(error)) (*StreamGrant, error) {
	c, ok := CallerFrom(ctx)
	if !ok || c == nil {
		return &StreamGrant{}, nil
	}
	if err := Allow(ctx, LayerOperational, FeatureStreams); err != nil {
		return nil, err
	}
	if c.svc == nil {
		return &StreamGrant{}, nil
	}
	s := c.svc.streamState()
	_, _, month := db.UsagePeriods(s.svc.now())
	lease, err := s.svc.store.OpenStreamLease(ctx, c.APIKeyID, month, s.svc.cfg.StreamLeaseTTL)
	if err != nil {
		return nil, err
	}
	if lease.ID == "" {
		return nil, cryptointel.Errorf(cryptointel.ERATELIMIT, MsgTooManyStreamsFmt, c.Plan.Name, lease.Max)
	}
	g := &StreamGrant{st: s, lease: lease.ID, onClose: onClose}
	s.mu.Lock()
	acct := s.accounts[c.APIKeyID]
	if acct == nil {
		acct = &streamAccount{keyID: c.APIKeyID, grants: map[*StreamGrant]struct{}{}}
		s.accounts[c.APIKeyID] = acct
	}
	acct.remaining = lease.CreditsRemaining
	acct.grants[g] = struct{}{}
	g.acct = acct
	short := acct.remaining-acct.pending < int64(eventCost)
	s.mu.Unlock()
	if short {
		g.release()
		return nil, cryptointel.Errorf(cryptointel.EQUOTA, "%s", MsgQuotaExceeded)
	}
	return g, nil
}

// Spend charges cost credits for one pushed event. It returns
// quota_exceeded when the credits known at the last settlement do not cover
// it (the event must then not be pushed), or the reason the access layer
// closed the key's streams.
func (g *StreamGrant) Spend(cost int) error {
	if g.acct == nil {
		return nil
	}
	s := g.st
	s.mu.Lock()
	defer s.mu.Unlock()
	a := g.acct
	if a.closedErr != nil {
		return a.closedErr
	}
	if a.remaining-a.pending < int64(cost) {
		return cryptointel.Errorf(cryptointel.EQUOTA, "%s", MsgQuotaExceeded)
	}
	a.pending += int64(cost)
	return nil
}

// Close releases the stream's place. Calling it again does nothing.
func (g *StreamGrant) Close() {
	if g.acct == nil {
		return
	}
	g.release()
}

func (g *StreamGrant) release() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	g.mu.Unlock()
	s := g.st
	s.mu.Lock()
	delete(g.acct.grants, g)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.svc.store.CloseStreamLease(ctx, g.lease); err != nil {
		// The lease expires on its own within StreamLeaseTTL.
		s.svc.logger.Warn("error closing stream lease", "error", err)
	}
}

// streams is a Service's state of the open streams of this process: one
// account per key, settled together.
type streams struct {
	svc *Service

	mu       sync.Mutex
	accounts map[int64]*streamAccount

	stop chan struct{}
	done chan struct{}
}

// streamAccount is one key's open streams in this process: the credits
// left at the last settlement and those pushed since.
type streamAccount struct {
	keyID     int64
	remaining int64
	pending   int64
	grants    map[*StreamGrant]struct{}
	closedErr error
}

// streamState returns the Service's stream state, starting its settlement
// loop on first use.
func (s *Service) streamState() *streams {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.streams == nil {
		s.streams = &streams{svc: s, accounts: map[int64]*streamAccount{}, stop: make(chan struct{}), done: make(chan struct{})}
		go s.streams.run()
	}
	return s.streams
}

// run settles every StreamSettleInterval and renews leases every third of
// StreamLeaseTTL, until stop.
func (s *streams) run() {
	defer close(s.done)
	settle := time.NewTicker(s.svc.cfg.StreamSettleInterval)
	defer settle.Stop()
	renew := time.NewTicker(s.svc.cfg.StreamLeaseTTL / 3)
	defer renew.Stop()
	for {
		select {
		case <-s.stop:
			s.settle()
			return
		case <-settle.C:
			s.settle()
		case <-renew.C:
			s.renew()
		}
	}
}

// settle charges every account's pending credits in one statement and
// refreshes each account's credits, closing the streams of keys found out
// of credits, revoked or downgraded.
func (s *streams) settle() {
	s.mu.Lock()
	charges := make([]db.StreamCharge, 0, len(s.accounts))
	for k, a := range s.accounts {
		if len(a.grants) == 0 && a.pending == 0 {
			delete(s.accounts, k)
			continue
		}
		charges = append(charges, db.StreamCharge{KeyID: k, Credits: a.pending})
	}
	s.mu.Unlock()
	if len(charges) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	balances, err := s.svc.store.SettleStreamCredits(ctx, charges, s.svc.now())
	if err != nil {
		s.svc.logger.Warn("error settling stream credits; retrying", "error", err)
		return
	}
	plans, _ := s.svc.loadPlans(ctx)
	settled := make(map[int64]int64, len(charges))
	for _, c := range charges {
		settled[c.KeyID] = c.Credits
	}
	var closing []func()
	s.mu.Lock()
	for _, b := range balances {
		a := s.accounts[b.KeyID]
		if a == nil {
			continue
		}
		a.pending -= settled[b.KeyID]
		a.remaining = b.Remaining
		var reason *cryptointel.Error
		switch {
		case b.Revoked:
			reason = cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", unusableKeyMessage(b.Expired))
		case plans != nil && !planAllows(plans, planNamed(plans, b.Plan), LayerOperational, FeatureStreams, ""):
			reason = forbidden(plans, LayerOperational, FeatureStreams, "")
		}
		if reason != nil && a.closedErr == nil {
			a.closedErr = reason
			for g := range a.grants {
				if g.onClose != nil {
					closing = append(closing, func() { g.onClose(reason) })
				}
			}
		}
	}
	s.mu.Unlock()
	for _, f := range closing {
		f()
	}
}

// renew extends the leases of every open stream of this process.
func (s *streams) renew() {
	s.mu.Lock()
	var ids []string
	for _, a := range s.accounts {
		for g := range a.grants {
			ids = append(ids, g.lease)
		}
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.svc.store.RenewStreamLeases(ctx, ids, s.svc.cfg.StreamLeaseTTL); err != nil {
		s.svc.logger.Warn("error renewing stream leases", "error", err)
	}
}

// Close stops the stream settlement loop after a last settlement, so every
// event pushed is charged. Streams should be closed first.
func (s *Service) Close() {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.streams != nil && !s.streamsClosed {
		s.streamsClosed = true
		close(s.streams.stop)
		<-s.streams.done
	}
}

// CheckOrigin refuses (forbidden) a browser request from another origin: a
// request with an Origin header whose host is neither the request's Host
// nor matched by one of allowed, host patterns in path.Match syntax (for
// example "dashboard.example.com" or "*.example.com:8443"), compared
// case-insensitively. A request without Origin (not from a browser) passes.
func CheckOrigin(r *http.Request, allowed []string) *cryptointel.Error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" {
		host := strings.ToLower(u.Host)
		if host == strings.ToLower(r.Host) {
			return nil
		}
		for _, p := range allowed {
			if ok, _ := path.Match(strings.ToLower(p), host); ok {
				return nil
			}
		}
	}
	return cryptointel.Errorf(cryptointel.EFORBIDDEN, "Origin %s may not open streams on this service; only its own origin and the hosts in STREAM_ALLOWED_ORIGINS may.", strings.ReplaceAll(origin, "\n", ""))
}
