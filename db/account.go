package db

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
)

// APIKeyPrefix starts every API key, so keys are recognizable in logs and
// secret scanners.
const APIKeyPrefix = "ci_"

// apiKeyVisiblePrefix is how many leading characters of a key are kept in
// api_keys.prefix for support conversations.
const apiKeyVisiblePrefix = 10

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

// CreateAPIKey adds a new key to the account named accountName, creating the
// account on plan when the name is new. The plaintext key is returned once
// and never stored: the table keeps its SHA-256 and its first 10 characters.
//
// An existing account keeps its plan: plan must then be empty or equal to
// it. Returns EINVALID for an empty account name or an unknown plan, and
// ECONFLICT when the account exists on another plan.
func CreateAPIKey(ctx context.Context, idb bun.IDB, accountName, plan string) (plaintext string, key *APIKey, err error) {
	accountName = strings.TrimSpace(accountName)
	plan = strings.TrimSpace(plan)
	if accountName == "" {
		return "", nil, Errorf(EINVALID, "account name is required")
	}
	err = idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		account := new(Account)
		err := tx.NewSelect().Model(account).Where("name = ?", accountName).For("UPDATE").Scan(ctx)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if plan == "" {
				return Errorf(EINVALID, "plan is required to create account %q (one of %s)", accountName, strings.Join(planNames(), ", "))
			}
			if err := checkPlan(ctx, tx, plan); err != nil {
				return err
			}
			account = &Account{Name: accountName, Plan: plan}
			// ON CONFLICT: a concurrent creation of the same name wins and
			// this one reads it back.
			if _, err := tx.NewInsert().Model(account).
				On("CONFLICT (name) DO UPDATE SET name = EXCLUDED.name").
				Returning("id, plan, created_at").Exec(ctx); err != nil {
				return fmt.Errorf("error creating account: %w", err)
			}
			if account.Plan != plan {
				return Errorf(ECONFLICT, "account %q is on plan %q, not %q", accountName, account.Plan, plan)
			}
		case err != nil:
			return fmt.Errorf("error reading account: %w", err)
		default:
			if plan != "" && plan != account.Plan {
				if err := checkPlan(ctx, tx, plan); err != nil {
					return err
				}
				return Errorf(ECONFLICT, "account %q is on plan %q, not %q", accountName, account.Plan, plan)
			}
		}

		plaintext, err = NewAPIKeyPlaintext()
		if err != nil {
			return err
		}
		key = &APIKey{AccountID: account.ID, Prefix: plaintext[:apiKeyVisiblePrefix], Hash: HashAPIKey(plaintext)}
		if _, err := tx.NewInsert().Model(key).Returning("id, created_at").Exec(ctx); err != nil {
			return fmt.Errorf("error creating api key: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return plaintext, key, nil
}

// AccountByID returns the account with id. Returns ENOTFOUND when there is
// none.
func AccountByID(ctx context.Context, idb bun.IDB, id int64) (*Account, error) {
	account := new(Account)
	err := idb.NewSelect().Model(account).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENOTFOUND, "account %d not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("error reading account: %w", err)
	}
	return account, nil
}

// planNames lists the plans seeded by the migrations, lowest first.
func planNames() []string {
	return []string{PlanFree, PlanPro, PlanBusiness, PlanEnterprise}
}

// checkPlan returns EINVALID unless a plan named plan exists.
func checkPlan(ctx context.Context, idb bun.IDB, plan string) error {
	exists, err := idb.NewSelect().Model((*Plan)(nil)).Where("name = ?", plan).Exists(ctx)
	if err != nil {
		return fmt.Errorf("error reading plan: %w", err)
	}
	if !exists {
		return Errorf(EINVALID, "unknown plan %q (one of %s)", plan, strings.Join(planNames(), ", "))
	}
	return nil
}
