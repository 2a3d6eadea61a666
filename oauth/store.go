package oauth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// The authorization server's state (migration 020): clients, pending
// consent requests, grants, codes and tokens. Secrets (codes, tokens, the
// consent form's CSRF token) are stored as SHA-256 hashes only. Every check
// reads PostgreSQL, so any replica serves any step and a revocation applies
// to the next request everywhere. The access layer's half — an access
// token's grant (db.OAuthAccessToken) — is db's.

// Store is the database the authorization server keeps its state in.
type Store struct{ *db.DB }

// ErrOAuthReused is returned when a spent refresh token or a used code is
// presented again: its grant has been revoked.
var ErrOAuthReused = errors.New("oauth: reused")

// OAuthClientRow is a registered client or a cached metadata document.
type OAuthClientRow struct {
	ClientID  string
	Kind      string // "registered" or "metadata_document"
	Metadata  []byte
	FetchedAt time.Time
}

// OAuthClient returns client id, unless it is unknown or an expired
// registration.
func (d Store) OAuthClient(ctx context.Context, id string) (*OAuthClientRow, error) {
	var c OAuthClientRow
	err := d.Pool.QueryRow(ctx, `SELECT client_id, kind, metadata, fetched_at FROM oauth_clients
		WHERE client_id = $1 AND (expires_at IS NULL OR expires_at > now())`, id).Scan(&c.ClientID, &c.Kind, &c.Metadata, &c.FetchedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, db.ErrOAuthNotFound
	} else if err != nil {
		return nil, fmt.Errorf("error reading oauth client: %w", err)
	}
	return &c, nil
}

// RegisterOAuthClient records a dynamically registered client that
// expires at expiresAt unless a grant uses it first, registered from
// address from. Expired registrations and consent requests are deleted
// on the way.
func (d Store) RegisterOAuthClient(ctx context.Context, id string, metadata []byte, expiresAt time.Time, from string) error {
	if _, err := d.Pool.Exec(ctx, `DELETE FROM oauth_clients WHERE expires_at <= now()`); err != nil {
		return fmt.Errorf("error deleting expired oauth clients: %w", err)
	}
	if _, err := d.Pool.Exec(ctx, `DELETE FROM oauth_requests WHERE expires_at <= now()`); err != nil {
		return fmt.Errorf("error deleting expired oauth requests: %w", err)
	}
	if _, err := d.Pool.Exec(ctx, `INSERT INTO oauth_clients (client_id, kind, metadata, expires_at, registered_from)
		VALUES ($1, 'registered', $2, $3, $4)`, id, metadata, expiresAt, from); err != nil {
		return fmt.Errorf("error registering oauth client: %w", err)
	}
	return nil
}

// OAuthRegistrationsSince counts the registrations made from address
// from since since, and by everyone.
func (d Store) OAuthRegistrationsSince(ctx context.Context, from string, since time.Time) (byAddress, total int, err error) {
	err = d.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE registered_from = $1), count(*) FROM oauth_clients
		WHERE kind = 'registered' AND created_at > $2`, from, since).Scan(&byAddress, &total)
	if err != nil {
		return 0, 0, fmt.Errorf("error counting oauth registrations: %w", err)
	}
	return byAddress, total, nil
}

// SaveOAuthMetadataDocument caches the metadata document of URL client
// id.
func (d Store) SaveOAuthMetadataDocument(ctx context.Context, id string, metadata []byte) error {
	if _, err := d.Pool.Exec(ctx, `INSERT INTO oauth_clients (client_id, kind, metadata) VALUES ($1, 'metadata_document', $2)
		ON CONFLICT (client_id) DO UPDATE SET metadata = excluded.metadata, fetched_at = now()`, id, metadata); err != nil {
		return fmt.Errorf("error caching oauth client metadata: %w", err)
	}
	return nil
}

// OAuthRequest is an authorization request waiting on the consent page.
type OAuthRequest struct {
	ID            string
	CSRFHash      []byte
	ClientID      string
	RedirectURI   string
	Scope         string
	State         string
	CodeChallenge string
	Resource      string
	ExpiresAt     time.Time
}

// CreateOAuthRequest records a consent request.
func (d Store) CreateOAuthRequest(ctx context.Context, r OAuthRequest) error {
	if _, err := d.Pool.Exec(ctx, `INSERT INTO oauth_requests (id, csrf_hash, client_id, redirect_uri, scope, state, code_challenge, resource, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, r.ID, r.CSRFHash, r.ClientID, r.RedirectURI, r.Scope, r.State, r.CodeChallenge, r.Resource, r.ExpiresAt); err != nil {
		return fmt.Errorf("error recording oauth request: %w", err)
	}
	return nil
}

// OAuthRequestByID returns a consent request that has not expired.
func (d Store) OAuthRequestByID(ctx context.Context, id string) (*OAuthRequest, error) {
	var r OAuthRequest
	err := d.Pool.QueryRow(ctx, `SELECT id, csrf_hash, client_id, redirect_uri, scope, coalesce(state, ''), code_challenge, resource, expires_at
		FROM oauth_requests WHERE id = $1 AND expires_at > now()`, id).Scan(&r.ID, &r.CSRFHash, &r.ClientID, &r.RedirectURI, &r.Scope, &r.State, &r.CodeChallenge, &r.Resource, &r.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, db.ErrOAuthNotFound
	} else if err != nil {
		return nil, fmt.Errorf("error reading oauth request: %w", err)
	}
	return &r, nil
}

// DeleteOAuthRequest removes a consent request once answered; it reports
// whether it was still there (an answer is taken once).
func (d Store) DeleteOAuthRequest(ctx context.Context, id string) (bool, error) {
	tag, err := d.Pool.Exec(ctx, `DELETE FROM oauth_requests WHERE id = $1`, id)
	if err != nil {
		return false, fmt.Errorf("error deleting oauth request: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// OAuthGrant is a client connected to a key.
type OAuthGrant struct {
	ID         int64      `json:"id"`
	AccountID  int64      `json:"-"`
	KeyID      int64      `json:"apiKeyId"`
	ClientID   string     `json:"clientId"`
	ClientName string     `json:"clientName"`
	Scope      string     `json:"scope"`
	Resource   string     `json:"resource"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

// OAuthCode is an authorization code to issue with its grant.
type OAuthCode struct {
	Hash          []byte
	ClientID      string
	RedirectURI   string
	CodeChallenge string
	Resource      string
	ExpiresAt     time.Time
}

// CreateOAuthGrant connects a client to key keyID (of account accountID)
// and records the code that hands out its first tokens, and the grant in
// the key's audit trail. A registered client stops expiring.
func (d Store) CreateOAuthGrant(ctx context.Context, g OAuthGrant, code OAuthCode) (int64, error) {
	err := d.Bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.QueryRowContext(ctx, `INSERT INTO oauth_grants (account_id, api_key_id, client_id, client_name, scope, resource)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, g.AccountID, g.KeyID, g.ClientID, g.ClientName, g.Scope, g.Resource).Scan(&g.ID); err != nil {
			return fmt.Errorf("error recording oauth grant: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_codes (code_hash, grant_id, client_id, redirect_uri, code_challenge, resource, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, code.Hash, g.ID, code.ClientID, code.RedirectURI, code.CodeChallenge, code.Resource, code.ExpiresAt); err != nil {
			return fmt.Errorf("error recording oauth code: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE oauth_clients SET expires_at = NULL WHERE client_id = ? AND kind = 'registered'`, g.ClientID); err != nil {
			return fmt.Errorf("error keeping oauth client: %w", err)
		}
		return db.Audit(ctx, tx, g.AccountID, &g.KeyID, db.AuditOAuthGranted, db.ActorAPIKey(g.KeyID),
			map[string]any{"grantId": g.ID, "clientId": g.ClientID, "clientName": g.ClientName, "scope": g.Scope})
	})
	return g.ID, err
}

// RedeemedCode is what a used authorization code stood for.
type RedeemedCode struct {
	GrantID       int64
	ClientID      string
	RedirectURI   string
	CodeChallenge string
	Resource      string
	Expired       bool
}

// RedeemOAuthCode marks a code used and returns it. A code used before
// revokes its grant (RFC 6749 section 4.1.2) and is ErrOAuthReused; an
// unknown one db.ErrOAuthNotFound. An expired code is returned with Expired
// set (and is spent all the same).
func (d Store) RedeemOAuthCode(ctx context.Context, hash []byte) (*RedeemedCode, error) {
	var c RedeemedCode
	err := d.Pool.QueryRow(ctx, `UPDATE oauth_codes SET used_at = now() WHERE code_hash = $1 AND used_at IS NULL
		RETURNING grant_id, client_id, redirect_uri, code_challenge, resource, expires_at <= now()`, hash).
		Scan(&c.GrantID, &c.ClientID, &c.RedirectURI, &c.CodeChallenge, &c.Resource, &c.Expired)
	if errors.Is(err, pgx.ErrNoRows) {
		var grantID int64
		err := d.Pool.QueryRow(ctx, `SELECT grant_id FROM oauth_codes WHERE code_hash = $1`, hash).Scan(&grantID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, db.ErrOAuthNotFound
		} else if err != nil {
			return nil, fmt.Errorf("error reading oauth code: %w", err)
		}
		if err := d.revokeGrant(ctx, grantID, "authorization code reused"); err != nil {
			return nil, err
		}
		return nil, ErrOAuthReused
	} else if err != nil {
		return nil, fmt.Errorf("error redeeming oauth code: %w", err)
	}
	return &c, nil
}

// IssueOAuthTokens stores a new access and refresh token of grant
// grantID, unless the grant is no longer usable (db.ErrOAuthNotFound).
func (d Store) IssueOAuthTokens(ctx context.Context, grantID int64, accessHash, refreshHash []byte, accessUntil, refreshUntil time.Time) error {
	tag, err := d.Pool.Exec(ctx, `INSERT INTO oauth_tokens (token_hash, grant_id, kind, expires_at)
		SELECT t.hash, g.id, t.kind, t.until FROM oauth_grants g JOIN api_keys ak ON ak.id = g.api_key_id,
		(VALUES ($2::bytea, 'access', $3::timestamptz), ($4::bytea, 'refresh', $5::timestamptz)) AS t (hash, kind, until)
		WHERE g.id = $1 AND `+db.GrantUsableSQL, grantID, accessHash, accessUntil, refreshHash, refreshUntil)
	if err != nil {
		return fmt.Errorf("error issuing oauth tokens: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return db.ErrOAuthNotFound
	}
	return nil
}

// RefreshedGrant is the grant of a spent refresh token.
type RefreshedGrant struct {
	GrantID  int64
	ClientID string
	Scope    string
	Resource string
}

// SpendOAuthRefreshToken spends a refresh token and returns its grant. A
// token spent before revokes the grant (ErrOAuthReused); an unknown or
// expired one, or one whose grant or key is no longer usable, is
// db.ErrOAuthNotFound.
//
// The token must be client clientID's: another client's is
// db.ErrOAuthNotFound, and stays unspent.
func (d Store) SpendOAuthRefreshToken(ctx context.Context, hash []byte, clientID string) (*RefreshedGrant, error) {
	var g RefreshedGrant
	err := d.Pool.QueryRow(ctx, `UPDATE oauth_tokens t SET spent_at = now() FROM oauth_grants g JOIN api_keys ak ON ak.id = g.api_key_id
		WHERE t.token_hash = $1 AND t.kind = 'refresh' AND t.spent_at IS NULL AND t.expires_at > now() AND g.id = t.grant_id AND g.client_id = $2 AND `+db.GrantUsableSQL+`
		RETURNING g.id, g.client_id, g.scope, g.resource`, hash, clientID).Scan(&g.GrantID, &g.ClientID, &g.Scope, &g.Resource)
	if errors.Is(err, pgx.ErrNoRows) {
		var grantID int64
		var spent bool
		err := d.Pool.QueryRow(ctx, `SELECT t.grant_id, t.spent_at IS NOT NULL FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
			WHERE t.token_hash = $1 AND t.kind = 'refresh' AND g.client_id = $2`, hash, clientID).Scan(&grantID, &spent)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !spent) {
			return nil, db.ErrOAuthNotFound
		} else if err != nil {
			return nil, fmt.Errorf("error reading oauth refresh token: %w", err)
		}
		if err := d.revokeGrant(ctx, grantID, "refresh token reused"); err != nil {
			return nil, err
		}
		return nil, ErrOAuthReused
	} else if err != nil {
		return nil, fmt.Errorf("error spending oauth refresh token: %w", err)
	}
	return &g, nil
}

// RevokeOAuthToken revokes the grant of a token (RFC 7009) of client
// clientID; an unknown token, or another client's, is ignored.
func (d Store) RevokeOAuthToken(ctx context.Context, hash []byte, clientID string) error {
	var grantID int64
	err := d.Pool.QueryRow(ctx, `SELECT g.id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
		WHERE t.token_hash = $1 AND g.client_id = $2`, hash, clientID).Scan(&grantID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	} else if err != nil {
		return fmt.Errorf("error reading oauth token: %w", err)
	}
	return d.revokeGrant(ctx, grantID, "revoked by the client")
}

// revokeGrant revokes grant id and records it in the key audit trail.
func (d Store) revokeGrant(ctx context.Context, id int64, reason string) error {
	return d.Bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var accountID, keyID int64
		var clientID string
		err := tx.QueryRowContext(ctx, `UPDATE oauth_grants SET revoked_at = now(), revoked_reason = ? WHERE id = ? AND revoked_at IS NULL
			RETURNING account_id, api_key_id, client_id`, reason, id).Scan(&accountID, &keyID, &clientID)
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return fmt.Errorf("error revoking oauth grant: %w", err)
		}
		return db.Audit(ctx, tx, accountID, &keyID, db.AuditOAuthRevoked, db.ActorOAuth,
			map[string]any{"grantId": id, "clientId": clientID, "reason": reason})
	})
}

// OAuthGrants lists the usable grants of account accountID (its
// connected clients), newest first.
func (d Store) OAuthGrants(ctx context.Context, accountID int64) ([]OAuthGrant, error) {
	rows, err := d.Pool.Query(ctx, `SELECT g.id, g.account_id, g.api_key_id, g.client_id, g.client_name, g.scope, g.resource, g.created_at, g.last_used_at
		FROM oauth_grants g JOIN api_keys ak ON ak.id = g.api_key_id
		WHERE g.account_id = $1 AND `+db.GrantUsableSQL+` ORDER BY g.id DESC`, accountID)
	if err != nil {
		return nil, fmt.Errorf("error listing oauth grants: %w", err)
	}
	defer rows.Close()
	out := []OAuthGrant{}
	for rows.Next() {
		var g OAuthGrant
		if err := rows.Scan(&g.ID, &g.AccountID, &g.KeyID, &g.ClientID, &g.ClientName, &g.Scope, &g.Resource, &g.CreatedAt, &g.LastUsedAt); err != nil {
			return nil, fmt.Errorf("error scanning oauth grant: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error listing oauth grants: %w", err)
	}
	return out, nil
}

// RevokeOAuthGrant revokes grant id of account accountID (0: any
// account) for actor, recorded in the key audit trail. ENOTFOUND when the
// account has no such usable grant.
func (d Store) RevokeOAuthGrant(ctx context.Context, accountID, id int64, actor string) error {
	return d.Bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var acct, keyID int64
		var clientID string
		err := tx.QueryRowContext(ctx, `UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'revoked by the account'
			WHERE id = ? AND (? = 0 OR account_id = ?) AND revoked_at IS NULL
			RETURNING account_id, api_key_id, client_id`, id, accountID, accountID).Scan(&acct, &keyID, &clientID)
		if err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return cryptointel.Errorf(cryptointel.ENOTFOUND, "Connected client %d not found.", id)
			}
			return fmt.Errorf("error revoking oauth grant: %w", err)
		}
		return db.Audit(ctx, tx, acct, &keyID, db.AuditOAuthRevoked, actor, map[string]any{"grantId": id, "clientId": clientID})
	})
}

// OAuthGrantScope returns the scope of grant id.
func (d Store) OAuthGrantScope(ctx context.Context, id int64) (string, error) {
	var scope string
	if err := d.Pool.QueryRow(ctx, `SELECT scope FROM oauth_grants WHERE id = $1`, id).Scan(&scope); err != nil {
		return "", fmt.Errorf("error reading oauth grant scope: %w", err)
	}
	return scope, nil
}
