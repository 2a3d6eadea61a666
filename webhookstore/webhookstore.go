// Package webhookstore holds the webhooks' rows in PostgreSQL on db's
// connections: their management (create within the account's limit, list,
// read, update, delete, rotate the secret), their deliveries and attempts
// (inspection, test pings, redelivery), the poller's fan-out of new events to
// subscribed webhooks under a durable high-water mark, the delivery worker's
// reads and records, the River job arguments of both, and the contract's
// messages of their errors. db keeps the LISTEN/NOTIFY the poller wakes on
// and the pushed form of an event (db.WebhookEventByID).
package webhookstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/webhook"
)

// msgDeliveryNotAttempt is the last_error of a delivery skipped because its
// webhook was inactive.
const msgDeliveryNotAttempt = "not attempted: webhook inactive"

// Messages of the webhook errors given exactly by the contract.
const (
	MsgWebhookNotFound   = "Webhook not found"
	MsgNoFieldsToUpdate  = "No fields to update"
	MsgInvalidEventTypes = "event_types must only contain: radar, signal"
	MsgDeliveryNotFound  = "Delivery not found"
	MsgEmptyEventTypes   = "event_types must contain at least one of: radar, signal"
	MsgWebhookInactive   = "Webhook is not active; re-enable it with PATCH before redelivering"
	MsgDeliveryPending   = "Delivery is still pending; it is retried automatically"
)

// MsgMaxWebhooks is the contract's message for a registration beyond
// webhook.MaxPerAccount: "Maximum 5 webhooks per account".
var MsgMaxWebhooks = fmt.Sprintf("Maximum %d webhooks per account", webhook.MaxPerAccount)

// NormalizeEventTypes validates event types and returns them deduplicated in
// the order radar, signal. It returns EINVALID with the contract's messages.
func NormalizeEventTypes(types []string) ([]string, error) {
	var radar, signal bool
	for _, t := range types {
		switch t {
		case cryptointel.SurfaceRadar:
			radar = true
		case cryptointel.SurfaceSignal:
			signal = true
		default:
			return nil, cryptointel.Errorf(cryptointel.EINVALID, MsgInvalidEventTypes)
		}
	}
	out := []string{}
	if radar {
		out = append(out, cryptointel.SurfaceRadar)
	}
	if signal {
		out = append(out, cryptointel.SurfaceSignal)
	}
	if len(out) == 0 {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, MsgEmptyEventTypes)
	}
	return out, nil
}

// WebhookDeliveryArgs are the River job arguments of one delivery. The same
// delivery id is used on every attempt and on manual redelivery.
type WebhookDeliveryArgs struct {
	// DeliveryID is the webhook_deliveries id.
	DeliveryID string `json:"delivery_id"`
}

// Kind implements river.JobArgs.
func (WebhookDeliveryArgs) Kind() string { return "webhook_delivery" }

// WebhookPollArgs are the River job arguments of the event poller.
type WebhookPollArgs struct{}

// Kind implements river.JobArgs.
func (WebhookPollArgs) Kind() string { return "webhook_poll" }

func errWebhookNotFound() *cryptointel.Error {
	return cryptointel.Errorf(cryptointel.ENOTFOUND, MsgWebhookNotFound)
}

// CreateWebhook registers a webhook for the account. url and eventTypes
// must already be validated; secret is the full secret. The per-account
// limit is checked under a lock on the account row, so concurrent creates
// cannot exceed it. Returns EINVALID (MsgMaxWebhooks) beyond the limit and
// ENOTFOUND for an unknown account.
func CreateWebhook(ctx context.Context, idb bun.IDB, accountID int64, url string, eventTypes []string, secret string) (*webhook.Webhook, error) {
	hook := &webhook.Webhook{AccountID: accountID, URL: url, Secret: secret, EventTypes: eventTypes, Active: true}
	err := idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var id int64
		if err := tx.NewRaw("SELECT id FROM accounts WHERE id = ? FOR UPDATE", accountID).Scan(ctx, &id); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return cryptointel.Errorf(cryptointel.ENOTFOUND, "Account not found")
			}
			return fmt.Errorf("error locking account: %w", err)
		}
		n, err := tx.NewSelect().Model((*webhook.Webhook)(nil)).Where("account_id = ?", accountID).Count(ctx)
		if err != nil {
			return fmt.Errorf("error counting webhooks: %w", err)
		}
		if n >= webhook.MaxPerAccount {
			return cryptointel.Errorf(cryptointel.EINVALID, "%s", MsgMaxWebhooks)
		}
		if _, err := tx.NewInsert().Model(hook).Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("error inserting webhook: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return hook, nil
}

// ListWebhooks returns the account's webhooks, most recently created first.
func ListWebhooks(ctx context.Context, idb bun.IDB, accountID int64) ([]*webhook.Webhook, error) {
	out := []*webhook.Webhook{}
	err := idb.NewSelect().Model(&out).Where("account_id = ?", accountID).OrderExpr("created_at DESC, id DESC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("error listing webhooks: %w", err)
	}
	return out, nil
}

// WebhookByID returns the account's webhook id. Returns ENOTFOUND
// (MsgWebhookNotFound) when it does not exist or belongs to another account.
func WebhookByID(ctx context.Context, idb bun.IDB, accountID, id int64) (*webhook.Webhook, error) {
	hook := new(webhook.Webhook)
	err := idb.NewSelect().Model(hook).Where("id = ? AND account_id = ?", id, accountID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errWebhookNotFound()
	} else if err != nil {
		return nil, fmt.Errorf("error selecting webhook: %w", err)
	}
	return hook, nil
}

// WebhookPatch lists the fields of an update; nil fields are left alone.
type WebhookPatch struct {
	// URL is the new, validated URL.
	URL *string
	// EventTypes are the new, normalized event types.
	EventTypes []string
	// Active pauses (false) or re-enables (true) the webhook. Re-enabling
	// resets the consecutive-failure count.
	Active *bool
}

// UpdateWebhook applies patch to the account's webhook. Returns EINVALID
// (MsgNoFieldsToUpdate) for an empty patch and ENOTFOUND
// (MsgWebhookNotFound) for a missing or foreign webhook.
func UpdateWebhook(ctx context.Context, idb bun.IDB, accountID, id int64, patch WebhookPatch) (*webhook.Webhook, error) {
	if patch.URL == nil && patch.EventTypes == nil && patch.Active == nil {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, MsgNoFieldsToUpdate)
	}
	q := idb.NewUpdate().Model((*webhook.Webhook)(nil)).Set("updated_at = now()").
		Where("id = ? AND account_id = ?", id, accountID)
	if patch.URL != nil {
		q = q.Set("url = ?", *patch.URL)
	}
	if patch.EventTypes != nil {
		q = q.Set("event_types = ?", pgdialect.Array(patch.EventTypes))
	}
	if patch.Active != nil {
		q = q.Set("active = ?", *patch.Active)
		if *patch.Active {
			q = q.Set("consecutive_failures = 0")
		}
	}
	hook := new(webhook.Webhook)
	if _, err := q.Returning("*").Exec(ctx, hook); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("error updating webhook: %w", err)
	}
	if hook.ID == 0 {
		return nil, errWebhookNotFound()
	}
	return hook, nil
}

// DeleteWebhook deletes the account's webhook and, by cascade, its
// deliveries; queued delivery jobs find no delivery and end. Returns
// ENOTFOUND (MsgWebhookNotFound) for a missing or foreign webhook.
func DeleteWebhook(ctx context.Context, idb bun.IDB, accountID, id int64) error {
	res, err := idb.NewDelete().Model((*webhook.Webhook)(nil)).Where("id = ? AND account_id = ?", id, accountID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("error deleting webhook: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errWebhookNotFound()
	}
	return nil
}

// RotateWebhookSecret replaces the account's webhook secret. Deliveries
// attempted from now on are signed with the new secret. Returns ENOTFOUND
// (MsgWebhookNotFound) for a missing or foreign webhook.
func RotateWebhookSecret(ctx context.Context, idb bun.IDB, accountID, id int64, secret string) (*webhook.Webhook, error) {
	hook := new(webhook.Webhook)
	_, err := idb.NewUpdate().Model((*webhook.Webhook)(nil)).Set("secret = ?", secret).Set("updated_at = now()").
		Where("id = ? AND account_id = ?", id, accountID).Returning("*").Exec(ctx, hook)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("error rotating webhook secret: %w", err)
	}
	if hook.ID == 0 {
		return nil, errWebhookNotFound()
	}
	return hook, nil
}

// DeliveryFilter selects a webhook's deliveries for inspection.
type DeliveryFilter struct {
	// Status is pending, succeeded or failed; empty for all.
	Status string
	// Limit bounds the result. Defaults to 50.
	Limit int
}

// WebhookDeliveries returns a webhook's most recent deliveries, newest
// first. The caller checks ownership of the webhook first.
func WebhookDeliveries(ctx context.Context, idb bun.IDB, webhookID int64, f DeliveryFilter) ([]*webhook.Delivery, error) {
	if f.Limit <= 0 {
		f.Limit = cryptointel.WebhookDeliveriesLimit.Default
	}
	out := []*webhook.Delivery{}
	q := idb.NewSelect().Model(&out).Where("webhook_id = ?", webhookID)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if err := q.OrderExpr("created_at DESC, id").Limit(int64(f.Limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("error listing deliveries: %w", err)
	}
	return out, nil
}

// WebhookAttempts returns the recorded attempts of a delivery in order.
func WebhookAttempts(ctx context.Context, idb bun.IDB, deliveryID string) ([]*webhook.Attempt, error) {
	out := []*webhook.Attempt{}
	if !isWebhookUUID(deliveryID) {
		return out, nil
	}
	if err := idb.NewSelect().Model(&out).Where("delivery_id = ?", deliveryID).OrderExpr("attempt, id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("error listing attempts: %w", err)
	}
	return out, nil
}

var webhookUUIDRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func isWebhookUUID(s string) bool { return webhookUUIDRE.MatchString(s) }

// deliveryColumns is the column list scanned by scanDelivery.
const deliveryColumns = `id::text, webhook_id, event_id, event_type, status, attempts, last_status, last_error, created_at, updated_at, delivered_at`

func scanDelivery(row pgx.Row) (*webhook.Delivery, error) {
	d := new(webhook.Delivery)
	err := row.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.EventType, &d.Status, &d.Attempts, &d.LastStatus, &d.LastError, &d.CreatedAt, &d.UpdatedAt, &d.DeliveredAt)
	return d, err
}

// CreateTestDeliveryTx records a ping delivery (no event) for the
// account's webhook inside tx; the caller inserts its River job in the same
// transaction. Pings are sent even to an inactive webhook and never count
// toward auto-disable. Returns ENOTFOUND (MsgWebhookNotFound).
func CreateTestDeliveryTx(ctx context.Context, tx pgx.Tx, accountID, webhookID int64) (*webhook.Delivery, error) {
	db.CountStatement(ctx)
	d, err := scanDelivery(tx.QueryRow(ctx, `
		INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type)
		SELECT gen_random_uuid(), w.id, NULL, $3 FROM webhooks w WHERE w.id = $1 AND w.account_id = $2
		RETURNING `+deliveryColumns, webhookID, accountID, webhook.EventTypePing))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errWebhookNotFound()
	} else if err != nil {
		return nil, fmt.Errorf("error inserting test delivery: %w", err)
	}
	return d, nil
}

// RedeliverTx sets the account's finished (succeeded or failed) delivery
// back to pending inside tx so a new River job (inserted by the caller in
// the same transaction) attempts it again under the same delivery id.
// Returns ENOTFOUND (MsgWebhookNotFound or MsgDeliveryNotFound), EINVALID
// (MsgDeliveryPending) for a delivery still pending (so concurrent requests
// queue one job), and EINVALID (MsgWebhookInactive) when the webhook is
// paused or disabled, except for pings.
func RedeliverTx(ctx context.Context, tx pgx.Tx, accountID, webhookID int64, deliveryID string) (*webhook.Delivery, error) {
	var active bool
	db.CountStatement(ctx)
	err := tx.QueryRow(ctx, `SELECT active FROM webhooks WHERE id = $1 AND account_id = $2 FOR UPDATE`, webhookID, accountID).Scan(&active)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errWebhookNotFound()
	} else if err != nil {
		return nil, fmt.Errorf("error selecting webhook: %w", err)
	}
	if !isWebhookUUID(deliveryID) {
		return nil, cryptointel.Errorf(cryptointel.ENOTFOUND, MsgDeliveryNotFound)
	}
	db.CountStatement(ctx)
	d, err := scanDelivery(tx.QueryRow(ctx, `
		UPDATE webhook_deliveries SET status = 'pending', updated_at = now()
		WHERE id = $1 AND webhook_id = $2 AND (event_id IS NULL OR $3) AND status <> 'pending'
		RETURNING `+deliveryColumns, deliveryID, webhookID, active))
	if errors.Is(err, pgx.ErrNoRows) {
		// Distinguish an unknown delivery from a pending one and from an
		// inactive webhook.
		var status *string
		db.CountStatement(ctx)
		if err := tx.QueryRow(ctx, `SELECT (SELECT status FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2)`, deliveryID, webhookID).Scan(&status); err != nil {
			return nil, fmt.Errorf("error selecting delivery: %w", err)
		}
		switch {
		case status == nil:
			return nil, cryptointel.Errorf(cryptointel.ENOTFOUND, MsgDeliveryNotFound)
		case *status == webhook.DeliveryPending:
			return nil, cryptointel.Errorf(cryptointel.EINVALID, MsgDeliveryPending)
		}
		return nil, cryptointel.Errorf(cryptointel.EINVALID, MsgWebhookInactive)
	} else if err != nil {
		return nil, fmt.Errorf("error resetting delivery: %w", err)
	}
	return d, nil
}

// PollResult is what one poll did.
type PollResult struct {
	// DeliveryIDs are the deliveries created by this poll; the caller
	// inserts one River job for each in the same transaction.
	DeliveryIDs []string
	// Scanned is the number of events examined.
	Scanned int
	// LastSeq is the high-water mark after the poll.
	LastSeq int64
	// Advanced reports whether the mark moved.
	Advanced bool
}

// pollPage is how many events one fan-out statement handles.
const pollPage = 500

// pollerName and pollerPendingName are the poller_state rows holding the
// settled high-water mark and the candidate mark waiting to settle.
const (
	pollerName        = "events"
	pollerPendingName = "events_pending"
)

// PollEventsTx fans out new events to subscribed active webhooks inside tx
// and advances the durable high-water mark; the caller inserts the River
// jobs of the returned deliveries in the same transaction and commits.
//
// Sequence values can commit out of order: a transaction that took ingest
// sequence 10 may commit after one that took 11. The mark therefore only
// advances to a value known to be settled. Each poll records a candidate
// (the sequence's last value, then the time); a later poll promotes the
// candidate to the mark once no transaction that started before the
// candidate was recorded is still running (pg_stat_activity), because any
// event with a sequence value at or below the candidate was written by such
// a transaction. Events above the mark are scanned again on every poll until
// it passes them; the unique (webhook_id, event_id) index makes the rescan
// idempotent, as it does for concurrent pollers, which in addition
// serialize on the mark's row lock.
//
// Event types: a webhook subscribed to signal receives scored events as
// "signal"; a webhook subscribed to radar receives every event, as
// "radar" unless it is also subscribed to signal and the event is scored.
// One delivery per (webhook, event). A webhook receives events whose
// latest ingest (events.updated_at) is at most five minutes older than the
// webhook, so a new webhook is not flooded with history while the mark
// catches up. Paused or disabled webhooks get no new deliveries.
func PollEventsTx(ctx context.Context, tx pgx.Tx) (*PollResult, error) {
	res := &PollResult{DeliveryIDs: []string{}}
	db.CountStatement(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO poller_state (name, last_seq) VALUES ($1, 0), ($2, 0) ON CONFLICT (name) DO NOTHING`, pollerName, pollerPendingName); err != nil {
		return nil, fmt.Errorf("error ensuring poller state: %w", err)
	}
	var mark int64
	db.CountStatement(ctx)
	if err := tx.QueryRow(ctx, `SELECT last_seq FROM poller_state WHERE name = $1 FOR UPDATE`, pollerName).Scan(&mark); err != nil {
		return nil, fmt.Errorf("error locking poller state: %w", err)
	}
	var (
		candidate   int64
		candidateAt time.Time
		settled     bool
	)
	// The first access to pg_stat_activity in this transaction takes its
	// snapshot; the transaction is fresh, so the snapshot is current.
	db.CountStatement(ctx)
	err := tx.QueryRow(ctx, `
		SELECT p.last_seq, p.polled_at,
		       NOT EXISTS (SELECT 1 FROM pg_stat_activity a
		                   WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
		                     AND a.backend_type = 'client backend'
		                     AND a.xact_start IS NOT NULL AND a.xact_start <= p.polled_at)
		FROM poller_state p WHERE p.name = $1`, pollerPendingName).Scan(&candidate, &candidateAt, &settled)
	if err != nil {
		return nil, fmt.Errorf("error reading poller candidate: %w", err)
	}

	// Fan out every event above the mark, page by page.
	afterSeq, afterID := mark, int64(0)
	for {
		var (
			ids     []string
			n       int
			lastSeq *int64
			lastID  *int64
		)
		db.CountStatement(ctx)
		err := tx.QueryRow(ctx, `
			WITH ev AS (
				SELECT id, significance, ingest_seq, updated_at FROM events
				WHERE ingest_seq > $1 AND (ingest_seq, id) > ($2, $3)
				ORDER BY ingest_seq, id
				LIMIT $4
			), ins AS (
				INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type)
				SELECT gen_random_uuid(), w.id, ev.id,
				       CASE WHEN ev.significance IS NOT NULL AND 'signal' = ANY (w.event_types) THEN 'signal' ELSE 'radar' END
				FROM ev JOIN webhooks w
				  ON w.active
				 AND w.created_at <= ev.updated_at + interval '5 minutes'
				 AND ('radar' = ANY (w.event_types) OR (ev.significance IS NOT NULL AND 'signal' = ANY (w.event_types)))
				ORDER BY ev.ingest_seq, ev.id, w.id
				ON CONFLICT (webhook_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
				RETURNING id
			), last AS (
				SELECT ingest_seq, id FROM ev ORDER BY ingest_seq DESC, id DESC LIMIT 1
			)
			SELECT coalesce((SELECT array_agg(id::text) FROM ins), '{}'),
			       (SELECT count(*) FROM ev),
			       (SELECT ingest_seq FROM last), (SELECT id FROM last)`,
			mark, afterSeq, afterID, pollPage).Scan(&ids, &n, &lastSeq, &lastID)
		if err != nil {
			return nil, fmt.Errorf("error fanning out events: %w", err)
		}
		res.DeliveryIDs = append(res.DeliveryIDs, ids...)
		res.Scanned += n
		if n < pollPage || lastSeq == nil {
			break
		}
		afterSeq, afterID = *lastSeq, *lastID
	}

	res.LastSeq = mark
	if settled && candidate > mark {
		db.CountStatement(ctx)
		if _, err := tx.Exec(ctx, `UPDATE poller_state SET last_seq = $2, polled_at = now() WHERE name = $1`, pollerName, candidate); err != nil {
			return nil, fmt.Errorf("error advancing poller mark: %w", err)
		}
		res.LastSeq, res.Advanced = candidate, true
	}
	if settled {
		// Record a new candidate: the sequence's last value first, then the
		// time, so every transaction holding a value at or below it started
		// before the recorded time.
		var last int64
		db.CountStatement(ctx)
		if err := tx.QueryRow(ctx, `SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM events_ingest_seq`).Scan(&last); err != nil {
			return nil, fmt.Errorf("error reading ingest sequence: %w", err)
		}
		db.CountStatement(ctx)
		if _, err := tx.Exec(ctx, `UPDATE poller_state SET last_seq = $2, polled_at = clock_timestamp() WHERE name = $1`, pollerPendingName, last); err != nil {
			return nil, fmt.Errorf("error recording poller candidate: %w", err)
		}
	}
	return res, nil
}

// DeliveryForSend returns a delivery and its webhook for the delivery
// worker. Returns ENOTFOUND when the delivery no longer exists (its webhook
// was deleted).
func DeliveryForSend(ctx context.Context, idb bun.IDB, deliveryID string) (*webhook.Delivery, *webhook.Webhook, error) {
	if !isWebhookUUID(deliveryID) {
		return nil, nil, cryptointel.Errorf(cryptointel.ENOTFOUND, MsgDeliveryNotFound)
	}
	d := new(webhook.Delivery)
	err := idb.NewSelect().Model(d).Where("id = ?", deliveryID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, cryptointel.Errorf(cryptointel.ENOTFOUND, MsgDeliveryNotFound)
	} else if err != nil {
		return nil, nil, fmt.Errorf("error selecting delivery: %w", err)
	}
	hook := new(webhook.Webhook)
	err = idb.NewSelect().Model(hook).Where("id = ?", d.WebhookID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, cryptointel.Errorf(cryptointel.ENOTFOUND, MsgDeliveryNotFound)
	} else if err != nil {
		return nil, nil, fmt.Errorf("error selecting webhook: %w", err)
	}
	return d, hook, nil
}

// AttemptRecord is the outcome of one HTTP attempt of a delivery.
type AttemptRecord struct {
	// DeliveryID is the delivery attempted.
	DeliveryID string
	// AttemptedAt is when the request was sent.
	AttemptedAt time.Time
	// StatusCode is the response status; nil when there was no response.
	StatusCode *int
	// Latency is the time from sending to the end of the response.
	Latency time.Duration
	// Error describes a failed attempt; empty on success.
	Error string
	// Succeeded is true for a 2xx response.
	Succeeded bool
	// Final is true when no attempt follows a failure, so the delivery is
	// marked failed.
	Final bool
}

// RecordWebhookAttempt records an attempt and updates the delivery and its
// webhook in one transaction: a success marks the delivery succeeded and
// resets the webhook's consecutive-failure count; a final failure marks it
// failed, increments the count and sets the webhook inactive when the count
// reaches WebhookAutoDisableAfter. Pings never touch the count. It returns
// the updated delivery, or nil when the delivery was no longer pending
// (already recorded by an earlier run of the same job).
func RecordWebhookAttempt(ctx context.Context, idb bun.IDB, rec AttemptRecord) (*webhook.Delivery, error) {
	var out *webhook.Delivery
	err := idb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		status := webhook.DeliveryPending
		if rec.Succeeded {
			status = webhook.DeliverySucceeded
		} else if rec.Final {
			status = webhook.DeliveryFailed
		}
		var lastError *string
		if rec.Error != "" {
			lastError = &rec.Error
		}
		d := new(webhook.Delivery)
		_, err := tx.NewUpdate().Model((*webhook.Delivery)(nil)).
			Set("attempts = attempts + 1").
			Set("status = ?", status).
			Set("last_status = ?", rec.StatusCode).
			Set("last_error = ?", lastError).
			Set("updated_at = now()").
			Set("delivered_at = CASE WHEN ? THEN ?::timestamptz ELSE delivered_at END", rec.Succeeded, rec.AttemptedAt).
			Where("id = ? AND status = 'pending'", rec.DeliveryID).
			Returning("*").Exec(ctx, d)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("error updating delivery: %w", err)
		}
		if d.ID == "" {
			return nil
		}
		out = d
		attempt := &webhook.Attempt{
			DeliveryID:  d.ID,
			Attempt:     d.Attempts,
			AttemptedAt: rec.AttemptedAt,
			StatusCode:  rec.StatusCode,
			LatencyMS:   int(rec.Latency.Milliseconds()),
			Error:       lastError,
		}
		if _, err := tx.NewInsert().Model(attempt).Exec(ctx); err != nil {
			return fmt.Errorf("error inserting attempt: %w", err)
		}
		if d.EventID == nil {
			return nil
		}
		switch {
		case rec.Succeeded:
			_, err = tx.NewUpdate().Model((*webhook.Webhook)(nil)).Set("consecutive_failures = 0").
				Where("id = ? AND consecutive_failures <> 0", d.WebhookID).Exec(ctx)
		case rec.Final:
			_, err = tx.NewUpdate().Model((*webhook.Webhook)(nil)).
				Set("consecutive_failures = consecutive_failures + 1").
				Set("active = CASE WHEN consecutive_failures + 1 >= ? THEN false ELSE active END", webhook.AutoDisableAfter).
				Set("updated_at = CASE WHEN active AND consecutive_failures + 1 >= ? THEN now() ELSE updated_at END", webhook.AutoDisableAfter).
				Where("id = ?", d.WebhookID).Exec(ctx)
		}
		if err != nil {
			return fmt.Errorf("error updating webhook failure count: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SkipDelivery marks a pending delivery failed without attempting it, with
// reason as its last error: its webhook is inactive (it is then visible
// under ?status=failed and can be redelivered after the webhook is
// re-enabled) or its event no longer exists. It does not count toward
// auto-disable. An empty reason means the webhook is inactive.
func SkipDelivery(ctx context.Context, idb bun.IDB, deliveryID, reason string) error {
	if reason == "" {
		reason = msgDeliveryNotAttempt
	}
	_, err := idb.NewUpdate().Model((*webhook.Delivery)(nil)).
		Set("status = 'failed'").Set("last_error = ?", reason).Set("updated_at = now()").
		Where("id = ? AND status = 'pending'", deliveryID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("error skipping delivery: %w", err)
	}
	return nil
}
