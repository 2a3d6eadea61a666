package db

import (
	"context"
	"fmt"

	"github.com/cryptointel/cryptointel"
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

// EventsByIDsFolded returns the events ids (a search's page: any order,
// missing ones left out) with their children c read in the same statement
// (fold.go): one statement for the page and its children.
func EventsByIDsFolded(ctx context.Context, q Querier, ids []int64, c EventChildren) ([]*cryptointel.Event, *FoldedChildren, error) {
	out := make([]*cryptointel.Event, 0, len(ids))
	folded := &FoldedChildren{}
	if len(ids) == 0 {
		return out, folded, nil
	}
	rows, err := query(ctx, q, searchPageSQLs[c], ids)
	if err != nil {
		return nil, nil, fmt.Errorf("error selecting events by ids: %w", err)
	}
	if err := scanFoldedEvents(rows, "events by ids", folded, func(e *cryptointel.Event) { out = append(out, e) }); err != nil {
		return nil, nil, err
	}
	return out, folded, nil
}
