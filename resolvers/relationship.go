package resolvers

import (
	"context"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
)

type relationshipResolver struct{ *Resolver }

var _ graph.RelationshipResolver = (*relationshipResolver)(nil)

// RelatedEntity returns the entity at the other end of the edge.
func (r *relationshipResolver) RelatedEntity(ctx context.Context, obj *db.EntityRelationship) (*db.Entity, error) {
	e, err := load(ctx, r.loaders(ctx).EntityByID, obj.RelatedEntityID)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return nil, db.Errorf(db.ENOTFOUND, "Entity not found")
	}
	return e, nil
}
