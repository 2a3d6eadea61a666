package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// pollInsertOpts are the insert options of a poll job. Polls are not
// unique: concurrent polls serialize on the high-water mark's row lock and
// fan-out is idempotent, and a poll queued while another runs must not be
// dropped (it may see events the running one missed).
func pollInsertOpts() *river.InsertOpts {
	return &river.InsertOpts{MaxAttempts: 3}
}

// webhookPollWorker fans out new events to webhooks: deliveries and their
// River jobs are inserted in the transaction that advances the mark (see
// webhookstore.PollEventsTx for the ordering and event-type rules).
type webhookPollWorker struct {
	river.WorkerDefaults[webhookstore.WebhookPollArgs]
	cfg *WebhookConfig
}

// Work runs one poll.
func (w *webhookPollWorker) Work(ctx context.Context, job *river.Job[webhookstore.WebhookPollArgs]) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("error getting river client: %w", err)
	}
	_, err = PollWebhooks(ctx, w.cfg.Store, client)
	return err
}

// PollWebhooks runs one poll in its own transaction: it fans out events
// above the mark and inserts one delivery job per new delivery with
// InsertManyTx before committing, so a delivery never exists without its
// job nor a job without its delivery.
func PollWebhooks(ctx context.Context, store *db.DB, client *river.Client[pgx.Tx]) (*webhookstore.PollResult, error) {
	tx, err := store.Pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("error beginning poll: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	res, err := webhookstore.PollEventsTx(ctx, tx)
	if err != nil {
		return nil, err
	}
	if len(res.DeliveryIDs) > 0 {
		if _, err := client.InsertManyTx(ctx, tx, deliveryJobParams(res.DeliveryIDs)); err != nil {
			return nil, fmt.Errorf("error queueing deliveries: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("error committing poll: %w", err)
	}
	return res, nil
}

// RunEventListener LISTENs for ingest notifications and queues a poll for
// each burst of them, so the first delivery attempt normally leaves within
// a second of an ingest commit. It also queues one poll at start. It
// returns when ctx is done.
func RunEventListener(ctx context.Context, store *db.DB, client *river.Client[pgx.Tx], logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	wake := make(chan struct{}, 1)
	signal := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	go store.ListenEvents(ctx, signal) //nolint:errcheck
	signal()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
		if _, err := client.Insert(ctx, webhookstore.WebhookPollArgs{}, pollInsertOpts()); err != nil && ctx.Err() == nil {
			logger.WarnContext(ctx, "error queueing webhook poll", "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			signal()
		}
	}
}
