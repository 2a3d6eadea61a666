package db

import (
	"github.com/uptrace/bun"
)

// EntityName is one name an entity answers to, normalized for matching.
type EntityName struct {
	bun.BaseModel `bun:"table:entity_names"`

	EntityID int64  `bun:"entity_id,pk"`
	Kind     string `bun:"kind,pk"` // canonical_name, display_name, alias
	Value    string `bun:"value,pk"`
	Norm     string `bun:"norm"`
}
