package db

import (
	"context"
	"fmt"

	"github.com/cryptointel/cryptointel"
)

// ReferencesByEntityIDs returns the references of the given entities in one
// statement, ordered by entity id then reference id.
func ReferencesByEntityIDs(ctx context.Context, q Querier, entityIDs []int64) ([]*cryptointel.Reference, error) {
	if len(entityIDs) == 0 {
		return []*cryptointel.Reference{}, nil
	}
	out, err := readRows(ctx, q, "SELECT "+referenceColumns+" FROM entity_references er WHERE er.entity_id = ANY($1::bigint[]) ORDER BY er.entity_id, er.id",
		[]any{entityIDs}, referenceDest, func(x *cryptointel.Reference) { x.CreatedAt = x.CreatedAt.UTC() })
	if err != nil {
		return nil, fmt.Errorf("error selecting references by entity ids: %w", err)
	}
	return out, nil
}
