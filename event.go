package cryptointel

import (
	"time"

	"github.com/uptrace/bun"
)

// HistoryDay is one entity's event counts on one UTC day (YYYY-MM-DD):
// its scored events, and all its events, signals included.
type HistoryDay struct {
	EntityID    int64  `bun:"entity_id"`
	Day         string `bun:"day"`
	SignalCount int    `bun:"signal_count"`
	RadarCount  int    `bun:"radar_count"`
}

// EventEntityRef is an entity in a role (RoleOwner, RoleParticipant) on
// an event.
type EventEntityRef struct {
	EventID int64   `bun:"event_id"`
	Role    string  `bun:"role"`
	Entity  *Entity `bun:"-"`
}

// EntityEvent is one event in the list of the entity EntityID.
type EntityEvent struct {
	EntityID int64 `bun:"entity_id"`
	Event    *Event
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

// Surface is SurfaceSignal for a scored event and SurfaceRadar otherwise.
func (e *Event) Surface() string {
	if e.IsSignal() {
		return SurfaceSignal
	}
	return SurfaceRadar
}

// Event surfaces, and the roles of an entity on an event.
const (
	SurfaceRadar    = "radar"
	SurfaceSignal   = "signal"
	RoleOwner       = "owner"
	RoleParticipant = "participant"
)

// IsOwner reports whether an entity in role on an event is among its
// owners; in any other role it is among its participants.
func IsOwner(role string) bool { return role == RoleOwner }

// AppendByRole adds ref, an entity in role on one event, to its owners or
// its participants (IsOwner): every reader that splits entities by role
// does.
func AppendByRole[T any](owners, participants *[]T, role string, ref T) {
	if IsOwner(role) {
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
