package db

import (
	"strings"
)

// Relationship directions, relative to the requested entity
// (cryptointel.EntityRelationship.Direction).
const (
	DirectionOutbound = "outbound"
	DirectionInbound  = "inbound"
)

// RelationshipFilter pages and filters each entity's relationships.
type RelationshipFilter struct {
	// Limit and Offset page each entity's relationships.
	Limit, Offset int
	// Type, when set, keeps the relationships of that type (exact match).
	Type string
	// Direction, when set, keeps the outbound (DirectionOutbound) or the
	// inbound (DirectionInbound) relationships.
	Direction string
}

// edgesSQL selects the entities' edges f keeps, one branch per direction,
// with $1 the entity ids, $2 the offset, $3 the limit and $4 the type when
// filtered. A branch the direction excludes is left out, and the type
// condition is written only when it filters, so each variant is a plan of
// its own that reads (end, relationship_type, other end) index ranges.
// Each entity's branch reads, in that index's order, only the first
// offset + limit edges of its direction: a page of the entity's edges
// (outbound first, then by type and other end) is within those of each
// direction, so a busy entity's edges are never all read and sorted.
func (f RelationshipFilter) edgesSQL() string {
	typ := ""
	if f.Type != "" {
		typ = " AND r.relationship_type = $4"
	}
	var branches []string
	if f.Direction != DirectionInbound {
		branches = append(branches, `(SELECT r.source_entity_id AS entity_id, 'outbound' AS direction, r.target_entity_id AS related_entity_id, r.*
				FROM relationships r WHERE r.source_entity_id = u.id`+typ+`
				ORDER BY r.relationship_type, r.target_entity_id LIMIT $2::bigint + $3::bigint)`)
	}
	if f.Direction != DirectionOutbound {
		branches = append(branches, `(SELECT r.target_entity_id AS entity_id, 'inbound' AS direction, r.source_entity_id AS related_entity_id, r.*
				FROM relationships r WHERE r.target_entity_id = u.id`+typ+`
				ORDER BY r.relationship_type, r.source_entity_id LIMIT $2::bigint + $3::bigint)`)
	}
	return `SELECT e.* FROM (SELECT DISTINCT unnest($1::bigint[]) AS id) u CROSS JOIN LATERAL (
				` + strings.Join(branches, "\n\t\t\t\tUNION ALL\n\t\t\t\t") + `) e`
}

// args are the statement's arguments: the ids, offset, limit and, when
// filtered, the type.
func (f RelationshipFilter) args(entityIDs []int64) []any {
	args := []any{entityIDs, f.Offset, f.Limit}
	if f.Type != "" {
		args = append(args, f.Type)
	}
	return args
}
