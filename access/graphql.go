package access

import (
	"context"
	"crypto/subtle"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph/validation"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/observe"
)

// GraphQLPolicy is the policy /graphql is wrapped with: evaluation layer,
// cost by the operation (see GraphQLCost; a request refused before an
// operation runs, e.g. a parse error, costs nothing). Without a key it may
// be paid per request: 0.001 USDC per credit of the operation's price, at
// least 0.005 USDC (the smallest /v1 price), and at least what the /v1
// routes doing the same work cost.
var GraphQLPolicy = Policy{
	Surface: "graphql", Layer: LayerEvaluation, Name: "graphql", CreditCost: 0, CostByComplexity: true,
	Pricing: &Pricing{Mode: "complexity", Min: 0.005, PerCredit: 0.001},
}

// GraphQLCost is the gqlgen handler extension that charges a /graphql
// request its operation's price (see price.go: the complexity, introspection
// and the floors of the /v1 routes) in credits and reports it as
// extensions.cost in the response. Add it to the /graphql handler
// (srv.Use(&access.GraphQLCost{})) and wrap the handler with Service.Wrap
// and a policy with CostByComplexity set.
//
// How the charges combine: Wrap defers the key's authentication, the plan
// gate and the metering to one statement. Once the operation is parsed and
// validated, MutateOperationContext prices it and calls the meter, which
// runs the metering statement (key lookup + rate window + credits + usage)
// with that price, before any resolver runs. A refused operation (rate
// limit, credits, a field its plan lacks) gets a GraphQL error whose
// extensions.code is rate_limited, quota_exceeded or forbidden, and the
// HTTP status becomes 429 or 403 like /v1, at no cost; an unknown or
// revoked key (or a plan without the route) is answered 401 (403) with the
// access layer's {"error": ...} body, exactly as if refused before the
// operation was read. A request that never reaches that point (a parse or
// validation error, a document over a limit, a transport error) is refused
// before any operation runs: it is metered when its response starts,
// counted in the rate window at no cost. So /graphql costs one statement
// for its access, like the /v1 routes (plus, before its document is read,
// one lookup of a key this process has not seen in the last minute: see
// door.go). On a WebSocket connection the same holds per operation.
//
// Executing an operation outside a CostByComplexity request (the /v1 facade
// running its fixed operations in process) charges nothing here: the route
// was already metered at its CreditCost.
//
// The complexity is the one the executor's complexity limit recorded under
// the operation stats key "ComplexityLimit" (gqlgen's), else computed with
// validation.Complexity (gqlgen's measure, in time linear in the document).
type GraphQLCost struct {
	es     graphql.ExecutableSchema
	floors atomic.Pointer[map[string]floorSet]
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = (*GraphQLCost)(nil)

const (
	costExtension   = "AccessCost"
	chargeExtension = "AccessCharge"
)

// ExtensionName implements graphql.HandlerExtension.
func (*GraphQLCost) ExtensionName() string { return costExtension }

// Validate implements graphql.HandlerExtension.
func (c *GraphQLCost) Validate(es graphql.ExecutableSchema) error {
	c.es = es
	return nil
}

// SetFieldFloors sets the least each root field costs (the /v1 routes
// running it); the app calls it once, with the route table's floors,
// before serving.
func (c *GraphQLCost) SetFieldFloors(floors []FieldFloor) {
	m := map[string]floorSet{}
	for _, f := range floors {
		m[f.Field] = append(m[f.Field], f)
	}
	c.floors.Store(&m)
}

func (c *GraphQLCost) floorMap() map[string]floorSet {
	if m := c.floors.Load(); m != nil {
		return *m
	}
	return nil
}

// MutateOperationContext prices the operation and charges it.
func (c *GraphQLCost) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	if op == nil {
		return nil
	}
	var complexity int
	if stats, ok := opCtx.Stats.GetExtension("ComplexityLimit").(*extension.ComplexityStats); ok {
		complexity = stats.Complexity // computed already by the complexity limit
	} else {
		complexity = validation.Complexity(ctx, c.es, op, opCtx.Variables)
	}
	if !chargeable(ctx) {
		// The /v1 facade's in-process operations: metered by their route.
		opCtx.Stats.SetExtension(costExtension, complexity)
		return nil
	}
	q := c.quoteOperation(ctx, opCtx, op, complexity)
	opCtx.Stats.SetExtension(costExtension, q.credits())
	rec, err := chargeQuote(ctx, q)
	if rec != nil {
		opCtx.Stats.SetExtension(chargeExtension, rec)
	}
	if err != nil {
		code := cryptointel.ErrorCode(err)
		ext := map[string]any{"code": code, "docUrl": httperr.DocURL(code)}
		if q.refusedField != "" {
			ext["field"] = q.refusedField
		}
		return &gqlerror.Error{Message: cryptointel.ErrorMessage(err), Extensions: ext}
	}
	return nil
}

// InterceptResponse adds extensions.cost to the response. On a WebSocket
// connection, an operation answered without having been charged (refused
// before it ran: a parse or validation error) is metered here, at no
// cost, so that it counts in the key's rate window like a request.
//
// The response it is given may be shared: every subscriber of a
// subscription that receives the same event gets the same result (see
// resolvers' streamState), so the cost goes on a copy of it, never into
// the result itself; a result that already reports this operation's cost
// (a stream's events carry it, see OperationCost) is returned as it is.
func (c *GraphQLCost) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil || !graphql.HasOperationContext(ctx) {
		return resp
	}
	cost, ok := OperationCost(ctx)
	if !ok {
		if m, isSocket := ctx.Value(operationMeterKey{}).(*operationMeter); isSocket {
			graphql.GetOperationContext(ctx).Stats.SetExtension(costExtension, 0)
			m.charge(ctx, &quote{}) //nolint:errcheck // refused already; the window only counts it
		}
		return resp
	}
	if v, has := resp.Extensions["cost"].(int); has && v == cost {
		return resp
	}
	return withExtension(resp, "cost", cost)
}

// OperationCost is the extensions.cost GraphQLCost gives the results of the
// operation running in ctx, and whether it gives one.
func OperationCost(ctx context.Context) (int, bool) {
	if !graphql.HasOperationContext(ctx) {
		return 0, false
	}
	cost, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(costExtension).(int)
	return cost, ok
}

// withExtension returns a copy of resp whose extensions are resp's with
// name set to v; resp and its extensions are left as they are.
func withExtension(resp *graphql.Response, name string, v any) *graphql.Response {
	ext := make(map[string]any, len(resp.Extensions)+1)
	maps.Copy(ext, resp.Extensions)
	ext[name] = v
	out := *resp
	out.Extensions = ext
	return &out
}

// chargeable reports whether ctx is a request the GraphQL cost extension
// meters: a /graphql request by key, by payment or on a WebSocket.
func chargeable(ctx context.Context) bool {
	if _, ok := ctx.Value(paidRequestKey{}).(*paidRequest); ok {
		return true
	}
	if _, ok := ctx.Value(operationMeterKey{}).(*operationMeter); ok {
		return true
	}
	_, ok := ctx.Value(deferredMeterKey{}).(*deferredMeter)
	return ok
}

// deferredMeter is the pending metering of a CostByComplexity request. The
// metering statement authenticates the key too, so a /graphql request costs
// one statement for its access like a /v1 request; until it has run, the
// request's Caller is empty.
type deferredMeter struct {
	s      *Service
	p      Policy
	now    time.Time
	hash   []byte
	plans  []cryptointel.Plan
	caller *Caller

	// grant, when set, lets the request's content reads use a replica
	// once metering has read the content version.
	grant func(version int64)

	mu      sync.Mutex
	done    bool
	cost    int64
	res     *db.MeterResult
	rec     *charge
	refusal *cryptointel.Error
	// keyRefusal: refusal refuses the key itself (unknown, revoked: 401) or
	// its plan (403), answered as before any operation ran: the access
	// layer's {"error": ...} body, no usage headers.
	keyRefusal bool
	keyPlan    string
	// fieldRefusal: refusal refuses a field of the operation the plan
	// lacks; on an event stream it travels in the stream, as a
	// subscription's errors do.
	fieldRefusal bool
	err          error
}

type deferredMeterKey struct{}

// Charge meters the current request at cost credits when its policy defers
// metering to the handler (CostByComplexity); the first call wins and later
// calls are no-ops, as is any call for a request metered by Wrap already or
// made outside the access layer. It returns a *cryptointel.Error with code
// ERATELIMIT or EQUOTA (exact messages) when the request is refused.
//
// A /graphql request without a key on a server taking payments is priced
// here instead (Pricing "complexity"): its payment is verified against the
// operation's price, and an EPAYMENT error means the request is answered
// with the 402 challenge at that price.
//
// On a WebSocket connection every call meters one operation.
func Charge(ctx context.Context, cost int) error {
	_, err := chargeQuote(ctx, &quote{base: cost})
	return err
}

// chargeQuote charges the current request or operation its quote q.
func chargeQuote(ctx context.Context, q *quote) (*charge, error) {
	if pr, ok := ctx.Value(paidRequestKey{}).(*paidRequest); ok {
		return nil, pr.charge(ctx, q)
	}
	if m, ok := ctx.Value(operationMeterKey{}).(*operationMeter); ok {
		return m.charge(ctx, q)
	}
	m, ok := ctx.Value(deferredMeterKey{}).(*deferredMeter)
	if !ok {
		return nil, nil
	}
	return m.charge(ctx, q)
}

func (m *deferredMeter) charge(ctx context.Context, q *quote) (*charge, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		if m.refusal != nil {
			return nil, m.refusal
		}
		return nil, m.err
	}
	m.done, m.cost = true, int64(q.credits())
	res, rec, refusal, keyRefused, err := m.s.meterQuote(ctx, m.now, m.hash, m.plans, m.p, q)
	switch {
	case err != nil:
		m.err = err
		return nil, err
	case keyRefused:
		tier := TierNone
		if res != nil {
			tier = res.Key.Plan
		}
		m.refusal, m.keyRefusal, m.keyPlan = refusal, true, tier
		return nil, refusal
	}
	m.res = res
	m.caller.AccountID, m.caller.APIKeyID, m.caller.Plan = res.Key.AccountID, res.Key.ID, planNamed(m.plans, res.Key.Plan)
	m.caller.Scopes, m.caller.Surfaces = res.Key.Scopes, res.Key.Surfaces
	if refusal != nil {
		m.refusal, m.fieldRefusal = refusal, q.refusedField != ""
		return nil, refusal
	}
	m.rec = rec
	if m.grant != nil {
		m.grant(res.DataVersion)
	}
	return rec, nil
}

// meterQuote runs the metering statement for one request or operation of
// quote q by the key whose hash is hash, under policy p: the key is looked
// up, the request counted in its rate window and — when its plan includes
// p and every field q needs, the window is within the limit and the month's
// credits cover q — charged q's credits. It returns the meter result and
// the charge, or the refusal: keyRefused when it refuses the key or its
// plan for p (401/403 before anything was read), otherwise a field the
// plan lacks (forbidden), the rate limit or the credits. err is an
// internal error.
func (s *Service) meterQuote(ctx context.Context, now time.Time, hash []byte, plans []cryptointel.Plan, p Policy, q *quote) (res *db.MeterResult, rec *charge, refusal *cryptointel.Error, keyRefused bool, err error) {
	credits := int64(q.credits())
	allowed := allowedPlans(plans, p)
	if len(q.needs) > 0 {
		kept := allowed[:0:0]
		for _, name := range allowed {
			if q.unmet(plans, planNamed(plans, name)) == nil {
				kept = append(kept, name)
			}
		}
		allowed = kept
	}
	mp := s.meterParams(now, hash, credits, allowed)
	mp.Surface = p.Surface // a GraphQL operation reads: the schema has no mutations
	res, err = s.store.Meter(ctx, mp)
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND || (err == nil && subtle.ConstantTimeCompare(res.Key.Hash, hash) != 1):
		s.door.learnRefused(hash, now, MsgInvalidKey)
		return nil, nil, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgInvalidKey), true, nil
	case err != nil:
		return nil, nil, nil, false, err
	case res.Key.Revoked:
		s.door.learnRefused(hash, now, unusableKeyMessage(res.Key.Expired))
		return nil, nil, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", unusableKeyMessage(res.Key.Expired)), true, nil
	}
	s.door.learnMeter(res, now, mp.WindowStart, s.cfg.RateLimit)
	if derr := keyRefusal(res.Key, p.Surface, false); derr != nil {
		return res, nil, derr, true, nil
	}
	plan := planNamed(plans, res.Key.Plan)
	if !planAllows(plans, plan, p.Layer, p.Feature, p.MinPlan) {
		return res, nil, forbidden(plans, p.Layer, p.Feature, p.MinPlan), true, nil
	}
	if n := q.unmet(plans, plan); n != nil {
		return res, nil, q.forbiddenField(plans, n), false, nil
	}
	if derr := s.decide(plans, plan, p, res); derr != nil {
		return res, nil, derr, false, nil
	}
	return res, &charge{s: s, keyID: res.Key.ID, credits: credits, day: mp.Day, month: mp.Month}, nil, false, nil
}

// charge is credits taken from a key for one request or operation; a
// refusal found after they were taken gives them back (Refund), once.
type charge struct {
	s          *Service
	keyID      int64
	credits    int64
	day, month time.Time
	once       sync.Once
	refunded   atomic.Bool
}

// refund gives the credits back (once); it reports whether they are back.
func (c *charge) refund(ctx context.Context) bool {
	if c == nil || c.credits <= 0 {
		return false
	}
	c.once.Do(func() {
		if err := c.s.store.RefundCredits(context.WithoutCancel(ctx), c.keyID, c.day, c.month, c.credits); err != nil {
			c.s.logger.ErrorContext(ctx, "refunding a refused request failed", "request_id", observe.RequestID(ctx), "error", err)
			return
		}
		c.refunded.Store(true)
	})
	return c.refunded.Load()
}

type chargeKey struct{}

// Refund gives back the credits charged for the current GraphQL operation
// (on a WebSocket, each operation's own), or else for the current request,
// once: call it when the operation or request is refused after it was
// metered (a subscription whose stream cannot open), since a refusal costs
// nothing. Without a charge in ctx it does nothing.
func Refund(ctx context.Context) {
	if graphql.HasOperationContext(ctx) {
		if rec, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(chargeExtension).(*charge); ok {
			rec.refund(ctx)
			return
		}
	}
	if rec, ok := ctx.Value(chargeKey{}).(*charge); ok {
		rec.refund(ctx)
	}
}

// serveDeferred runs a CostByComplexity request with its authentication,
// plan gate and metering deferred to Charge (once the operation's cost is
// known) or to the start of the response: one statement does all of them.
// A key or plan refused then is answered as if refused up front: 401 (or
// 403) with the {"error": ...} body, whatever the handler wrote.
func (s *Service) serveDeferred(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time, hash []byte, plans []cryptointel.Plan) {
	ctx := r.Context()
	caller := &Caller{plans: plans, svc: s}
	m := &deferredMeter{s: s, p: p, now: now, hash: hash, plans: plans, caller: caller}
	if s.replicaReads(r, p) {
		ctx, m.grant = db.WithDeferredReplicaReads(ctx)
	}
	ctx = context.WithValue(ctx, deferredMeterKey{}, m)
	ctx = WithCaller(ctx, caller)
	dw := &deferredWriter{ResponseWriter: w, m: m, r: r.WithContext(ctx)}
	next.ServeHTTP(dw, dw.r)
	if !dw.wroteHeader {
		dw.WriteHeader(http.StatusOK)
	}
}

// deferredWriter sets the access headers when the response starts, metering
// the request then if the handler did not (charging the policy's
// CreditCost), and turns a refusal into its HTTP status. When the refusal
// comes from that late metering, the handler's body is replaced by the
// {"error": ...} body.
type deferredWriter struct {
	http.ResponseWriter
	m           *deferredMeter
	r           *http.Request
	wroteHeader bool
	discard     bool
}

// WriteHeader implements http.ResponseWriter.
func (d *deferredWriter) WriteHeader(code int) {
	if d.wroteHeader {
		return
	}
	d.wroteHeader = true
	m := d.m
	late := false
	m.mu.Lock()
	done := m.done
	m.mu.Unlock()
	if !done {
		late = true
		// No operation ran: the request was refused before (a parse or
		// validation error, a limit, a transport error) and costs nothing,
		// but it is a request of the key, counted in its rate window, even
		// when the client is gone (a body that never arrived cancels the
		// request's context).
		m.charge(context.WithoutCancel(d.r.Context()), &quote{}) //nolint:errcheck // the outcome is read below
	}
	m.mu.Lock()
	res, refusal, err, cost, fieldRefusal := m.res, m.refusal, m.err, m.cost, m.fieldRefusal
	m.mu.Unlock()
	h := d.ResponseWriter.Header()
	if err != nil {
		d.discard = true
		d.m.s.internalError(d.ResponseWriter, d.r, err)
		return
	}
	if refusal != nil && m.keyRefusal {
		d.discard = true
		d.m.s.setAnonymousHeaders(h, m.now, m.keyPlan)
		writeDBError(d.ResponseWriter, refusal, d.m.s.resetSeconds(m.now))
		return
	}
	d.m.s.setMeterHeaders(h, m.now, res, cost)
	if refusal != nil && !(fieldRefusal && IsEventStreamRequest(d.r)) {
		if late {
			d.discard = true
			writeDBError(d.ResponseWriter, refusal, d.m.s.resetSeconds(m.now))
			return
		}
		code = StatusFor(refusal.Code)
		if code == http.StatusTooManyRequests {
			h.Set("Retry-After", h.Get("X-RateLimit-Reset"))
		}
	}
	d.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (d *deferredWriter) Write(b []byte) (int, error) {
	if !d.wroteHeader {
		d.WriteHeader(http.StatusOK)
	}
	if d.discard {
		return len(b), nil
	}
	return d.ResponseWriter.Write(b)
}

// Flush implements http.Flusher when the underlying writer does.
func (d *deferredWriter) Flush() {
	if !d.wroteHeader {
		d.WriteHeader(http.StatusOK)
	}
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (d *deferredWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
