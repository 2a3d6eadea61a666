package cryptointel

import (
	"time"

	"github.com/uptrace/bun"
)

// Entity is a canonical profile: a project, foundation, exchange, fund,
// regulator and so on.
type Entity struct {
	bun.BaseModel `bun:"table:entities"`

	ID            int64     `bun:"id,pk"`
	CanonicalName string    `bun:"canonical_name"`
	DisplayName   string    `bun:"display_name"`
	EntityType    string    `bun:"entity_type"`
	Status        string    `bun:"status"`
	Aliases       []string  `bun:"aliases,array"`
	EventCount    int64     `bun:"event_count" db:"managed"`
	CreatedAt     time.Time `bun:"created_at" db:"managed"`
	UpdatedAt     time.Time `bun:"updated_at" db:"managed"`
}

// Relationship is a directed, typed edge between two entities.
type Relationship struct {
	bun.BaseModel `bun:"table:relationships"`

	SourceEntityID   int64     `bun:"source_entity_id,pk"`
	TargetEntityID   int64     `bun:"target_entity_id,pk"`
	RelationshipType string    `bun:"relationship_type,pk"`
	Status           string    `bun:"status"`
	SearchExpand     bool      `bun:"search_expand"`
	CreatedAt        time.Time `bun:"created_at" db:"managed"`
}

// Reference is an external reference about an entity (website, docs,
// filing...).
type Reference struct {
	bun.BaseModel `bun:"table:entity_references"`

	ID            int64     `bun:"id,pk"`
	EntityID      int64     `bun:"entity_id"`
	ReferenceType string    `bun:"reference_type"`
	Title         string    `bun:"title"`
	URL           string    `bun:"url"`
	CreatedAt     time.Time `bun:"created_at" db:"managed"`
}

// EntityRelationship is a relationship seen from the entity EntityID: the
// edge, its Direction ("outbound" when EntityID is the source), and
// the entity at the other end (Related, when the read loaded it).
type EntityRelationship struct {
	Relationship

	EntityID        int64   `bun:"entity_id"`
	Direction       string  `bun:"direction"`
	RelatedEntityID int64   `bun:"related_entity_id"`
	Related         *Entity `bun:"-"`
}

// Messages of an unknown entity and an unknown organization (an entity as
// the compatibility views show it).
const (
	MsgEntityNotFound       = "Entity not found"
	MsgOrganizationNotFound = "Organization not found"
)
