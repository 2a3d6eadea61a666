package cryptointel

import (
	"crypto/sha256"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// APIKeyPrefix starts every API key, so keys are recognizable in logs and
// secret scanners.
const APIKeyPrefix = "ci_"

// APIKeyVisiblePrefix is how many leading characters of a key are kept in
// api_keys.prefix for support conversations, and shown in logs that name
// a key (the MCP tool calls' key_prefix).
const APIKeyVisiblePrefix = 10

// HashAPIKey returns the SHA-256 of key: the only form in which keys are
// stored (api_keys.hash). The access layer looks keys up by it.
func HashAPIKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
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
	// MaxStreams is how many live streams one key may hold open at a time;
	// 0 when the plan does not include streams.
	MaxStreams int `bun:"max_streams"`
}

// Plan names.
const (
	PlanFree       = "free"
	PlanPro        = "pro"
	PlanBusiness   = "business"
	PlanEnterprise = "enterprise"
)

// PlanStreamCap is how many live streams one API key of a plan may hold
// open at a time.
type PlanStreamCap struct {
	Plan       string
	MaxStreams int
}

// PlanStreamCaps are the plans that include live streams, lowest first,
// with their caps, as migration 007_streams seeds plans.max_streams (every
// other plan has 0). The plans table is what the service enforces; this
// table is what the schema and the /v1 docs quote, and a test holds the
// seeded table to it.
var PlanStreamCaps = []PlanStreamCap{{PlanPro, 5}, {PlanBusiness, 25}, {PlanEnterprise, 100}}

// StreamCapsText is PlanStreamCaps as the docs write it: "pro 5, business
// 25, enterprise 100".
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
	// ExpiresAt, when set, is the instant from which the key is refused.
	ExpiresAt *time.Time `bun:"expires_at"`
	// ReplacedBy is the id of the key a rotation replaced this one with.
	ReplacedBy *int64 `bun:"replaced_by"`
	// Scopes are what the key may do: ScopeData, ScopeManagement.
	Scopes []string `bun:"scopes,array,nullzero"`
	// Surfaces, when not nil, restricts the key to reading those API
	// surfaces (a restricted key).
	Surfaces []string `bun:"surfaces,array"`
}

// Key scopes (APIKey.Scopes).
const (
	// ScopeData reads the API: every surface the account's plan grants
	// (and writes its webhooks and export jobs, unless the key is
	// restricted).
	ScopeData = "data"
	// ScopeManagement manages the account's keys: lists them and their
	// audit trail, creates restricted keys, rotates and revokes any of
	// them. A key without it may only rotate or revoke itself.
	ScopeManagement = "management"
)

// Surfaces a restricted key may be limited to (the X-Api-Surface values of
// the data API). The account surfaces, keys and usage, are open to every
// key whatever its restriction: a key can always read its own usage and
// rotate or revoke itself.
var RestrictableSurfaces = []string{"lookup", "query", "feed", "timeline", "replay", "brief", "delivery", "export", "graphql", "stream"}

// AccountSurfaces are the surfaces open to every key, whatever its scopes
// or restriction: a key can always read its account's usage, and the key
// routes check the management scope themselves.
var AccountSurfaces = []string{"keys", "usage"}

// DefaultMaxActiveKeys is how many keys one account may have active (not
// revoked, not expired) at a time, unless configured otherwise
// (API_KEYS_MAX_ACTIVE): a rotation with a grace period keeps two active
// until the old one expires.
const DefaultMaxActiveKeys = 10
