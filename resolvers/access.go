package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cryptointel/cryptointel/access"
)

// AccessFunc decides whether the caller in ctx may read a field marked
// @access(layer, feature); it returns a *cryptointel.Error (EFORBIDDEN naming the
// plan needed) to refuse.
type AccessFunc func(ctx context.Context, layer, feature string) error

// PlanAccess is the default AccessFunc: access.Allow, which reads the
// caller's plan from the context and allows everything when there is no
// caller (the access middleware guarantees one on real requests).
func PlanAccess(ctx context.Context, layer, feature string) error {
	return access.Allow(ctx, layer, feature)
}

// accessDirective implements @access(layer, feature) with allow.
func accessDirective(allow AccessFunc) func(ctx context.Context, obj any, next graphql.Resolver, layer string, feature *string) (any, error) {
	return func(ctx context.Context, obj any, next graphql.Resolver, layer string, feature *string) (any, error) {
		f := ""
		if feature != nil {
			f = *feature
		}
		if err := allow(ctx, layer, f); err != nil {
			return nil, err
		}
		return next(ctx)
	}
}
