package cryptointel

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// MsgAPIKeyNotFound is the error of an unknown or revoked key id.
const MsgAPIKeyNotFound = "API key not found."

// APIKeyPrefix starts every API key, so keys are recognizable in logs and
// secret scanners.
const APIKeyPrefix = "ci_"

// HashAPIKey returns the SHA-256 of key: the only form in which keys are
// stored (api_keys.hash). The access layer looks keys up by it.
func HashAPIKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// NewAPIKeyPlaintext returns a fresh random key: "ci_" followed by the
// unpadded base64url encoding of 32 bytes from crypto/rand.
func NewAPIKeyPlaintext() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("error reading random bytes: %w", err)
	}
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
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
}
