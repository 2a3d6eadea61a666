package access

import (
	"context"
	"slices"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// Caller is who is making the request: the account and key behind a valid
// API key, or a paying client without a key.
type Caller struct {
	// AccountID is the calling account; 0 for a pay-per-request caller.
	AccountID int64
	// APIKeyID is the key used; 0 for a pay-per-request caller.
	APIKeyID int64
	// Scopes are the key's scopes (db.ScopeData,
	// db.ScopeManagement).
	Scopes []string
	// Surfaces, when not nil, restricts the key to reading those surfaces.
	Surfaces []string
	// Plan is the account's plan.
	Plan cryptointel.Plan
	// Paid is true when the request is paid per request (x402 or MPP)
	// rather than authorized by a key.
	Paid bool
	// DataVersion is the content version the metering statement read (see
	// db.MeterResult.DataVersion); 0 when unknown (a paid request, or a
	// request metered after its handler ran). Response caches use it only
	// when it is set.
	DataVersion int64

	// plans is the plan table the access layer gated with; Allow uses it to
	// name the plan needed.
	plans []cryptointel.Plan
	// svc is the access layer that admitted the caller; streams opened by
	// the caller are metered through it.
	svc *Service
}

// Manages reports whether the caller's key holds the management scope.
func (c *Caller) Manages() bool {
	return c != nil && slices.Contains(c.Scopes, db.ScopeManagement)
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller the access layer attached to ctx.
func CallerFrom(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// DataVersion is the content version ctx's request was metered at
// (Caller.DataVersion), 0 when unknown: what the stores' per-version
// memos and name index key on.
func DataVersion(ctx context.Context) int64 {
	if c, ok := CallerFrom(ctx); ok {
		return c.DataVersion
	}
	return 0
}

type pricedLimitKey struct{}

// WithPricedLimit returns ctx carrying the number of items the request
// asks for: its `limit` after the route layer parsed it and applied the
// route's default. A priced route's range price is computed from it
// (Pricing.Amount), within [1, MaxLimit], the bounds the resolver caps the
// page to, so what is charged is what is served. The route layer sets it
// before the access layer runs.
func WithPricedLimit(ctx context.Context, limit int) context.Context {
	return context.WithValue(ctx, pricedLimitKey{}, limit)
}

// PricedLimit returns the limit WithPricedLimit attached to ctx, if any.
func PricedLimit(ctx context.Context) (int, bool) {
	n, ok := ctx.Value(pricedLimitKey{}).(int)
	return n, ok
}
