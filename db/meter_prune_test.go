package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

// TestMeterCountersUpdateOnTheirPage: while a snapshot holds old row
// versions (a replica's hot_standby_feedback, a long transaction), each
// metered request's new versions of its counter rows (the account's window,
// the account's month, the key's day) still fit on the rows' own pages, so
// the updates are HOT and add no index entries. Packed full (fillfactor
// 100, before migration 026), a page of 200 accounts' rows had no room and
// their versions moved to other pages.
func TestMeterCountersUpdateOnTheirPage(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	const keys = 200
	hashes := make([][]byte, keys)
	for i := range hashes {
		hashes[i] = b.newKey(t, cryptointel.PlanPro)
	}
	now := time.Now().UTC()
	for _, h := range hashes {
		_, err := b.store.Meter(b.ctx, meterAt(now, h, 1))
		require.NoError(t, err)
	}
	tables := []string{"account_rate_windows", "account_usage_monthly", "usage_daily"}
	// Each row's page, by the row's key columns.
	keyed := func(table string) map[string]int64 {
		rows, err := b.store.Pool.Query(b.ctx, fmt.Sprintf(`SELECT (ctid::text::point)[0]::bigint,
			coalesce(j ->> 'account_id', j ->> 'api_key_id') || '/' || coalesce(j ->> 'window_start', j ->> 'month', j ->> 'day')
			FROM (SELECT ctid, to_jsonb(t) AS j FROM %s t) r`, table))
		require.NoError(t, err)
		out := map[string]int64{}
		for rows.Next() {
			var block int64
			var key string
			require.NoError(t, rows.Scan(&block, &key))
			out[key] = block
		}
		require.NoError(t, rows.Err())
		return out
	}
	before := map[string]map[string]int64{}
	for _, table := range tables {
		before[table] = keyed(table)
		require.Len(t, before[table], keys, table)
	}

	// A snapshot that keeps every version written from now on.
	holder, err := pgx.ConnectConfig(b.ctx, b.store.Pool.Config().ConnConfig)
	require.NoError(t, err)
	t.Cleanup(func() { holder.Close(context.Background()) }) //nolint:errcheck
	tx, err := holder.BeginTx(b.ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(b.ctx, `SELECT count(*) FROM account_rate_windows`).Scan(&n))
	require.Equal(t, keys, n)

	for range 3 {
		for _, h := range hashes {
			_, err := b.store.Meter(b.ctx, meterAt(now, h, 1))
			require.NoError(t, err)
		}
	}
	for _, table := range tables {
		after := keyed(table)
		moved := 0
		for k, blk := range before[table] {
			if after[k] != blk {
				moved++
			}
		}
		require.Zero(t, moved, "%s: %d of %d rows moved to another page under a held snapshot", table, moved, keys)
	}
	require.NoError(t, tx.Rollback(b.ctx))
}

// TestPruneAccountRateWindows: windows that started before the cutoff are
// deleted, every account's, newer ones kept, at most batch rows a statement
// and batches statements a call.
func TestPruneAccountRateWindows(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	now := time.Date(2026, 3, 4, 10, 0, 5, 0, time.UTC)
	var accounts []int64
	for range 3 {
		h := b.newKey(t, cryptointel.PlanPro)
		res, err := b.store.Meter(b.ctx, meterAt(now, h, 1))
		require.NoError(t, err)
		accounts = append(accounts, res.Key.AccountID)
	}
	// Each account: windows 1 to 5 hours old (5 rows) besides the current.
	_, err := b.store.Pool.Exec(b.ctx, `INSERT INTO account_rate_windows (account_id, window_start, requests)
		SELECT a, $2::timestamptz - make_interval(hours => h), h FROM unnest($1::bigint[]) a, generate_series(1, 5) h`,
		accounts, now.Truncate(time.Minute))
	require.NoError(t, err)
	count := func() (old, current int) {
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT count(*) FILTER (WHERE window_start < $1),
			count(*) FILTER (WHERE window_start >= $1) FROM account_rate_windows`, now.Add(-90*time.Minute)).Scan(&old, &current))
		return old, current
	}
	old, current := count()
	require.Equal(t, 12, old)    // 2 to 5 hours old
	require.Equal(t, 6, current) // the current window and the one an hour old

	// One batch of 5 a call: 5 deleted.
	n, err := b.store.PruneAccountRateWindows(b.ctx, now.Add(-90*time.Minute), 5, 1)
	require.NoError(t, err)
	require.EqualValues(t, 5, n)
	old, current = count()
	require.Equal(t, 7, old)
	require.Equal(t, 6, current)

	// Batches until done: the 7 left, in batches of 5.
	n, err = b.store.PruneAccountRateWindows(b.ctx, now.Add(-90*time.Minute), 5, 10)
	require.NoError(t, err)
	require.EqualValues(t, 7, n)
	old, current = count()
	require.Zero(t, old)
	require.Equal(t, 6, current)

	_, err = b.store.PruneAccountRateWindows(b.ctx, now, 0, 1)
	require.Error(t, err)
}
