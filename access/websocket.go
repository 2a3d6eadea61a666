package access

import (
	"context"
	"net/http"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// A WebSocket connection to a CostByComplexity endpoint (/graphql over
// graphql-ws) carries any number of operations, so it is metered as a
// request at its handshake (counted in the key's rate window, at no cost:
// the handshake is refused 429 before the upgrade when the window is full)
// and then every operation sent on it is metered on its own, like a
// request: GraphQLCost charges it (rate window, credits and usage, one
// statement each, the key re-authorised every time), and an operation
// refused before it runs (a parse or validation error) is still counted in
// the rate window, at no cost. Refused operations get the usual
// rate_limited / quota_exceeded / forbidden errors.
//
// Browsers cannot set headers on a WebSocket, so the key may instead come
// in the connection_init payload, {"Authorization": "Bearer <key>"}: an
// upgrade without an Authorization header is let through, and InitWebSocket
// authenticates the payload (counting the connection in the rate window and
// under the per-key cap then). A bad key, in the header or the payload,
// closes the connection at connection_init with code 4403 (Forbidden) and
// the message a request would get (a WebSocket client cannot read the body
// of a refused upgrade); a key over its rate window or connection cap at
// connection_init closes it with 4429.

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
	gov   *governed // the connection's: told when its key is refused
}

// charge meters one operation of quote q. An operation refused because
// the key is no longer usable (revoked, expired) is refused, and the
// connection is closed (see OnKeyRefused): it would only answer errors.
func (m *operationMeter) charge(ctx context.Context, q *quote) (*charge, error) {
	_, rec, refusal, _, err := m.s.meterQuote(ctx, m.s.now(), m.hash, m.plans, m.p, q)
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		if refusal.Code == cryptointel.EUNAUTHORIZED && m.gov != nil {
			m.gov.keyRefused(refusal.Message)
		}
		return nil, refusal
	}
	return rec, nil
}

// pendingWebSocket is an upgrade let through without a key, to be
// authenticated by InitWebSocket.
type pendingWebSocket struct {
	s     *Service
	p     Policy
	plans []cryptointel.Plan
	gov   *governed
	// refused is why the key of the upgrade's header was refused.
	refused *cryptointel.Error
}

// serveWebSocket authenticates and gates a WebSocket upgrade to a
// CostByComplexity endpoint, counts it in the key's rate window and hands
// it to next with per-operation metering.
func (s *Service) serveWebSocket(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time, gov *governed) {
	ctx := r.Context()
	plans, err := s.loadPlans(ctx)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	pending := &pendingWebSocket{s: s, p: p, plans: plans, gov: gov}
	scheme, cred := authorization(r)
	if scheme == "" {
		s.setAnonymousHeaders(w.Header(), now, TierNone)
		gov.socket = true
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, pendingWebSocketKey{}, pending)))
		return
	}
	ctx, res, derr := s.authenticateWebSocket(ctx, p, plans, scheme, cred, now)
	switch {
	case derr == nil:
	case derr.Code == cryptointel.EINTERNAL || derr.Code == cryptointel.EUNAVAILABLE || derr.Code == cryptointel.ETIMEOUT:
		s.setAnonymousHeaders(w.Header(), now, TierNone)
		s.internalError(w, r, derr)
		return
	case derr.Code == cryptointel.ERATELIMIT:
		// Over the rate window: refused before the upgrade, cheaply.
		s.setMeterHeaders(w.Header(), now, res, 0)
		refuseConnection(w, derr, s.resetSeconds(now))
		return
	default:
		// A WebSocket client cannot read the body of a refused upgrade:
		// accept it and close with 4403 and the message at connection_init.
		s.setAnonymousHeaders(w.Header(), now, TierNone)
		pending.refused = derr
		gov.socket = true
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, pendingWebSocketKey{}, pending)))
		return
	}
	s.setMeterHeaders(w.Header(), now, res, 0)
	gov.socket = true
	next.ServeHTTP(w, r.WithContext(ctx))
}

// authenticateWebSocket meters a connection's handshake (rate window, no
// cost) by its key and gates the plan, returning ctx with the caller and the
// per-operation meter. The meter result is returned with a rate-limit
// refusal, for the headers.
func (s *Service) authenticateWebSocket(ctx context.Context, p Policy, plans []cryptointel.Plan, scheme, cred string, now time.Time) (context.Context, *db.MeterResult, *cryptointel.Error) {
	if scheme != "bearer" || cred == "" {
		return ctx, nil, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", missingKeyMessage(scheme, cred, MsgMissingKeyWebSocket))
	}
	hash := db.HashAPIKey(cred)
	res, _, refusal, _, err := s.meterQuote(ctx, now, hash, plans, p, &quote{})
	switch {
	case err != nil:
		return ctx, nil, &cryptointel.Error{Code: cryptointel.ErrorCode(err), Message: cryptointel.ErrorMessage(err)}
	case refusal != nil:
		return ctx, res, refusal
	}
	plan := planNamed(plans, res.Key.Plan)
	c := keyCaller(res, plan, plans, s)
	c.DataVersion = 0
	ctx = WithCaller(ctx, c)
	gov, _ := ctx.Value(governedKey{}).(*governed)
	return context.WithValue(ctx, operationMeterKey{}, &operationMeter{s: s, p: p, hash: hash, plans: plans, gov: gov}), res, nil
}

// InitWebSocket authenticates a WebSocket connection from its
// connection_init payload when the upgrade carried no Authorization header:
// it reads {"Authorization": "Bearer <key>"} (or "authorization"), counts
// the connection in the key's rate window and under its connection cap,
// and returns ctx with the caller, or a *cryptointel.Error (unauthorized,
// forbidden, rate_limited) to close the connection with. A connection the
// upgrade already authenticated, or one outside the access layer, is
// returned unchanged.
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
	if scheme == "bearer" && cred != "" {
		release, derr := pending.s.conns.admitKey(db.HashAPIKey(cred))
		if derr != nil {
			return ctx, derr
		}
		pending.gov.onRelease(release)
	}
	ctx, _, derr := pending.s.authenticateWebSocket(ctx, pending.p, pending.plans, scheme, cred, pending.s.now())
	if derr != nil {
		return ctx, derr
	}
	return ctx, nil
}
