package cryptointel

import (
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// APIKeyVisiblePrefix is how many leading characters of a key api_keys
// keeps (prefix) and logs show (the MCP tool calls' key_prefix).
const APIKeyVisiblePrefix = 10

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
	MaxStreams     int      `bun:"max_streams"` // open at a time per key; 0 for none
}

// Plan names.
const (
	PlanFree       = "free"
	PlanPro        = "pro"
	PlanBusiness   = "business"
	PlanEnterprise = "enterprise"
)

// PlanStreamCap is how many live streams one key of a plan may hold open.
type PlanStreamCap struct {
	Plan       string
	MaxStreams int
}

// PlanStreamCaps are the plans with live streams, lowest first, as
// migration 007_streams seeds plans.max_streams (the service enforces the
// table; the schema and the docs quote this, and a test holds them equal).
var PlanStreamCaps = []PlanStreamCap{{PlanPro, 5}, {PlanBusiness, 25}, {PlanEnterprise, 100}}

// StreamCapsText writes PlanStreamCaps as the docs do: "pro 5, business 25, …".
func StreamCapsText() string {
	parts := make([]string, len(PlanStreamCaps))
	for i, c := range PlanStreamCaps {
		parts[i] = c.Plan + " " + strconv.Itoa(c.MaxStreams)
	}
	return strings.Join(parts, ", ")
}

// Account owns API keys, webhooks and export jobs.
type Account struct {
	bun.BaseModel `bun:"table:accounts"`

	ID        int64     `bun:"id,pk,autoincrement"`
	Name      string    `bun:"name"`
	Plan      string    `bun:"plan"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:current_timestamp"`
}

// APIKey is an account's key, stored as its SHA-256 hash and a prefix.
type APIKey struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID         int64      `bun:"id,pk,autoincrement"`
	AccountID  int64      `bun:"account_id"`
	Prefix     string     `bun:"prefix"`
	Hash       []byte     `bun:"hash"`
	CreatedAt  time.Time  `bun:"created_at,nullzero,default:current_timestamp"`
	RevokedAt  *time.Time `bun:"revoked_at"`
	ExpiresAt  *time.Time `bun:"expires_at"`  // refused from then on
	ReplacedBy *int64     `bun:"replaced_by"` // the key a rotation made
	Scopes     []string   `bun:"scopes,array,nullzero"`
	// Surfaces, when not nil, restricts the key to those surfaces.
	Surfaces []string `bun:"surfaces,array"`
}
