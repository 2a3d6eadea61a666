package db

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/cryptointel/cryptointel"
)

// RelationshipsByEntityIDs returns, in one statement, the direct
// relationships of each given entity, outbound and inbound, paged per entity
// (limit and offset apply to each entity separately). Each entity's edges
// are ordered outbound first, then by relationship type and related entity
// id; the result is ordered by entity id, then that order.
func RelationshipsByEntityIDs(ctx context.Context, idb bun.IDB, entityIDs []int64, limit, offset int) ([]*cryptointel.EntityRelationship, error) {
	out := []*cryptointel.EntityRelationship{}
	if len(entityIDs) == 0 {
		return out, nil
	}
	err := idb.NewRaw(`
		SELECT entity_id, direction, related_entity_id, source_entity_id, target_entity_id,
		       relationship_type, status, search_expand, created_at
		FROM (
			SELECT x.*, row_number() OVER (
				PARTITION BY x.entity_id
				ORDER BY x.direction DESC, x.relationship_type, x.related_entity_id) AS rn
			FROM (
				SELECT r.source_entity_id AS entity_id, 'outbound' AS direction, r.target_entity_id AS related_entity_id, r.*
				FROM relationships r WHERE r.source_entity_id = ANY(?0)
				UNION ALL
				SELECT r.target_entity_id, 'inbound', r.source_entity_id, r.*
				FROM relationships r WHERE r.target_entity_id = ANY(?0)
			) x
		) y
		WHERE rn > ?1 AND rn <= ?1 + ?2
		ORDER BY entity_id, rn`, pgArray(entityIDs), offset, limit).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("error selecting relationships by entity ids: %w", err)
	}
	return out, nil
}

// pgArray wraps ids so Bun sends them as one PostgreSQL array parameter.
func pgArray(ids []int64) any { return pgdialect.Array(ids) }
