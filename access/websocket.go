package access

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/cryptointel/cryptointel"
)

// A WebSocket connection to a CostByComplexity endpoint (/graphql over
// graphql-ws) carries any number of operations, so it is not metered as one
// request: Wrap authenticates it and gates the plan at the upgrade, and
// every operation sent on it is then metered on its own when GraphQLCost
// charges it (rate window, credits and usage, one statement each), refused
// operations getting the usual rate_limited / quota_exceeded errors.
//
// Browsers cannot set headers on a WebSocket, so the key may instead come
// in the connection_init payload, {"Authorization": "Bearer <key>"}: an
// upgrade without an Authorization header is let through, and InitWebSocket
// authenticates the payload. A bad key, in the header or the payload,
// closes the connection at connection_init with code 4403 (Forbidden) and
// the message a request would get (a WebSocket client cannot read the body
// of a refused upgrade).

// MsgMissingKeyWebSocket is the reason a WebSocket connection without a key
// is closed.
const MsgMissingKeyWebSocket = "Missing API key. Send Authorization: Bearer <API_KEY> as a header or in the connection_init payload."

type operationMeterKey struct{}

type pendingWebSocketKey struct{}

// operationMeter meters each operation of a WebSocket connection.
type operationMeter struct {
	s     *Service
	p     Policy
	hash  []byte
	plans []cryptointel.Plan
}

// charge meters one operation of cost credits.
func (m *operationMeter) charge(ctx context.Context, cost int64) error {
	now := m.s.now()
	res, err := m.s.store.Meter(ctx, m.s.meterParams(now, m.hash, cost, allowedPlans(m.plans, m.p)))
	if err != nil {
		if cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND {
			return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgInvalidKey)
		}
		return err
	}
	if res.Key.Revoked || subtle.ConstantTimeCompare(res.Key.Hash, m.hash) != 1 {
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", unusableKeyMessage(res.Key.Expired))
	}
	if derr := m.s.decide(m.plans, planNamed(m.plans, res.Key.Plan), m.p, res); derr != nil {
		return derr
	}
	return nil
}

// pendingWebSocket is an upgrade let through without a key, to be
// authenticated by InitWebSocket.
type pendingWebSocket struct {
	s     *Service
	p     Policy
	plans []cryptointel.Plan
	// refused is why the key of the upgrade's header was refused.
	refused *cryptointel.Error
}

// serveWebSocket authenticates and gates a WebSocket upgrade to a
// CostByComplexity endpoint and hands it to next with per-operation
// metering.
func (s *Service) serveWebSocket(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time) {
	ctx := r.Context()
	plans, err := s.loadPlans(ctx)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	scheme, cred := authorization(r)
	if scheme == "" {
		s.setAnonymousHeaders(w.Header(), now, TierNone)
		ctx = context.WithValue(ctx, pendingWebSocketKey{}, &pendingWebSocket{s: s, p: p, plans: plans})
		next.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	ctx, derr := s.authenticateWebSocket(ctx, p, plans, scheme, cred)
	if derr != nil {
		s.setAnonymousHeaders(w.Header(), now, TierNone)
		if derr.Code == cryptointel.EINTERNAL || derr.Code == cryptointel.EUNAVAILABLE {
			s.internalError(w, r, derr)
			return
		}
		// A WebSocket client cannot read the body of a refused upgrade:
		// accept it and close with 4403 and the message at connection_init.
		ctx = context.WithValue(ctx, pendingWebSocketKey{}, &pendingWebSocket{s: s, p: p, plans: plans, refused: derr})
		next.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	c, _ := CallerFrom(ctx)
	s.setAnonymousHeaders(w.Header(), now, c.Plan.Name)
	next.ServeHTTP(w, r.WithContext(ctx))
}

// authenticateWebSocket looks the key up and gates the plan, returning ctx
// with the caller and the per-operation meter.
func (s *Service) authenticateWebSocket(ctx context.Context, p Policy, plans []cryptointel.Plan, scheme, cred string) (context.Context, *cryptointel.Error) {
	if scheme != "bearer" || cred == "" {
		return ctx, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", missingKeyMessage(scheme, cred, MsgMissingKeyWebSocket))
	}
	hash := cryptointel.HashAPIKey(cred)
	key, err := s.store.KeyByHash(ctx, hash)
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND || (err == nil && subtle.ConstantTimeCompare(key.Hash, hash) != 1):
		return ctx, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgInvalidKey)
	case err != nil:
		return ctx, &cryptointel.Error{Code: cryptointel.ErrorCode(err), Message: cryptointel.ErrorMessage(err)}
	case key.Revoked:
		return ctx, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", unusableKeyMessage(key.Expired))
	}
	plan := planNamed(plans, key.Plan)
	if !planAllows(plans, plan, p.Layer, p.Feature, p.MinPlan) {
		return ctx, forbidden(plans, p.Layer, p.Feature, p.MinPlan)
	}
	ctx = WithCaller(ctx, &Caller{AccountID: key.AccountID, APIKeyID: key.ID, Plan: plan, plans: plans, svc: s})
	return context.WithValue(ctx, operationMeterKey{}, &operationMeter{s: s, p: p, hash: hash, plans: plans}), nil
}

// InitWebSocket authenticates a WebSocket connection from its
// connection_init payload when the upgrade carried no Authorization header:
// it reads {"Authorization": "Bearer <key>"} (or "authorization") and
// returns ctx with the caller, or a *cryptointel.Error (unauthorized, forbidden) to
// close the connection with. A connection the upgrade already
// authenticated, or one outside the access layer, is returned unchanged.
func InitWebSocket(ctx context.Context, payload map[string]any) (context.Context, error) {
	if _, ok := CallerFrom(ctx); ok {
		return ctx, nil
	}
	pending, ok := ctx.Value(pendingWebSocketKey{}).(*pendingWebSocket)
	if !ok {
		return ctx, nil
	}
	if pending.refused != nil {
		return ctx, pending.refused
	}
	var auth string
	for _, name := range []string{"Authorization", "authorization"} {
		if v, ok := payload[name].(string); ok && v != "" {
			auth = v
			break
		}
	}
	if auth == "" {
		return ctx, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgMissingKeyWebSocket)
	}
	scheme, cred := ParseAuthorization(auth)
	ctx, derr := pending.s.authenticateWebSocket(ctx, pending.p, pending.plans, scheme, cred)
	if derr != nil {
		return ctx, derr
	}
	return ctx, nil
}
