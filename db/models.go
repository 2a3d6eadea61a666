package db

import (
	"encoding/json"
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
	EventCount    int64     `bun:"event_count"`
	CreatedAt     time.Time `bun:"created_at"`
	UpdatedAt     time.Time `bun:"updated_at"`
}

// EntityName is one name an entity answers to, normalized for matching.
type EntityName struct {
	bun.BaseModel `bun:"table:entity_names"`

	EntityID int64  `bun:"entity_id,pk"`
	Kind     string `bun:"kind,pk"` // canonical_name, display_name, alias
	Value    string `bun:"value,pk"`
	Norm     string `bun:"norm"`
}

// Relationship is a directed, typed edge between two entities.
type Relationship struct {
	bun.BaseModel `bun:"table:relationships"`

	SourceEntityID   int64     `bun:"source_entity_id,pk"`
	TargetEntityID   int64     `bun:"target_entity_id,pk"`
	RelationshipType string    `bun:"relationship_type,pk"`
	Status           string    `bun:"status"`
	SearchExpand     bool      `bun:"search_expand"`
	CreatedAt        time.Time `bun:"created_at"`
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
	CreatedAt     time.Time `bun:"created_at"`
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
	EvidenceText     string    `bun:"evidence_text"`
	IngestSeq        int64     `bun:"ingest_seq"`
	CreatedAt        time.Time `bun:"created_at"`
	UpdatedAt        time.Time `bun:"updated_at"`
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

// Market is a prediction market about an entity.
type Market struct {
	bun.BaseModel `bun:"table:markets"`

	ID          int64      `bun:"id,pk"`
	EntityID    int64      `bun:"entity_id"`
	Question    string     `bun:"question"`
	URL         string     `bun:"url"`
	Outcomes    []string   `bun:"outcomes,array"`
	Probability *float64   `bun:"probability"`
	Volume      *float64   `bun:"volume"`
	ClosesAt    *time.Time `bun:"closes_at"`
	CreatedAt   time.Time  `bun:"created_at"`
}

// MarketSubevent is a sub-event of a prediction market.
type MarketSubevent struct {
	bun.BaseModel `bun:"table:market_subevents"`

	ID              int64  `bun:"id,pk"`
	MarketID        int64  `bun:"market_id"`
	Label           string `bun:"label"`
	SubeventType    string `bun:"subevent_type"`
	NormalizedTitle string `bun:"normalized_title"`
	InjectedSummary string `bun:"injected_summary"`
}

// MarketPost is a post attached to a market sub-event.
type MarketPost struct {
	bun.BaseModel `bun:"table:market_posts"`

	ID         int64     `bun:"id,pk"`
	SubeventID int64     `bun:"subevent_id"`
	Content    string    `bun:"content"`
	PostedAt   time.Time `bun:"posted_at"`
}

// Plan is a subscription plan: its access layers, feature flags and
// monthly credit allowance. Plans are data, seeded by a migration.
type Plan struct {
	bun.BaseModel `bun:"table:plans"`

	Name           string   `bun:"name,pk"`
	Rank           int      `bun:"rank"`
	Layers         []string `bun:"layers,array"`
	Briefs         bool     `bun:"briefs"`
	BatchBriefs    bool     `bun:"batch_briefs"`
	Webhooks       bool     `bun:"webhooks"`
	PremiumFeeds   bool     `bun:"premium_feeds"`
	Export         bool     `bun:"export"`
	MonthlyCredits int64    `bun:"monthly_credits"`
}

// Plan names.
const (
	PlanFree       = "free"
	PlanPro        = "pro"
	PlanBusiness   = "business"
	PlanEnterprise = "enterprise"
)

// Account owns API keys, webhooks and export jobs.
type Account struct {
	bun.BaseModel `bun:"table:accounts"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Name      string    `bun:"name"`
	Plan      string    `bun:"plan"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:current_timestamp"`
}

// APIKey is an account's key, stored as a SHA-256 hash with a short visible
// prefix.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID        int64      `bun:"id,pk,autoincrement"`
	AccountID int64      `bun:"account_id"`
	Prefix    string     `bun:"prefix"`
	Hash      []byte     `bun:"hash"`
	CreatedAt time.Time  `bun:"created_at,nullzero,default:current_timestamp"`
	RevokedAt *time.Time `bun:"revoked_at"`
}

// Webhook is an account's subscription to pushed events.
type Webhook struct {
	bun.BaseModel `bun:"table:webhooks"`

	ID                  int64     `bun:"id,pk,autoincrement"`
	AccountID           int64     `bun:"account_id"`
	URL                 string    `bun:"url"`
	Secret              string    `bun:"secret"`
	EventTypes          []string  `bun:"event_types,array"`
	Active              bool      `bun:"active"`
	ConsecutiveFailures int       `bun:"consecutive_failures"`
	CreatedAt           time.Time `bun:"created_at,nullzero,default:current_timestamp"`
	UpdatedAt           time.Time `bun:"updated_at,nullzero,default:current_timestamp"`
}

// WebhookDelivery is one event pushed to one webhook, across its attempts.
type WebhookDelivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries"`

	ID          string     `bun:"id,pk,type:uuid"`
	WebhookID   int64      `bun:"webhook_id"`
	EventID     *int64     `bun:"event_id"`
	EventType   string     `bun:"event_type"`
	Status      string     `bun:"status"` // pending, succeeded, failed
	Attempts    int        `bun:"attempts"`
	LastStatus  *int       `bun:"last_status"`
	LastError   *string    `bun:"last_error"`
	CreatedAt   time.Time  `bun:"created_at,nullzero,default:current_timestamp"`
	UpdatedAt   time.Time  `bun:"updated_at,nullzero,default:current_timestamp"`
	DeliveredAt *time.Time `bun:"delivered_at"`
}

// WebhookAttempt records one HTTP attempt of a delivery.
type WebhookAttempt struct {
	bun.BaseModel `bun:"table:webhook_attempts"`

	ID          int64     `bun:"id,pk,autoincrement"`
	DeliveryID  string    `bun:"delivery_id,type:uuid"`
	Attempt     int       `bun:"attempt"`
	AttemptedAt time.Time `bun:"attempted_at,nullzero,default:current_timestamp"`
	StatusCode  *int      `bun:"status_code"`
	LatencyMS   int       `bun:"latency_ms"`
	Error       *string   `bun:"error"`
}

// ExportJob is an account's request for a bulk export file.
type ExportJob struct {
	bun.BaseModel `bun:"table:export_jobs"`

	ID              string          `bun:"id,pk,type:uuid"`
	AccountID       int64           `bun:"account_id"`
	APIKeyID        int64           `bun:"api_key_id"`
	Scope           string          `bun:"scope"`
	Format          string          `bun:"format"`
	Status          string          `bun:"status"`
	RequestedParams json.RawMessage `bun:"requested_params,type:jsonb"`
	Note            string          `bun:"note"`
	StorageKey      *string         `bun:"storage_key"`
	RowCount        *int64          `bun:"row_count"`
	ByteSize        *int64          `bun:"byte_size"`
	SHA256          *string         `bun:"sha256"`
	Error           *string         `bun:"error"`
	ExpiresAt       *time.Time      `bun:"expires_at"`
	CreatedAt       time.Time       `bun:"created_at,nullzero,default:current_timestamp"`
	UpdatedAt       time.Time       `bun:"updated_at,nullzero,default:current_timestamp"`
}
