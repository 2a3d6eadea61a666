package db

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The access layer's half of the OAuth authorization server's state
// (migration 020; the server's own, clients to tokens, is oauth.Store): the
// grant an access token stands for, and its use. Every check reads
// PostgreSQL, so a revocation applies to the next request everywhere.

// ErrOAuthNotFound is returned when a client, request, code or token is
// unknown, expired or already used.
var ErrOAuthNotFound = errors.New("oauth: not found")

// GrantUsableSQL is true for the grant g whose key ak is usable: the
// grant not revoked, the key neither revoked, rotated nor expired.
const GrantUsableSQL = `g.revoked_at IS NULL AND ak.revoked_at IS NULL AND ak.replaced_by IS NULL AND coalesce(ak.expires_at > now(), true)`

// OAuthToken is what an access token stands for.
type OAuthToken struct {
	GrantID  int64
	KeyHash  []byte
	Scope    string
	Resource string
}

// OAuthAccessToken returns the grant of a usable access token: not
// expired, its grant not revoked, its key usable. Otherwise
// ErrOAuthNotFound.
func (d *DB) OAuthAccessToken(ctx context.Context, hash []byte) (*OAuthToken, error) {
	CountStatement(ctx)
	var t OAuthToken
	err := d.Pool.QueryRow(ctx, `SELECT g.id, ak.hash, g.scope, g.resource FROM oauth_tokens t
		JOIN oauth_grants g ON g.id = t.grant_id JOIN api_keys ak ON ak.id = g.api_key_id
		WHERE t.token_hash = $1 AND t.kind = 'access' AND t.expires_at > now() AND `+GrantUsableSQL, hash).Scan(&t.GrantID, &t.KeyHash, &t.Scope, &t.Resource)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrOAuthNotFound
	} else if err != nil {
		return nil, fmt.Errorf("error reading oauth access token: %w", err)
	}
	return &t, nil
}

// TouchOAuthGrant records that grant id was used (at most once a
// minute).
func (d *DB) TouchOAuthGrant(ctx context.Context, id int64) error {
	if _, err := d.Pool.Exec(ctx, `UPDATE oauth_grants SET last_used_at = now()
		WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, id); err != nil {
		return fmt.Errorf("error recording oauth grant use: %w", err)
	}
	return nil
}

// ActorOAuth is the audit trail's actor of a grant the authorization
// server revoked itself (a reused code or refresh token, a client's
// revocation request).
const ActorOAuth = "oauth"
