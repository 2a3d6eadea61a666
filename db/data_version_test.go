package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

// dataVersion is the content version as the metering statement reports it.
func (b *accessBundle) dataVersion(t *testing.T, hash []byte) int64 {
	t.Helper()
	res, err := b.store.Meter(b.ctx, meterAt(time.Now(), hash, 0))
	require.NoError(t, err)
	return res.DataVersion
}

// TestDataVersionBumpsAtCommit shows the contract the response cache relies
// on: the version the metering statement reads moves exactly when a
// transaction writing content commits (once per transaction however many
// statements it ran), not while it is open nor when it rolls back, and two
// open writers do not wait for each other.
func TestDataVersionBumpsAtCommit(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	hash := b.newKey(t, cryptointel.PlanPro)
	// Bounds the test should the counter's lock ever be held for a whole
	// transaction again: the second writer below would wait for the first.
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()

	v0 := b.dataVersion(t, hash)
	require.Positive(t, v0)

	first, err := b.store.Pool.Begin(ctx)
	require.NoError(t, err)
	defer first.Rollback(ctx) //nolint:errcheck
	_, err = first.Exec(ctx, `INSERT INTO entities (id, canonical_name, display_name) VALUES (9001, 'alpha', 'Alpha')`)
	require.NoError(t, err)
	_, err = first.Exec(ctx, `INSERT INTO entity_names (entity_id, kind, value, norm) VALUES (9001, 'canonical_name', 'alpha', 'alpha')`)
	require.NoError(t, err)
	_, err = first.Exec(ctx, `UPDATE entities SET display_name = 'Alpha One' WHERE id = 9001`)
	require.NoError(t, err)
	require.Equal(t, v0, b.dataVersion(t, hash), "an open transaction does not move the version")

	second, err := b.store.Pool.Begin(ctx)
	require.NoError(t, err)
	defer second.Rollback(ctx) //nolint:errcheck
	_, err = second.Exec(ctx, `INSERT INTO events (id, title, category, latest_evidence_at) VALUES (9002, 'e', 'launch', now())`)
	require.NoError(t, err, "a second writer is not blocked by the first")
	require.NoError(t, second.Commit(ctx))
	require.Equal(t, v0+1, b.dataVersion(t, hash), "a commit moves the version")

	require.NoError(t, first.Commit(ctx))
	require.Equal(t, v0+2, b.dataVersion(t, hash), "three statements in one transaction move it once")

	rolled, err := b.store.Pool.Begin(ctx)
	require.NoError(t, err)
	_, err = rolled.Exec(ctx, `DELETE FROM events WHERE id = 9002`)
	require.NoError(t, err)
	require.NoError(t, rolled.Rollback(ctx))
	require.Equal(t, v0+2, b.dataVersion(t, hash), "a rollback does not move it")

	_, err = b.store.Pool.Exec(ctx, `DELETE FROM events WHERE id = 9002`)
	require.NoError(t, err)
	require.Equal(t, v0+3, b.dataVersion(t, hash), "an autocommitted statement moves it")
	_, err = b.store.Pool.Exec(ctx, `TRUNCATE market_posts`)
	require.NoError(t, err)
	require.Equal(t, v0+4, b.dataVersion(t, hash), "a truncate moves it")

	_, err = b.store.Pool.Exec(ctx, `UPDATE api_keys SET prefix = 'ci_other' WHERE hash = $1`, hash)
	require.NoError(t, err)
	require.Equal(t, v0+4, b.dataVersion(t, hash), "writes outside the content tables do not move it")

	var pending int
	require.NoError(t, b.store.Pool.QueryRow(ctx, `SELECT count(*) FROM data_version_pending`).Scan(&pending))
	require.Zero(t, pending, "every commit cleared its pending row")
}
