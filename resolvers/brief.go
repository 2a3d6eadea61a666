package resolvers

import (
	"context"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
)

// briefs builds the briefs of ids in order with one statement whatever the
// number of ids (db.BriefsFolded): the entities, their radar and signal
// pages and, when the selection writes them, the events' owners,
// participants and evidence, primed into the loaders. Unknown ids get an
// entry with Error set.
func (r *queryResolver) briefs(ctx context.Context, ids []int, since time.Time, limit int) ([]*graph.Brief, error) {
	keys := make([]int64, len(ids))
	for i, id := range ids {
		keys[i] = int64(id)
	}
	f := db.EntityEventFilter{Since: since.UTC(), Sort: db.SortRecency, Limit: limit}
	children := selectedBriefChildren(ctx)
	b, err := db.BriefsFolded(ctx, r.store.Reader(), keys, f, children)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*cryptointel.Entity, len(b.Entities))
	for _, e := range b.Entities {
		byID[e.ID] = e
	}
	radarBy := map[int64][]*cryptointel.Event{}
	var all []*cryptointel.Event
	for _, ee := range b.Radar {
		radarBy[ee.EntityID] = append(radarBy[ee.EntityID], ee.Event)
		all = append(all, ee.Event)
	}
	signalBy := map[int64][]*cryptointel.Event{}
	for _, ee := range b.Signal {
		signalBy[ee.EntityID] = append(signalBy[ee.EntityID], ee.Event)
		all = append(all, ee.Event)
	}
	l := r.loaders(ctx)
	l.EventsOf(all)
	l.primeFolded(ctx, all, children, b.Children)
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

// selectedBriefChildren reports which children of events the brief or
// briefs field resolved in ctx selects on its radar and signal events.
func selectedBriefChildren(ctx context.Context) db.EventChildren {
	f := graph.ResolvingField(ctx)
	if f == nil {
		return db.EventChildren{}
	}
	var c db.EventChildren
	for _, name := range []string{"radar", "signal"} {
		for _, fd := range fieldsNamed(f.Selections, name) {
			k := eventChildrenOf(fd.SelectionSet)
			c.Roles = c.Roles || k.Roles
			c.Evidence = c.Evidence || k.Evidence
		}
	}
	return withLean(ctx, c)
}
