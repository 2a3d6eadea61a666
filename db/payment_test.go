package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestPaymentClaims: a payment is held by one request at a time, stays
// refused once settled, is free again once released, and is taken over
// once expired; expired claims of other payments are purged.
func TestPaymentClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	exp := now.Add(5 * time.Minute)

	state, err := store.ClaimPayment(ctx, "k1", "x402", exp, now)
	require.NoError(t, err)
	require.Empty(t, state, "taken")
	state, err = store.ClaimPayment(ctx, "k1", "mpp", exp, now)
	require.NoError(t, err)
	require.Equal(t, db.PaymentPending, state)

	require.NoError(t, store.ReleasePayment(ctx, "k1"))
	state, err = store.ClaimPayment(ctx, "k1", "x402", exp, now)
	require.NoError(t, err)
	require.Empty(t, state, "free again once released")

	require.NoError(t, store.SettlePayment(ctx, "k1", "0xtx"))
	require.NoError(t, store.ReleasePayment(ctx, "k1"), "a settled claim is not released")
	state, err = store.ClaimPayment(ctx, "k1", "x402", exp, now)
	require.NoError(t, err)
	require.Equal(t, db.PaymentSettled, state)

	// Past its expiry the authorization is worthless on chain: the claim
	// is taken over, and later claims purge it.
	state, err = store.ClaimPayment(ctx, "k1", "x402", exp.Add(time.Hour), exp.Add(time.Second))
	require.NoError(t, err)
	require.Empty(t, state)
	_, err = store.ClaimPayment(ctx, "k2", "x402", exp, now)
	require.NoError(t, err)
	_, err = store.ClaimPayment(ctx, "k3", "x402", exp, exp.Add(2*time.Hour))
	require.NoError(t, err)
	var left []string
	require.NoError(t, store.Bun.NewSelect().Table("payment_claims").Column("key").Order("key").Scan(ctx, &left))
	require.Equal(t, []string{"k3"}, left)
}
