package db_test

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

func TestMigrationsCurrent(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ok, err := d.MigrationsCurrent(context.Background())
	require.NoError(t, err)
	require.True(t, ok)

	var plans int
	require.NoError(t, d.Bun.NewRaw("SELECT count(*) FROM plans").Scan(context.Background(), &plans))
	require.Equal(t, 4, plans)
}

// TestAccountMetersMigration runs migration 017 down and up over keys
// metered the old way (per key): its up sums each account's keys into the
// account's window and month and gives the existing keys both scopes; its
// down hands the account's month back to its oldest key.
func TestAccountMetersMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	read := func(name string) string {
		b, err := fs.ReadFile(db.MigrationFS(), "migrations/"+name)
		require.NoError(t, err)
		return string(b)
	}
	_, first, err := db.CreateAPIKey(ctx, d.Bun, "metered", cryptointel.PlanPro)
	require.NoError(t, err)
	_, second, err := db.CreateAPIKey(ctx, d.Bun, "metered", "")
	require.NoError(t, err)

	_, err = d.Pool.Exec(ctx, read("017_account_meters_key_scopes.down.sql"))
	require.NoError(t, err)
	_, err = d.Pool.Exec(ctx, `INSERT INTO rate_windows (api_key_id, window_start, requests)
		VALUES ($1, '2026-11-20T10:05:00Z', 30), ($2, '2026-11-20T10:05:00Z', 40)`, first.ID, second.ID)
	require.NoError(t, err)
	_, err = d.Pool.Exec(ctx, `INSERT INTO usage_monthly (api_key_id, month, requests, credits)
		VALUES ($1, '2026-11-01', 10, 100), ($2, '2026-11-01', 20, 200)`, first.ID, second.ID)
	require.NoError(t, err)
	_, err = d.Pool.Exec(ctx, read("017_account_meters_key_scopes.up.sql"))
	require.NoError(t, err)

	var window, requests, credits int64
	require.NoError(t, d.Pool.QueryRow(ctx, `
		SELECT (SELECT requests FROM account_rate_windows WHERE account_id = $1 AND window_start = '2026-11-20T10:05:00Z'),
		       m.requests, m.credits
		FROM account_usage_monthly m WHERE m.account_id = $1 AND m.month = '2026-11-01'`, first.AccountID).Scan(&window, &requests, &credits))
	require.Equal(t, []int64{70, 30, 300}, []int64{window, requests, credits})
	var scopes []string
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT scopes FROM api_keys WHERE id = $1`, second.ID).Scan(&scopes))
	require.Equal(t, []string{db.ScopeData, db.ScopeManagement}, scopes, "keys made before scopes keep what they could do")

	_, err = d.Pool.Exec(ctx, read("017_account_meters_key_scopes.down.sql"))
	require.NoError(t, err)
	var owner int64
	require.NoError(t, d.Pool.QueryRow(ctx, `SELECT api_key_id, credits FROM usage_monthly WHERE month = '2026-11-01'`).Scan(&owner, &credits))
	require.Equal(t, first.ID, owner)
	require.EqualValues(t, 300, credits)
	_, err = d.Pool.Exec(ctx, read("017_account_meters_key_scopes.up.sql"))
	require.NoError(t, err)
}

// TestMeterGroupLeanMigration runs migration 025 down and up over a key
// whose last use only its day row records (a charged request): the down
// keeps that last window for the previous release, which reads a key's
// last use from rate_windows alone, as a window row of no requests (no
// count changes); the up meters again.
func TestMeterGroupLeanMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	read := func(name string) string {
		b, err := fs.ReadFile(db.MigrationFS(), "migrations/"+name)
		require.NoError(t, err)
		return string(b)
	}
	key, row, err := db.CreateAPIKey(ctx, d.Bun, "lean", cryptointel.PlanPro)
	require.NoError(t, err)
	meter := func(now time.Time, allowed ...string) *db.MeterResult {
		day, _, month := db.UsagePeriods(now)
		res, err := d.Meter(ctx, db.MeterParams{KeyHash: db.HashAPIKey(key), AllowedPlans: allowed,
			WindowStart: now.Truncate(time.Minute), RateLimit: 100, Cost: 1, Day: day, Month: month, Surface: db.AccountSurfaces[0]})
		require.NoError(t, err)
		return res
	}
	earlier := time.Date(2026, 11, 20, 10, 3, 10, 0, time.UTC)
	later := time.Date(2026, 11, 20, 10, 5, 30, 0, time.UTC)
	require.False(t, meter(earlier, cryptointel.PlanEnterprise).Charged) // a window row
	require.True(t, meter(later, cryptointel.PlanPro).Charged)           // the day row alone
	state := func() (lastWindow time.Time, windowed int64) {
		require.NoError(t, d.Pool.QueryRow(ctx, `SELECT max(window_start), sum(requests) FROM rate_windows WHERE api_key_id = $1`, row.ID).
			Scan(&lastWindow, &windowed))
		return lastWindow.UTC(), windowed
	}
	lw, windowed := state()
	require.Equal(t, earlier.Truncate(time.Minute), lw)
	require.EqualValues(t, 1, windowed)

	_, err = d.Pool.Exec(ctx, read("025_meter_group_lean.down.sql"))
	require.NoError(t, err)
	lw, windowed = state()
	require.Equal(t, later.Truncate(time.Minute), lw, "the previous release's last use")
	require.EqualValues(t, 1, windowed)

	_, err = d.Pool.Exec(ctx, read("025_meter_group_lean.up.sql"))
	require.NoError(t, err)
	require.True(t, meter(later.Add(time.Minute), cryptointel.PlanPro).Charged)
	keys, err := db.ListAPIKeys(ctx, d.Bun, db.KeyFilter{KeyID: row.ID})
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, later.Add(time.Minute).Truncate(time.Minute), keys[0].LastUsedAt.UTC())
}
