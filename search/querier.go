package search

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Querier runs search's statements. db gives it its routed reads with each
// statement counted as one of the request's (db.SearchEvents,
// db.SearchEventsWith); a pool, a connection or a transaction serves too.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// query runs sql on q.
func query(ctx context.Context, q Querier, sql string, args ...any) (pgx.Rows, error) {
	return q.Query(ctx, sql, args...)
}
