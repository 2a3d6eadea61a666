package db

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
)

// ReferencesByEntityIDs returns the references of the given entities in one
// statement, ordered by entity id then reference id.
func ReferencesByEntityIDs(ctx context.Context, idb bun.IDB, entityIDs []int64) ([]*cryptointel.Reference, error) {
	out := []*cryptointel.Reference{}
	if len(entityIDs) == 0 {
		return out, nil
	}
	err := idb.NewSelect().Model(&out).Where("entity_id = ANY(?)", pgArray(entityIDs)).OrderExpr("entity_id, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("error selecting references by entity ids: %w", err)
	}
	return out, nil
}
