package resolvers

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
)

// searchKey is a search's arguments as given (a missing since is the zero
// time: the default window is computed once, by the search that runs).
type searchKey struct {
	query string
	since time.Time
	first int
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
	res  *cryptointel.SearchResult
	err  error
}

// search runs (once per request and arguments) the search of query since
// since (default HistoryLookback) with first results. The query's analysis
// is kept for the content version the request was metered at, so a query
// searched again before the content changes costs one statement.
func (r *queryResolver) search(ctx context.Context, query string, since *time.Time, first *int) (*cryptointel.SearchResult, error) {
	key := searchKey{query: query, first: cryptointel.SearchEventsFirst.Clamp(first)}
	if since != nil {
		key.since = since.UTC()
	}
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
		start := key.since
		if since == nil {
			start = r.now().Add(-cryptointel.HistoryLookback)
		}
		var version int64
		if caller, ok := access.CallerFrom(ctx); ok {
			version = caller.DataVersion
		}
		c.res, c.err = r.store.SearchEvents(ctx, version, key.query, cryptointel.SearchOptions{Since: start, Limit: key.first, SinceDefault: since == nil, Now: r.now()})
		if c.err != nil {
			c.err = fmt.Errorf("error searching events: %w", c.err)
		}
	})
	return c.res, c.err
}

// SearchEvents searches radar and signal history.
func (r *queryResolver) SearchEvents(ctx context.Context, query string, since *time.Time, first *int) ([]*cryptointel.EventMatch, error) {
	res, err := r.search(ctx, query, since, first)
	if err != nil {
		return nil, err
	}
	ms := res.Matches
	out := make([]*cryptointel.EventMatch, len(ms))
	ids := make([]int64, len(ms))
	for i := range ms {
		out[i] = &ms[i]
		ids[i] = ms[i].EventID
	}
	r.loaders(ctx).Events(ids)
	return out, nil
}

// SearchReport reports how searchEvents reads the same arguments.
func (r *queryResolver) SearchReport(ctx context.Context, query string, since *time.Time, first *int) (*cryptointel.SearchResult, error) {
	return r.search(ctx, query, since, first)
}
