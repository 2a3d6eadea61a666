package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
)

// CreateAPIKey adds a new key to the account named accountName, creating the
// account on plan when the name is new. The plaintext key is returned once
// and never stored: the table keeps its SHA-256 and its first 10 characters.
//
// An existing account keeps its plan: plan must then be empty or equal to
// it. Returns EINVALID for an empty account name or an unknown plan, and
// ECONFLICT when the account exists on another plan.
func CreateAPIKey(ctx context.Context, idb bun.IDB, accountName, plan string) (plaintext string, key *cryptointel.APIKey, err error) {
	return CreateAPIKeyWith(ctx, idb, NewAPIKey{Account: accountName, Plan: plan})
}

// CreateAPIKeyWith is CreateAPIKey with the options of nk: an expiry,
// scopes, a restriction, the cap on the account's active keys, and the
// actor the audit trail records (the creation of the key, and of its
// account on nk.Plan when the name is new). Without scopes the account's
// first key — while it has no active key with the management scope —
// gets the data and management scopes, later ones the data scope. Returns
// EINVALID also for an expiry that is not in the future, unknown scopes or
// surfaces, or a restricted key with the management scope; ECONFLICT when
// the account already has nk.MaxActive active keys.
func CreateAPIKeyWith(ctx context.Context, idb bun.IDB, nk NewAPIKey) (plaintext string, key *cryptointel.APIKey, err error) {
	accountName := strings.TrimSpace(nk.Account)
	plan := strings.TrimSpace(nk.Plan)
	if accountName == "" {
		return "", nil, cryptointel.Errorf(cryptointel.EINVALID, "account name is required")
	}
	if err := checkExpiry(nk.ExpiresAt); err != nil {
		return "", nil, err
	}
	scopes, err := checkScopes(nk.Scopes)
	if err != nil {
		return "", nil, err
	}
	surfaces, err := checkSurfaces(nk.Surfaces)
	if err != nil {
		return "", nil, err
	}
	if surfaces != nil {
		if len(surfaces) == 0 {
			return "", nil, cryptointel.Errorf(cryptointel.EINVALID, "a restricted key needs one or more surfaces: %s.", strings.Join(RestrictableSurfaces, ", "))
		}
		if slices.Contains(scopes, ScopeManagement) {
			return "", nil, cryptointel.Errorf(cryptointel.EINVALID, "a restricted key cannot hold the management scope.")
		}
		scopes = []string{ScopeData}
	}
	err = idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		account := new(cryptointel.Account)
		err := tx.NewSelect().Model(account).Where("name = ?", accountName).For("UPDATE").Scan(ctx)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if plan == "" {
				return cryptointel.Errorf(cryptointel.EINVALID, "plan is required to create account %q (one of %s)", accountName, strings.Join(planNames(), ", "))
			}
			if err := checkPlan(ctx, tx, plan); err != nil {
				return err
			}
			account = &cryptointel.Account{Name: accountName, Plan: plan}
			// ON CONFLICT: a concurrent creation of the same name wins and
			// this one reads it back.
			if _, err := tx.NewInsert().Model(account).
				On("CONFLICT (name) DO UPDATE SET name = EXCLUDED.name").
				Returning("id, plan, created_at").Exec(ctx); err != nil {
				return fmt.Errorf("error creating account: %w", err)
			}
			if account.Plan != plan {
				return cryptointel.Errorf(cryptointel.ECONFLICT, "account %q is on plan %q, not %q", accountName, account.Plan, plan)
			}
		case err != nil:
			return fmt.Errorf("error reading account: %w", err)
		default:
			if plan != "" && plan != account.Plan {
				if err := checkPlan(ctx, tx, plan); err != nil {
					return err
				}
				return cryptointel.Errorf(cryptointel.ECONFLICT, "account %q is on plan %q, not %q", accountName, account.Plan, plan)
			}
		}

		if err := checkActiveKeys(ctx, tx, account.ID, nk.MaxActive); err != nil {
			return err
		}
		keyScopes := scopes
		if len(keyScopes) == 0 {
			var managed bool
			if err := tx.QueryRowContext(ctx, `
				SELECT EXISTS (SELECT 1 FROM api_keys
					WHERE account_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
						AND ? = ANY(scopes))`, account.ID, ScopeManagement).Scan(&managed); err != nil {
				return fmt.Errorf("error reading the account's keys: %w", err)
			}
			keyScopes = []string{ScopeData}
			if !managed {
				keyScopes = append(keyScopes, ScopeManagement)
			}
		}
		if plaintext, key, err = insertKey(ctx, tx, account.ID, keySpec{ExpiresAt: nk.ExpiresAt, Scopes: keyScopes, Surfaces: surfaces}); err != nil {
			return err
		}
		return Audit(ctx, tx, account.ID, &key.ID, AuditKeyCreated, nk.Actor, keyCreatedDetail(key, nil))
	})
	if err != nil {
		return "", nil, err
	}
	return plaintext, key, nil
}

// AccountByID returns the account with id. Returns ENOTFOUND when there is
// none.
func AccountByID(ctx context.Context, idb bun.IDB, id int64) (*cryptointel.Account, error) {
	return accountWhere(ctx, idb, "id = ?", id, fmt.Sprintf("account %d not found", id))
}

// AccountByName returns the account named name. Returns ENOTFOUND when
// there is none.
func AccountByName(ctx context.Context, idb bun.IDB, name string) (*cryptointel.Account, error) {
	return accountWhere(ctx, idb, "name = ?", name, fmt.Sprintf("account %q not found", name))
}

// accountWhere returns the account where cond holds for arg, or ENOTFOUND
// with notFound.
func accountWhere(ctx context.Context, idb bun.IDB, cond string, arg any, notFound string) (*cryptointel.Account, error) {
	account := new(cryptointel.Account)
	err := idb.NewSelect().Model(account).Where(cond, arg).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: notFound}
	} else if err != nil {
		return nil, fmt.Errorf("error reading account: %w", err)
	}
	return account, nil
}

// planNames lists the plans seeded by the migrations, lowest first.
func planNames() []string {
	return []string{cryptointel.PlanFree, cryptointel.PlanPro, cryptointel.PlanBusiness, cryptointel.PlanEnterprise}
}

// checkPlan returns EINVALID unless a plan named plan exists.
func checkPlan(ctx context.Context, idb bun.IDB, plan string) error {
	exists, err := idb.NewSelect().Model((*cryptointel.Plan)(nil)).Where("name = ?", plan).Exists(ctx)
	if err != nil {
		return fmt.Errorf("error reading plan: %w", err)
	}
	if !exists {
		return cryptointel.Errorf(cryptointel.EINVALID, "unknown plan %q (one of %s)", plan, strings.Join(planNames(), ", "))
	}
	return nil
}
