package db_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

func TestCreateAPIKey(t *testing.T) {
	t.Parallel()

	setup := func(t *testing.T) *db.DB {
		t.Helper()
		return dbtest.New(t)
	}

	t.Run("StoresOnlyTheHash", func(t *testing.T) {
		t.Parallel()
		store := setup(t)
		ctx := context.Background()

		plaintext, key, err := db.CreateAPIKey(ctx, store.Bun, "acme", cryptointel.PlanPro)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(plaintext, "ci_"))
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(plaintext, "ci_"))
		require.NoError(t, err)
		require.Len(t, raw, 32)
		require.NotContains(t, plaintext, "=")
		require.Equal(t, plaintext[:10], key.Prefix)
		require.NotZero(t, key.ID)

		var row cryptointel.APIKey
		require.NoError(t, store.Bun.NewSelect().Model(&row).Where("id = ?", key.ID).Scan(ctx))
		require.Equal(t, db.HashAPIKey(plaintext), row.Hash)
		require.Len(t, row.Hash, 32)

		// The plaintext is nowhere in the table, in any column.
		var dump string
		require.NoError(t, store.Bun.NewRaw(`SELECT string_agg(t::text, '|') FROM api_keys t`).Scan(ctx, &dump))
		require.NotContains(t, dump, plaintext)
		require.NotContains(t, dump, plaintext[10:])
		var hexDump string
		require.NoError(t, store.Bun.NewRaw(`SELECT string_agg(encode(hash, 'escape'), '|') FROM api_keys`).Scan(ctx, &hexDump))
		require.False(t, bytes.Contains([]byte(hexDump), []byte(plaintext)))

		account, err := db.AccountByID(ctx, store.Bun, key.AccountID)
		require.NoError(t, err)
		require.Equal(t, "acme", account.Name)
		require.Equal(t, cryptointel.PlanPro, account.Plan)
	})

	t.Run("SecondKeyJoinsExistingAccount", func(t *testing.T) {
		t.Parallel()
		store := setup(t)
		ctx := context.Background()

		p1, k1, err := db.CreateAPIKey(ctx, store.Bun, "acme", cryptointel.PlanBusiness)
		require.NoError(t, err)
		p2, k2, err := db.CreateAPIKey(ctx, store.Bun, "acme", cryptointel.PlanBusiness)
		require.NoError(t, err)
		_, k3, err := db.CreateAPIKey(ctx, store.Bun, "acme", "")
		require.NoError(t, err)
		require.NotEqual(t, p1, p2)
		require.Equal(t, k1.AccountID, k2.AccountID)
		require.Equal(t, k1.AccountID, k3.AccountID)
		require.NotEqual(t, k1.ID, k2.ID)

		n, err := store.Bun.NewSelect().Model((*cryptointel.Account)(nil)).Count(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	})

	t.Run("UnknownPlan", func(t *testing.T) {
		t.Parallel()
		store := setup(t)
		_, _, err := db.CreateAPIKey(context.Background(), store.Bun, "acme", "platinum")
		require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
		require.Contains(t, cryptointel.ErrorMessage(err), `unknown plan "platinum"`)
	})

	t.Run("ExistingAccountOnOtherPlan", func(t *testing.T) {
		t.Parallel()
		store := setup(t)
		ctx := context.Background()
		_, _, err := db.CreateAPIKey(ctx, store.Bun, "acme", cryptointel.PlanFree)
		require.NoError(t, err)
		_, _, err = db.CreateAPIKey(ctx, store.Bun, "acme", cryptointel.PlanEnterprise)
		require.Equal(t, cryptointel.ECONFLICT, cryptointel.ErrorCode(err))
		_, _, err = db.CreateAPIKey(ctx, store.Bun, "acme", "gold")
		require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
	})

	t.Run("EmptyAccountName", func(t *testing.T) {
		t.Parallel()
		store := setup(t)
		_, _, err := db.CreateAPIKey(context.Background(), store.Bun, "  ", cryptointel.PlanFree)
		require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
	})
}
