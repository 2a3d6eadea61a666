package access

import (
	"context"
	"crypto/subtle"

	"github.com/cryptointel/cryptointel"
)

// Authenticate checks an Authorization header value the way Wrap checks a
// request's, without counting it in the rate window, metering it or
// charging it: the door of a surface whose own requests are free (the MCP
// endpoint's initialize and list requests) while every priced call it
// makes still goes through Wrap.
//
// A valid `Bearer` key returns nil. A credential without the Bearer
// scheme (a bare key, `Token <key>`) is EUNAUTHORIZED with
// MsgBearerMissing, payments on or off: a client that holds a key is never
// asked to pay. Without a key it returns nil when pay-per-request is
// enabled (each priced call is then answered with the payment
// requirements), else EUNAUTHORIZED with MsgMissingKey. An unknown key is
// EUNAUTHORIZED with MsgInvalidKey, a revoked one with MsgRevokedKey, an
// expired one with MsgExpiredKey; an unreachable database is EUNAVAILABLE
// or an internal error.
func (s *Service) Authenticate(ctx context.Context, authorization string) error {
	scheme, key := ParseAuthorization(authorization)
	if scheme != "bearer" || key == "" {
		if bearerMissing(scheme) {
			return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgBearerMissing)
		}
		if s.pay.enabled() {
			return nil
		}
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgMissingKey)
	}
	hash, refusal := s.credentialHash(ctx, key)
	if refusal != "" {
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", refusal)
	}
	k, err := s.store.KeyByHash(ctx, hash)
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND || (err == nil && subtle.ConstantTimeCompare(k.Hash, hash) != 1):
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgInvalidKey)
	case err != nil:
		return err
	case k.Revoked:
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", unusableKeyMessage(k.Expired))
	}
	return nil
}

// PaymentsEnabled reports whether pay-per-request (x402, MPP or both) is
// on: a request without a key may then pay for each priced call.
func (s *Service) PaymentsEnabled() bool { return s.pay.enabled() }

// Gate returns the plan gate of the key in an Authorization header value:
// a check of a route's access layer, plan feature and plan floor, as Wrap
// applies them, without counting, metering or charging anything. It
// returns nil when the header holds no working key (none, unknown, revoked
// or expired) or the plans cannot be read. The MCP prompts use it to
// suggest only what the caller's plan allows.
func (s *Service) Gate(ctx context.Context, authorization string) func(layer, feature, minPlan string) bool {
	scheme, key := ParseAuthorization(authorization)
	if scheme != "bearer" || key == "" {
		return nil
	}
	hash, refusal := s.credentialHash(ctx, key)
	if refusal != "" {
		return nil
	}
	k, err := s.store.KeyByHash(ctx, hash)
	if err != nil || k.Revoked || subtle.ConstantTimeCompare(k.Hash, hash) != 1 {
		return nil
	}
	plans, err := s.loadPlans(ctx)
	if err != nil {
		return nil
	}
	plan := planNamed(plans, k.Plan)
	return func(layer, feature, minPlan string) bool {
		return planAllows(plans, plan, layer, feature, minPlan)
	}
}

// RetryAfterError is a refusal that tells when to retry: a 429 of the
// rate window or of the per-address throttle.
type RetryAfterError struct {
	// Refusal is the refusal.
	Refusal *cryptointel.Error
	// After is the seconds to wait.
	After int
}

// Error implements error.
func (e *RetryAfterError) Error() string { return e.Refusal.Error() }

// Unwrap returns the refusal.
func (e *RetryAfterError) Unwrap() error { return e.Refusal }

// Count counts one free request of the key in an Authorization header
// value in the key's rate window (the MCP endpoint's initialize, lists,
// prompts, notifications and calls refused for their arguments: each is a
// request of the key) with one metering statement at no cost, or none when
// the door knows the answer already. It returns nil when the key is usable
// and its window not over the limit; otherwise EUNAUTHORIZED (without a
// Bearer key, an unknown, revoked or expired key) or a *RetryAfterError
// with ERATELIMIT; or an internal error.
func (s *Service) Count(ctx context.Context, authorization string) error {
	scheme, key := ParseAuthorization(authorization)
	if scheme != "bearer" || key == "" {
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", missingKeyMessage(scheme, key, MsgMissingKey))
	}
	now := s.now()
	hash, refusal := s.credentialHash(ctx, key)
	if refusal != "" {
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", refusal)
	}
	limited := func() error {
		if s.cfg.OnRateLimited != nil {
			s.cfg.OnRateLimited()
		}
		return &RetryAfterError{Refusal: cryptointel.Errorf(cryptointel.ERATELIMIT, "%s", rateLimitMessage(s.cfg.RateLimit, s.cfg.RateWindow)), After: s.resetSeconds(now)}
	}
	if f, known := s.door.facts(hash, now); known {
		switch {
		case f.refusal != "":
			return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", f.refusal)
		case f.res != nil && f.spent.Equal(s.windowStart(now)):
			return limited()
		}
	}
	mp := s.meterParams(now, hash, 0, []string{})
	res, err := s.store.Meter(ctx, mp)
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND || (err == nil && subtle.ConstantTimeCompare(res.Key.Hash, hash) != 1):
		s.door.learnRefused(hash, now, MsgInvalidKey)
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgInvalidKey)
	case err != nil:
		return err
	case res.Key.Revoked:
		s.door.learnRefused(hash, now, unusableKeyMessage(res.Key.Expired))
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", unusableKeyMessage(res.Key.Expired))
	}
	s.door.learnMeter(res, now, mp.WindowStart, s.cfg.RateLimit)
	if res.WindowRequests > s.cfg.RateLimit {
		return limited()
	}
	return nil
}
