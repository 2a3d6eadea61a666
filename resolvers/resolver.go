// Package resolvers implements the GraphQL graph: hand-written gqlgen
// resolvers (one file per GraphQL type), the per-request loaders, the
// opaque cursors, the query limits, the error presenter, and the
// GraphQL-over-HTTP handler and in-process Executor that /graphql and the /v1
// facade share.
package resolvers

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/live"
)

// Resolver is the root of the resolver tree.
type Resolver struct {
	store   *db.DB
	cursors *CursorCodec
	logger  *slog.Logger
	hub     *live.Hub
	// streams counts the subscriptions open in this process.
	streams atomic.Int64
	// categories are the event categories known to be in use.
	categories categoryCache
}

var _ graph.ResolverRoot = (*Resolver)(nil)

// now returns the store's current time.
func (r *Resolver) now() time.Time {
	if r.store.Now != nil {
		return r.store.Now().UTC()
	}
	return time.Now().UTC()
}

// requestNow returns the request's time: the store's current time, read
// once per request (its loaders) so that a page read ahead (resolvers:
// fold.go) and its resolver agree on a window that ends now.
func (r *Resolver) requestNow(ctx context.Context) time.Time {
	l := r.loaders(ctx)
	l.nowOnce.Do(func() { l.now = r.now() })
	return l.now
}

// loaders returns the request's loaders, building fresh ones when the
// context has none (a resolver called outside the handler or Executor).
func (r *Resolver) loaders(ctx context.Context) *Loaders {
	if l := LoadersFrom(ctx); l != nil {
		return l
	}
	return NewLoaders(r.store)
}

// Entity returns the Entity type's resolver.
func (r *Resolver) Entity() graph.EntityResolver { return &entityResolver{r} }

// EntityMatch returns the EntityMatch type's resolver.
func (r *Resolver) EntityMatch() graph.EntityMatchResolver { return &entityMatchResolver{r} }

// Event returns the Event type's resolver.
func (r *Resolver) Event() graph.EventResolver { return &eventResolver{r} }

// EventMatch returns the EventMatch type's resolver.
func (r *Resolver) EventMatch() graph.EventMatchResolver { return &eventMatchResolver{r} }

// Market returns the Market type's resolver.
func (r *Resolver) Market() graph.MarketResolver { return &marketResolver{r} }

// MarketEvent returns the MarketEvent type's resolver.
func (r *Resolver) MarketEvent() graph.MarketEventResolver { return &marketEventResolver{r} }

// Organization returns the Organization type's resolver.
func (r *Resolver) Organization() graph.OrganizationResolver { return &organizationResolver{r} }

// OrganizationMatch returns the OrganizationMatch type's resolver.
func (r *Resolver) OrganizationMatch() graph.OrganizationMatchResolver {
	return &organizationMatchResolver{r}
}

// Query returns the Query type's resolver.
func (r *Resolver) Query() graph.QueryResolver { return &queryResolver{r} }

// Relationship returns the Relationship type's resolver.
func (r *Resolver) Relationship() graph.RelationshipResolver { return &relationshipResolver{r} }
