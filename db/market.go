package db

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
)

// MarketsByEntityIDs returns the prediction markets about the given entities
// in one statement, ordered by entity id then market id.
func MarketsByEntityIDs(ctx context.Context, idb bun.IDB, entityIDs []int64) ([]*cryptointel.Market, error) {
	out := []*cryptointel.Market{}
	if len(entityIDs) == 0 {
		return out, nil
	}
	err := idb.NewSelect().Model(&out).Where("entity_id = ANY(?)", pgArray(entityIDs)).OrderExpr("entity_id, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("error selecting markets by entity ids: %w", err)
	}
	return out, nil
}

// SubeventsByMarketIDs returns the sub-events of the given markets in one
// statement, ordered by market id then sub-event id.
func SubeventsByMarketIDs(ctx context.Context, idb bun.IDB, marketIDs []int64) ([]*cryptointel.MarketSubevent, error) {
	out := []*cryptointel.MarketSubevent{}
	if len(marketIDs) == 0 {
		return out, nil
	}
	err := idb.NewSelect().Model(&out).Where("market_id = ANY(?)", pgArray(marketIDs)).OrderExpr("market_id, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("error selecting market sub-events by market ids: %w", err)
	}
	return out, nil
}

// MarketPostsBySubeventIDs returns the posts of the given sub-events in one
// statement, ordered by sub-event id then newest first.
func MarketPostsBySubeventIDs(ctx context.Context, idb bun.IDB, subeventIDs []int64) ([]*cryptointel.MarketPost, error) {
	out := []*cryptointel.MarketPost{}
	if len(subeventIDs) == 0 {
		return out, nil
	}
	err := idb.NewSelect().Model(&out).Where("subevent_id = ANY(?)", pgArray(subeventIDs)).OrderExpr("subevent_id, posted_at DESC, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("error selecting market posts by sub-event ids: %w", err)
	}
	return out, nil
}
