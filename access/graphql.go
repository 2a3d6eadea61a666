package access

import (
	"context"
	"crypto/subtle"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph/validation"
)

// GraphQLPolicy is the policy /graphql is wrapped with: evaluation layer,
// cost by complexity (1 credit when no operation runs, e.g. a parse error).
// Without a key it may be paid per request: 0.001 USDC per credit of the
// operation's complexity, at least 0.005 USDC (the smallest /v1 price).
var GraphQLPolicy = Policy{
	Surface: "graphql", Layer: LayerEvaluation, Name: "graphql", CreditCost: 1, CostByComplexity: true,
	Pricing: &Pricing{Mode: "complexity", Min: 0.005, PerCredit: 0.001},
}

// GraphQLCost is the gqlgen handler extension that charges a /graphql
// request the operation's computed complexity in credits and reports it as
// extensions.cost in the response. Add it to the /graphql handler
// (srv.Use(&access.GraphQLCost{})) and wrap the handler with Service.Wrap
// and a policy with CostByComplexity set.
//
// How the charges combine: Wrap defers the key's authentication, the plan
// gate and the metering to one statement. Once the operation is parsed and
// validated, MutateOperationContext computes its complexity and calls
// Charge, which runs the metering statement (key lookup + rate window +
// credits + usage) with that cost, before any resolver runs. A refused
// operation (rate limit, credits) gets a GraphQL error whose extensions.code
// is rate_limited or quota_exceeded, and the HTTP status becomes 429 or 403
// like /v1; an unknown or revoked key (or a plan without the route) is
// answered 401 (403) with the access layer's {"error": ...} body, exactly as
// if refused before the operation was read. A request that never reaches
// that point (a parse or validation error) is metered when its response
// starts, at the policy's CreditCost. So /graphql costs one statement for
// its access, like the /v1 routes.
//
// Executing an operation outside a CostByComplexity request (the /v1 facade
// running its fixed operations in process) charges nothing here: the route
// was already metered at its CreditCost.
//
// The complexity is the one the executor's complexity limit recorded under
// the operation stats key "ComplexityLimit" (gqlgen's), else computed with
// validation.Complexity (gqlgen's measure, in time linear in the document).
type GraphQLCost struct {
	es graphql.ExecutableSchema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = (*GraphQLCost)(nil)

const costExtension = "AccessCost"

// ExtensionName implements graphql.HandlerExtension.
func (*GraphQLCost) ExtensionName() string { return costExtension }

// Validate implements graphql.HandlerExtension.
func (c *GraphQLCost) Validate(es graphql.ExecutableSchema) error {
	c.es = es
	return nil
}

// MutateOperationContext computes the operation's complexity and charges it.
func (c *GraphQLCost) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	op := opCtx.Doc.Operations.ForName(opCtx.OperationName)
	if op == nil {
		return nil
	}
	var cost int
	if stats, ok := opCtx.Stats.GetExtension("ComplexityLimit").(*extension.ComplexityStats); ok {
		cost = stats.Complexity // computed already by the complexity limit
	} else {
		cost = validation.Complexity(ctx, c.es, op, opCtx.Variables)
	}
	opCtx.Stats.SetExtension(costExtension, cost)
	if err := Charge(ctx, cost); err != nil {
		code := cryptointel.ErrorCode(err)
		return &gqlerror.Error{Message: cryptointel.ErrorMessage(err), Extensions: map[string]any{"code": code}}
	}
	return nil
}

// InterceptResponse adds extensions.cost to the response.
func (c *GraphQLCost) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil || !graphql.HasOperationContext(ctx) {
		return resp
	}
	if cost, ok := graphql.GetOperationContext(ctx).Stats.GetExtension(costExtension).(int); ok {
		if resp.Extensions == nil {
			resp.Extensions = map[string]any{}
		}
		resp.Extensions["cost"] = cost
	}
	return resp
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
	refusal *cryptointel.Error
	// keyRefusal: refusal refuses the key itself (unknown, revoked: 401) or
	// its plan (403), answered as before any operation ran: the access
	// layer's {"error": ...} body, no usage headers.
	keyRefusal bool
	keyPlan    string
	err        error
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
	if pr, ok := ctx.Value(paidRequestKey{}).(*paidRequest); ok {
		return pr.charge(ctx, cost)
	}
	if m, ok := ctx.Value(operationMeterKey{}).(*operationMeter); ok {
		return m.charge(ctx, int64(cost))
	}
	m, ok := ctx.Value(deferredMeterKey{}).(*deferredMeter)
	if !ok {
		return nil
	}
	return m.charge(ctx, int64(cost))
}

func (m *deferredMeter) charge(ctx context.Context, cost int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		if m.refusal != nil {
			return m.refusal
		}
		return m.err
	}
	m.done, m.cost = true, cost
	res, err := m.s.store.Meter(ctx, m.s.meterParams(m.now, m.hash, cost, allowedPlans(m.plans, m.p)))
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND || (err == nil && subtle.ConstantTimeCompare(res.Key.Hash, m.hash) != 1):
		return m.refuseKey(cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgInvalidKey), TierNone)
	case err != nil:
		m.err = err
		return err
	case res.Key.Revoked:
		return m.refuseKey(cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", unusableKeyMessage(res.Key.Expired)), TierNone)
	}
	m.res = res
	plan := planNamed(m.plans, res.Key.Plan)
	if !planAllows(m.plans, plan, m.p.Layer, m.p.Feature, m.p.MinPlan) {
		return m.refuseKey(forbidden(m.plans, m.p.Layer, m.p.Feature, m.p.MinPlan), res.Key.Plan)
	}
	m.caller.AccountID, m.caller.APIKeyID, m.caller.Plan = res.Key.AccountID, res.Key.ID, plan
	if derr := m.s.decide(m.plans, plan, m.p, res); derr != nil {
		m.refusal = derr
		return derr
	}
	if m.grant != nil {
		m.grant(res.DataVersion)
	}
	return nil
}

// refuseKey records a refusal of the key or its plan, answered with tier
// in X-Plan-Tier.
func (m *deferredMeter) refuseKey(e *cryptointel.Error, tier string) error {
	m.refusal, m.keyRefusal, m.keyPlan = e, true, tier
	return e
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
		// Metered even when the client is gone (a body that never arrived
		// cancels the request's context): it was admitted.
		m.charge(context.WithoutCancel(d.r.Context()), int64(m.p.CreditCost)) //nolint:errcheck // the outcome is read below
	}
	m.mu.Lock()
	res, refusal, err, cost := m.res, m.refusal, m.err, m.cost
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
	if refusal != nil {
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
