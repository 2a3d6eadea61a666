package db

import (
	"context"
	"fmt"
)

// MaxRelationshipTypes bounds the relationship types RelationshipTypes
// lists.
const MaxRelationshipTypes = 500

// RelationshipTypes returns the relationship types in use, sorted (at most
// MaxRelationshipTypes): the values a relationshipType filter matches.
func RelationshipTypes(ctx context.Context, q Querier) ([]string, error) {
	rows, err := query(ctx, q, `SELECT DISTINCT relationship_type FROM relationships ORDER BY 1 LIMIT $1`, MaxRelationshipTypes)
	if err != nil {
		return nil, fmt.Errorf("error listing relationship types: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("error scanning relationship types: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error listing relationship types: %w", err)
	}
	return out, nil
}
