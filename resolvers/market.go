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

// marketViews builds the views of the organizations ids, in order, from
// v, their market views read in one statement, and primes the loaders
// with the entities and posts read. Organizations without markets (or
// unknown) are left out.
func (r *queryResolver) marketViews(ctx context.Context, ids []int64, v *db.MarketViews) []*graph.MarketView {
	l := r.loaders(ctx)
	byID := make(map[int64]*cryptointel.Entity, len(v.Entities))
	for _, e := range v.Entities {
		byID[e.ID] = e
		l.EntityByID.Prime(ctx, e.ID, e)
	}
	marketsBy := map[int64][]*cryptointel.Market{}
	entityOf := map[int64]int64{}
	for _, m := range v.Markets {
		marketsBy[m.EntityID] = append(marketsBy[m.EntityID], m)
		entityOf[m.ID] = m.EntityID
	}
	subsBy := map[int64][]*cryptointel.MarketSubevent{}
	for _, s := range v.Subevents {
		eid := entityOf[s.MarketID]
		subsBy[eid] = append(subsBy[eid], s)
	}
	if v.Posts != nil {
		postsBy := make(map[int64][]*cryptointel.MarketPost, len(v.Subevents))
		for _, p := range v.Posts {
			postsBy[p.SubeventID] = append(postsBy[p.SubeventID], p)
		}
		for _, s := range v.Subevents {
			l.PostsBySubeventID.Prime(ctx, s.ID, postsBy[s.ID])
		}
	}
	out := []*graph.MarketView{}
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
	return out
}

// marketPostsSelected reports whether the resolving field (a list of
// market views) selects its sub-events' posts.
func marketPostsSelected(ctx context.Context) bool {
	f := graph.ResolvingField(ctx)
	if f == nil {
		return true
	}
	for _, ev := range fieldsNamed(f.Selections, "events") {
		if len(fieldsNamed(ev.SelectionSet, "posts")) > 0 {
			return true
		}
	}
	return false
}
