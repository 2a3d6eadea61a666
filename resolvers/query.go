package resolvers

import (
	"context"
	"fmt"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/search"
)

type queryResolver struct{ *Resolver }

var _ graph.QueryResolver = (*queryResolver)(nil)

// Events is the whole-feed event list behind /v1/latest and
// /v1/signal/latest.
func (r *queryResolver) Events(ctx context.Context, surface *graph.Surface, since *time.Time, window *string, category *string, entityID *int, topic *string, sort *graph.EventSort, first *int, offset *int) (*graph.EventConnection, error) {
	now := r.now()
	var (
		start time.Time
		win   *string
	)
	if since != nil {
		if err := checkSince(now, *since, cryptointel.HistoryLookback); err != nil {
			return nil, err
		}
		start = since.UTC()
	} else {
		w := strOr(window, cryptointel.DefaultEventWindow)
		if w == "" {
			w = cryptointel.DefaultEventWindow
		}
		d, err := cryptointel.EventWindowOf(w)
		if err != nil {
			return nil, err
		}
		start = now.Add(-d)
		win = &w
	}
	sortV, dbSort := sortOf(sort, graph.EventSortSignificance)
	f := db.EventFilter{
		SignalOnly: isSignal(surface, graph.SurfaceRadar),
		Since:      start,
		Category:   strOr(category, ""),
		Topic:      strOr(topic, ""),
		Sort:       dbSort,
		// The one cap of `first` (and `offset`), /v1 and /graphql alike:
		// the route hands its parameter on as asked.
		Limit:  graph.Bound(ctx, &cryptointel.EventsFirst, first),
		Offset: graph.Bound(ctx, &cryptointel.EventsOffset, offset),
	}
	if entityID != nil {
		f.EntityID = int64(*entityID)
	}
	if err := r.checkCategory(ctx, category); err != nil {
		return nil, err
	}
	evs, err := r.foldedEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	return &graph.EventConnection{Nodes: evs, Since: &start, Limit: f.Limit, Offset: f.Offset, Window: win, Sort: &sortV}, nil
}

// TopSignals returns the most significant signals since since (default the
// last 24 hours).
func (r *queryResolver) TopSignals(ctx context.Context, since *time.Time, first *int) ([]*cryptointel.Event, error) {
	start := r.now().Add(-cryptointel.TopSignalsLookback)
	if since != nil {
		start = since.UTC()
	}
	return r.foldedEvents(ctx, db.EventFilter{
		SignalOnly: true, Since: start, Sort: db.SortSignificance, Limit: graph.Bound(ctx, &cryptointel.TopSignalsFirst, first),
	})
}

// foldedEvents reads the page of events f keeps with the children the
// selection writes (owners and participants, evidence) in the same
// statement, and primes the loaders with them, as Events does.
func (r *queryResolver) foldedEvents(ctx context.Context, f db.EventFilter) ([]*cryptointel.Event, error) {
	children := selectedEventChildren(ctx)
	evs, folded, err := db.ListEventsFolded(ctx, r.store.Reader(), f, children)
	if err != nil {
		return nil, err
	}
	l := r.loaders(ctx)
	l.EventsOf(evs)
	l.primeFolded(ctx, evs, children, folded)
	return evs, nil
}

// EventsByCategory returns one category's events, newest first.
func (r *queryResolver) EventsByCategory(ctx context.Context, category string, surface *graph.Surface, since *time.Time, first *int) ([]*cryptointel.Event, error) {
	signal := isSignal(surface, graph.SurfaceSignal)
	limit := graph.Bound(ctx, &cryptointel.SignalsByCategoryFirst, first)
	if !signal {
		limit = graph.Bound(ctx, &cryptointel.RadarByCategoryFirst, first)
	}
	start := r.now().Add(-cryptointel.HistoryLookback)
	if since != nil {
		start = since.UTC()
	}
	if err := r.checkCategory(ctx, &category); err != nil {
		return nil, err
	}
	return r.foldedEvents(ctx, db.EventFilter{
		SignalOnly: signal, Since: start, Category: category, Sort: db.SortRecency, Limit: limit,
	})
}

// Bulk feed names.
const (
	feedAll    = "all"
	feedReplay = "replay"
)

// Feed is the bulk, cursor-walked feed behind /v1/radar/all,
// /v1/signal/all and /v1/replay/global.
func (r *queryResolver) Feed(ctx context.Context, surface *graph.Surface, feed *string, since time.Time, category *string, first *int, offset *int, after *string) (*graph.EventConnection, error) {
	now := r.now()
	name := strOr(feed, feedAll)
	switch name {
	case feedAll:
		if err := checkSince(now, since, cryptointel.FeedLookback); err != nil {
			return nil, err
		}
	case feedReplay:
		if err := checkSince(now, since, cryptointel.HistoryLookback); err != nil {
			return nil, err
		}
	default:
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "feed must be one of all, replay")
	}
	signal := isSignal(surface, graph.SurfaceRadar)
	limit := graph.Bound(ctx, &cryptointel.FeedFirst, first)
	off := graph.Bound(ctx, &cryptointel.FeedOffset, offset)
	cat := strOr(category, "")
	since = since.UTC()
	qctx := fmt.Sprintf("feed|%s|%t|%d|%q", name, signal, since.UnixMicro(), cat)
	f := db.FeedFilter{SignalOnly: signal, Since: since, Category: cat, Limit: limit + 1, Offset: off}
	if after != nil && *after != "" {
		cur, err := r.cursors.DecodeCursor(qctx, *after)
		if err != nil {
			return nil, err
		}
		f.After = &db.Keyset{At: time.UnixMicro(cur.AtMicro).UTC(), ID: cur.ID}
		f.Offset = 0
		off = 0
	}
	if err := r.checkCategory(ctx, category); err != nil {
		return nil, err
	}
	// The page and the children the selection writes in one statement; the
	// one more event read to know whether another page follows is not
	// shown, nor are its children primed.
	children := selectedEventChildren(ctx)
	evs, folded, err := db.FeedEventsFolded(ctx, r.store.Reader(), f, children)
	if err != nil {
		return nil, err
	}
	conn := &graph.EventConnection{Since: &since, Limit: limit, Offset: off}
	if len(evs) > limit {
		evs = evs[:limit]
		last := evs[len(evs)-1]
		conn.NextCursor = ptr(r.cursors.EncodeCursor(qctx, Cursor{AtMicro: last.LatestEvidenceAt.UnixMicro(), ID: last.ID}))
	}
	conn.Nodes = evs
	l := r.loaders(ctx)
	l.EventsOf(evs)
	l.primeFolded(ctx, evs, children, folded)
	return conn, nil
}

// Event returns one event by id.
func (r *queryResolver) Event(ctx context.Context, id int) (*cryptointel.Event, error) {
	return load(ctx, r.loaders(ctx).EventByID, int64(id))
}

// Entity returns one entity by id.
func (r *queryResolver) Entity(ctx context.Context, id int) (*cryptointel.Entity, error) {
	if e, ok, err := r.foldEntityTree(ctx, int64(id)); ok {
		return e, err
	}
	if e, ok, err := r.foldEntityPage(ctx, int64(id)); ok {
		return e, err
	}
	if e, ok, err := r.foldEntityReferences(ctx, int64(id)); ok {
		return e, err
	}
	return load(ctx, r.loaders(ctx).EntityByID, int64(id))
}

// Entities returns entities by id in the order asked, null where unknown.
func (r *queryResolver) Entities(ctx context.Context, ids []int) ([]*cryptointel.Entity, error) {
	if len(ids) > cryptointel.MaxIDsPerRequest {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s", cryptointel.MsgTooManyIDs)
	}
	l := r.loaders(ctx)
	keys := make([]int64, len(ids))
	for i, id := range ids {
		keys[i] = int64(id)
	}
	l.Entities(keys)
	out := make([]*cryptointel.Entity, len(ids))
	for i, k := range keys {
		e, err := load(ctx, l.EntityByID, k)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// ResolveEntities resolves a name to ranked entities.
func (r *queryResolver) ResolveEntities(ctx context.Context, name string, first *int, offset *int) ([]*search.EntityMatch, error) {
	if name == "" {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: search.MsgNameRequired}
	}
	limit, off := graph.Bound(ctx, &cryptointel.ResolveEntitiesFirst, first), graph.Bound(ctx, &cryptointel.ResolveEntitiesOffset, offset)
	if refs, ok := matchedEntitiesSelected(ctx); ok {
		ms, err := r.resolveFolded(ctx, name, limit, off, refs)
		if err != nil {
			return nil, fmt.Errorf("error resolving entities: %w", err)
		}
		return r.entityMatches(ctx, ms), nil
	}
	ms, err := r.store.ResolveEntities(ctx, access.DataVersion(ctx), name, limit, off)
	if err != nil {
		return nil, fmt.Errorf("error resolving entities: %w", err)
	}
	return r.entityMatches(ctx, ms), nil
}

// resolveFolded resolves name with the matched entities (and, when refs,
// their references) read in the same statement (db.DB.ResolveEntitiesFolded)
// and primed in the loaders, for a selection that asks for them.
func (r *queryResolver) resolveFolded(ctx context.Context, name string, limit, offset int, refs bool) ([]search.EntityMatch, error) {
	ms, es, rs, err := r.store.ResolveEntitiesFolded(ctx, access.DataVersion(ctx), name, limit, offset, refs)
	if err != nil {
		return nil, err
	}
	l := r.loaders(ctx)
	for _, e := range es {
		l.EntityByID.Prime(ctx, e.ID, e)
	}
	if refs {
		by := make(map[int64][]*cryptointel.Reference, len(es))
		for _, ref := range rs {
			by[ref.EntityID] = append(by[ref.EntityID], ref)
		}
		for _, e := range es {
			l.ReferencesByEntityID.Prime(ctx, e.ID, by[e.ID])
		}
	}
	return ms, nil
}

// matchedEntitiesSelected reports whether the resolving field (a list of
// entity matches) selects its matches' entity (ok) and, if so, their
// references.
func matchedEntitiesSelected(ctx context.Context) (refs, ok bool) {
	f := graph.ResolvingField(ctx)
	if f == nil {
		return false, false
	}
	for _, e := range fieldsNamed(f.Selections, "entity") {
		ok = true
		if len(fieldsNamed(e.SelectionSet, "references")) > 0 {
			refs = true
		}
	}
	return refs, ok
}

// organizationFieldsSelected reports whether the resolving field (a list
// of organization matches) selects a field its resolvers read from the
// matched entity.
func organizationFieldsSelected(ctx context.Context) bool {
	f := graph.ResolvingField(ctx)
	if f == nil {
		return false
	}
	for _, name := range []string{"label", "type", "aliases"} {
		if len(fieldsNamed(f.Selections, name)) > 0 {
			return true
		}
	}
	return false
}

// entityMatches returns pointers to ms and registers their entities as one
// sibling group.
func (r *queryResolver) entityMatches(ctx context.Context, ms []search.EntityMatch) []*search.EntityMatch {
	out := make([]*search.EntityMatch, len(ms))
	ids := make([]int64, len(ms))
	for i := range ms {
		out[i] = &ms[i]
		ids[i] = ms[i].EntityID
	}
	r.loaders(ctx).Entities(ids)
	return out
}

// Organization returns one compatibility organization by id.
func (r *queryResolver) Organization(ctx context.Context, id int) (*cryptointel.Entity, error) {
	if e, ok, err := r.foldOrganization(ctx, int64(id)); ok {
		return e, err
	}
	if e, ok, err := r.foldSignalHistory(ctx, int64(id)); ok {
		return e, err
	}
	return load(ctx, r.loaders(ctx).EntityByID, int64(id))
}

// OrganizationsByName matches organizations by name.
func (r *queryResolver) OrganizationsByName(ctx context.Context, name string, first *int) ([]*search.EntityMatch, error) {
	if name == "" {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: search.MsgNameRequired}
	}
	limit := graph.Bound(ctx, &cryptointel.OrganizationsByNameFirst, first)
	var (
		ms  []search.EntityMatch
		err error
	)
	if organizationFieldsSelected(ctx) {
		// Read with the entities the matches' fields come from.
		ms, err = r.resolveFolded(ctx, name, limit, 0, false)
	} else {
		ms, err = r.store.ResolveEntities(ctx, access.DataVersion(ctx), name, limit, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("error resolving organizations: %w", err)
	}
	return r.entityMatches(ctx, ms), nil
}

// Organizations is the organization directory by id.
func (r *queryResolver) Organizations(ctx context.Context, first *int, offset *int) ([]*cryptointel.Entity, error) {
	ents, err := db.ListEntities(ctx, r.store.Reader(), graph.Bound(ctx, &cryptointel.OrganizationsFirst, first), graph.Bound(ctx, &cryptointel.OrganizationsOffset, offset))
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).EntitiesOf(ents)
	return ents, nil
}

// Brief returns one organization's brief, or null when it does not exist.
func (r *queryResolver) Brief(ctx context.Context, id int, since time.Time, first *int) (*graph.Brief, error) {
	briefs, err := r.briefs(ctx, []int{id}, since, graph.Bound(ctx, &cryptointel.BriefFirst, first))
	if err != nil {
		return nil, err
	}
	if briefs[0].Error != nil {
		return nil, nil
	}
	return briefs[0], nil
}

// Briefs returns briefs for up to cryptointel.MaxIDsPerRequest organizations; unknown ids yield an
// entry with error set.
func (r *queryResolver) Briefs(ctx context.Context, ids []int, since time.Time, first *int) ([]*graph.Brief, error) {
	if len(ids) == 0 {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgNoValidIDs}
	}
	if len(ids) > cryptointel.MaxIDsPerRequest {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s", cryptointel.MsgTooManyBatchIDs)
	}
	return r.briefs(ctx, ids, since, graph.Bound(ctx, &cryptointel.BriefsFirst, first))
}

// MarketViews lists prediction-market views, one per organization with
// markets, by organization id.
func (r *queryResolver) MarketViews(ctx context.Context, first *int, offset *int) ([]*graph.MarketView, error) {
	v, err := db.MarketViewsPageFolded(ctx, r.store.Reader(), graph.Bound(ctx, &cryptointel.MarketViewsFirst, first),
		graph.Bound(ctx, &cryptointel.MarketViewsOffset, offset), marketPostsSelected(ctx))
	if err != nil {
		return nil, err
	}
	// The page's organizations are those of its markets, by id.
	var ids []int64
	for _, m := range v.Markets {
		if len(ids) == 0 || ids[len(ids)-1] != m.EntityID {
			ids = append(ids, m.EntityID)
		}
	}
	return r.marketViews(ctx, ids, v), nil
}

// MarketViewsByOrganization returns one organization's market view; empty
// when it has none.
func (r *queryResolver) MarketViewsByOrganization(ctx context.Context, id int) ([]*graph.MarketView, error) {
	ids := []int64{int64(id)}
	v, err := db.MarketViewsFolded(ctx, r.store.Reader(), ids, marketPostsSelected(ctx))
	if err != nil {
		return nil, err
	}
	return r.marketViews(ctx, ids, v), nil
}
