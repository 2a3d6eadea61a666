package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/search"
)

// searchPageSQL reads the events of a search's page by id with the
// children a read folds (foldPage): the page's events, their owners and
// participants and their evidence in one statement, where the per-level
// loaders ran one statement for each.
func searchPageSQL(c EventChildren) string {
	return foldPage("SELECT "+eventColumns+" FROM events e WHERE e.id = ANY($1)", "e.id", c)
}

// The page statement's texts, fixed so that pgx prepares each once per
// connection.
var searchPageSQLs = map[EventChildren]string{
	{}:                            searchPageSQL(EventChildren{}),
	{Roles: true}:                 searchPageSQL(EventChildren{Roles: true}),
	{Evidence: true}:              searchPageSQL(EventChildren{Evidence: true}),
	{Roles: true, Evidence: true}: searchPageSQL(EventChildren{Roles: true, Evidence: true}),
}

// EventsByIDsFolded returns the events ids (a search's page: in id order,
// missing ones left out; whole events, c's NoText and NoContent aside) with their children c read in the same statement
// (fold.go): one statement for the page and its children.
func EventsByIDsFolded(ctx context.Context, q Querier, ids []int64, c EventChildren) ([]*cryptointel.Event, *FoldedChildren, error) {
	if len(ids) == 0 {
		return []*cryptointel.Event{}, &FoldedChildren{}, nil
	}
	rows, err := query(ctx, q, searchPageSQLs[EventChildren{Roles: c.Roles, Evidence: c.Evidence}], ids)
	if err != nil {
		return nil, nil, fmt.Errorf("error selecting events by ids: %w", err)
	}
	return scanFoldedPage(rows, "events by ids", c)
}

// counted is q with each statement search runs counted as one of the
// request's (CountStatement), as db's own reads count theirs.
type counted struct{ q Querier }

func (c counted) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return query(ctx, c.q, sql, args...)
}

// SearchEvents is search.SearchEvents on q, its statements counted.
func SearchEvents(ctx context.Context, q Querier, text string, since time.Time, limit int) (*search.SearchResult, error) {
	return search.SearchEvents(ctx, counted{q}, text, since, limit)
}

// SearchEventsWith is search.SearchEventsWith on q, its statements counted.
func SearchEventsWith(ctx context.Context, q Querier, text string, o search.SearchOptions) (*search.SearchResult, error) {
	return search.SearchEventsWith(ctx, counted{q}, text, o)
}

// SearchEvents searches on d's routed reads (Reader), keeping each
// query's analysis for content version version (search.Memo.SearchEvents):
// a query searched again before the content changes costs one statement.
func (d *DB) SearchEvents(ctx context.Context, version int64, text string, o search.SearchOptions) (*search.SearchResult, error) {
	return d.searchMemo.SearchEvents(ctx, counted{d.Reader()}, version, text, o)
}
