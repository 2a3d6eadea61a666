package resolvers

import (
	"context"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/search"
)

type entityMatchResolver struct{ *Resolver }

var _ graph.EntityMatchResolver = (*entityMatchResolver)(nil)

// Entity returns the matched entity.
func (r *entityMatchResolver) Entity(ctx context.Context, obj *search.EntityMatch) (*cryptointel.Entity, error) {
	return mustEntity(ctx, r.Resolver, obj.EntityID)
}

type eventMatchResolver struct{ *Resolver }

var _ graph.EventMatchResolver = (*eventMatchResolver)(nil)

// Event returns the matched event.
func (r *eventMatchResolver) Event(ctx context.Context, obj *search.EventMatch) (*cryptointel.Event, error) {
	e, err := load(ctx, r.loaders(ctx).EventByID, obj.EventID)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: db.MsgEventNotFound}
	}
	return e, nil
}

type organizationMatchResolver struct{ *Resolver }

var _ graph.OrganizationMatchResolver = (*organizationMatchResolver)(nil)

// Label is the matched organization's display name.
func (r *organizationMatchResolver) Label(ctx context.Context, obj *search.EntityMatch) (string, error) {
	e, err := mustEntity(ctx, r.Resolver, obj.EntityID)
	if err != nil {
		return "", err
	}
	return e.DisplayName, nil
}

// Type is the matched organization's entity type.
func (r *organizationMatchResolver) Type(ctx context.Context, obj *search.EntityMatch) (string, error) {
	e, err := mustEntity(ctx, r.Resolver, obj.EntityID)
	if err != nil {
		return "", err
	}
	return e.EntityType, nil
}

// Aliases is a small preview of the matched organization's aliases.
func (r *organizationMatchResolver) Aliases(ctx context.Context, obj *search.EntityMatch) ([]string, error) {
	e, err := mustEntity(ctx, r.Resolver, obj.EntityID)
	if err != nil {
		return nil, err
	}
	return aliasHint(e), nil
}

// mustEntity loads an entity that must exist.
func mustEntity(ctx context.Context, r *Resolver, id int64) (*cryptointel.Entity, error) {
	e, err := load(ctx, r.loaders(ctx).EntityByID, id)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: cryptointel.MsgEntityNotFound}
	}
	return e, nil
}
