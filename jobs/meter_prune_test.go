package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/jobs"
)

// TestMeterPruneKeepsTheLastHour: the periodic job deletes the accounts'
// rate windows that started more than an hour ago by the store's clock
// (the one metering stamps windows with) and keeps the newer ones.
func TestMeterPruneKeepsTheLastHour(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	now := time.Date(2026, 3, 4, 10, 30, 0, 0, time.UTC)
	store.Now = func() time.Time { return now }

	var account int64
	require.NoError(t, store.Pool.QueryRow(ctx,
		`INSERT INTO accounts (name, plan) VALUES ('prune', 'pro') RETURNING id`).Scan(&account))
	ages := []time.Duration{0, 10 * time.Minute, 59 * time.Minute, 61 * time.Minute, 5 * time.Hour, 30 * 24 * time.Hour}
	for _, age := range ages {
		_, err := store.Pool.Exec(ctx, `INSERT INTO account_rate_windows (account_id, window_start, requests) VALUES ($1, $2, 1)`,
			account, now.Add(-age))
		require.NoError(t, err)
	}

	regs := river.NewWorkers()
	cfg := &river.Config{}
	require.NoError(t, jobs.MeterPruneRegistration(jobs.MeterPruneConfig{Store: store})(regs, cfg))
	require.Len(t, cfg.PeriodicJobs, 1)

	w := jobs.NewMeterPruneWorker(jobs.MeterPruneConfig{Store: store})
	require.NoError(t, w.Work(ctx, &river.Job[jobs.MeterPruneArgs]{}))
	var kept []time.Time
	rows, err := store.Pool.Query(ctx, `SELECT window_start FROM account_rate_windows ORDER BY window_start DESC`)
	require.NoError(t, err)
	for rows.Next() {
		var ws time.Time
		require.NoError(t, rows.Scan(&ws))
		kept = append(kept, ws.UTC())
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []time.Time{now, now.Add(-10 * time.Minute), now.Add(-59 * time.Minute)}, kept)
}
