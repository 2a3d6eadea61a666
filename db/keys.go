package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/cryptointel/cryptointel"
)

// newAPIKeyPlaintext returns a fresh random key: "ci_" followed by the
// unpadded base64url encoding of 32 bytes from crypto/rand.
func newAPIKeyPlaintext() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("error reading random bytes: %w", err)
	}
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Messages of key management the key store refuses with.
const (
	// MsgTooManyKeys (409) refuses a key beyond the account's active keys:
	// the account's count and the cap.
	MsgTooManyKeys = "Too many active API keys: this account has %d, and at most %d may be active at a time. Revoke a key (or rotate without graceSeconds) first."
	// MsgSuccessorOutlives (400) refuses a rotation or a restricted key
	// whose expiry is later than the key it comes from: the expiry asked
	// for, the key and its expiry.
	MsgSuccessorOutlives = "expiry %s is later than key %d's (%s): a key never outlives the key it comes from."
)

// Key lifecycle: listing, revocation, rotation, expiry and plan changes,
// each change recorded in api_key_audit in its own transaction.
//
// No server process caches a key or an account's plan: every request reads
// them in its metering statement (Meter) on the primary, so a change
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
	// ActorCLI.
	Actor string
	// Scopes are the key's scopes (ScopeData, ScopeManagement). Empty
	// gives both when the account has no active key with the management
	// scope (its first key), else ScopeData alone.
	Scopes []string
	// Surfaces, when set, makes it a restricted key: reading those
	// surfaces only (RestrictableSurfaces), data scope only.
	Surfaces []string
	// MaxActive caps the account's active keys (0:
	// DefaultMaxActiveKeys, negative: no cap).
	MaxActive int
}

// KeyFilter selects the keys ListAPIKeys returns.
type KeyFilter struct {
	// AccountID, when non-zero, keeps the keys of that account.
	AccountID int64
	// KeyID, when non-zero, keeps that key alone.
	KeyID int64
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
// WHERE clause that follows. lastUsedAt is the key's latest rate window: the
// later of its latest rate_windows row (requests not charged, and every
// request metered before migration 025) and the last_window of its latest
// day row that has one (charged requests); the primary keys serve each as a
// backward index scan that stops at its first row.
const keyViewSQL = `
	SELECT ak.id, ak.account_id, a.name, a.plan, ak.prefix,
		CASE WHEN ak.revoked_at IS NOT NULL THEN 'revoked'
		     WHEN ak.expires_at <= now() THEN 'expired'
		     ELSE 'active' END,
		ak.created_at, ak.expires_at, ak.revoked_at,
		greatest((SELECT max(rw.window_start) FROM rate_windows rw WHERE rw.api_key_id = ak.id),
			(SELECT ud.last_window FROM usage_daily ud WHERE ud.api_key_id = ak.id AND ud.last_window IS NOT NULL
			 ORDER BY ud.day DESC LIMIT 1)),
		ak.replaced_by, ak.scopes, ak.surfaces
	FROM api_keys ak JOIN accounts a ON a.id = ak.account_id`

func scanKeyView(row interface{ Scan(...any) error }) (*APIKeyView, error) {
	k := new(APIKeyView)
	err := row.Scan(&k.ID, &k.AccountID, &k.Account, &k.Plan, &k.Prefix, &k.Status,
		&k.CreatedAt, &k.ExpiresAt, &k.RevokedAt, &k.LastUsedAt, &k.ReplacedBy,
		pgdialect.Array(&k.Scopes), pgdialect.Array(&k.Surfaces))
	if err != nil {
		return nil, err
	}
	if k.Scopes == nil {
		k.Scopes = []string{}
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
func ListAPIKeys(ctx context.Context, idb bun.IDB, f KeyFilter) ([]*APIKeyView, error) {
	var where []string
	var args []any
	if f.AccountID != 0 {
		where, args = append(where, "ak.account_id = ?"), append(args, f.AccountID)
	}
	if f.Account != "" {
		where, args = append(where, "a.name = ?"), append(args, f.Account)
	}
	if f.KeyID != 0 {
		where, args = append(where, "ak.id = ?"), append(args, f.KeyID)
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
	out := []*APIKeyView{}
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
func APIKeyByID(ctx context.Context, idb bun.IDB, id, accountID int64) (*APIKeyView, error) {
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
	// Actor is who revokes it. Defaults to ActorCLI.
	Actor string
	// Reason is recorded in the audit trail; optional.
	Reason string
}

// RevokeAPIKey revokes a key at once and records it. Returns ENOTFOUND for
// an unknown key (or another account's), ECONFLICT for one already revoked.
func RevokeAPIKey(ctx context.Context, idb bun.IDB, r KeyRevocation) (*APIKeyView, error) {
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
		return Audit(ctx, tx, k.AccountID, &r.KeyID, AuditKeyRevoked, r.Actor, detail)
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
	// ExpiresAt, when set, is the new key's expiry: at most the old key's.
	// Nil keeps the old key's expiry (none when it had none).
	ExpiresAt *time.Time
	// Actor is who rotates it. Defaults to ActorCLI.
	Actor string
	// MaxActive caps the account's active keys (0:
	// DefaultMaxActiveKeys, negative: no cap). A rotation
	// without grace retires the old key first, so it never meets the cap.
	MaxActive int
}

// RotateAPIKey creates a key on the same account to replace r.KeyID and
// retires the old one: revoked at once, or expiring after r.Grace. The new
// key inherits the old one whole: its scopes, its restriction and its
// expiry (r.ExpiresAt may shorten it, never extend it); the account's plan
// and meters are the account's, so a rotation changes neither. The new
// key's plaintext is returned once. Returns ENOTFOUND for an unknown key
// (or another account's), ECONFLICT for a key that is revoked, expired or
// already rotated, or when a rotation with grace would take the account
// past its active keys, EINVALID for a grace out of bounds or an expiry
// in the past or after the old key's.
func RotateAPIKey(ctx context.Context, idb bun.IDB, r KeyRotation) (plaintext string, created, old *APIKeyView, err error) {
	if r.Grace < 0 || r.Grace > MaxRotationGrace {
		return "", nil, nil, cryptointel.Errorf(cryptointel.EINVALID, "grace must be between 0 and %s.", fmtDuration(MaxRotationGrace))
	}
	if err := checkExpiry(r.ExpiresAt); err != nil {
		return "", nil, nil, err
	}
	var newID int64
	err = idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := lockKeyAccount(ctx, tx, r.KeyID, r.AccountID); err != nil {
			return err
		}
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
		expiresAt, err := inheritedExpiry(r.KeyID, k.ExpiresAt, r.ExpiresAt)
		if err != nil {
			return err
		}
		// The old key is retired first: without grace it no longer counts
		// among the account's active keys when the new one is counted.
		retire := "revoked_at = now()"
		args := []any{}
		if r.Grace > 0 {
			retire = "expires_at = least(coalesce(expires_at, 'infinity'), now() + ?::interval)"
			args = append(args, fmt.Sprintf("%d microseconds", r.Grace.Microseconds()))
		}
		args = append(args, r.KeyID)
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET "+retire+" WHERE id = ?", args...); err != nil {
			return fmt.Errorf("error retiring rotated api key: %w", err)
		}
		if err := checkActiveKeys(ctx, tx, k.AccountID, r.MaxActive); err != nil {
			return err
		}
		var key *cryptointel.APIKey
		plaintext, key, err = insertKey(ctx, tx, k.AccountID, keySpec{ExpiresAt: expiresAt, Scopes: k.Scopes, Surfaces: k.Surfaces})
		if err != nil {
			return err
		}
		newID = key.ID
		if _, err := tx.ExecContext(ctx, "UPDATE api_keys SET replaced_by = ? WHERE id = ?", newID, r.KeyID); err != nil {
			return fmt.Errorf("error linking rotated api key: %w", err)
		}
		if err := Audit(ctx, tx, k.AccountID, &r.KeyID, AuditKeyRotated, r.Actor,
			map[string]any{"newKeyId": newID, "graceSeconds": int64(r.Grace / time.Second)}); err != nil {
			return err
		}
		return Audit(ctx, tx, k.AccountID, &newID, AuditKeyCreated, r.Actor, keyCreatedDetail(key, &r.KeyID))
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

// RestrictedKey is a restricted key to create from a key of the account.
type RestrictedKey struct {
	// AccountID is the account.
	AccountID int64
	// FromKeyID is the key that creates it: the new key never outlives it
	// and, when it is restricted itself, never reaches beyond its
	// surfaces.
	FromKeyID int64
	// Surfaces are the surfaces the new key may read
	// (RestrictableSurfaces).
	Surfaces []string
	// ExpiresAt, when set, is the new key's expiry: at most FromKeyID's.
	// Nil takes FromKeyID's.
	ExpiresAt *time.Time
	// Actor is who creates it. Defaults to ActorCLI.
	Actor string
	// MaxActive caps the account's active keys (0:
	// DefaultMaxActiveKeys, negative: no cap).
	MaxActive int
}

// CreateRestrictedKey adds a restricted key to an account: data scope,
// reading rk.Surfaces only. Its plaintext is returned once. Returns
// EINVALID for surfaces that are empty, unknown or beyond the creating
// key's, or an expiry in the past or after the creating key's; ECONFLICT
// at the account's active keys; ENOTFOUND when rk.FromKeyID is not a key
// of the account.
func CreateRestrictedKey(ctx context.Context, idb bun.IDB, rk RestrictedKey) (plaintext string, created *APIKeyView, err error) {
	surfaces, err := checkSurfaces(rk.Surfaces)
	if err != nil {
		return "", nil, err
	}
	if len(surfaces) == 0 {
		return "", nil, cryptointel.Errorf(cryptointel.EINVALID, "surfaces is required: one or more of %s.", strings.Join(RestrictableSurfaces, ", "))
	}
	if err := checkExpiry(rk.ExpiresAt); err != nil {
		return "", nil, err
	}
	var newID int64
	err = idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := lockKeyAccount(ctx, tx, rk.FromKeyID, rk.AccountID); err != nil {
			return err
		}
		from, err := lockKey(ctx, tx, rk.FromKeyID, rk.AccountID)
		if err != nil {
			return err
		}
		if from.Surfaces != nil {
			for _, s := range surfaces {
				if !slices.Contains(from.Surfaces, s) {
					return cryptointel.Errorf(cryptointel.EINVALID, "surface %q is beyond key %d's (%s): a restricted key never reaches further than the key that creates it.",
						s, rk.FromKeyID, strings.Join(from.Surfaces, ", "))
				}
			}
		}
		expiresAt, err := inheritedExpiry(rk.FromKeyID, from.ExpiresAt, rk.ExpiresAt)
		if err != nil {
			return err
		}
		if err := checkActiveKeys(ctx, tx, from.AccountID, rk.MaxActive); err != nil {
			return err
		}
		var key *cryptointel.APIKey
		plaintext, key, err = insertKey(ctx, tx, from.AccountID, keySpec{ExpiresAt: expiresAt, Scopes: []string{ScopeData}, Surfaces: surfaces})
		if err != nil {
			return err
		}
		newID = key.ID
		return Audit(ctx, tx, from.AccountID, &newID, AuditKeyCreated, rk.Actor, keyCreatedDetail(key, nil))
	})
	if err != nil {
		return "", nil, err
	}
	if created, err = APIKeyByID(ctx, idb, newID, 0); err != nil {
		return "", nil, err
	}
	return plaintext, created, nil
}

// Recovery is the recovery of an account whose keys were stolen.
type Recovery struct {
	// Account is the account's name.
	Account string
	// ExpiresAt, when set, is the new key's expiry.
	ExpiresAt *time.Time
	// Reason is recorded with each revocation. Defaults to "recovery".
	Reason string
	// Actor is who recovers it. Defaults to ActorCLI.
	Actor string
}

// RecoverAccount revokes every key of an account that is not revoked yet
// (active, in a rotation's grace period, or expired) and creates one new
// key with the data and management scopes, in one transaction: whoever
// held the old keys is out from the next request on, on every replica, and
// the owner gets the account back with the new key. The account's plan,
// meters, webhooks and export jobs are untouched. Returns the new key's
// plaintext (shown once), the key and the ids of the keys revoked;
// ENOTFOUND for an unknown account.
func RecoverAccount(ctx context.Context, idb bun.IDB, rc Recovery) (plaintext string, key *cryptointel.APIKey, revoked []int64, err error) {
	if rc.Reason == "" {
		rc.Reason = "recovery"
	}
	if err := checkExpiry(rc.ExpiresAt); err != nil {
		return "", nil, nil, err
	}
	err = idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var accountID int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM accounts WHERE name = ? FOR UPDATE", rc.Account).Scan(&accountID)
		if errors.Is(err, sql.ErrNoRows) {
			return cryptointel.Errorf(cryptointel.ENOTFOUND, "account %q not found", rc.Account)
		} else if err != nil {
			return fmt.Errorf("error reading account: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `UPDATE api_keys SET revoked_at = now() WHERE account_id = ? AND revoked_at IS NULL RETURNING id`, accountID)
		if err != nil {
			return fmt.Errorf("error revoking the account's keys: %w", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("error revoking the account's keys: %w", err)
			}
			revoked = append(revoked, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("error revoking the account's keys: %w", err)
		}
		slices.Sort(revoked)
		for _, id := range revoked {
			if err := Audit(ctx, tx, accountID, &id, AuditKeyRevoked, rc.Actor, map[string]any{"reason": rc.Reason}); err != nil {
				return err
			}
		}
		if plaintext, key, err = insertKey(ctx, tx, accountID, keySpec{ExpiresAt: rc.ExpiresAt, Scopes: []string{ScopeData, ScopeManagement}}); err != nil {
			return err
		}
		if err := Audit(ctx, tx, accountID, &key.ID, AuditKeyCreated, rc.Actor, keyCreatedDetail(key, nil)); err != nil {
			return err
		}
		return Audit(ctx, tx, accountID, nil, AuditKeysRecovered, rc.Actor, map[string]any{"revoked": revoked, "newKeyId": key.ID})
	})
	if err != nil {
		return "", nil, nil, err
	}
	return plaintext, key, revoked, nil
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
		return Audit(ctx, tx, id, nil, AuditPlanSet, actor, map[string]any{"from": from, "to": plan})
	})
	return from, err
}

// KeyAudit returns the latest limit entries of the audit trail of account
// accountID (every account's when 0), newest first.
func KeyAudit(ctx context.Context, idb bun.IDB, accountID int64, limit int) ([]*KeyAuditEntry, error) {
	rows, err := idb.QueryContext(ctx, `
		SELECT id, at, account_id, api_key_id, action, actor, detail FROM api_key_audit
		WHERE ? = 0 OR account_id = ? ORDER BY id DESC LIMIT ?`, accountID, accountID, limit)
	if err != nil {
		return nil, fmt.Errorf("error reading key audit: %w", err)
	}
	defer rows.Close()
	out := []*KeyAuditEntry{}
	for rows.Next() {
		e := new(KeyAuditEntry)
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
	ExpiresAt  *time.Time
	Scopes     []string
	Surfaces   []string
	expired    bool
}

// lockKey reads and locks key id (of accountID when non-zero).
func lockKey(ctx context.Context, tx bun.Tx, id, accountID int64) (*lockedKey, error) {
	var k lockedKey
	err := tx.QueryRowContext(ctx, `
		SELECT account_id, revoked_at, replaced_by, expires_at, scopes, surfaces, coalesce(expires_at <= now(), false)
		FROM api_keys WHERE id = ? AND (? = 0 OR account_id = ?) FOR UPDATE`, id, accountID, accountID).
		Scan(&k.AccountID, &k.RevokedAt, &k.ReplacedBy, &k.ExpiresAt, pgdialect.Array(&k.Scopes), pgdialect.Array(&k.Surfaces), &k.expired)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errKeyNotFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("error reading api key: %w", err)
	}
	return &k, nil
}

// lockKeyAccount locks the account of key id (of accountID when non-zero),
// before the key: every change that adds a key takes the account's row
// first (the active keys are counted under it), then key rows.
func lockKeyAccount(ctx context.Context, tx bun.Tx, id, accountID int64) error {
	var locked int64
	err := tx.QueryRowContext(ctx, `
		SELECT a.id FROM accounts a
		WHERE a.id = (SELECT account_id FROM api_keys WHERE id = ? AND (? = 0 OR account_id = ?))
		FOR UPDATE`, id, accountID, accountID).Scan(&locked)
	if errors.Is(err, sql.ErrNoRows) {
		return errKeyNotFound(id)
	} else if err != nil {
		return fmt.Errorf("error locking account: %w", err)
	}
	return nil
}

// checkActiveKeys refuses one more key on account accountID when it has
// maxActive active keys (0: DefaultMaxActiveKeys; negative: no
// cap). The caller holds the account's row lock, so the count is exact
// among concurrent creations; it runs in its own statement, whose snapshot
// follows the lock.
func checkActiveKeys(ctx context.Context, tx bun.Tx, accountID int64, maxActive int) error {
	if maxActive < 0 {
		return nil
	}
	if maxActive == 0 {
		maxActive = DefaultMaxActiveKeys
	}
	var n int
	if err := tx.QueryRowContext(ctx, `
		SELECT count(*) FROM api_keys
		WHERE account_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`, accountID).Scan(&n); err != nil {
		return fmt.Errorf("error counting active api keys: %w", err)
	}
	if n >= maxActive {
		return cryptointel.Errorf(cryptointel.ECONFLICT, MsgTooManyKeys, n, maxActive)
	}
	return nil
}

// inheritedExpiry is the expiry of a key made from key fromID, which
// expires at from (nil: never): asked when set, which must not be later
// than from, else from.
func inheritedExpiry(fromID int64, from, asked *time.Time) (*time.Time, error) {
	if asked == nil {
		return from, nil
	}
	if from != nil && asked.After(*from) {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, MsgSuccessorOutlives,
			asked.UTC().Format(time.RFC3339), fromID, from.UTC().Format(time.RFC3339))
	}
	return asked, nil
}

// keySpec is what a new key carries besides its account.
type keySpec struct {
	ExpiresAt *time.Time
	Scopes    []string
	Surfaces  []string
}

// insertKey adds a fresh key to account accountID and returns its
// plaintext, shown once.
func insertKey(ctx context.Context, tx bun.Tx, accountID int64, spec keySpec) (string, *cryptointel.APIKey, error) {
	plaintext, err := newAPIKeyPlaintext()
	if err != nil {
		return "", nil, err
	}
	scopes := spec.Scopes
	if len(scopes) == 0 {
		scopes = []string{ScopeData}
	}
	key := &cryptointel.APIKey{AccountID: accountID, Prefix: plaintext[:cryptointel.APIKeyVisiblePrefix], Hash: HashAPIKey(plaintext),
		ExpiresAt: spec.ExpiresAt, Scopes: scopes, Surfaces: spec.Surfaces}
	if _, err := tx.NewInsert().Model(key).Returning("id, created_at").Exec(ctx); err != nil {
		return "", nil, fmt.Errorf("error creating api key: %w", err)
	}
	return plaintext, key, nil
}

// Audit records one change of account accountID (key keyID, when it is
// about one).
func Audit(ctx context.Context, tx bun.Tx, accountID int64, keyID *int64, action, actor string, detail map[string]any) error {
	if actor == "" {
		actor = ActorCLI
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

// keyCreatedDetail is the audit detail of a created key: its expiry,
// scopes and restriction, and the key it replaces.
func keyCreatedDetail(key *cryptointel.APIKey, rotatedFrom *int64) map[string]any {
	d := map[string]any{"scopes": key.Scopes}
	if key.ExpiresAt != nil {
		d["expiresAt"] = key.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if key.Surfaces != nil {
		d["surfaces"] = key.Surfaces
	}
	if rotatedFrom != nil {
		d["rotatedFrom"] = *rotatedFrom
	}
	return d
}

// checkScopes returns scopes validated and in a fixed order; empty stays
// empty.
func checkScopes(scopes []string) ([]string, error) {
	var out []string
	for _, s := range []string{ScopeData, ScopeManagement} {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	for _, s := range scopes {
		if s != ScopeData && s != ScopeManagement {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "unknown scope %q (one of %s, %s).", s, ScopeData, ScopeManagement)
		}
	}
	return out, nil
}

// checkSurfaces returns surfaces validated, deduplicated and in
// RestrictableSurfaces' order; nil stays nil.
func checkSurfaces(surfaces []string) ([]string, error) {
	if surfaces == nil {
		return nil, nil
	}
	for _, s := range surfaces {
		if !slices.Contains(RestrictableSurfaces, s) {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "unknown surface %q (one of %s).", s, strings.Join(RestrictableSurfaces, ", "))
		}
	}
	out := []string{}
	for _, s := range RestrictableSurfaces {
		if slices.Contains(surfaces, s) {
			out = append(out, s)
		}
	}
	return out, nil
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
