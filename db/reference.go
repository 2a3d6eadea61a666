package db

import (
	"context"
	"fmt"

	"github.com/cryptointel/cryptointel"
)

// ReferencesByEntityIDs returns the references of the given entities in one
// statement, ordered by entity id then reference id.
func ReferencesByEntityIDs(ctx context.Context, q Querier, entityIDs []int64) ([]*cryptointel.Reference, error) {
	if len(entityIDs) == 0 {
		return []*cryptointel.Reference{}, nil
	}
	out, err := readRows(ctx, q, "SELECT "+referenceColumns+" FROM entity_references er WHERE er.entity_id = ANY($1::bigint[]) ORDER BY er.entity_id, er.id",
		[]any{entityIDs}, referenceDest, func(x *cryptointel.Reference) { x.CreatedAt = x.CreatedAt.UTC() })
	if err != nil {
		return nil, fmt.Errorf("error selecting references by entity ids: %w", err)
	}
	return out, nil
}

// readRows runs sql, whose columns are dest's, and returns its rows, each
// scanned into a new T and then put right by fix (nil for nothing).
func readRows[T any](ctx context.Context, q Querier, sql string, args []any, dest func(*T, []any) []any, fix func(*T)) ([]*T, error) {
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*T{}
	var buf []any
	for rows.Next() {
		x := new(T)
		buf = dest(x, buf[:0])
		if err := rows.Scan(buf...); err != nil {
			return nil, err
		}
		if fix != nil {
			fix(x)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}
