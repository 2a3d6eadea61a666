package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestListenTakesNoPoolConnection: a LISTEN's connection is its own, out
// of the pool for as long as it listens, as River's listener is: it is not
// counted among the pool's connections in use, and every one of the
// pool's MaxConns stays free for queries. A pool of one with a listener
// running still answers a query; counted as acquired, the listener made
// the pool's figures depend on whether it had connected yet, and took the
// whole of a small pool for good.
func TestListenTakesNoPoolConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := db.Open(ctx, dbtest.NewURL(t), db.Options{MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() }) //nolint:errcheck

	listenCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	notified := make(chan struct{}, 1)
	go func() {
		done <- store.ListenEvents(listenCtx, func() {
			select {
			case notified <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() {
		stop()
		require.ErrorIs(t, <-done, context.Canceled)
	})

	// Notify until the listener hears one: its LISTEN is then in place.
	// The notifications go on a connection of their own, not the pool's.
	notifier, err := pgx.ConnectConfig(ctx, store.Pool.Config().ConnConfig)
	require.NoError(t, err)
	t.Cleanup(func() { notifier.Close(ctx) }) //nolint:errcheck
	deadline := time.Now().Add(10 * time.Second)
	for heard := false; !heard; {
		require.True(t, time.Now().Before(deadline), "the listener heard no notification")
		_, err := notifier.Exec(ctx, "SELECT pg_notify($1, '')", db.PollerChannel)
		require.NoError(t, err)
		select {
		case <-notified:
			heard = true
		case <-time.After(50 * time.Millisecond):
		}
	}

	require.Zero(t, store.Pool.Stat().AcquiredConns(), "the listener's connection is not one of the pool's in use")
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var one int
	require.NoError(t, store.Pool.QueryRow(qctx, "SELECT 1").Scan(&one), "the pool's one connection is free for queries")
	require.Equal(t, 1, one)
}
