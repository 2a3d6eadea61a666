package webhook

import (
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

// Delivery is one event pushed to one webhook, across its attempts.
type Delivery struct {
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

// Attempt records one HTTP attempt of a delivery.
type Attempt struct {
	bun.BaseModel `bun:"table:webhook_attempts"`

	ID          int64     `bun:"id,pk,autoincrement"`
	DeliveryID  string    `bun:"delivery_id,type:uuid"`
	Attempt     int       `bun:"attempt"`
	AttemptedAt time.Time `bun:"attempted_at,nullzero,default:current_timestamp"`
	StatusCode  *int      `bun:"status_code"`
	LatencyMS   int       `bun:"latency_ms"`
	Error       *string   `bun:"error"`
}

// Limits and states of webhooks, from the contract (sections 3 and 6).
const (
	// MaxPerAccount is how many webhooks one account may register.
	MaxPerAccount = 5
	// AutoDisableAfter is how many consecutive failed deliveries,
	// with no success in between, set a webhook inactive.
	AutoDisableAfter = 50
	// MaxAttempts is how many attempts a delivery gets before
	// it is marked failed.
	MaxAttempts = 5

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
