package webhookstore_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/webhookstore"
)

type webhookBundle struct {
	store   *db.DB
	account int64
}

func setupWebhook(t *testing.T) *webhookBundle {
	t.Helper()
	store := dbtest.New(t)
	_, key, err := db.CreateAPIKey(context.Background(), store.Bun, "acme", cryptointel.PlanPro)
	require.NoError(t, err)
	return &webhookBundle{store: store, account: key.AccountID}
}

// execEvent writes an event with the next ingest sequence value, the way
// ingest does.
func execEvent(t *testing.T, ctx context.Context, exec func(sql string, args ...any) error, id int64, signal bool) {
	t.Helper()
	var sig any
	if signal {
		sig = 0.9
	}
	require.NoError(t, exec(`INSERT INTO events (id, title, category, latest_evidence_at, significance, ingest_seq)
		VALUES ($1, $2, 'partnership', now(), $3, nextval('events_ingest_seq'))`, id, fmt.Sprintf("event %d", id), sig))
}

func (b *webhookBundle) insertEvent(t *testing.T, id int64, signal bool) {
	execEvent(t, context.Background(), func(sql string, args ...any) error {
		_, err := b.store.Pool.Exec(context.Background(), sql, args...)
		return err
	}, id, signal)
}

func (b *webhookBundle) poll(t *testing.T) *webhookstore.PollResult {
	t.Helper()
	ctx := context.Background()
	tx, err := b.store.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	res, err := webhookstore.PollEventsTx(ctx, tx)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	return res
}

type deliveryKey struct {
	webhook int64
	event   int64
	typ     string
}

func (b *webhookBundle) deliveries(t *testing.T) []deliveryKey {
	t.Helper()
	rows, err := b.store.Pool.Query(context.Background(), `SELECT webhook_id, event_id, event_type FROM webhook_deliveries WHERE event_id IS NOT NULL`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (deliveryKey, error) {
		var k deliveryKey
		return k, r.Scan(&k.webhook, &k.event, &k.typ)
	})
	require.NoError(t, err)
	sort.Slice(out, func(i, j int) bool {
		if out[i].webhook != out[j].webhook {
			return out[i].webhook < out[j].webhook
		}
		return out[i].event < out[j].event
	})
	return out
}

func TestWebhookCRUD(t *testing.T) {
	t.Parallel()
	b := setupWebhook(t)
	ctx := context.Background()
	_, other, err := db.CreateAPIKey(ctx, b.store.Bun, "other", cryptointel.PlanPro)
	require.NoError(t, err)

	var ids []int64
	for i := 0; i < webhook.MaxPerAccount; i++ {
		h, err := webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, fmt.Sprintf("https://h%d.example.com/", i), []string{"radar"}, "whsec_x")
		require.NoError(t, err)
		ids = append(ids, h.ID)
	}
	_, err = webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, "https://h.example.com/", []string{"radar"}, "whsec_x")
	require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
	require.Equal(t, "Maximum 5 webhooks per account", cryptointel.ErrorMessage(err))

	list, err := webhookstore.ListWebhooks(ctx, b.store.Bun, b.account)
	require.NoError(t, err)
	require.Len(t, list, 5)
	require.Equal(t, ids[4], list[0].ID, "newest first")

	_, err = webhookstore.WebhookByID(ctx, b.store.Bun, other.AccountID, ids[0])
	require.Equal(t, cryptointel.ENOTFOUND, cryptointel.ErrorCode(err))
	_, err = webhookstore.UpdateWebhook(ctx, b.store.Bun, other.AccountID, ids[0], webhookstore.WebhookPatch{Active: new(bool)})
	require.Equal(t, "Webhook not found", cryptointel.ErrorMessage(err))
	require.Equal(t, cryptointel.ENOTFOUND, cryptointel.ErrorCode(webhookstore.DeleteWebhook(ctx, b.store.Bun, other.AccountID, ids[0])))
	_, err = webhookstore.UpdateWebhook(ctx, b.store.Bun, b.account, ids[0], webhookstore.WebhookPatch{})
	require.Equal(t, "No fields to update", cryptointel.ErrorMessage(err))

	off := false
	h, err := webhookstore.UpdateWebhook(ctx, b.store.Bun, b.account, ids[0], webhookstore.WebhookPatch{Active: &off})
	require.NoError(t, err)
	require.False(t, h.Active)
	require.Equal(t, "https://h0.example.com/", h.URL, "fields not included stay")

	require.NoError(t, webhookstore.DeleteWebhook(ctx, b.store.Bun, b.account, ids[0]))
	_, err = webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, "https://h.example.com/", []string{"signal"}, "whsec_x")
	require.NoError(t, err, "deleting frees a slot")

	_, err = webhookstore.NormalizeEventTypes([]string{"radar", "news"})
	require.Equal(t, "event_types must only contain: radar, signal", cryptointel.ErrorMessage(err))
	types, err := webhookstore.NormalizeEventTypes([]string{"signal", "radar", "signal"})
	require.NoError(t, err)
	require.Equal(t, []string{"radar", "signal"}, types)
}

// TestPollFanOut checks the event-type rules, that paused webhooks get
// nothing, and that a second poll (or a concurrent one) creates nothing new.
func TestPollFanOut(t *testing.T) {
	t.Parallel()
	b := setupWebhook(t)
	ctx := context.Background()
	radar, err := webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, "https://r.example.com/", []string{"radar"}, "whsec_x")
	require.NoError(t, err)
	signal, err := webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, "https://s.example.com/", []string{"signal"}, "whsec_x")
	require.NoError(t, err)
	both, err := webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, "https://b.example.com/", []string{"radar", "signal"}, "whsec_x")
	require.NoError(t, err)
	paused, err := webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, "https://p.example.com/", []string{"radar", "signal"}, "whsec_x")
	require.NoError(t, err)
	off := false
	_, err = webhookstore.UpdateWebhook(ctx, b.store.Bun, b.account, paused.ID, webhookstore.WebhookPatch{Active: &off})
	require.NoError(t, err)

	b.insertEvent(t, 1, false)
	b.insertEvent(t, 2, true)
	res := b.poll(t)
	require.Len(t, res.DeliveryIDs, 5)
	require.Equal(t, []deliveryKey{
		{radar.ID, 1, "radar"}, {radar.ID, 2, "radar"},
		{signal.ID, 2, "signal"},
		{both.ID, 1, "radar"}, {both.ID, 2, "signal"},
	}, b.deliveries(t))

	res = b.poll(t)
	require.Empty(t, res.DeliveryIDs, "a re-run fans out nothing new")
	require.Len(t, b.deliveries(t), 5)
}

// TestPollOutOfOrderCommit shows that an event whose sequence value was
// drawn before another's but committed after it is still delivered, and
// that the mark only advances once it is settled.
func TestPollOutOfOrderCommit(t *testing.T) {
	t.Parallel()
	b := setupWebhook(t)
	ctx := context.Background()
	hook, err := webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, "https://r.example.com/", []string{"radar"}, "whsec_x")
	require.NoError(t, err)

	slow, err := b.store.Pool.Begin(ctx)
	require.NoError(t, err)
	defer slow.Rollback(ctx) //nolint:errcheck
	execEvent(t, ctx, func(sql string, args ...any) error { _, err := slow.Exec(ctx, sql, args...); return err }, 1, false)
	b.insertEvent(t, 2, false) // takes a higher sequence value, commits first

	res := b.poll(t)
	require.Len(t, res.DeliveryIDs, 1)
	res = b.poll(t)
	require.Empty(t, res.DeliveryIDs)
	require.Equal(t, int64(0), res.LastSeq, "the slow transaction keeps the mark from passing its value")

	require.NoError(t, slow.Commit(ctx))
	res = b.poll(t)
	require.Len(t, res.DeliveryIDs, 1, "the late commit is delivered")
	require.Equal(t, []deliveryKey{{hook.ID, 1, "radar"}, {hook.ID, 2, "radar"}}, b.deliveries(t))

	// The candidate recorded before the slow commit settles now, then the
	// next one; the mark reaches the last value.
	for i := 0; i < 3 && res.LastSeq < 2; i++ {
		res = b.poll(t)
	}
	require.Equal(t, int64(2), res.LastSeq)
	b.insertEvent(t, 3, false)
	res = b.poll(t)
	require.Len(t, res.DeliveryIDs, 1)
	require.Equal(t, 1, res.Scanned, "events under the mark are not scanned again")
}

func TestRecordWebhookAttemptAutoDisable(t *testing.T) {
	t.Parallel()
	b := setupWebhook(t)
	ctx := context.Background()
	hook, err := webhookstore.CreateWebhook(ctx, b.store.Bun, b.account, "https://r.example.com/", []string{"radar"}, "whsec_x")
	require.NoError(t, err)
	_, err = b.store.Pool.Exec(ctx, `UPDATE webhooks SET consecutive_failures = 48 WHERE id = $1`, hook.ID)
	require.NoError(t, err)
	for id := int64(1); id <= 3; id++ {
		b.insertEvent(t, id, false)
	}
	res := b.poll(t)
	require.Len(t, res.DeliveryIDs, 3)
	ids := res.DeliveryIDs

	// A non-final failure does not count; a success resets.
	d, err := webhookstore.RecordWebhookAttempt(ctx, b.store.Bun, webhookstore.AttemptRecord{DeliveryID: ids[0], AttemptedAt: b.store.Now(), Error: "x"})
	require.NoError(t, err)
	require.Equal(t, webhook.DeliveryPending, d.Status)
	h, err := webhookstore.WebhookByID(ctx, b.store.Bun, b.account, hook.ID)
	require.NoError(t, err)
	require.Equal(t, 48, h.ConsecutiveFailures)

	_, err = webhookstore.RecordWebhookAttempt(ctx, b.store.Bun, webhookstore.AttemptRecord{DeliveryID: ids[0], AttemptedAt: b.store.Now(), Error: "x", Final: true})
	require.NoError(t, err)
	h, _ = webhookstore.WebhookByID(ctx, b.store.Bun, b.account, hook.ID)
	require.Equal(t, 49, h.ConsecutiveFailures)
	require.True(t, h.Active)
	d, err = webhookstore.RecordWebhookAttempt(ctx, b.store.Bun, webhookstore.AttemptRecord{DeliveryID: ids[1], AttemptedAt: b.store.Now(), Error: "x", Final: true})
	require.NoError(t, err)
	require.Equal(t, webhook.DeliveryFailed, d.Status)
	h, _ = webhookstore.WebhookByID(ctx, b.store.Bun, b.account, hook.ID)
	require.Equal(t, 50, h.ConsecutiveFailures)
	require.False(t, h.Active, "50 consecutive failed deliveries disable")

	// Recording again for a finished delivery changes nothing.
	d, err = webhookstore.RecordWebhookAttempt(ctx, b.store.Bun, webhookstore.AttemptRecord{DeliveryID: ids[1], AttemptedAt: b.store.Now(), Succeeded: true})
	require.NoError(t, err)
	require.Nil(t, d)
	attempts, err := webhookstore.WebhookAttempts(ctx, b.store.Bun, ids[0])
	require.NoError(t, err)
	require.Len(t, attempts, 2)
	require.Equal(t, 2, attempts[1].Attempt)

	// Redelivery: refused while pending or while the webhook is disabled.
	redeliver := func(id string) (*webhook.Delivery, error) {
		tx, err := b.store.Pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck
		d, err := webhookstore.RedeliverTx(ctx, tx, b.account, hook.ID, id)
		if err == nil {
			require.NoError(t, tx.Commit(ctx))
		}
		return d, err
	}
	_, err = redeliver(ids[2])
	require.Equal(t, webhookstore.MsgDeliveryPending, cryptointel.ErrorMessage(err))
	_, err = redeliver(ids[1])
	require.Equal(t, webhookstore.MsgWebhookInactive, cryptointel.ErrorMessage(err))
	_, err = redeliver("00000000-0000-4000-8000-000000000000")
	require.Equal(t, webhookstore.MsgDeliveryNotFound, cryptointel.ErrorMessage(err))

	on := true
	h, err = webhookstore.UpdateWebhook(ctx, b.store.Bun, b.account, hook.ID, webhookstore.WebhookPatch{Active: &on})
	require.NoError(t, err)
	require.True(t, h.Active)
	require.Equal(t, 0, h.ConsecutiveFailures, "re-enabling resets the count")
	d, err = redeliver(ids[1])
	require.NoError(t, err)
	require.Equal(t, webhook.DeliveryPending, d.Status)
	require.Equal(t, ids[1], d.ID)
	_, err = redeliver(ids[1])
	require.Equal(t, webhookstore.MsgDeliveryPending, cryptointel.ErrorMessage(err), "a second request while pending queues nothing")
}
