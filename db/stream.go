package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
)

// Live streams read the events in the order ingest wrote them: every insert
// or change of an event draws a new events.ingest_seq, and ingest batches
// take IngestLockID for their whole transaction, so they commit in the order
// they draw sequence values. A snapshot therefore sees a prefix of the
// sequence: a stream positioned at sequence value N that reads every event
// above N has missed nothing and will see nothing twice. Seeded history
// carries ingest_seq 0 and is never streamed.

// IngestLockID is the transaction-level advisory lock every ingest batch
// (ingest.Write) takes, so batches commit in the order they draw ingest_seq
// values and a reader's high-water mark on ingest_seq never skips a slower
// transaction.
const IngestLockID = 7_262_011_002

// StreamFilter selects the events a stream pushes.
type StreamFilter struct {
	// SignalOnly keeps scored events only.
	SignalOnly bool
	// Category keeps events of this category; empty means any.
	Category string
	// EntityID keeps events the entity owns or takes part in; 0 means any.
	EntityID int64
	// MinSignificance, when set, keeps scored events whose significance is
	// at least this value.
	MinSignificance *float64
}

// StreamHead returns the highest ingest_seq written so far (0 when no event
// has been ingested): the position of a stream that starts now. It reads
// the primary, which every notification comes from.
func (d *DB) StreamHead(ctx context.Context) (int64, error) {
	CountStatement(ctx)
	var head int64
	if err := d.Pool.QueryRow(ctx, `SELECT coalesce(max(ingest_seq), 0) FROM events`).Scan(&head); err != nil {
		return 0, fmt.Errorf("error reading stream head: %w", err)
	}
	return head, nil
}

// EventsAfterSeq returns up to limit events whose ingest_seq is above after
// (and at most upTo when upTo > 0) and that match f, in ingest_seq order,
// in one statement (a walk of events_ingest_seq_idx).
func EventsAfterSeq(ctx context.Context, idb bun.IDB, after, upTo int64, f StreamFilter, limit int) ([]*cryptointel.Event, error) {
	out := []*cryptointel.Event{}
	q := idb.NewSelect().Model(&out).ExcludeColumn(readExcluded...).Where("ingest_seq > ?", after)
	if upTo > 0 {
		q = q.Where("ingest_seq <= ?", upTo)
	}
	if f.SignalOnly || f.MinSignificance != nil {
		q = q.Where("significance IS NOT NULL")
	}
	if f.MinSignificance != nil {
		q = q.Where("significance >= ?", *f.MinSignificance)
	}
	if f.Category != "" {
		q = q.Where("category = ?", f.Category)
	}
	if f.EntityID != 0 {
		q = q.Where("EXISTS (SELECT 1 FROM event_entities ee WHERE ee.event_id = event.id AND ee.entity_id = ?)", f.EntityID)
	}
	if err := q.OrderExpr("ingest_seq").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("error reading events after sequence %d: %w", after, err)
	}
	return out, nil
}

// StreamLease is one open stream's place among its key's max_streams.
type StreamLease struct {
	// ID identifies the lease; empty when none was granted.
	ID string
	// Open is the number of the key's streams open before this one.
	Open int
	// Max is the plan's max_streams.
	Max int
	// CreditsRemaining is the key's monthly credits left when the lease was
	// taken (the plan's allowance minus this month's use; may be negative).
	CreditsRemaining int64
}

// streamLockClass is the first key of the per-key advisory lock that
// serializes opening streams (the second is the key id).
const streamLockClass = 7262

// OpenStreamLease takes one of key keyID's max_streams places for ttl (the
// caller renews it with RenewStreamLeases while the stream runs and deletes
// it with CloseStreamLease). Leases that expired are removed first. When
// every place is taken the returned lease has an empty ID and Open = Max.
//
// month is the first day of the current month (UsagePeriods), for the
// credits left. Returns ENOTFOUND when the key does not exist.
func (d *DB) OpenStreamLease(ctx context.Context, keyID int64, month time.Time, ttl time.Duration) (*StreamLease, error) {
	tx, err := d.Pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("error beginning stream lease: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	// The lock comes first, in its own statement, so the count below is
	// read by a snapshot taken after every concurrent opener committed.
	CountStatement(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, ($2 % 2147483647)::int)`, streamLockClass, keyID); err != nil {
		return nil, fmt.Errorf("error locking stream leases: %w", err)
	}
	var l StreamLease
	var id *string
	CountStatement(ctx)
	err = tx.QueryRow(ctx, `
		WITH k AS (
			SELECT ak.id, pl.max_streams,
			       pl.monthly_credits - coalesce((SELECT credits FROM account_usage_monthly
			                                      WHERE account_id = ak.account_id AND month = $2::date), 0) AS remaining
			FROM api_keys ak JOIN accounts a ON a.id = ak.account_id JOIN plans pl ON pl.name = a.plan
			WHERE ak.id = $1
		), gone AS (
			DELETE FROM stream_leases WHERE api_key_id = $1 AND expires_at <= now()
		), open AS (
			SELECT count(*) AS n FROM stream_leases WHERE api_key_id = $1 AND expires_at > now()
		), ins AS (
			INSERT INTO stream_leases (id, api_key_id, expires_at)
			SELECT gen_random_uuid(), k.id, now() + $3::interval FROM k, open WHERE open.n < k.max_streams
			RETURNING id::text
		)
		SELECT (SELECT id FROM ins), open.n, k.max_streams, k.remaining FROM k, open`,
		keyID, dateOnly(month), ttl.String()).Scan(&id, &l.Open, &l.Max, &l.CreditsRemaining)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: MsgAPIKeyNotFound}
	} else if err != nil {
		return nil, fmt.Errorf("error taking stream lease: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("error committing stream lease: %w", err)
	}
	if id != nil {
		l.ID = *id
	}
	return &l, nil
}

// RenewStreamLeases extends the given leases to ttl from now, in one
// statement.
func (d *DB) RenewStreamLeases(ctx context.Context, ids []string, ttl time.Duration) error {
	if len(ids) == 0 {
		return nil
	}
	CountStatement(ctx)
	if _, err := d.Pool.Exec(ctx, `UPDATE stream_leases SET expires_at = now() + $2::interval WHERE id = ANY($1::uuid[])`,
		ids, ttl.String()); err != nil {
		return fmt.Errorf("error renewing stream leases: %w", err)
	}
	return nil
}

// CloseStreamLease deletes a lease, freeing its place.
func (d *DB) CloseStreamLease(ctx context.Context, id string) error {
	CountStatement(ctx)
	if _, err := d.Pool.Exec(ctx, `DELETE FROM stream_leases WHERE id = $1::uuid`, id); err != nil {
		return fmt.Errorf("error closing stream lease: %w", err)
	}
	return nil
}

// StreamCharge is the credits one key's streams pushed since the last
// settlement.
type StreamCharge struct {
	KeyID   int64
	Credits int64
}

// StreamBalance is where a key with open streams stands after a settlement.
type StreamBalance struct {
	KeyID int64
	// Remaining is the month's credits left (may be negative when
	// concurrent use overran the allowance).
	Remaining int64
	// Revoked is true when the key can no longer be used (KeyInfo.Revoked).
	Revoked bool
	// Expired is true when that is because its expiry passed.
	Expired bool
	// Plan is the account's plan now.
	Plan string
}

// SettleStreamCredits adds each charge's credits to its key's account's
// usage of the month and to the key's usage of the day (as credits, not requests: pushed events are not
// requests) and returns, for every charged key, its remaining credits, whether
// it was revoked and its plan — one statement for every key. Charges of 0
// credits only read the balance. Keys that no longer exist are absent from
// the result.
func (d *DB) SettleStreamCredits(ctx context.Context, charges []StreamCharge, now time.Time) ([]StreamBalance, error) {
	if len(charges) == 0 {
		return nil, nil
	}
	keys := make([]int64, len(charges))
	credits := make([]int64, len(charges))
	for i, c := range charges {
		keys[i], credits[i] = c.KeyID, c.Credits
	}
	day, _, month := UsagePeriods(now)
	CountStatement(ctx)
	rows, err := d.Pool.Query(ctx, `
		WITH x AS (
			SELECT x.api_key_id, ak.account_id, sum(x.credits)::bigint AS credits
			FROM unnest($1::bigint[], $2::bigint[]) AS x(api_key_id, credits)
			JOIN api_keys ak ON ak.id = x.api_key_id
			GROUP BY x.api_key_id, ak.account_id
		), xa AS (
			SELECT account_id, sum(credits)::bigint AS credits FROM x GROUP BY account_id
		), um AS (
			INSERT INTO account_usage_monthly AS m (account_id, month, requests, credits)
			SELECT xa.account_id, $4::date, 0, xa.credits FROM xa WHERE xa.credits > 0
			ORDER BY xa.account_id
			ON CONFLICT (account_id, month) DO UPDATE SET credits = m.credits + excluded.credits
			RETURNING m.account_id, m.credits
		), ud AS (
			INSERT INTO usage_daily AS u (api_key_id, day, requests, credits)
			SELECT x.api_key_id, $3::date, 0, x.credits FROM x, (SELECT count(*) FROM um) AS umn WHERE x.credits > 0
			ORDER BY x.api_key_id
			ON CONFLICT (api_key_id, day) DO UPDATE SET credits = u.credits + excluded.credits
			RETURNING 1
		)
		SELECT x.api_key_id,
		       pl.monthly_credits - coalesce((SELECT um.credits FROM um WHERE um.account_id = x.account_id),
		                                     (SELECT m.credits FROM account_usage_monthly m WHERE m.account_id = x.account_id AND m.month = $4::date), 0),
		       `+keyUnusableSQL+`, `+keyExpiredSQL+`, a.plan
		FROM x JOIN api_keys ak ON ak.id = x.api_key_id
		JOIN accounts a ON a.id = ak.account_id JOIN plans pl ON pl.name = a.plan`,
		keys, credits, dateOnly(day), dateOnly(month))
	if err != nil {
		return nil, fmt.Errorf("error settling stream credits: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (StreamBalance, error) {
		var b StreamBalance
		err := row.Scan(&b.KeyID, &b.Remaining, &b.Revoked, &b.Expired, &b.Plan)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("error settling stream credits: %w", err)
	}
	return out, nil
}
