package db

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
)

// ListEntities returns the entity directory ordered by id.
func ListEntities(ctx context.Context, idb bun.IDB, limit, offset int) ([]*cryptointel.Entity, error) {
	out := []*cryptointel.Entity{}
	if err := idb.NewSelect().Model(&out).OrderExpr("id").Limit(int64(limit)).Offset(int64(offset)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("error listing entities: %w", err)
	}
	return out, nil
}

// EntityIDsWithMarkets returns, ordered by id, the ids of entities that have
// at least one prediction market.
func EntityIDsWithMarkets(ctx context.Context, idb bun.IDB, limit, offset int) ([]int64, error) {
	ids := []int64{}
	err := idb.NewRaw(`SELECT DISTINCT entity_id FROM markets ORDER BY entity_id LIMIT ? OFFSET ?`, limit, offset).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("error listing entities with markets: %w", err)
	}
	return ids, nil
}
