package cryptointel

import (
	"time"

	"github.com/uptrace/bun"
)

// HistoryDay is one entity's event counts on one UTC day.
type HistoryDay struct {
	// EntityID is the entity.
	EntityID int64 `bun:"entity_id"`
	// Day is the UTC day, YYYY-MM-DD.
	Day string `bun:"day"`
	// SignalCount counts scored events that day.
	SignalCount int `bun:"signal_count"`
	// RadarCount counts all events that day, signals included.
	RadarCount int `bun:"radar_count"`
}

// EventEntityRef is an entity in a role on an event.
type EventEntityRef struct {
	// EventID is the event.
	EventID int64 `bun:"event_id"`
	// Role is RoleOwner or RoleParticipant.
	Role string `bun:"role"`
	// Entity is the entity in that role.
	Entity *Entity `bun:"-"`
}

// EntityEvent is one event in one entity's list.
type EntityEvent struct {
	// EntityID is the entity the list belongs to.
	EntityID int64 `bun:"entity_id"`
	// Event is the event.
	Event *Event
}

// Event is a radar event; it is also a signal when Significance is set.
type Event struct {
	bun.BaseModel `bun:"table:events"`

	ID               int64     `bun:"id,pk"`
	Title            string    `bun:"title"`
	Category         string    `bun:"category"`
	Subcategory      string    `bun:"subcategory"`
	Summary          string    `bun:"summary"`
	Bullets          []string  `bun:"bullets,array"`
	Significance     *float64  `bun:"significance"`
	ContentType      *string   `bun:"content_type"`
	LatestEvidenceAt time.Time `bun:"latest_evidence_at"`
	EvidenceText     string    `bun:"evidence_text" db:"noread"`
	IngestSeq        int64     `bun:"ingest_seq" db:"managed"`
	CreatedAt        time.Time `bun:"created_at" db:"managed"`
	UpdatedAt        time.Time `bun:"updated_at" db:"managed"`
}

// IsSignal reports whether the event carries a significance score.
func (e *Event) IsSignal() bool { return e.Significance != nil }

// Surface is "signal" for a scored event and "radar" otherwise.
func (e *Event) Surface() string {
	if e.IsSignal() {
		return SurfaceSignal
	}
	return SurfaceRadar
}

// Event surfaces.
const (
	SurfaceRadar  = "radar"
	SurfaceSignal = "signal"
)

// Event-entity roles.
const (
	RoleOwner       = "owner"
	RoleParticipant = "participant"
)

// AppendByRole adds ref, an entity in role on one event, to that event's
// owners when role is RoleOwner and to its participants otherwise
// (RoleParticipant). Every reader that splits an event's entities by role
// goes through it.
func AppendByRole[T any](owners, participants *[]T, role string, ref T) {
	if role == RoleOwner {
		*owners = append(*owners, ref)
	} else {
		*participants = append(*participants, ref)
	}
}

// Content types of classified events.
const (
	ContentResearch   = "research"
	ContentCommentary = "commentary"
	ContentAnalysis   = "analysis"
	ContentMedia      = "media"
)

// EventEntity links an event to an entity in a role. The event's time,
// score, classification and category are copied so per-entity feeds are
// index scans.
type EventEntity struct {
	bun.BaseModel `bun:"table:event_entities"`

	EventID          int64     `bun:"event_id,pk"`
	EntityID         int64     `bun:"entity_id,pk"`
	Role             string    `bun:"role,pk"`
	Position         int       `bun:"position"`
	LatestEvidenceAt time.Time `bun:"latest_evidence_at"`
	Significance     *float64  `bun:"significance"`
	ContentType      *string   `bun:"content_type"`
	Category         string    `bun:"category"`
}

// Evidence is a source post backing an event.
type Evidence struct {
	bun.BaseModel `bun:"table:evidence"`

	ID      int64     `bun:"id,pk"`
	EventID int64     `bun:"event_id"`
	Content string    `bun:"content"`
	URL     string    `bun:"url"`
	TS      time.Time `bun:"ts"`
}
