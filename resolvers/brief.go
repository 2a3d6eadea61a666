package resolvers

import (
	"context"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
)

// briefs builds the briefs of ids in order with three statements whatever
// the number of ids: the entities, their radar events and their signal
// events (one LATERAL join each). Unknown ids get an entry with Error set.
func (r *queryResolver) briefs(ctx context.Context, ids []int, since time.Time, limit int) ([]*graph.Brief, error) {
	keys := make([]int64, len(ids))
	for i, id := range ids {
		keys[i] = int64(id)
	}
	ents, err := db.EntitiesByIDs(ctx, r.store.Reader(), keys)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*cryptointel.Entity, len(ents))
	var found []int64
	for _, e := range ents {
		byID[e.ID] = e
		found = append(found, e.ID)
	}
	f := db.EntityEventFilter{Since: since.UTC(), Sort: db.SortRecency, Limit: limit}
	radar, err := db.EventsByEntityIDs(ctx, r.store.Reader(), found, f)
	if err != nil {
		return nil, err
	}
	f.SignalOnly = true
	signal, err := db.EventsByEntityIDs(ctx, r.store.Reader(), found, f)
	if err != nil {
		return nil, err
	}
	radarBy := map[int64][]*cryptointel.Event{}
	var all []*cryptointel.Event
	for _, ee := range radar {
		radarBy[ee.EntityID] = append(radarBy[ee.EntityID], ee.Event)
		all = append(all, ee.Event)
	}
	signalBy := map[int64][]*cryptointel.Event{}
	for _, ee := range signal {
		signalBy[ee.EntityID] = append(signalBy[ee.EntityID], ee.Event)
		all = append(all, ee.Event)
	}
	r.loaders(ctx).EventsOf(all)
	out := make([]*graph.Brief, len(ids))
	for i, id := range keys {
		b := &graph.Brief{OrganizationID: int(id), Radar: []*cryptointel.Event{}, Signal: []*cryptointel.Event{}, Counts: &graph.BriefCounts{}}
		e, ok := byID[id]
		if !ok {
			b.Error = ptr(cryptointel.MsgOrganizationNotFound)
			out[i] = b
			continue
		}
		b.Label = ptr(e.DisplayName)
		if evs := radarBy[id]; evs != nil {
			b.Radar = evs
		}
		if evs := signalBy[id]; evs != nil {
			b.Signal = evs
		}
		b.Counts.Radar, b.Counts.Signal = len(b.Radar), len(b.Signal)
		out[i] = b
	}
	return out, nil
}
