package resolvers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/search"
)

// searchKey is a search's arguments as given (a missing since is the zero
// time: the default window is computed once, by the search that runs).
type searchKey struct {
	query                    string
	since, from, to          time.Time
	first                    int
	sort                     string
	category, entity         string
	surface                  string
	collapse                 bool
	after                    string
	sinceSet, fromSet, toSet bool
}

// searchMemo holds the request's searches, so searchEvents and searchReport
// asked with the same arguments run the search once.
type searchMemo struct {
	mu   sync.Mutex
	done map[searchKey]*searchCall
}

// searchCall is one search, run once.
type searchCall struct {
	once sync.Once
	res  *search.SearchResult
	err  error
}

// searchArgs are the arguments of searchEvents and searchReport.
type searchArgs struct {
	query    string
	since    *time.Time
	first    *int
	from, to *time.Time
	sort     *graph.SearchSort
	category *string
	entity   *string
	surface  *graph.Surface
	collapse *bool
	after    *string
}

// key is the arguments as the request's memo keys them.
func (a searchArgs) key(ctx context.Context) searchKey {
	k := searchKey{query: a.query, first: graph.Bound(ctx, &cryptointel.SearchEventsFirst, a.first), sort: search.SearchSortRelevance,
		category: strOr(a.category, ""), entity: strings.TrimSpace(strOr(a.entity, "")), collapse: a.collapse == nil || *a.collapse,
		after: strOr(a.after, "")}
	if a.since != nil {
		k.since, k.sinceSet = a.since.UTC(), true
	}
	if a.from != nil {
		k.from, k.fromSet = a.from.UTC(), true
	}
	if a.to != nil {
		k.to, k.toSet = a.to.UTC(), true
	}
	if a.sort != nil {
		k.sort = strings.ToLower(string(*a.sort))
	}
	if a.surface != nil {
		k.surface = strings.ToLower(string(*a.surface))
	}
	return k
}

// cursorContext is what a search's cursor is bound to: every argument but
// the page size and the cursor itself (a default window moves with the
// clock, so it is bound as "default").
func (k searchKey) cursorContext() string {
	micro := func(t time.Time, set bool) int64 {
		if !set {
			return 0
		}
		return t.UnixMicro()
	}
	return fmt.Sprintf("search|%q|%d|%d|%d|%s|%q|%q|%s|%t", k.query, micro(k.since, k.sinceSet), micro(k.from, k.fromSet),
		micro(k.to, k.toSet), k.sort, k.category, k.entity, k.surface, k.collapse)
}

// search runs (once per request and arguments) the search of args. The
// query's analysis is kept for the content version the request was metered
// at, so a query searched again before the content changes costs one
// statement (an entity given by name costs one more, to resolve it, once
// per content version too).
func (r *queryResolver) search(ctx context.Context, args searchArgs) (*search.SearchResult, error) {
	key := args.key(ctx)
	m := &r.loaders(ctx).searches
	m.mu.Lock()
	if m.done == nil {
		m.done = map[searchKey]*searchCall{}
	}
	c := m.done[key]
	if c == nil {
		c = &searchCall{}
		m.done[key] = c
	}
	m.mu.Unlock()
	c.once.Do(func() {
		c.res, c.err = r.runSearch(ctx, key)
		if c.err != nil {
			c.err = fmt.Errorf("error searching events: %w", c.err)
		}
	})
	return c.res, c.err
}

// runSearch is one search of key's arguments.
func (r *queryResolver) runSearch(ctx context.Context, key searchKey) (*search.SearchResult, error) {
	now := r.now()
	o := search.SearchOptions{Since: key.since, Until: key.to, Limit: key.first, Sort: key.sort, Category: key.category,
		Surface: key.surface, NoCollapse: !key.collapse, Facets: true, Now: now}
	if key.toSet && o.Until.IsZero() {
		// The first instant is time.Time's zero value, which
		// SearchOptions reads as no end: the window ends a microsecond
		// before it instead (no event is earlier).
		o.Until = key.to.Add(-time.Microsecond)
	}
	if !key.sinceSet {
		// The default window is the lookback before the end: before now,
		// or before a `to` already past. A `to` given alone is a valid
		// instant like any other (an empty window is the start's fault,
		// and only a start the caller gave is refused for it).
		end := now
		if key.toSet && key.to.Before(end) {
			end = key.to
		}
		o.Since, o.SinceDefault = end.Add(-cryptointel.HistoryLookback), true
	}
	if key.fromSet {
		if o.SinceDefault || key.from.After(o.Since) {
			o.Since = key.from
		}
		o.SinceDefault = false
		o.Filters = append(o.Filters, search.SearchFilter{Name: search.SearchFilterFrom, Value: key.from.Format(time.RFC3339Nano), Source: search.SearchSourceParameter})
	}
	if key.toSet {
		o.Filters = append(o.Filters, search.SearchFilter{Name: search.SearchFilterTo, Value: key.to.Format(time.RFC3339Nano), Source: search.SearchSourceParameter})
	}
	if key.category != "" {
		o.Filters = append(o.Filters, search.SearchFilter{Name: search.SearchFilterCategory, Value: key.category, Source: search.SearchSourceParameter})
	}
	if key.surface == search.SearchSurfaceSignal {
		o.Filters = append(o.Filters, search.SearchFilter{Name: search.SearchFilterSurface, Value: key.surface, Source: search.SearchSourceParameter})
	}
	if err := search.CheckSearchOptions(o); err != nil {
		return nil, err
	}
	qctx := key.cursorContext()
	if key.after != "" {
		cur, err := r.cursors.DecodeCursor(qctx, key.after)
		if err != nil {
			return nil, err
		}
		o.Offset, o.AfterID = int(min(max(cur.Offset, 0), cryptointel.SearchMaxDepth)), cur.ID
	}
	version := access.DataVersion(ctx)
	if key.entity != "" {
		ids, err := r.searchEntity(ctx, version, key.entity)
		if err != nil {
			return nil, err
		}
		o.EntityIDs = ids
		for _, id := range ids {
			o.Filters = append(o.Filters, search.SearchFilter{Name: search.SearchFilterEntity, Value: strconv.FormatInt(id, 10), Source: search.SearchSourceParameter})
		}
	}
	res, err := r.store.SearchEvents(ctx, version, key.query, o)
	if err != nil {
		return nil, err
	}
	if res.More && len(res.Matches) > 0 {
		last := res.Matches[len(res.Matches)-1]
		res.NextCursor = ptr(r.cursors.EncodeCursor(qctx, Cursor{AtMicro: last.LatestEvidenceAt.UnixMicro(), ID: last.EventID,
			Offset: int64(res.Offset + len(res.Matches))}))
	}
	return res, nil
}

// searchEntity reads a search's entity filter: an id, or a name, alias or
// ticker naming entities (every one of the strongest exact or prefix
// matches: a ticker several projects share names them all), kept per
// content version version as the query's analysis is
// (db.DB.SearchEntityFilter).
func (r *queryResolver) searchEntity(ctx context.Context, version int64, entity string) ([]int64, error) {
	if id, err := strconv.ParseInt(entity, 10, 64); err == nil {
		if id <= 0 {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, search.MsgSearchEntity, entity)
		}
		return []int64{id}, nil
	}
	ids, err := r.store.SearchEntityFilter(ctx, version, entity)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, search.MsgSearchEntity, entity)
	}
	return ids, nil
}

// SearchEvents searches radar and signal history.
func (r *queryResolver) SearchEvents(ctx context.Context, query string, since *time.Time, first *int, from *time.Time, to *time.Time, sort *graph.SearchSort, category *string, entity *string, surface *graph.Surface, collapse *bool, after *string) ([]*search.EventMatch, error) {
	res, err := r.search(ctx, searchArgs{query: query, since: since, first: first, from: from, to: to, sort: sort,
		category: category, entity: entity, surface: surface, collapse: collapse, after: after})
	if err != nil {
		return nil, err
	}
	ms := res.Matches
	out := make([]*search.EventMatch, len(ms))
	ids := make([]int64, len(ms))
	for i := range ms {
		out[i] = &ms[i]
		ids[i] = ms[i].EventID
	}
	l := r.loaders(ctx)
	l.Events(ids)
	if err := r.readSearchPage(ctx, l, ids); err != nil {
		return nil, err
	}
	return out, nil
}

// readSearchPage reads the events of a search's page, when its selection
// asks for them, with the children it asks of them (owners and
// participants, evidence) in one statement (db.EventsByIDsFolded), and
// primes the loaders with them: the page costs one statement where the
// loaders' levels cost one each.
func (r *queryResolver) readSearchPage(ctx context.Context, l *Loaders, ids []int64) error {
	f := graph.ResolvingField(ctx)
	if f == nil || len(ids) == 0 {
		return nil
	}
	events := fieldsNamed(f.Selections, "event")
	if len(events) == 0 {
		return nil
	}
	var c db.EventChildren
	for _, e := range events {
		ec := eventChildrenOf(e.SelectionSet)
		c.Roles, c.Evidence = c.Roles || ec.Roles, c.Evidence || ec.Evidence
	}
	evs, folded, err := db.EventsByIDsFolded(ctx, r.store.Reader(), ids, c)
	if err != nil {
		return err
	}
	found := make(map[int64]bool, len(evs))
	for _, e := range evs {
		found[e.ID] = true
		l.EventByID.Prime(ctx, e.ID, e)
	}
	for _, id := range ids {
		if !found[id] {
			// As its load would find it: missing.
			l.EventByID.Prime(ctx, id, nil)
		}
	}
	l.primeFolded(ctx, evs, c, folded)
	return nil
}

// SearchReport reports how searchEvents reads the same arguments.
func (r *queryResolver) SearchReport(ctx context.Context, query string, since *time.Time, first *int, from *time.Time, to *time.Time, sort *graph.SearchSort, category *string, entity *string, surface *graph.Surface, collapse *bool, after *string) (*search.SearchResult, error) {
	return r.search(ctx, searchArgs{query: query, since: since, first: first, from: from, to: to, sort: sort,
		category: category, entity: entity, surface: surface, collapse: collapse, after: after})
}
