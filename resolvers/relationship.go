package resolvers

import (
	"context"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph"
)

type relationshipResolver struct{ *Resolver }

var _ graph.RelationshipResolver = (*relationshipResolver)(nil)

// RelatedEntity returns the entity at the other end of the edge.
func (r *relationshipResolver) RelatedEntity(ctx context.Context, obj *cryptointel.EntityRelationship) (*cryptointel.Entity, error) {
	e, err := load(ctx, r.loaders(ctx).EntityByID, obj.RelatedEntityID)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: cryptointel.MsgEntityNotFound}
	}
	return e, nil
}
