package cryptointel

import (
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Webhook is an account's subscription to pushed events.
type Webhook struct {
	bun.BaseModel `bun:"table:webhooks"`

	ID                  int64     `bun:"id,pk,autoincrement"`
	AccountID           int64     `bun:"account_id"`
	URL                 string    `bun:"url"`
	Secret              string    `bun:"secret"`
	EventTypes          []string  `bun:"event_types,array"`
	Active              bool      `bun:"active"`
	ConsecutiveFailures int       `bun:"consecutive_failures"`
	CreatedAt           time.Time `bun:"created_at,nullzero,default:current_timestamp"`
	UpdatedAt           time.Time `bun:"updated_at,nullzero,default:current_timestamp"`
}

// WebhookDelivery is one event pushed to one webhook, across its attempts.
type WebhookDelivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries"`

	ID          string     `bun:"id,pk,type:uuid"`
	WebhookID   int64      `bun:"webhook_id"`
	EventID     *int64     `bun:"event_id"`
	EventType   string     `bun:"event_type"`
	Status      string     `bun:"status"` // pending, succeeded, failed
	Attempts    int        `bun:"attempts"`
	LastStatus  *int       `bun:"last_status"`
	LastError   *string    `bun:"last_error"`
	CreatedAt   time.Time  `bun:"created_at,nullzero,default:current_timestamp"`
	UpdatedAt   time.Time  `bun:"updated_at,nullzero,default:current_timestamp"`
	DeliveredAt *time.Time `bun:"delivered_at"`
}

// WebhookAttempt records one HTTP attempt of a delivery.
type WebhookAttempt struct {
	bun.BaseModel `bun:"table:webhook_attempts"`

	ID          int64     `bun:"id,pk,autoincrement"`
	DeliveryID  string    `bun:"delivery_id,type:uuid"`
	Attempt     int       `bun:"attempt"`
	AttemptedAt time.Time `bun:"attempted_at,nullzero,default:current_timestamp"`
	StatusCode  *int      `bun:"status_code"`
	LatencyMS   int       `bun:"latency_ms"`
	Error       *string   `bun:"error"`
}

// Webhook limits and states from the contract (sections 3 and 6).
const (
	// MaxWebhooksPerAccount is how many webhooks one account may register.
	MaxWebhooksPerAccount = 5
	// WebhookAutoDisableAfter is how many consecutive failed deliveries,
	// with no success in between, set a webhook inactive.
	WebhookAutoDisableAfter = 50
	// WebhookDeliveryMaxAttempts is how many attempts a delivery gets before
	// it is marked failed.
	WebhookDeliveryMaxAttempts = 5

	// DeliveryPending is a delivery that has not yet succeeded and still has
	// attempts left (including one not attempted yet).
	DeliveryPending = "pending"
	// DeliverySucceeded is a delivery the receiver answered with a 2xx.
	DeliverySucceeded = "succeeded"
	// DeliveryFailed is a delivery whose last attempt failed, or that was
	// not attempted because its webhook was inactive.
	DeliveryFailed = "failed"

	// EventTypePing is the event type of a test delivery.
	EventTypePing = "ping"
)

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
// MaxWebhooksPerAccount: "Maximum 5 webhooks per account".
var MsgMaxWebhooks = fmt.Sprintf("Maximum %d webhooks per account", MaxWebhooksPerAccount)

// NormalizeEventTypes validates event types and returns them deduplicated in
// the order radar, signal. It returns EINVALID with the contract's messages.
func NormalizeEventTypes(types []string) ([]string, error) {
	var radar, signal bool
	for _, t := range types {
		switch t {
		case SurfaceRadar:
			radar = true
		case SurfaceSignal:
			signal = true
		default:
			return nil, Errorf(EINVALID, MsgInvalidEventTypes)
		}
	}
	out := []string{}
	if radar {
		out = append(out, SurfaceRadar)
	}
	if signal {
		out = append(out, SurfaceSignal)
	}
	if len(out) == 0 {
		return nil, Errorf(EINVALID, MsgEmptyEventTypes)
	}
	return out, nil
}
