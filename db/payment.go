package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Payment claim states.
const (
	// PaymentPending is a payment some request is verifying or serving.
	PaymentPending = "pending"
	// PaymentSettled is a payment the facilitator settled.
	PaymentSettled = "settled"
)

// ClaimPayment records that a request is using the payment keyed by key
// (see the payment_claims migration) until expires, so that no other
// request, on any replica, can use it. It returns "" when the claim was
// taken, or the state of the claim that holds the key already
// (PaymentPending or PaymentSettled). A claim whose expiry is before now is
// taken over. Each call also deletes up to 100 expired claims.
func (d *DB) ClaimPayment(ctx context.Context, key, protocol string, expires, now time.Time) (string, error) {
	CountStatement(ctx)
	var state string
	err := d.Pool.QueryRow(ctx, `
		WITH purge AS (
			DELETE FROM payment_claims
			WHERE key IN (SELECT key FROM payment_claims WHERE expires_at < $4 AND key <> $1 LIMIT 100)
		), claim AS (
			INSERT INTO payment_claims AS c (key, protocol, state, expires_at)
			VALUES ($1, $2, 'pending', $3)
			ON CONFLICT (key) DO UPDATE
				SET protocol = excluded.protocol, state = 'pending', reference = NULL,
				    expires_at = excluded.expires_at, created_at = now()
				WHERE c.expires_at < $4
			RETURNING ''::text AS state
		)
		SELECT state FROM claim
		UNION ALL
		SELECT state FROM payment_claims WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM claim)`,
		key, protocol, expires, now).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		// The holder was released between the insert and the read: the
		// payment is free, but this statement did not take it.
		return PaymentPending, nil
	} else if err != nil {
		return "", fmt.Errorf("error claiming payment: %w", err)
	}
	return state, nil
}

// ReleasePayment forgets a pending claim whose request ended without
// settling the payment, so the payment may be presented again.
func (d *DB) ReleasePayment(ctx context.Context, key string) error {
	CountStatement(ctx)
	if _, err := d.Pool.Exec(ctx, `DELETE FROM payment_claims WHERE key = $1 AND state = 'pending'`, key); err != nil {
		return fmt.Errorf("error releasing payment claim: %w", err)
	}
	return nil
}

// SettlePayment marks a claimed payment settled, with the settlement's
// reference (the transaction).
func (d *DB) SettlePayment(ctx context.Context, key, reference string) error {
	CountStatement(ctx)
	if _, err := d.Pool.Exec(ctx, `UPDATE payment_claims SET state = 'settled', reference = $2 WHERE key = $1`, key, reference); err != nil {
		return fmt.Errorf("error recording payment settlement: %w", err)
	}
	return nil
}
