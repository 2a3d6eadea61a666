package access

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/observe"
)

// The rate window of a key when Config leaves it unset (spec section 7).
const (
	// DefaultRateLimit is how many requests a key may make per window.
	DefaultRateLimit = 100
	// DefaultRateWindow is the length of the fixed rate window.
	DefaultRateWindow = 60 * time.Second
)

// MsgRateLimited is the 429 message of the default window (spec section
// 7): "Rate limit exceeded. Maximum 100 requests per 60 seconds."
var MsgRateLimited = rateLimitMessage(DefaultRateLimit, DefaultRateWindow)

// rateLimitMessage is the 429 message of a window of limit requests per
// window.
func rateLimitMessage(limit int, window time.Duration) string {
	return "Rate limit exceeded. Maximum " + strconv.Itoa(limit) + " requests per " +
		strconv.Itoa(int(window/time.Second)) + " seconds."
}

// Exact client-facing messages of the access layer.
const (
	// MsgQuotaExceeded is the 403 message when the monthly credits are used
	// up (spec section 7).
	MsgQuotaExceeded = "API usage limit reached. Please upgrade your plan or contact support."
	// MsgMissingKey is the 401 message when no key is presented.
	MsgMissingKey = "Missing API key. Send Authorization: Bearer <API_KEY>."
	// MsgBearerMissing is the 401 message when the Authorization header
	// holds something other than a Bearer credential: a bare key, or
	// another scheme.
	MsgBearerMissing = "API key sent without the Bearer scheme. Send Authorization: Bearer <API_KEY>."
	// MsgInvalidKey is the 401 message for an unknown key.
	MsgInvalidKey = "Invalid API key."
	// MsgRevokedKey is the 401 message for a revoked key.
	MsgRevokedKey = "API key has been revoked."
	// MsgExpiredKey is the 401 message for a key whose expiry passed.
	MsgExpiredKey = "API key has expired."
)

// Messages of a key used beyond its scopes or restriction.
const (
	// MsgKeyNeedsManagement (403) refuses a key without the management
	// scope that manages another key, lists the account's keys' audit or
	// creates a key.
	MsgKeyNeedsManagement = "This API key lacks the management scope: it may only rotate or revoke itself."
	// MsgKeyNeedsData (403) refuses a key without the data scope on a data
	// route.
	MsgKeyNeedsData = "This API key lacks the data scope: it may only manage keys and read usage."
	// MsgKeyRestricted (403) refuses a restricted key outside its surfaces,
	// or writing: the key's surfaces.
	MsgKeyRestricted = "This restricted API key may only read the %s surfaces."
)

// unusableKeyMessage is the 401 message of a key found unusable
// (db.KeyInfo.Revoked): revoked, or expired.
func unusableKeyMessage(expired bool) string {
	if expired {
		return MsgExpiredKey
	}
	return MsgRevokedKey
}

// Plan tiers reported in X-Plan-Tier when no key is used.
const (
	// TierNone is X-Plan-Tier on a request without a valid key.
	TierNone = "none"
	// TierPayPerRequest is X-Plan-Tier on a request paid per request.
	TierPayPerRequest = "pay-per-request"
)

// Config configures a Service.
type Config struct {
	// RateLimit is the number of requests a key may make per window.
	// Defaults to DefaultRateLimit.
	RateLimit int
	// RateWindow is the length of the fixed rate window. Defaults to
	// DefaultRateWindow.
	RateWindow time.Duration
	// PlanCacheTTL is how long plans read from the plans table are kept in
	// memory. Defaults to 30 seconds.
	PlanCacheTTL time.Duration
	// Now returns the current time; tests inject it. Defaults to the
	// store's Now, else time.Now.
	Now func() time.Time
	// Payment configures pay-per-request (x402 and MPP) on priced routes.
	Payment PaymentConfig
	// HTTPClient calls the payment facilitator and verifier. Defaults to a
	// client with a 15-second timeout.
	HTTPClient *http.Client
	// Logger logs internal errors with the request id. Defaults to
	// slog.Default().
	Logger *slog.Logger
	// OnRateLimited, when set, is called once per request refused by the
	// rate limit (the app counts them in a metric).
	OnRateLimited func()
	// OnReadAhead, when set, is called once per request whose read ran
	// beside its metering statement (readahead.go), with its outcome:
	// "used" (the handler took it) or "dropped" (the request was refused or
	// admitted as another caller than predicted, and read again).
	OnReadAhead func(outcome string)
	// StreamSettleInterval is how often the credits of pushed stream events
	// are charged, in one statement for every key. Defaults to
	// DefaultStreamSettleInterval (1 second).
	StreamSettleInterval time.Duration
	// StreamLeaseTTL is how long an open stream's place among its key's
	// max_streams outlives its last renewal (renewed every third of it).
	// Defaults to DefaultStreamLeaseTTL (60 seconds).
	StreamLeaseTTL time.Duration
	// StreamOrigins are the host patterns (path.Match syntax, e.g.
	// "*.example.com") whose browser pages may open streams besides the
	// service's own origin. Defaults to none.
	StreamOrigins []string
	// TicketSecret signs stream tickets (MintTicket): a stream opened by a
	// browser, which cannot send Authorization, carries one in its URL.
	// Replicas share it. Empty: no tickets.
	TicketSecret string
	// MaxConnectionsPerKey caps the streaming connections (WebSocket,
	// graphql-sse, /v1/stream) one API key holds open in this process.
	// Defaults to DefaultMaxConnectionsPerKey; negative is no cap.
	MaxConnectionsPerKey int
	// MaxConnectionsPerAddress caps the streaming connections one client
	// address holds open in this process. Defaults to
	// DefaultMaxConnectionsPerAddress; negative is no cap.
	MaxConnectionsPerAddress int
	// MaxConnections caps this process's streaming connections in total.
	// Defaults to 0: no cap of its own (the app derives one from the
	// open-file limit).
	MaxConnections int
	// AddressLimit is how many requests without a valid key (an invalid,
	// revoked or expired key; anonymous discovery on /mcp) one client
	// address may make per minute before it is answered 429 at the door.
	// Defaults to DefaultAddressLimit; negative is no limit.
	AddressLimit int
	// KeyShare caps the requests one key (without a key: one client
	// address) runs at once in this process, streams aside, so that it
	// holds at most that many of the database pool's connections; more
	// wait in a bounded queue (4 × KeyShare, at most 5 seconds), then are
	// answered 429. Defaults to 0: no cap (the app sets half the pool).
	KeyShare int
}

// Service is the access layer: it authenticates keys, gates plans, enforces
// the rate window and monthly credits, meters usage, takes payments and sets
// the access headers on every response. It is safe for concurrent use; any
// number of Services (in one or many processes) may share one database.
type Service struct {
	store  *db.DB
	cfg    Config
	now    func() time.Time
	client *http.Client
	logger *slog.Logger
	pay    *payments

	plansMu    sync.Mutex
	plans      []cryptointel.Plan
	plansFresh time.Time

	streamsMu     sync.Mutex
	streams       *streams
	streamsClosed bool

	conns   *connCaps
	tickets *tickets
	door    *door
	share   *keyShare
	tokens  tokenCache
}

// New returns a Service over store.
func New(store *db.DB, cfg Config) *Service {
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	if cfg.RateWindow <= 0 {
		cfg.RateWindow = DefaultRateWindow
	}
	if cfg.PlanCacheTTL <= 0 {
		cfg.PlanCacheTTL = 30 * time.Second
	}
	if cfg.StreamSettleInterval <= 0 {
		cfg.StreamSettleInterval = DefaultStreamSettleInterval
	}
	if cfg.StreamLeaseTTL <= 0 {
		cfg.StreamLeaseTTL = DefaultStreamLeaseTTL
	}
	if cfg.MaxConnectionsPerKey == 0 {
		cfg.MaxConnectionsPerKey = DefaultMaxConnectionsPerKey
	}
	if cfg.MaxConnectionsPerAddress == 0 {
		cfg.MaxConnectionsPerAddress = DefaultMaxConnectionsPerAddress
	}
	now := cfg.Now
	if now == nil && store != nil {
		// Read store.Now per call: tests may pin the store's clock later.
		now = func() time.Time {
			if store.Now != nil {
				return store.Now()
			}
			return time.Now()
		}
	}
	if now == nil {
		now = time.Now
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.AddressLimit == 0 {
		cfg.AddressLimit = DefaultAddressLimit
	}
	s := &Service{store: store, cfg: cfg, now: now, client: client, logger: logger,
		conns: newConnCaps(cfg.MaxConnectionsPerKey, cfg.MaxConnectionsPerAddress, cfg.MaxConnections), tickets: newTickets(cfg.TicketSecret),
		door: newDoor(cfg.AddressLimit), share: newKeyShare(cfg.KeyShare)}
	s.pay = newPayments(s, cfg.Payment)
	return s
}

// Wrap returns next guarded by policy p. In order it: assigns the request id;
// refuses at the door what this process already knows (door.go: a key
// known unusable, an address over its limit of invalid keys, a /graphql
// key whose window is spent, a /graphql key not yet seen looked up before
// its document is read); takes the key's place under its share of
// concurrent requests (KeyShare);
// authenticates `Authorization: Bearer <key>` (a valid key always wins over
// payment); without a key, takes a payment on priced routes (402 challenge,
// x402 or MPP) or refuses with 401; gates the plan (403 naming the plan
// needed); counts the request in the account's rate window (429) and charges its
// credits (403 when the month's credits are used up) in one statement; sets
// the access headers; and attaches the Caller to the request context.
//
// Every authenticated request counts toward the rate window. A request that
// passes the plan gate, the rate limit and the credit check is admitted and
// counts as a request in usage; it costs its credits unless it is refused
// before its work runs — answered with a 4xx other than 404 (parameters,
// body, content type, limits): its credits are then given back (or never
// taken, when the route layer knew before metering, see WithRefused).
//
// When p.CostByComplexity is set (/graphql), the key is authenticated and
// gated before next runs, but the request is metered when the GraphQL
// handler knows the operation's cost (see GraphQLCost and Charge), or at
// the latest when the response starts, at no cost (the request was refused
// before an operation ran). A WebSocket upgrade there (IsWebSocketUpgrade)
// is counted in the rate window at its handshake and meters each operation
// of the connection instead (see serveWebSocket).
//
// A request opening a live stream (p.Surface "stream", or a WebSocket or
// graphql-sse request to a CostByComplexity endpoint) is a streaming
// connection: it takes a place under this process's per-address, total and
// per-key caps first (429 or 503, see conns.go); one that carries an Origin
// header must pass CheckOrigin with Config.StreamOrigins (403 otherwise);
// it cannot be paid per request (401). See stream.go for the rest of the
// stream rules.
func (s *Service) Wrap(p Policy, next http.Handler) http.Handler {
	return observe.RequestIDs(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := s.now()
		if !statusUnread(r.Context()) {
			SetPolicyHeaders(w.Header(), p)
		}
		socket := p.CostByComplexity && IsWebSocketUpgrade(r)
		stream := p.Surface == StreamPolicy.Surface || (p.CostByComplexity && IsStreamRequest(r))
		var gov *governed
		if p.CostByComplexity || stream {
			// Only these reach a transport that switches protocols or
			// holds a connection (CheckWebSocket), or take places under
			// the connection caps.
			gov = &governed{}
			defer gov.release()
			r = r.WithContext(context.WithValue(r.Context(), governedKey{}, gov))
		}
		if stream {
			if err := CheckOrigin(r, s.cfg.StreamOrigins); err != nil {
				s.setAnonymousHeaders(w.Header(), now, TierNone)
				writeDBError(w, err, s.resetSeconds(now))
				return
			}
			release, derr := s.conns.admitAddress(ClientAddress(r))
			if !s.holdPlace(w, now, gov, release, derr) {
				return
			}
		}
		scheme, cred := authorization(r)
		// A browser's stream (EventSource) carries a ticket minted with
		// the key instead of the key: it stands for the key's hash.
		ticket, terr := s.streamTicket(r, stream, scheme, now)
		if terr != nil {
			s.setAnonymousHeaders(w.Header(), now, TierNone)
			writeError(w, http.StatusUnauthorized, terr.Message)
			return
		}
		if ticket != nil {
			release, derr := s.conns.admitKey(ticket)
			if !s.holdPlace(w, now, gov, release, derr) {
				return
			}
		}
		var hash []byte
		if scheme == "bearer" && cred != "" {
			var refusal string
			if hash, refusal = s.credentialHash(r.Context(), cred); refusal != "" {
				s.setAnonymousHeaders(w.Header(), now, TierNone)
				writeError(w, http.StatusUnauthorized, refusal)
				return
			}
			// The door: a key known unusable, a spent window, an address
			// sending invalid keys are refused before the body is read; a
			// /graphql document is read only once its key is known.
			if !socket && s.atDoor(w, r, p, now, hash, p.CostByComplexity && !stream) {
				return
			}
		}
		if !socket && !stream {
			// The key's (or the address's) share of the database.
			shareKey := "addr:" + ClientAddress(r)
			if hash != nil {
				shareKey = string(hash)
			}
			release, ok := s.share.acquire(r.Context(), shareKey)
			if !ok {
				s.refuseBusy(w, now)
				return
			}
			defer release()
		}
		if stream && scheme == "bearer" && cred != "" {
			release, derr := s.conns.admitKey(hash)
			if !s.holdPlace(w, now, gov, release, derr) {
				return
			}
		}
		switch {
		case socket:
			s.serveWebSocket(w, r, p, next, now, gov)
		case ticket != nil:
			s.serveHash(w, r, p, next, now, ticket)
		case scheme == "bearer" && cred != "":
			s.serveHash(w, r, p, next, now, hash)
		case bearerMissing(scheme):
			// A key sent without its scheme is a key, not a missing one:
			// never answered with a payment offer an auto-paying client
			// holding a key would pay.
			s.setAnonymousHeaders(w.Header(), now, TierNone)
			writeError(w, http.StatusUnauthorized, MsgBearerMissing)
		case p.Pricing != nil && s.pay.enabled() && !stream:
			s.servePaid(w, r, p, next, now)
		default:
			s.setAnonymousHeaders(w.Header(), now, TierNone)
			writeError(w, http.StatusUnauthorized, missingKeyMessage(scheme, cred, MsgMissingKey))
		}
	}))
}

// holdPlace keeps the place a connection cap gave the request (release
// runs when the request ends), or, when the cap refused it (derr), answers
// as a cap refuses: anonymous headers, the cap's Retry-After, the
// connection closed. It says whether the request goes on.
func (s *Service) holdPlace(w http.ResponseWriter, now time.Time, gov *governed, release func(), derr *cryptointel.Error) bool {
	if derr != nil {
		s.setAnonymousHeaders(w.Header(), now, TierNone)
		refuseConnection(w, derr, capRetryAfter(derr))
		return false
	}
	gov.onRelease(release)
	return true
}

// serveHash handles a request as the key whose hash is hash: its Bearer
// key's, or the one its stream ticket was minted with.
func (s *Service) serveHash(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time, hash []byte) {
	ctx := r.Context()
	plans, err := s.loadPlans(ctx)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if p.CostByComplexity {
		s.serveDeferred(w, r, p, next, now, hash, plans)
		return
	}

	cost := int64(p.CreditCost)
	if refusedAhead(ctx) {
		cost = 0 // refused before its work: counted, not charged
	}
	mp := s.meterParams(now, hash, cost, allowedPlans(plans, p))
	mp.Surface, mp.Write = p.Surface, IsWrite(r)
	ahead := s.readAhead(r, p, now, hash, plans, mp)
	defer ahead.finish()
	res, err := s.store.Meter(ctx, mp)
	if err != nil || subtle.ConstantTimeCompare(res.Key.Hash, hash) != 1 || res.Key.Revoked {
		// refuseKey may serve the request paid, running its handler: the
		// read ahead is over before.
		ahead.finish()
	}
	if cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND || (err == nil && subtle.ConstantTimeCompare(res.Key.Hash, hash) != 1) {
		s.refuseKey(w, r, p, next, now, hash, MsgInvalidKey)
		return
	} else if err != nil {
		s.internalError(w, r, err)
		return
	}
	if res.Key.Revoked {
		s.refuseKey(w, r, p, next, now, hash, unusableKeyMessage(res.Key.Expired))
		return
	}
	s.door.learnMeter(res, now, mp.WindowStart, s.cfg.RateLimit)
	plan := planNamed(plans, res.Key.Plan)
	// X-Credit-Cost is the route's cost (contract: per route); what this
	// request was charged shows in X-Monthly-Used.
	if !statusUnread(r.Context()) {
		s.setMeterHeaders(w.Header(), now, res, int64(p.CreditCost))
	}
	if derr := keyRefusal(res.Key, p.Surface, mp.Write); derr != nil {
		writeDBError(w, derr, s.resetSeconds(now))
		return
	}
	if derr := s.decide(plans, plan, p, res); derr != nil {
		if derr.Code == cryptointel.ERATELIMIT && res.WindowRequests > 2*s.cfg.RateLimit {
			s.door.tarpit(ctx) // a closed loop past its window: see door.go
		}
		writeDBError(w, derr, s.resetSeconds(now))
		return
	}
	caller := keyCaller(res, plan, plans, s)
	ctx = ahead.admittedAs(WithCaller(ctx, caller), caller)
	if s.replicaReads(r, p) {
		// Content reads may use a replica that has replayed what this
		// request's metering statement saw on the primary.
		ctx = db.WithReplicaReads(ctx, res.DataVersion)
	}
	if cost > 0 {
		rw := &refundingWriter{ResponseWriter: w, s: s, now: now, res: res, listed: int64(p.CreditCost),
			rec: charge{s: s, keyID: res.Key.ID, credits: cost, day: mp.Day, month: mp.Month}}
		ctx = context.WithValue(ctx, chargeKey{}, &rw.rec)
		ctx = context.WithValue(ctx, notModifiedKey{}, rw)
		rw.ctx, w = ctx, rw
	}
	next.ServeHTTP(w, r.WithContext(ctx))
}

// keyCaller is the Caller of a request admitted with the key of res.
func keyCaller(res *db.MeterResult, plan cryptointel.Plan, plans []cryptointel.Plan, s *Service) *Caller {
	return &Caller{AccountID: res.Key.AccountID, APIKeyID: res.Key.ID, Plan: plan, DataVersion: res.DataVersion,
		Scopes: res.Key.Scopes, Surfaces: res.Key.Surfaces, plans: plans, svc: s}
}

// IsWrite reports whether r writes: any method but GET, HEAD and OPTIONS.
// (A /graphql POST reads: the schema has no mutations; the GraphQL path
// meters it as a read.)
func IsWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// keyRefusal is the 403 of a key whose scopes or restriction do not admit
// a request on surface (db.KeyAdmits), or nil.
func keyRefusal(k db.KeyInfo, surface string, write bool) *cryptointel.Error {
	if db.KeyAdmits(k, surface, write) {
		return nil
	}
	if !slices.Contains(k.Scopes, db.ScopeData) {
		return cryptointel.Errorf(cryptointel.EFORBIDDEN, "%s", MsgKeyNeedsData)
	}
	return cryptointel.Errorf(cryptointel.EFORBIDDEN, MsgKeyRestricted, strings.Join(k.Surfaces, ", "))
}

type refusedKey struct{}

// WithRefused returns ctx marking a request the route layer will refuse
// before its work runs (its parameters did not parse): the access layer
// still authenticates it, gates its plan and counts it in the rate window,
// but charges it nothing.
func WithRefused(ctx context.Context) context.Context { return withMark[refusedKey](ctx) }

func refusedAhead(ctx context.Context) bool { return marked[refusedKey](ctx) }

// IsRefusal reports whether a response status means the request was
// refused before its work ran, which costs no credits: any 4xx but 404
// (the lookup ran and found nothing).
func IsRefusal(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusNotFound
}

// refundingWriter gives a request's credits back when its response is a
// refusal (IsRefusal), before the headers go out, which then show the
// month's credits without them.
type refundingWriter struct {
	http.ResponseWriter
	rec         charge
	ctx         context.Context
	s           *Service
	now         time.Time
	res         *db.MeterResult
	listed      int64 // the route's X-Credit-Cost
	wroteHeader bool
}

// WriteHeader implements http.ResponseWriter.
func (rw *refundingWriter) WriteHeader(code int) {
	if !rw.wroteHeader {
		rw.wroteHeader = true
		if (IsRefusal(code) && rw.rec.refund(rw.ctx)) || rw.rec.refunded.Load() {
			res := *rw.res
			res.MonthUsed = max(res.MonthUsed-rw.rec.credits, 0)
			rw.s.setMeterHeaders(rw.ResponseWriter.Header(), rw.now, &res, rw.listed)
		}
	}
	rw.ResponseWriter.WriteHeader(code)
}

type notModifiedKey struct{}

// NotModified gives back the credits charged for the request of ctx, whose
// answer the client already holds (a 304 Not Modified: a GitHub-style
// conditional request costs nothing but still counts in the rate window),
// and rewrites the metering headers in h to show the month's credits
// without them. The layer that answers 304 after the route ran calls it
// before it writes the status. Without a charge in ctx it does nothing.
func NotModified(ctx context.Context, h http.Header) {
	rw, ok := ctx.Value(notModifiedKey{}).(*refundingWriter)
	if !ok || !rw.rec.refund(ctx) {
		return
	}
	res := *rw.res
	res.MonthUsed = max(res.MonthUsed-rw.rec.credits, 0)
	rw.s.setMeterHeaders(h, rw.now, &res, rw.listed)
}

// Write implements http.ResponseWriter.
func (rw *refundingWriter) Write(b []byte) (int, error) {
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
	}
	return rw.ResponseWriter.Write(b)
}

// Flush implements http.Flusher when the underlying writer does.
func (rw *refundingWriter) Flush() {
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
	}
	if f, ok := rw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (rw *refundingWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// refuseKey answers an unknown or revoked key: 401, except that a priced
// route still accepts a payment sent alongside it.
func (s *Service) refuseKey(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time, hash []byte, msg string) {
	if p.Pricing != nil && s.pay.enabled() && s.pay.hasX402(r) {
		s.servePaid(w, r, p, next, now)
		return
	}
	s.answerKeyRefusal(r.Context(), w, hash, ClientAddress(r), now, msg)
}

// decide turns a meter result into the refusal it implies, if any: the plan
// gate first, then the rate limit, then the monthly credits.
func (s *Service) decide(plans []cryptointel.Plan, plan cryptointel.Plan, p Policy, res *db.MeterResult) *cryptointel.Error {
	if !planAllows(plans, plan, p.Layer, p.Feature, p.MinPlan) {
		return forbidden(plans, p.Layer, p.Feature, p.MinPlan)
	}
	if res.WindowRequests > s.cfg.RateLimit {
		if s.cfg.OnRateLimited != nil {
			s.cfg.OnRateLimited()
		}
		return cryptointel.Errorf(cryptointel.ERATELIMIT, "%s", rateLimitMessage(s.cfg.RateLimit, s.cfg.RateWindow))
	}
	if !res.Charged {
		return cryptointel.Errorf(cryptointel.EQUOTA, "%s", MsgQuotaExceeded)
	}
	return nil
}

func (s *Service) meterParams(now time.Time, hash []byte, cost int64, allowed []string) db.MeterParams {
	day, _, month := db.UsagePeriods(now)
	return db.MeterParams{
		KeyHash: hash, AllowedPlans: allowed, WindowStart: s.windowStart(now),
		RateLimit: s.cfg.RateLimit, Cost: cost, Day: day, Month: month,
	}
}

// windowStart is the start of the fixed window holding now. Windows are
// aligned to the UTC clock (for 60 seconds: whole minutes), so every process
// agrees on them.
func (s *Service) windowStart(now time.Time) time.Time { return now.UTC().Truncate(s.cfg.RateWindow) }

// resetSeconds is the whole number of seconds, rounded up, until the current
// window ends (1 to the window length).
func (s *Service) resetSeconds(now time.Time) int {
	left := s.windowStart(now).Add(s.cfg.RateWindow).Sub(now)
	secs := int((left + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return secs
}

// SetPolicyHeaders sets the headers that describe a route by its policy:
// X-Api-Surface, X-Access-Layer, X-Endpoint-Policy and X-Credit-Cost (the
// policy's cost; metering sets the request's own). Wrap sets them on every
// request it serves; a router answering outside the access layer (an
// unknown path, a wrong method) sets them itself through this, their one
// owner.
func SetPolicyHeaders(h http.Header, p Policy) {
	policyHeaders.set(h, p.Surface, p.Layer, p.Name, strconv.Itoa(p.CreditCost))
}

// statusUnreadKey marks a request whose caller reads none of the headers
// that describe the route and the key's standing (WithStatusUnread).
type statusUnreadKey struct{}

// WithStatusUnread marks ctx's request as one whose caller reads none of
// the headers that describe its route and its key's standing on a success
// (X-Api-Surface, X-Access-Layer, X-Endpoint-Policy, X-Credit-Cost, the
// rate window's, X-Monthly-*, X-Plan-Tier): an in-process caller that
// answers its own client in its own form (the MCP tools). They are not
// set; the request is admitted, metered, limited and refused exactly as
// any other, and what a refusal carries (Retry-After, the payment
// headers) is set as ever.
func WithStatusUnread(ctx context.Context) context.Context { return withMark[statusUnreadKey](ctx) }

// statusUnread reports whether ctx's request was marked WithStatusUnread.
func statusUnread(ctx context.Context) bool { return marked[statusUnreadKey](ctx) }

// setRateHeaders sets the rate-window headers, legacy and IETF
// (draft-ietf-httpapi-ratelimit-headers: RateLimit-Policy and RateLimit as
// Structured Field lists).
func (s *Service) setRateHeaders(h http.Header, now time.Time, remaining int) {
	if remaining < 0 {
		remaining = 0
	}
	reset := s.resetSeconds(now)
	limit := strconv.Itoa(s.cfg.RateLimit)
	rateHeaders.set(h, limit, strconv.Itoa(remaining), strconv.Itoa(reset),
		`"default";q=`+limit+`;w=`+strconv.Itoa(int(s.cfg.RateWindow/time.Second)),
		`"default";r=`+strconv.Itoa(remaining)+`;t=`+strconv.Itoa(reset))
}

// setMeterHeaders sets the rate, monthly and plan headers from a meter
// result.
func (s *Service) setMeterHeaders(h http.Header, now time.Time, res *db.MeterResult, cost int64) {
	s.setRateHeaders(h, now, s.cfg.RateLimit-res.WindowRequests)
	remaining := res.MonthlyLimit - res.MonthUsed
	if remaining < 0 {
		remaining = 0
	}
	meterHeaders.set(h, strconv.FormatInt(res.MonthlyLimit, 10), strconv.FormatInt(res.MonthUsed, 10),
		strconv.FormatInt(remaining, 10), res.Key.Plan, strconv.FormatInt(cost, 10))
}

// setAnonymousHeaders sets the rate, monthly and plan headers on a response
// to a request without a valid key. Per-key quotas do not apply to it: the
// window is reported full and the monthly allowance as 0.
func (s *Service) setAnonymousHeaders(h http.Header, now time.Time, tier string) {
	s.setRateHeaders(h, now, s.cfg.RateLimit)
	h.Set("X-Monthly-Limit", "0")
	h.Set("X-Monthly-Used", "0")
	h.Set("X-Monthly-Remaining", "0")
	h.Set("X-Plan-Tier", tier)
}

// internalError logs err with the request id and answers 503 when the
// database is unreachable, else 500, with a generic message.
func (s *Service) internalError(w http.ResponseWriter, r *http.Request, err error) {
	s.logger.ErrorContext(r.Context(), "access error", "request_id", observe.RequestID(r.Context()), "error", err)
	writeError(w, StatusFor(cryptointel.ErrorCode(err)), cryptointel.ErrorMessage(err))
}

// StatusFor maps the access layer's error codes to HTTP statuses; any other
// code is 500.
func StatusFor(code string) int {
	switch code {
	case cryptointel.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case cryptointel.EPAYMENT:
		return http.StatusPaymentRequired
	case cryptointel.EFORBIDDEN, cryptointel.EQUOTA:
		return http.StatusForbidden
	case cryptointel.ERATELIMIT:
		return http.StatusTooManyRequests
	case cryptointel.EUNAVAILABLE, cryptointel.ETIMEOUT:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeDBError writes an access refusal; a 429 also gets Retry-After.
func writeDBError(w http.ResponseWriter, e *cryptointel.Error, reset int) {
	status := StatusFor(e.Code)
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(reset))
	}
	writeError(w, status, e.Message)
}

// writeError writes the error body of msg with status: the message, and
// the code of its row of the error table (httperr.Table), the
// link to it and the request id.
func writeError(w http.ResponseWriter, status int, msg string) {
	code := httperr.CodeForStatus(status, msg)
	if msg == MsgQuotaExceeded {
		code = cryptointel.EQUOTA
	}
	writeJSON(w, status, httperr.NewBody(code, msg, w.Header().Get(observe.RequestIDHeader)))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	// Messages quote headers such as "Bearer <API_KEY>": keep them readable
	// rather than HTML-escaped.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v) //nolint:errcheck // maps of strings and numbers always encode
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	w.WriteHeader(status)
	w.Write(buf.Bytes()) //nolint:errcheck
}

// missingKeyMessage is the 401 message for an Authorization header without
// a usable Bearer credential, split as ParseAuthorization splits it:
// missing (the header absent, or "Bearer" alone) is the surface's missing
// message; anything else (a bare key, "Token <key>", "Basic …") says that
// the Bearer scheme is missing.
func missingKeyMessage(scheme, cred, missing string) string {
	if scheme == "" || (scheme == "bearer" && cred == "") {
		return missing
	}
	return MsgBearerMissing
}

// bearerMissing reports whether an Authorization scheme (as
// ParseAuthorization lower-cases it) is a credential without the Bearer
// scheme: anything but none, "bearer" and MPP's "payment".
func bearerMissing(scheme string) bool {
	return scheme != "" && scheme != "bearer" && scheme != "payment"
}

// authorization splits the Authorization header into a lowercased scheme
// and its credentials.
func authorization(r *http.Request) (scheme, cred string) {
	return ParseAuthorization(r.Header.Get("Authorization"))
}

// ParseAuthorization splits an Authorization header value into its scheme,
// lower-cased, and its credential. The two are separated by spaces or tabs
// (`Bearer<TAB>key` is a bearer key, not a missing one); surrounding
// whitespace is ignored.
func ParseAuthorization(v string) (scheme, credential string) {
	v = strings.TrimSpace(v)
	i := strings.IndexAny(v, " \t")
	if i < 0 {
		return strings.ToLower(v), ""
	}
	return strings.ToLower(v[:i]), strings.TrimSpace(v[i+1:])
}

// loadPlans returns the plans, from memory when read less than
// PlanCacheTTL ago. Plans are tiny and change rarely.
func (s *Service) loadPlans(ctx context.Context) ([]cryptointel.Plan, error) {
	s.plansMu.Lock()
	defer s.plansMu.Unlock()
	if s.plans != nil && time.Since(s.plansFresh) < s.cfg.PlanCacheTTL {
		return s.plans, nil
	}
	plans, err := s.store.Plans(ctx)
	if err != nil {
		if s.plans != nil {
			return s.plans, nil // serve the last known plans while the database is away
		}
		return nil, err
	}
	s.plans, s.plansFresh = plans, time.Now()
	latestPlans.Store(&plans)
	return plans, nil
}

// paidContext returns ctx carrying the caller of a request paid per
// request. Its content reads may use any replica within the lag bound: it
// has no metering statement, hence no content version to wait for, and no
// writes of its own to see.
func (s *Service) paidContext(ctx context.Context, r *http.Request, p Policy) context.Context {
	ctx = WithCaller(ctx, &Caller{Paid: true})
	if s.replicaReads(r, p) {
		ctx = db.WithReplicaReads(ctx, 0)
	}
	return ctx
}

// replicaReads reports whether request r on a route of policy p may read
// content from a replica: with read pools, except a live stream, whose
// events arrive after its metering and are read where they were notified,
// on the primary.
func (s *Service) replicaReads(r *http.Request, p Policy) bool {
	return s.store.HasReadPools() && p.Surface != StreamPolicy.Surface && !IsStreamRequest(r)
}
