package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestNoReadURLs: without read URLs there is one pool and Read is Bun
// itself, so every statement runs on the primary as before.
func TestNoReadURLs(t *testing.T) {
	t.Parallel()
	store, err := db.Open(context.Background(), dbtest.NewURL(t), db.Options{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() }) //nolint:errcheck
	require.False(t, store.HasReadPools())
	require.Same(t, store.Bun, store.Read)
	states := store.PoolStates()
	require.Len(t, states, 1)
	require.Equal(t, "primary", states[0].Name)
}

// TestReadRouting opens the primary and its streaming replica (the test
// server's, scripts/pg-replica-up.sh) and checks where Read's statements go:
// to the primary without a grant or while the grant's content version is
// unknown or not replayed yet, to the replica otherwise; Bun never goes to
// the replica. A read URL that does not answer is reported down and its
// reads fall back to the primary without an error.
func TestReadRouting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primaryURL := dbtest.NewURL(t)
	readURL := dbtest.NewReadURL(t, primaryURL)
	store, err := db.Open(ctx, primaryURL, db.Options{MaxConns: 2, ReadURLs: []string{readURL, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"},
		MaxReplicaLag: time.Hour, ReplicaCheckInterval: time.Hour})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() }) //nolint:errcheck
	require.True(t, store.HasReadPools())

	var version int64
	require.NoError(t, store.Pool.QueryRow(ctx, "SELECT version FROM data_version").Scan(&version))
	require.Eventually(t, func() bool {
		states := store.CheckReplicas(ctx)
		return states[1].State == db.PoolUp && states[1].DataVersion >= version
	}, 5*time.Minute, 50*time.Millisecond)
	states := store.PoolStates()
	require.Equal(t, db.PoolDown, states[2].State, "the unreachable read URL")
	require.NotEmpty(t, states[2].Error)

	// where runs one statement through h in ctx and says where it ran.
	where := func(ctx context.Context, read bool) string {
		ctx, replica := db.WithReplicaStatementCounter(ctx)
		h := store.Bun
		if read {
			h = store.Read
		}
		var inRecovery bool
		require.NoError(t, h.NewRaw("SELECT pg_is_in_recovery()").Scan(ctx, &inRecovery))
		if inRecovery {
			require.EqualValues(t, 1, replica.Load())
			return "replica"
		}
		require.Zero(t, replica.Load())
		return "primary"
	}
	require.Equal(t, "primary", where(ctx, true), "no grant")
	require.Equal(t, "primary", where(db.WithReplicaReads(ctx, version), false), "Bun is the primary's")
	require.Equal(t, "replica", where(db.WithReplicaReads(ctx, version), true))
	require.Equal(t, "replica", where(db.WithReplicaReads(ctx, 0), true))
	require.Equal(t, "primary", where(db.WithReplicaReads(ctx, version+1000), true), "a version the replica has not replayed")
	deferred, set := db.WithDeferredReplicaReads(ctx)
	require.Equal(t, "primary", where(deferred, true), "version not known yet")
	set(version)
	require.Equal(t, "replica", where(deferred, true))
	require.Positive(t, store.PoolStates()[0].Fallbacks)
}

// TestReaderRouting: the routed querier of raw pgx reads (DB.Reader) picks
// its pool like Read, and a statement whose replica fails before its first
// row (here a session terminated on the replica) runs again on the
// primary, within the same call.
func TestReaderRouting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primaryURL := dbtest.NewURL(t)
	readURL := dbtest.NewReadURL(t, primaryURL)
	store, err := db.Open(ctx, primaryURL, db.Options{MaxConns: 2, ReadURLs: []string{readURL}, MaxReplicaLag: time.Hour, ReplicaCheckInterval: time.Hour})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() }) //nolint:errcheck
	var version int64
	require.NoError(t, store.Pool.QueryRow(ctx, "SELECT version FROM data_version").Scan(&version))
	require.Eventually(t, func() bool {
		states := store.CheckReplicas(ctx)
		return states[1].State == db.PoolUp && states[1].DataVersion >= version
	}, 5*time.Minute, 50*time.Millisecond)

	inRecovery := func(ctx context.Context) bool {
		var b bool
		require.NoError(t, store.Reader().QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&b))
		return b
	}
	require.False(t, inRecovery(ctx), "no grant: the primary")
	require.True(t, inRecovery(db.WithReplicaReads(ctx, version)))
	// (A version the replica has not replayed is tried last: such a read
	// asks the checker to look again at once, and a check running behind
	// the failure below would bring the replica back before it is looked
	// at.)

	// A statement that has its own replica session terminated (57P01)
	// before its first row is run again on the primary, which answers
	// false, and the rest of the request stays on the primary.
	grant := db.WithReplicaReads(ctx, version)
	rows, err := store.Reader().Query(grant, `
		SELECT t FROM (SELECT pg_terminate_backend(pg_backend_pid()) AS t, pg_sleep(2) AS s WHERE pg_is_in_recovery()) q
		UNION ALL SELECT false WHERE NOT pg_is_in_recovery()`)
	require.NoError(t, err)
	var got []bool
	for rows.Next() {
		var b bool
		require.NoError(t, rows.Scan(&b))
		got = append(got, b)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []bool{false}, got, "the primary's answer")
	require.False(t, inRecovery(grant), "the rest of the request reads the primary")
	require.Equal(t, db.PoolDown, store.PoolStates()[1].State, "the replica is taken out until its next check")
	require.Positive(t, store.PoolStates()[0].Fallbacks)
	require.False(t, inRecovery(db.WithReplicaReads(ctx, version)), "down: no replica reads")
	store.CheckReplicas(ctx)
	require.True(t, inRecovery(db.WithReplicaReads(ctx, version)), "back after a healthy check")
	require.False(t, inRecovery(db.WithReplicaReads(ctx, version+1000)), "a version the replica has not replayed")
}
