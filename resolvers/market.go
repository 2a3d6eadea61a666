package resolvers

import (
	"context"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
)

type marketResolver struct{ *Resolver }

var _ graph.MarketResolver = (*marketResolver)(nil)

// Entity returns the entity the market is about.
func (r *marketResolver) Entity(ctx context.Context, obj *cryptointel.Market) (*cryptointel.Entity, error) {
	return mustEntity(ctx, r.Resolver, obj.EntityID)
}

type marketEventResolver struct{ *Resolver }

var _ graph.MarketEventResolver = (*marketEventResolver)(nil)

// Posts returns the sub-event's posts, newest first.
func (r *marketEventResolver) Posts(ctx context.Context, obj *cryptointel.MarketSubevent) ([]*cryptointel.MarketPost, error) {
	ps, err := load(ctx, r.loaders(ctx).PostsBySubeventID, obj.ID)
	if ps == nil && err == nil {
		ps = []*cryptointel.MarketPost{}
	}
	return ps, err
}

// marketViews builds the views of the given organizations in order, with
// three statements: entities, their markets, the markets' sub-events.
// Organizations without markets (or unknown) are left out.
func (r *queryResolver) marketViews(ctx context.Context, ids []int64) ([]*graph.MarketView, error) {
	out := []*graph.MarketView{}
	if len(ids) == 0 {
		return out, nil
	}
	ents, err := db.EntitiesByIDs(ctx, r.store.Reader(), ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*cryptointel.Entity, len(ents))
	for _, e := range ents {
		byID[e.ID] = e
	}
	markets, err := db.MarketsByEntityIDs(ctx, r.store.Read, ids)
	if err != nil {
		return nil, err
	}
	marketIDs := make([]int64, len(markets))
	marketsBy := map[int64][]*cryptointel.Market{}
	entityOf := map[int64]int64{}
	for i, m := range markets {
		marketIDs[i] = m.ID
		marketsBy[m.EntityID] = append(marketsBy[m.EntityID], m)
		entityOf[m.ID] = m.EntityID
	}
	subs, err := db.SubeventsByMarketIDs(ctx, r.store.Read, marketIDs)
	if err != nil {
		return nil, err
	}
	subsBy := map[int64][]*cryptointel.MarketSubevent{}
	for _, s := range subs {
		eid := entityOf[s.MarketID]
		subsBy[eid] = append(subsBy[eid], s)
	}
	for _, id := range ids {
		e, ok := byID[id]
		if !ok || len(marketsBy[id]) == 0 {
			continue
		}
		evs := subsBy[id]
		if evs == nil {
			evs = []*cryptointel.MarketSubevent{}
		}
		out = append(out, &graph.MarketView{OrgID: int(id), Organization: e.DisplayName, Markets: marketsBy[id], Events: evs})
	}
	return out, nil
}
