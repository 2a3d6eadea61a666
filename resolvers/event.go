package resolvers

import (
	"context"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph"
)

type eventResolver struct{ *Resolver }

var _ graph.EventResolver = (*eventResolver)(nil)

func (r *eventResolver) roles(ctx context.Context, obj *cryptointel.Event) (EventRoles, error) {
	return load(ctx, r.loaders(ctx).RolesByEventID, obj.ID)
}

// Owners returns the entities that own the event.
func (r *eventResolver) Owners(ctx context.Context, obj *cryptointel.Event) ([]*cryptointel.Entity, error) {
	roles, err := r.roles(ctx, obj)
	if err != nil {
		return nil, err
	}
	if roles.Owners == nil {
		return []*cryptointel.Entity{}, nil
	}
	return roles.Owners, nil
}

// Participants returns the other entities taking part.
func (r *eventResolver) Participants(ctx context.Context, obj *cryptointel.Event) ([]*cryptointel.Entity, error) {
	roles, err := r.roles(ctx, obj)
	if err != nil {
		return nil, err
	}
	if roles.Participants == nil {
		return []*cryptointel.Entity{}, nil
	}
	return roles.Participants, nil
}

// Evidence returns the source posts, newest first.
func (r *eventResolver) Evidence(ctx context.Context, obj *cryptointel.Event) ([]*cryptointel.Evidence, error) {
	ev, err := load(ctx, r.loaders(ctx).EvidenceByEventID, obj.ID)
	if ev == nil && err == nil {
		ev = []*cryptointel.Evidence{}
	}
	return ev, err
}

// Source types of events.
const (
	sourceClassified = "classified_event"
	sourceRadar      = "radar_event"
)

// SourceType is classified_event for classified content, radar_event
// otherwise.
func (r *eventResolver) SourceType(ctx context.Context, obj *cryptointel.Event) (string, error) {
	if obj.ContentType != nil {
		return sourceClassified, nil
	}
	return sourceRadar, nil
}

// EventOwner is the legacy name of Owners.
func (r *eventResolver) EventOwner(ctx context.Context, obj *cryptointel.Event) ([]*cryptointel.Entity, error) {
	return r.Owners(ctx, obj)
}

// EventParticipants is the legacy name of Participants.
func (r *eventResolver) EventParticipants(ctx context.Context, obj *cryptointel.Event) ([]*cryptointel.Entity, error) {
	return r.Participants(ctx, obj)
}

// Posts is the legacy name of Evidence.
func (r *eventResolver) Posts(ctx context.Context, obj *cryptointel.Event) ([]*cryptointel.Evidence, error) {
	return r.Evidence(ctx, obj)
}
