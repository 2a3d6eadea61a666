package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
)

// Key lifecycle: listing, revocation, rotation, expiry and plan changes,
// each change recorded in api_key_audit in its own transaction.
//
// No server process caches a key or an account's plan: every request reads
// them in its metering statement (meterSQL) on the primary, so a change
// committed here is seen by the next request on every replica. Open live
// streams learn of it at their next credit settlement (one second by
// default), which closes them.

// NewAPIKey describes a key to create.
type NewAPIKey struct {
	// Account is the account's name; it is created on Plan when new.
	Account string
	// Plan is the plan of a new account; for an existing one it must be
	// empty or the account's plan.
	Plan string
	// ExpiresAt, when set, is when the key stops working; it must be in
	// the future.
	ExpiresAt *time.Time
	// Actor is who creates it, for the audit trail. Defaults to
	// cryptointel.ActorCLI.
	Actor string
}

// KeyFilter selects the keys ListAPIKeys returns.
type KeyFilter struct {
	// AccountID, when non-zero, keeps the keys of that account.
	AccountID int64
	// Account, when set, keeps the keys of the account of that name.
	Account string
	// ActiveOnly leaves out revoked and expired keys.
	ActiveOnly bool
	// Limit bounds the number of keys (newest first); 0 for no bound.
	Limit int
	// Offset skips that many keys.
	Offset int
}

// keyViewSQL selects APIKeyView columns for the api_keys rows ak of the
// WHERE clause that follows. lastUsedAt is the key's latest rate window (the
// primary key of rate_windows serves it as one index probe per key).
const keyViewSQL = `
	SELECT ak.id, ak.account_id, a.name, a.plan, ak.prefix,
		CASE WHEN ak.revoked_at IS NOT NULL THEN 'revoked'
		     WHEN ak.expires_at <= now() THEN 'expired'
		     ELSE 'active' END,
		ak.created_at, ak.expires_at, ak.revoked_at,
		(SELECT max(rw.window_start) FROM rate_windows rw WHERE rw.api_key_id = ak.id),
		ak.replaced_by
	FROM api_keys ak JOIN accounts a ON a.id = ak.account_id`

func scanKeyView(row interface{ Scan(...any) error }) (*cryptointel.APIKeyView, error) {
	k := new(cryptointel.APIKeyView)
	err := row.Scan(&k.ID, &k.AccountID, &k.Account, &k.Plan, &k.Prefix, &k.Status,
		&k.CreatedAt, &k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt, &k.ReplacedBy)
	if err != nil {
		return nil, err
	}
	k.CreatedAt = k.CreatedAt.UTC()
	for _, t := range []**time.Time{&k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt} {
		if *t != nil {
			u := (*t).UTC()
			*t = &u
		}
	}
	return k, nil
}

// ListAPIKeys returns the keys f selects, newest first.
func ListAPIKeys(ctx context.Context, idb bun.IDB, f KeyFilter) ([]*cryptointel.APIKeyView, error) {
	var where []string
	var args []any
	if f.AccountID != 0 {
		where, args = append(where, "ak.account_id = ?"), append(args, f.AccountID)
	}
	if f.Account != "" {
		where, args = append(where, "a.name = ?"), append(args, f.Account)
	}
	if f.ActiveOnly {
		where = append(where, "ak.revoked_at IS NULL AND (ak.expires_at IS NULL OR ak.expires_at > now())")
	}
	q := keyViewSQL
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY ak.id DESC"
	if f.Limit > 0 {
		q, args = q+" LIMIT ?", append(args, f.Limit)
	}
	if f.Offset > 0 {
		q, args = q+" OFFSET ?", append(args, f.Offset)
	}
	rows, err := idb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("error listing api keys: %w", err)
	}
	defer rows.Close()
	out := []*cryptointel.APIKeyView{}
	for rows.Next() {
		k, err := scanKeyView(rows)
		if err != nil {
			return nil, fmt.Errorf("error scanning api keys: %w", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error listing api keys: %w", err)
	}
	return out, nil
}

// APIKeyByID returns key id; with accountID non-zero, only when it belongs
// to that account. Returns ENOTFOUND otherwise.
func APIKeyByID(ctx context.Context, idb bun.IDB, id, accountID int64) (*cryptointel.APIKeyView, error) {
	k, err := scanKeyView(idb.QueryRowContext(ctx, keyViewSQL+" WHERE ak.id = ? AND (? = 0 OR ak.account_id = ?)", id, accountID, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errKeyNotFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("error reading api key: %w", err)
	}
	return k, nil
}

func errKeyNotFound(id int64) error {
	return cryptointel.Errorf(cryptointel.ENOTFOUND, "API key %d not found.", id)
}

// KeyRevocation is a key to revoke.
type KeyRevocation struct {
	// KeyID is the key.
	KeyID int64
	// AccountID, when non-zero, is the account the key must belong to
	// (a revocation through /v1/keys); another account's key is not found.
	AccountID int64
	// Actor is who revokes it. Defaults to cryptointel.ActorCLI.
	Actor string
	// Reason is recorded in the audit trail; optional.
	Reason string
}

// RevokeAPIKey revokes a key at once and records it. Returns ENOTFOUND for
// an unknown key (or another account's), ECONFLICT for one already revoked.
func RevokeAPIKey(ctx context.Context, idb bun.IDB, r KeyRevocation) (*cryptointel.APIKeyView, error) {
	err := idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		k, err := lockKey(ctx, tx, r.KeyID, r.AccountID)
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return cryptointel.Errorf(cryptointel.ECONFLICT, "API key %d is already revoked.", r.KeyID)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET revoked_at = now() WHERE id = ?", r.KeyID); err != nil {
			return fmt.Errorf("error revoking api key: %w", err)
		}
		detail := map[string]any{}
		if r.Reason != "" {
			detail["reason"] = r.Reason
		}
		return audit(ctx, tx, k.AccountID, &r.KeyID, cryptointel.AuditKeyRevoked, r.Actor, detail)
	})
	if err != nil {
		return nil, err
	}
	return APIKeyByID(ctx, idb, r.KeyID, 0)
}

// MaxRotationGrace bounds how long a rotated key may keep working beside
// its successor.
var MaxRotationGrace = time.Duration(cryptointel.KeyRotationGraceSeconds.Max) * time.Second

// KeyRotation is a key to replace.
type KeyRotation struct {
	// KeyID is the key to replace.
	KeyID int64
	// AccountID, when non-zero, is the account the key must belong to.
	AccountID int64
	// Grace is how long the old key keeps working (0 to MaxRotationGrace):
	// it then expires. Zero revokes it at once.
	Grace time.Duration
	// ExpiresAt is the new key's expiry; nil for none.
	ExpiresAt *time.Time
	// Actor is who rotates it. Defaults to cryptointel.ActorCLI.
	Actor string
}

// RotateAPIKey creates a key on the same account to replace r.KeyID and
// retires the old one: revoked at once, or expiring after r.Grace. The new
// key's plaintext is returned once. Returns ENOTFOUND for an unknown key
// (or another account's), ECONFLICT for a key that is revoked, expired or
// already rotated, EINVALID for a grace out of bounds or a past expiry.
func RotateAPIKey(ctx context.Context, idb bun.IDB, r KeyRotation) (plaintext string, created, old *cryptointel.APIKeyView, err error) {
	if r.Grace < 0 || r.Grace > MaxRotationGrace {
		return "", nil, nil, cryptointel.Errorf(cryptointel.EINVALID, "grace must be between 0 and %s.", fmtDuration(MaxRotationGrace))
	}
	if err := checkExpiry(r.ExpiresAt); err != nil {
		return "", nil, nil, err
	}
	var newID int64
	err = idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		k, err := lockKey(ctx, tx, r.KeyID, r.AccountID)
		if err != nil {
			return err
		}
		switch {
		case k.RevokedAt != nil:
			return cryptointel.Errorf(cryptointel.ECONFLICT, "API key %d is revoked: create a new key instead.", r.KeyID)
		case k.ReplacedBy != nil:
			return cryptointel.Errorf(cryptointel.ECONFLICT, "API key %d was already rotated (to key %d).", r.KeyID, *k.ReplacedBy)
		case k.expired:
			return cryptointel.Errorf(cryptointel.ECONFLICT, "API key %d has expired: create a new key instead.", r.KeyID)
		}
		var key *cryptointel.APIKey
		plaintext, key, err = insertKey(ctx, tx, k.AccountID, r.ExpiresAt)
		if err != nil {
			return err
		}
		newID = key.ID
		retire := "revoked_at = now()"
		if r.Grace > 0 {
			retire = "expires_at = least(coalesce(expires_at, 'infinity'), now() + ?::interval)"
		}
		args := []any{}
		if r.Grace > 0 {
			args = append(args, fmt.Sprintf("%d microseconds", r.Grace.Microseconds()))
		}
		args = append(args, newID, r.KeyID)
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET "+retire+", replaced_by = ? WHERE id = ?", args...); err != nil {
			return fmt.Errorf("error retiring rotated api key: %w", err)
		}
		if err := audit(ctx, tx, k.AccountID, &r.KeyID, cryptointel.AuditKeyRotated, r.Actor,
			map[string]any{"newKeyId": newID, "graceSeconds": int64(r.Grace / time.Second)}); err != nil {
			return err
		}
		return audit(ctx, tx, k.AccountID, &newID, cryptointel.AuditKeyCreated, r.Actor, keyCreatedDetail(r.ExpiresAt, &r.KeyID))
	})
	if err != nil {
		return "", nil, nil, err
	}
	if created, err = APIKeyByID(ctx, idb, newID, 0); err != nil {
		return "", nil, nil, err
	}
	if old, err = APIKeyByID(ctx, idb, r.KeyID, 0); err != nil {
		return "", nil, nil, err
	}
	return plaintext, created, old, nil
}

// SetAccountPlan moves the account named account to plan and records it;
// it returns the plan it was on (equal to plan when nothing changed, and
// then nothing is recorded). Returns ENOTFOUND for an unknown account,
// EINVALID for an unknown plan.
func SetAccountPlan(ctx context.Context, idb bun.IDB, account, plan, actor string) (from string, err error) {
	err = idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := checkPlan(ctx, tx, plan); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id, plan FROM accounts WHERE name = ? FOR UPDATE", account).Scan(&id, &from)
		if errors.Is(err, sql.ErrNoRows) {
			return cryptointel.Errorf(cryptointel.ENOTFOUND, "account %q not found", account)
		} else if err != nil {
			return fmt.Errorf("error reading account: %w", err)
		}
		if from == plan {
			return nil
		}
		if _, err := tx.ExecContext(ctx, "UPDATE accounts SET plan = ? WHERE id = ?", plan, id); err != nil {
			return fmt.Errorf("error setting account plan: %w", err)
		}
		return audit(ctx, tx, id, nil, cryptointel.AuditPlanSet, actor, map[string]any{"from": from, "to": plan})
	})
	return from, err
}

// KeyAudit returns the latest limit entries of the audit trail of account
// accountID (every account's when 0), newest first.
func KeyAudit(ctx context.Context, idb bun.IDB, accountID int64, limit int) ([]*cryptointel.KeyAuditEntry, error) {
	rows, err := idb.QueryContext(ctx, `
		SELECT id, at, account_id, api_key_id, action, actor, detail FROM api_key_audit
		WHERE ? = 0 OR account_id = ? ORDER BY id DESC LIMIT ?`, accountID, accountID, limit)
	if err != nil {
		return nil, fmt.Errorf("error reading key audit: %w", err)
	}
	defer rows.Close()
	out := []*cryptointel.KeyAuditEntry{}
	for rows.Next() {
		e := new(cryptointel.KeyAuditEntry)
		var detail []byte
		if err := rows.Scan(&e.ID, &e.At, &e.AccountID, &e.APIKeyID, &e.Action, &e.Actor, &detail); err != nil {
			return nil, fmt.Errorf("error scanning key audit: %w", err)
		}
		e.At = e.At.UTC()
		if err := json.Unmarshal(detail, &e.Detail); err != nil {
			return nil, fmt.Errorf("error decoding key audit detail: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error reading key audit: %w", err)
	}
	return out, nil
}

// lockedKey is a key row read FOR UPDATE.
type lockedKey struct {
	AccountID  int64
	RevokedAt  *time.Time
	ReplacedBy *int64
	expired    bool
}

// lockKey reads and locks key id (of accountID when non-zero).
func lockKey(ctx context.Context, tx bun.Tx, id, accountID int64) (*lockedKey, error) {
	var k lockedKey
	err := tx.QueryRowContext(ctx, `
		SELECT account_id, revoked_at, replaced_by, coalesce(expires_at <= now(), false)
		FROM api_keys WHERE id = ? AND (? = 0 OR account_id = ?) FOR UPDATE`, id, accountID, accountID).
		Scan(&k.AccountID, &k.RevokedAt, &k.ReplacedBy, &k.expired)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errKeyNotFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("error reading api key: %w", err)
	}
	return &k, nil
}

// insertKey adds a fresh key to account accountID and returns its
// plaintext, shown once.
func insertKey(ctx context.Context, tx bun.Tx, accountID int64, expiresAt *time.Time) (string, *cryptointel.APIKey, error) {
	plaintext, err := cryptointel.NewAPIKeyPlaintext()
	if err != nil {
		return "", nil, err
	}
	key := &cryptointel.APIKey{AccountID: accountID, Prefix: plaintext[:cryptointel.APIKeyVisiblePrefix], Hash: cryptointel.HashAPIKey(plaintext), ExpiresAt: expiresAt}
	if _, err := tx.NewInsert().Model(key).Returning("id, created_at").Exec(ctx); err != nil {
		return "", nil, fmt.Errorf("error creating api key: %w", err)
	}
	return plaintext, key, nil
}

// audit records one change of account accountID (key keyID, when it is
// about one).
func audit(ctx context.Context, tx bun.Tx, accountID int64, keyID *int64, action, actor string, detail map[string]any) error {
	if actor == "" {
		actor = cryptointel.ActorCLI
	}
	if detail == nil {
		detail = map[string]any{}
	}
	raw, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("error encoding audit detail: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO api_key_audit (account_id, api_key_id, action, actor, detail) VALUES (?, ?, ?, ?, ?::jsonb)`,
		accountID, keyID, action, actor, string(raw)); err != nil {
		return fmt.Errorf("error recording key audit: %w", err)
	}
	return nil
}

// keyCreatedDetail is the audit detail of a created key.
func keyCreatedDetail(expiresAt *time.Time, rotatedFrom *int64) map[string]any {
	d := map[string]any{}
	if expiresAt != nil {
		d["expiresAt"] = expiresAt.UTC().Format(time.RFC3339)
	}
	if rotatedFrom != nil {
		d["rotatedFrom"] = *rotatedFrom
	}
	return d
}

// checkExpiry refuses an expiry that is not in the future.
func checkExpiry(expiresAt *time.Time) error {
	if expiresAt != nil && !expiresAt.After(time.Now()) {
		return cryptointel.Errorf(cryptointel.EINVALID, "expiry %s is not in the future.", expiresAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// fmtDuration writes d in whole hours when it is some ("168h"), else as
// time.Duration does.
func fmtDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}
