package jobs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/wire"
)

// TestWebhookRetrySchedule pins the contract's production schedule and
// its scaling.
func TestWebhookRetrySchedule(t *testing.T) {
	t.Parallel()
	require.Equal(t, 15*time.Second, WebhookRetryDelay(1, 1))
	require.Equal(t, time.Minute, WebhookRetryDelay(2, 1))
	require.Equal(t, 5*time.Minute, WebhookRetryDelay(3, 1))
	require.Equal(t, 30*time.Minute, WebhookRetryDelay(4, 1))
	require.Equal(t, 15*time.Millisecond, WebhookRetryDelay(1, 0.001))
	require.Equal(t, 1800*time.Millisecond, WebhookRetryDelay(4, 0.001))
	// A zero scale is the production schedule.
	require.Equal(t, 15*time.Second, WebhookRetryDelay(1, 0))
	require.Equal(t, 5, webhook.MaxAttempts)
	require.Equal(t, 50, webhook.AutoDisableAfter)
	require.Equal(t, 10*time.Second, WebhookAttemptTimeout)

	cfg := WebhookConfig{}
	cfg.setDefaults()
	require.Equal(t, 1.0, cfg.TimeScale)
	require.Equal(t, 60*time.Second, cfg.PollInterval)
	require.Equal(t, 10*time.Second, cfg.HTTPClient.Timeout)
	require.NotNil(t, cfg.HTTPClient.CheckRedirect)
	require.Equal(t, 5, int(deliveryInsertOpts().MaxAttempts))
	require.Empty(t, deliveryInsertOpts().UniqueOpts, "redelivery must never be deduplicated")
}

func bigEvent(n, size int) *wire.Event {
	ev := &wire.Event{ID: 7, Title: "t", Summary: "s", Bullets: []string{"b"},
		Owners: []wire.EntityRef{{ID: 1, Label: "A", Type: "project", Aliases: []string{}}}, Participants: []wire.EntityRef{}}
	for i := 0; i < n; i++ {
		ev.Evidence = append(ev.Evidence, wire.Evidence{ID: int64(i), Content: strings.Repeat("x", size), URL: "https://x", Timestamp: time.Unix(int64(i), 0).UTC()})
	}
	return ev
}

func TestEncodeDeliveryBody(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	small, err := EncodeDeliveryBody("radar", bigEvent(3, 10), now, WebhookMaxBodyBytes)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(small, &m))
	require.NotContains(t, m, "truncated")
	require.Equal(t, "radar", m["event_type"])
	require.Equal(t, "2026-01-02T03:04:05Z", m["timestamp"])
	ev := m["event"].(map[string]any)
	require.Len(t, ev["evidence"], 3)
	require.Equal(t, ev["evidence"], ev["posts"])
	require.Equal(t, ev["summary"], ev["globalSummary"])
	require.Equal(t, ev["owners"], ev["eventOwner"])

	// 1000 items of 1 KB: about 1.1 MB untrimmed.
	big, err := EncodeDeliveryBody("signal", bigEvent(1000, 1024), now, WebhookMaxBodyBytes)
	require.NoError(t, err)
	require.LessOrEqual(t, len(big), WebhookMaxBodyBytes)
	m = nil
	require.NoError(t, json.Unmarshal(big, &m))
	require.Equal(t, true, m["truncated"])
	kept := m["event"].(map[string]any)["evidence"].([]any)
	require.Greater(t, len(kept), 100) // evidence is sent twice (evidence and legacy posts)
	require.Less(t, len(kept), 1000)
	// The most evidence that fits: one more item would not.
	more, err := EncodeDeliveryBody("signal", bigEvent(len(kept)+1, 1024), now, 1<<30)
	require.NoError(t, err)
	require.Greater(t, len(more)+len(`,"truncated":true`), WebhookMaxBodyBytes)

	// Even a huge summary never drops the event.
	huge := bigEvent(0, 0)
	huge.Summary = strings.Repeat("é", 300_000)
	b, err := EncodeDeliveryBody("radar", huge, now, WebhookMaxBodyBytes)
	require.NoError(t, err)
	require.LessOrEqual(t, len(b), WebhookMaxBodyBytes)
	require.True(t, json.Valid(b))
	require.Contains(t, string(b), `"id":7`)
}

func TestSignedHeaders(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"a":1}`)
	h := SignedHeaders("whsec_c2VjcmV0", "radar", "0b9a3f4e-0000-4000-8000-000000000001", body, now)
	require.Equal(t, "application/json", h.Get("Content-Type"))
	require.Equal(t, webhook.Sign("whsec_c2VjcmV0", body), h.Get("X-Service-Signature"))
	require.Equal(t, "radar", h.Get("X-Service-Event"))
	require.Equal(t, "0b9a3f4e-0000-4000-8000-000000000001", h.Get("X-Service-Delivery"))
	require.Equal(t, h.Get("X-Service-Delivery"), h.Get("webhook-id"))
	require.Equal(t, "1800000000", h.Get("webhook-timestamp"))
	require.NoError(t, webhook.StandardVerify("whsec_c2VjcmV0", h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature"), body, now, time.Minute))
}
