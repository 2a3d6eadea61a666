package jobs

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/observe"
	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/webhookstore"
	"github.com/cryptointel/cryptointel/wire"
)

// WebhookRetrySchedule is the contract's delay before attempts 2 to 5 of a
// delivery (section 6): 15 seconds, 1 minute, 5 minutes and 30 minutes
// after attempts 1 to 4. Attempt 1 is immediate.
var WebhookRetrySchedule = []time.Duration{15 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute}

// WebhookRetryDelay returns the delay after failed attempt n (1-based),
// multiplied by scale (1.0 in production; tests use e.g. 0.001). Attempts
// beyond the schedule reuse its last entry.
func WebhookRetryDelay(attempt int, scale float64) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > len(WebhookRetrySchedule) {
		attempt = len(WebhookRetrySchedule)
	}
	if scale <= 0 {
		scale = 1
	}
	return time.Duration(float64(WebhookRetrySchedule[attempt-1]) * scale)
}

// Delivery limits and headers.
const (
	// WebhookMaxBodyBytes bounds a delivery body (256 KB). Larger events are
	// sent with evidence trimmed and "truncated": true.
	WebhookMaxBodyBytes = 256 * 1024
	// WebhookAttemptTimeout is how long a receiver has to answer with a 2xx.
	WebhookAttemptTimeout = 10 * time.Second
	// DefaultWebhookPollInterval is the poller's period unless configured
	// (app's WEBHOOK_POLL_INTERVAL defaults to it too).
	DefaultWebhookPollInterval = 60 * time.Second

	HeaderSignature     = "X-Service-Signature"
	HeaderEvent         = "X-Service-Event"
	HeaderDelivery      = "X-Service-Delivery"
	HeaderWebhookID     = "webhook-id"
	HeaderWebhookTime   = "webhook-timestamp"
	HeaderWebhookSig    = "webhook-signature"
	webhookDeliveryJobT = 30 * time.Second
)

// What an event that does not fit WebhookMaxBodyBytes even without its
// evidence keeps (EncodeDeliveryBody): text fields cut to these byte
// lengths, at most this many bullets and entity refs of each role. Should
// it still not fit, refs and bullets go and the summary is cut to
// trimTextBytes.
const (
	trimTextBytes    = 1000 // title, each bullet, and the summary at the last step
	trimSummaryBytes = 8000
	trimBullets      = 20
	trimRefs         = 50 // owners, and participants
)

// msgAttemptTimeout is the attempt error of a receiver that did not answer
// within WebhookAttemptTimeout: "timeout: no response within 10 seconds".
var msgAttemptTimeout = fmt.Sprintf("timeout: no response within %d seconds", int(WebhookAttemptTimeout/time.Second))

// WebhookConfig configures the webhook poller and delivery workers.
type WebhookConfig struct {
	// Store is the database.
	Store *db.DB
	// Logger logs delivery failures. Defaults to slog.Default().
	Logger *slog.Logger
	// TimeScale multiplies the retry schedule. Defaults to 1.0 (the
	// contract's schedule); tests use e.g. 0.001.
	TimeScale float64
	// PollInterval is the period of the poller. Defaults to
	// DefaultWebhookPollInterval.
	PollInterval time.Duration
	// Guard refuses non-public addresses at connect time. Defaults to a
	// guard with an empty allowlist.
	Guard *webhook.Guard
	// HTTPClient sends deliveries. Defaults to Guard.NewHTTPClient with
	// WebhookAttemptTimeout and no redirects. An injected client should keep
	// those properties.
	HTTPClient *http.Client
	// Now returns the current time. Defaults to time.Now.
	Now func() time.Time
}

func (c *WebhookConfig) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.TimeScale <= 0 {
		c.TimeScale = 1
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultWebhookPollInterval
	}
	if c.Guard == nil {
		c.Guard = &webhook.Guard{}
	}
	if c.HTTPClient == nil {
		c.HTTPClient = c.Guard.NewHTTPClient(webhook.ClientOptions{Timeout: WebhookAttemptTimeout})
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// WebhookRegistration registers the event poller (a periodic job every
// PollInterval, also run on start) and the delivery worker.
func WebhookRegistration(cfg WebhookConfig) Registration {
	cfg.setDefaults()
	return func(workers *river.Workers, rc *river.Config) error {
		if err := river.AddWorkerSafely(workers, &webhookDeliveryWorker{cfg: &cfg}); err != nil {
			return fmt.Errorf("error adding webhook delivery worker: %w", err)
		}
		if err := river.AddWorkerSafely(workers, &webhookPollWorker{cfg: &cfg}); err != nil {
			return fmt.Errorf("error adding webhook poll worker: %w", err)
		}
		rc.PeriodicJobs = append(rc.PeriodicJobs, river.NewPeriodicJob(
			river.PeriodicInterval(cfg.PollInterval),
			func() (river.JobArgs, *river.InsertOpts) { return webhookstore.WebhookPollArgs{}, pollInsertOpts() },
			&river.PeriodicJobOpts{ID: "webhook_poll", RunOnStart: true},
		))
		return nil
	}
}

// deliveryInsertOpts are the insert options of every delivery job. No
// UniqueOpts: a manual redelivery of the same delivery id must never be
// deduplicated away.
func deliveryInsertOpts() *river.InsertOpts {
	return &river.InsertOpts{MaxAttempts: webhook.MaxAttempts}
}

// deliveryJobParams returns one insert per delivery id.
func deliveryJobParams(ids []string) []river.InsertManyParams {
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: webhookstore.WebhookDeliveryArgs{DeliveryID: id}, InsertOpts: deliveryInsertOpts()}
	}
	return params
}

// webhookDeliveryWorker sends one delivery attempt per run.
type webhookDeliveryWorker struct {
	river.WorkerDefaults[webhookstore.WebhookDeliveryArgs]
	cfg *WebhookConfig
}

// Timeout bounds a run: one 10-second attempt plus bookkeeping.
func (w *webhookDeliveryWorker) Timeout(*river.Job[webhookstore.WebhookDeliveryArgs]) time.Duration {
	return webhookDeliveryJobT
}

// NextRetry implements the contract's schedule, scaled.
func (w *webhookDeliveryWorker) NextRetry(job *river.Job[webhookstore.WebhookDeliveryArgs]) time.Time {
	return time.Now().Add(WebhookRetryDelay(job.Attempt, w.cfg.TimeScale))
}

// Work attempts the delivery once and records the attempt.
func (w *webhookDeliveryWorker) Work(ctx context.Context, job *river.Job[webhookstore.WebhookDeliveryArgs]) error {
	store := w.cfg.Store
	d, hook, err := webhookstore.DeliveryForSend(ctx, store.Bun, job.Args.DeliveryID)
	if cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND {
		return nil // the webhook was deleted with its deliveries
	} else if err != nil {
		return err
	}
	if d.Status != webhook.DeliveryPending {
		return nil // already recorded by an earlier run of this job
	}
	// Paused or disabled webhooks: their pending deliveries are not
	// attempted but marked failed, so they can be redelivered once the
	// webhook is re-enabled. Pings are always sent.
	if !hook.Active && d.EventID != nil {
		return webhookstore.SkipDelivery(ctx, store.Bun, d.ID, "")
	}
	now := w.cfg.Now().UTC()
	body, err := buildDeliveryBody(ctx, store, d, hook, now)
	if cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND {
		return webhookstore.SkipDelivery(ctx, store.Bun, d.ID, "not attempted: event no longer exists")
	} else if err != nil {
		return err
	}

	rec := sendDelivery(ctx, w.cfg.HTTPClient, hook, d, body, now)
	rec.Final = !rec.Succeeded && job.Attempt >= job.MaxAttempts
	outcome := "success"
	if !rec.Succeeded {
		outcome = "failure"
		if strings.HasPrefix(rec.Error, "timeout") {
			outcome = "timeout"
		}
	}
	observe.WebhookDelivery(outcome, rec.Latency)
	if _, err := webhookstore.RecordWebhookAttempt(context.WithoutCancel(ctx), store.Bun, rec); err != nil {
		return err
	}
	if !rec.Succeeded && !rec.Final {
		return fmt.Errorf("webhook delivery %s attempt %d failed: %s", d.ID, job.Attempt, rec.Error)
	}
	if rec.Final {
		w.cfg.Logger.InfoContext(ctx, "webhook delivery failed", "delivery_id", d.ID, "webhook_id", hook.ID, "error", rec.Error)
	}
	return nil
}

// deliveryBody is the JSON body of a delivery.
type deliveryBody struct {
	EventType string    `json:"event_type"`
	Event     any       `json:"event"`
	Timestamp time.Time `json:"timestamp"`
	Truncated bool      `json:"truncated,omitempty"`
}

// pingEvent is the event of a test delivery.
type pingEvent struct {
	WebhookID int64  `json:"webhook_id"`
	Message   string `json:"message"`
}

// buildDeliveryBody encodes the body of d at time now, trimming evidence
// when the event would exceed WebhookMaxBodyBytes.
func buildDeliveryBody(ctx context.Context, store *db.DB, d *webhook.Delivery, hook *webhook.Webhook, now time.Time) ([]byte, error) {
	if d.EventID == nil {
		return json.Marshal(deliveryBody{EventType: d.EventType, Event: pingEvent{WebhookID: hook.ID, Message: "Webhook test from cryptointel"}, Timestamp: now})
	}
	ev, err := db.WebhookEventByID(ctx, store.Pool, *d.EventID)
	if err != nil {
		return nil, err
	}
	return EncodeDeliveryBody(d.EventType, ev, now, WebhookMaxBodyBytes)
}

// EncodeDeliveryBody encodes {event_type, event, timestamp}. When the
// result exceeds max bytes it keeps the most evidence that fits (newest
// first) and sets "truncated": true; should the event still not fit, long
// text fields are shortened. The event is never dropped.
func EncodeDeliveryBody(eventType string, ev *wire.Event, now time.Time, max int) ([]byte, error) {
	var buf []byte
	encode := func(e *wire.Event, truncated bool) ([]byte, error) {
		var err error
		if buf, err = e.AppendJSON(buf[:0], &wire.Webhook, true); err != nil {
			return nil, fmt.Errorf("error encoding delivery event: %w", err)
		}
		b, err := json.Marshal(deliveryBody{EventType: eventType, Event: json.RawMessage(buf), Timestamp: now, Truncated: truncated})
		if err != nil {
			return nil, fmt.Errorf("error encoding delivery body: %w", err)
		}
		return b, nil
	}
	b, err := encode(ev, false)
	if err != nil || len(b) <= max {
		return b, err
	}
	trimmed := *ev
	all := ev.Evidence
	// Largest number of evidence items that fits: binary search.
	lo, hi := 0, len(all) // lo fits is unknown; search the largest k with size <= max
	best := -1
	for lo <= hi {
		mid := (lo + hi) / 2
		trimmed.Evidence = all[:mid]
		b, err := encode(&trimmed, true)
		if err != nil {
			return nil, err
		}
		if len(b) <= max {
			best = mid
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	if best >= 0 {
		trimmed.Evidence = all[:best]
		return encode(&trimmed, true)
	}
	// Even without evidence the event is too large: shorten text fields.
	trimmed.Evidence = []wire.Evidence{}
	trimmed.Title = cut(trimmed.Title, trimTextBytes)
	trimmed.Summary = cut(trimmed.Summary, trimSummaryBytes)
	bullets := make([]string, 0, trimBullets)
	for i, s := range trimmed.Bullets {
		if i == trimBullets {
			break
		}
		bullets = append(bullets, cut(s, trimTextBytes))
	}
	trimmed.Bullets = bullets
	if len(trimmed.Owners) > trimRefs {
		trimmed.Owners = trimmed.Owners[:trimRefs]
	}
	if len(trimmed.Participants) > trimRefs {
		trimmed.Participants = trimmed.Participants[:trimRefs]
	}
	b, err = encode(&trimmed, true)
	if err != nil || len(b) <= max {
		return b, err
	}
	trimmed.Owners, trimmed.Participants, trimmed.Bullets = []wire.EntityRef{}, []wire.EntityRef{}, []string{}
	trimmed.Summary = cut(trimmed.Summary, trimTextBytes)
	return encode(&trimmed, true)
}

// cut shortens s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}

// SignedHeaders returns the headers of a delivery body: content type, the
// service signature, event and delivery id, and the Standard Webhooks
// headers (webhook-id is the delivery id, so receivers can deduplicate
// retries).
func SignedHeaders(secret, eventType, deliveryID string, body []byte, now time.Time) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "cryptointel-webhooks/1")
	h.Set(HeaderSignature, webhook.Sign(secret, body))
	h.Set(HeaderEvent, eventType)
	h.Set(HeaderDelivery, deliveryID)
	h.Set(HeaderWebhookID, deliveryID)
	h.Set(HeaderWebhookTime, strconv.FormatInt(now.Unix(), 10))
	h.Set(HeaderWebhookSig, webhook.StandardSign(secret, deliveryID, now, body))
	return h
}

// sendDelivery POSTs body to the webhook once and describes the outcome.
func sendDelivery(ctx context.Context, client *http.Client, hook *webhook.Webhook, d *webhook.Delivery, body []byte, now time.Time) webhookstore.AttemptRecord {
	rec := webhookstore.AttemptRecord{DeliveryID: d.ID, AttemptedAt: now}
	ctx, cancel := context.WithTimeout(ctx, WebhookAttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		rec.Error = fmt.Sprintf("invalid request: %v", err)
		return rec
	}
	req.Header = SignedHeaders(hook.Secret, d.EventType, d.ID, body, now)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		rec.Latency = time.Since(start)
		rec.Error = describeSendError(err)
		return rec
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck
	resp.Body.Close()
	rec.Latency = time.Since(start)
	code := resp.StatusCode
	rec.StatusCode = &code
	if code >= 200 && code <= 299 {
		rec.Succeeded = true
	} else {
		rec.Error = fmt.Sprintf("receiver answered %d", code)
	}
	return rec
}

// describeSendError turns a client error into a short message for the
// delivery log, which the webhook's owner reads (last_error). It names the
// kind of failure only — never an address, port or the transport's own
// words — so that deliveries cannot be used to map which hosts and ports
// answer.
func describeSendError(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	var timeoutErr interface{ Timeout() bool }
	switch {
	case errors.Is(err, webhook.ErrNotPublic):
		return "refused: URL resolves to a non-public address"
	case errors.As(err, &dnsErr):
		return "could not resolve the receiver's host name"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "could not connect to the receiver"
	case errors.As(err, &certErr), errors.As(err, &recordErr), strings.Contains(err.Error(), "tls: "):
		return "TLS handshake with the receiver failed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeoutErr) && timeoutErr.Timeout():
		return msgAttemptTimeout
	}
	return "request to the receiver failed"
}

// WebhookDispatcher queues test pings and manual redeliveries; the REST
// handlers use it.
type WebhookDispatcher struct {
	// Store is the database.
	Store *db.DB
	// Client inserts the delivery jobs.
	Client *river.Client[pgx.Tx]
}

// Test records a ping delivery for the account's webhook and queues its
// job in the same transaction. Returns ENOTFOUND.
func (d *WebhookDispatcher) Test(ctx context.Context, accountID, webhookID int64) (*webhook.Delivery, error) {
	return d.inTx(ctx, func(tx pgx.Tx) (*webhook.Delivery, error) {
		return webhookstore.CreateTestDeliveryTx(ctx, tx, accountID, webhookID)
	})
}

// Redeliver sets the account's delivery back to pending and queues a new
// job for it in the same transaction; the delivery keeps its id. Returns
// ENOTFOUND and EINVALID.
func (d *WebhookDispatcher) Redeliver(ctx context.Context, accountID, webhookID int64, deliveryID string) (*webhook.Delivery, error) {
	return d.inTx(ctx, func(tx pgx.Tx) (*webhook.Delivery, error) {
		return webhookstore.RedeliverTx(ctx, tx, accountID, webhookID, deliveryID)
	})
}

func (d *WebhookDispatcher) inTx(ctx context.Context, fn func(pgx.Tx) (*webhook.Delivery, error)) (*webhook.Delivery, error) {
	tx, err := d.Store.Pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("error beginning transaction: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	delivery, err := fn(tx)
	if err != nil {
		return nil, err
	}
	if _, err := d.Client.InsertTx(ctx, tx, webhookstore.WebhookDeliveryArgs{DeliveryID: delivery.ID}, deliveryInsertOpts()); err != nil {
		return nil, fmt.Errorf("error queueing delivery: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("error committing delivery: %w", err)
	}
	return delivery, nil
}
