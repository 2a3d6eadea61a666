package access

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel/db"
)

// OAuth access tokens (package oauth issues them) act as the key of the
// grant they belong to: a request carrying one is served exactly as a
// request carrying that key — the same plan, rate window, credits, usage
// rows and refusals — because the access layer turns the token into the
// key's hash before anything else and goes on as for the key. A token is
// honoured only while its grant stands and its key is usable (not
// revoked, rotated or expired), read from PostgreSQL; this process
// remembers a token's answer for at most tokenTTL, so a revocation
// applies on every replica within that.
//
// A token's audience is /mcp (RFC 8707): it is accepted only on requests
// the MCP endpoint makes in process (WithMCPAudience), never on /v1 or
// /graphql directly.

// OAuthAccessTokenPrefix starts every OAuth access token; API keys start
// with db.APIKeyPrefix, so the two never mix.
const OAuthAccessTokenPrefix = "cit_"

// MsgTokenAudience is the 401 message of an OAuth access token presented
// outside /mcp.
const MsgTokenAudience = "This OAuth access token is valid for /mcp only. Use an API key here."

// tokenTTL is how long this process trusts a token's lookup.
const tokenTTL = time.Second

// maxTokens bounds the remembered tokens; past it the memory starts over.
const maxTokens = 10_000

// IsOAuthAccessToken reports whether a Bearer credential is an OAuth
// access token rather than an API key.
func IsOAuthAccessToken(cred string) bool { return strings.HasPrefix(cred, OAuthAccessTokenPrefix) }

type mcpAudienceKey struct{}

// WithMCPAudience marks ctx as a request of the MCP endpoint: OAuth
// access tokens, whose audience is /mcp, are accepted in it.
func WithMCPAudience(ctx context.Context) context.Context { return withMark[mcpAudienceKey](ctx) }

func mcpAudience(ctx context.Context) bool { return marked[mcpAudienceKey](ctx) }

type tokenFacts struct {
	until time.Time
	tok   *db.OAuthToken // nil: not a usable token
}

type tokenCache struct {
	mu sync.Mutex
	m  map[[32]byte]tokenFacts
}

// oauthToken returns what the access token cred stands for, or nil when
// it is unknown, expired, revoked or its key unusable.
func (s *Service) oauthToken(ctx context.Context, cred string) (*db.OAuthToken, error) {
	h := sha256.Sum256([]byte(cred))
	now := time.Now()
	s.tokens.mu.Lock()
	f, ok := s.tokens.m[h]
	s.tokens.mu.Unlock()
	if ok && now.Before(f.until) {
		return f.tok, nil
	}
	tok, err := s.store.OAuthAccessToken(ctx, h[:])
	if errors.Is(err, db.ErrOAuthNotFound) {
		tok, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if tok != nil {
		if err := s.store.TouchOAuthGrant(ctx, tok.GrantID); err != nil {
			s.logger.WarnContext(ctx, "error recording oauth grant use", "error", err)
		}
	}
	s.tokens.mu.Lock()
	if s.tokens.m == nil || len(s.tokens.m) >= maxTokens {
		s.tokens.m = map[[32]byte]tokenFacts{}
	}
	s.tokens.m[h] = tokenFacts{until: now.Add(tokenTTL), tok: tok}
	s.tokens.mu.Unlock()
	return tok, nil
}

// credentialHash is the key hash a Bearer credential stands for: an API
// key's own hash, or, for a usable OAuth access token in a request of
// the MCP endpoint, its grant's key's hash. Any other token hashes to no
// key, and is refused as an unknown key would be. refusal is the message
// to refuse a token with instead of MsgInvalidKey ("" for none).
func (s *Service) credentialHash(ctx context.Context, cred string) (hash []byte, refusal string) {
	if !IsOAuthAccessToken(cred) {
		return db.HashAPIKey(cred), ""
	}
	if !mcpAudience(ctx) {
		return db.HashAPIKey(cred), MsgTokenAudience
	}
	tok, err := s.oauthToken(ctx, cred)
	if err != nil || tok == nil {
		if err != nil {
			s.logger.ErrorContext(ctx, "error reading oauth access token", "error", err)
		}
		return db.HashAPIKey(cred), ""
	}
	return tok.KeyHash, ""
}

// TokenScope returns the scope granted to the OAuth access token of an
// Authorization header value; ok is false for anything but a usable
// token (an API key has no OAuth scope: its key scopes apply).
func (s *Service) TokenScope(ctx context.Context, authorization string) (scope string, ok bool) {
	scheme, cred := ParseAuthorization(authorization)
	if scheme != "bearer" || !IsOAuthAccessToken(cred) {
		return "", false
	}
	tok, err := s.oauthToken(ctx, cred)
	if err != nil || tok == nil {
		return "", false
	}
	return tok.Scope, true
}
