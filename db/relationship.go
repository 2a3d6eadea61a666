package db

// EntityRelationship is a relationship seen from one entity: the edge plus
// its direction relative to that entity and the entity at the other end.
type EntityRelationship struct {
	Relationship

	// EntityID is the entity the relationship was asked for.
	EntityID int64 `bun:"entity_id"`
	// Direction is "outbound" when EntityID is the source, "inbound" when it
	// is the target.
	Direction string `bun:"direction"`
	// RelatedEntityID is the entity at the other end of the edge.
	RelatedEntityID int64 `bun:"related_entity_id"`
}

// Relationship directions relative to the entity asked about.
const (
	DirectionOutbound = "outbound"
	DirectionInbound  = "inbound"
)
