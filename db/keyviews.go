package db

import (
	"crypto/sha256"
	"strconv"
	"time"
)

// The vocabulary of API keys as db stores them (their hash, scopes and
// surfaces), and the views of an account's keys and of their audit trail
// as db reads them for GET /v1/keys, GET /v1/keys/audit and
// `cryptointel keys`.

// APIKeyPrefix starts every API key, so keys are recognizable in logs and
// secret scanners.
const APIKeyPrefix = "ci_"

// HashAPIKey returns the SHA-256 of key: the only form in which keys are
// stored (api_keys.hash). The access layer looks keys up by it.
func HashAPIKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
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

// RestrictableSurfaces are the surfaces (X-Api-Surface) a restricted key
// may be limited to; AccountSurfaces are open to every key whatever its
// scopes or restriction: a key can always read its usage, and the key
// routes check the management scope themselves.
var (
	RestrictableSurfaces = []string{"lookup", "query", "feed", "timeline", "replay", "brief", "delivery", "export", "graphql", "stream"}
	AccountSurfaces      = []string{"keys", "usage"}
)

// DefaultMaxActiveKeys is how many keys (not revoked, not expired) one
// account may have unless API_KEYS_MAX_ACTIVE says otherwise.
const DefaultMaxActiveKeys = 10

// Key states (APIKeyView.Status).
const (
	// KeyActive: the key authenticates requests.
	KeyActive = "active"
	// KeyRevoked: the key was revoked; requests get "API key has been
	// revoked.".
	KeyRevoked = "revoked"
	// KeyExpired: the key's expiry passed; requests get "API key has
	// expired.".
	KeyExpired = "expired"
)

// APIKeyView is an API key as its account's owner and operators see it
// (`cryptointel keys list`, GET /v1/keys): never the key itself, which is
// shown once, when it is created.
type APIKeyView struct {
	ID        int64  `json:"id"`
	AccountID int64  `json:"accountId"`
	Account   string `json:"account"`
	Plan      string `json:"plan"`
	// Prefix is the key's first characters, for telling keys apart.
	Prefix string `json:"prefix"`
	// Status is KeyActive, KeyRevoked or KeyExpired.
	Status    string     `json:"status"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt"`
	RevokedAt *time.Time `json:"revokedAt"`
	// LastUsedAt is the start of the rate window (the minute, by default)
	// of the key's last authenticated request; null when never used.
	LastUsedAt *time.Time `json:"lastUsedAt"`
	// ReplacedBy is the key a rotation replaced this one with.
	ReplacedBy *int64 `json:"replacedBy"`
	// Scopes are what the key may do: "data", "management".
	Scopes []string `json:"scopes"`
	// Surfaces, when not null, restricts the key to reading those
	// surfaces (a restricted key).
	Surfaces []string `json:"surfaces"`
}

// Actions of the key audit trail (KeyAuditEntry.Action).
const (
	AuditKeyCreated = "key.created"
	AuditKeyRevoked = "key.revoked"
	AuditKeyRotated = "key.rotated"
	AuditPlanSet    = "account.plan_set"
	// AuditKeysRecovered is an operator's recovery of an account (keys
	// recover): every key revoked, one new management key.
	AuditKeysRecovered = "account.keys_recovered"
	// AuditOAuthGranted is a client connected to a key through the OAuth
	// consent page of /mcp; AuditOAuthRevoked a connection revoked (by
	// the account, the client, or a reused code or refresh token).
	AuditOAuthGranted = "oauth.granted"
	AuditOAuthRevoked = "oauth.revoked"
)

// AuditActions lists every action of the key audit trail, in the order the
// API documents them.
var AuditActions = []string{AuditKeyCreated, AuditKeyRevoked, AuditKeyRotated, AuditPlanSet, AuditKeysRecovered, AuditOAuthGranted, AuditOAuthRevoked}

// Actors of the key audit trail besides "api_key:<id>" (a change made
// through /v1/keys with that key).
const (
	// ActorCLI is a change made with the cryptointel command.
	ActorCLI = "cli"
)

// ActorAPIKey is the actor of a change made through /v1/keys with the key
// keyID.
func ActorAPIKey(keyID int64) string { return "api_key:" + strconv.FormatInt(keyID, 10) }

// KeyAuditEntry is one change to an account's keys or plan.
type KeyAuditEntry struct {
	ID        int64          `json:"id"`
	At        time.Time      `json:"at"`
	AccountID int64          `json:"accountId"`
	APIKeyID  *int64         `json:"apiKeyId"`
	Action    string         `json:"action"`
	Actor     string         `json:"actor"`
	Detail    map[string]any `json:"detail"`
}
