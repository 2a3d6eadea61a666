package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/webhookstore"
)

func whPtr[T any](v T) *T { return &v }

// TestWebhookDeliveryEndToEnd: a webhook created over the API receives an
// ingested signal event over HTTPS, signed with the secret shown at
// creation, with the contract's headers and body.
func TestWebhookDeliveryEndToEnd(t *testing.T) {
	t.Parallel()
	s := startWebhookServer(t, webhookServerOpts{})
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	id, secret := s.create(t, key, "/hook", "radar", "signal")

	s.ingest(t, whEntityLine(1, "Acme"), whEntityLine(2, "Beta"), whEventLine(100, whPtr(0.87), 1, 2))
	require.Eventually(t, func() bool { return len(s.recv.all()) >= 1 }, 30*time.Second, 10*time.Millisecond)
	got := s.recv.all()[0]

	// Signatures verify with the secret from creation.
	require.True(t, webhook.Verify(secret, got.Body, got.Header.Get("X-Service-Signature")))
	require.Regexp(t, `^sha256=[0-9a-f]{64}$`, got.Header.Get("X-Service-Signature"))
	require.NoError(t, webhook.StandardVerify(secret, got.Header.Get("webhook-id"), got.Header.Get("webhook-timestamp"),
		got.Header.Get("webhook-signature"), got.Body, time.Now(), 5*time.Minute))
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	require.Equal(t, "signal", got.Header.Get("X-Service-Event"))
	deliveryID := got.Header.Get("X-Service-Delivery")
	require.Regexp(t, `^[0-9a-f-]{36}$`, deliveryID)
	require.Equal(t, deliveryID, got.Header.Get("webhook-id"))

	var body struct {
		EventType string                     `json:"event_type"`
		Event     map[string]json.RawMessage `json:"event"`
		Timestamp time.Time                  `json:"timestamp"`
	}
	require.NoError(t, json.Unmarshal(got.Body, &body))
	require.Equal(t, "signal", body.EventType)
	require.WithinDuration(t, time.Now(), body.Timestamp, time.Minute)
	for _, f := range []string{"id", "title", "eventCategory", "eventSubcategory", "summary", "bullets", "owners", "participants",
		"evidence", "latestEvidenceTimestamp", "significance", "globalSummary", "bulletSummary", "eventOwner",
		"eventParticipants", "posts", "latestPostTimestamp", "signal"} {
		require.Contains(t, body.Event, f)
	}
	require.JSONEq(t, `100`, string(body.Event["id"]))
	require.JSONEq(t, `0.87`, string(body.Event["signal"]))
	require.JSONEq(t, string(body.Event["summary"]), string(body.Event["globalSummary"]))
	var owners []map[string]any
	require.NoError(t, json.Unmarshal(body.Event["owners"], &owners))
	require.Len(t, owners, 2)
	require.Equal(t, map[string]any{"id": 1.0, "label": "Acme", "type": "project", "aliases": []any{"ACM"}}, owners[0])
	var evidence []map[string]any
	require.NoError(t, json.Unmarshal(body.Event["posts"], &evidence))
	require.Len(t, evidence, 1)
	require.Equal(t, 1001.0, evidence[0]["id"])
	require.Contains(t, evidence[0], "timestamp")

	// The delivery is recorded as succeeded, visible on GET /v1/webhooks/:id.
	require.Eventually(t, func() bool { return s.delivery(t, deliveryID).Status == webhook.DeliverySucceeded }, 30*time.Second, 10*time.Millisecond)
	code, res := s.do(t, http.MethodGet, fmt.Sprintf("/v1/webhooks/%d", id), key, nil)
	require.Equal(t, http.StatusOK, code)
	ds := res["data"].(map[string]any)["deliveries"].([]any)
	require.Len(t, ds, 1)
	d := ds[0].(map[string]any)
	require.Equal(t, deliveryID, d["id"])
	require.Equal(t, "succeeded", d["status"])
	require.Equal(t, 1.0, d["attempts"])
	require.Equal(t, 200.0, d["last_status"])
	require.Len(t, s.recv.all(), 1, "one event, one request")
}

// TestWebhookRetries: a receiver failing 4 times then succeeding gets 5
// attempts at the scaled schedule under one delivery id; one that always
// fails gets 5 attempts and the delivery is marked failed.
func TestWebhookRetries(t *testing.T) {
	t.Parallel()
	s := startWebhookServer(t, webhookServerOpts{status: func(path string, n int) int {
		if path == "/flaky" && n >= 5 {
			return http.StatusOK
		}
		if path == "/redirect" {
			return http.StatusFound // redirects are not followed: a failed attempt
		}
		return http.StatusInternalServerError
	}})
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	flaky, _ := s.create(t, key, "/flaky", "radar")
	dead, _ := s.create(t, key, "/dead", "radar")
	s.ingest(t, whEntityLine(1, "Acme"), whEventLine(7, nil, 1))

	require.Eventually(t, func() bool {
		return len(s.recv.receivedOn("/flaky")) >= 5 && len(s.recv.receivedOn("/dead")) >= 5
	}, 60*time.Second, 20*time.Millisecond)

	for _, path := range []string{"/flaky", "/dead"} {
		got := s.recv.receivedOn(path)
		ids := byDelivery(got)
		require.Len(t, ids, 1, "%s: one delivery id on every retry", path)
		for i := 1; i < len(got); i++ {
			gap := got[i].At.Sub(got[i-1].At)
			require.GreaterOrEqual(t, gap, jobs.WebhookRetryDelay(i, webhookTimeScale),
				"%s: attempt %d came %s after attempt %d", path, i+1, gap, i)
		}
	}
	flakyID := s.recv.receivedOn("/flaky")[0].Header.Get("X-Service-Delivery")
	deadID := s.recv.receivedOn("/dead")[0].Header.Get("X-Service-Delivery")
	require.Eventually(t, func() bool {
		return s.delivery(t, flakyID).Status == webhook.DeliverySucceeded && s.delivery(t, deadID).Status == webhook.DeliveryFailed
	}, 30*time.Second, 10*time.Millisecond)
	fd := s.delivery(t, flakyID)
	require.Equal(t, 5, fd.Attempts)
	dd := s.delivery(t, deadID)
	require.Equal(t, 5, dd.Attempts)
	require.Equal(t, 500, *dd.LastStatus)

	attempts, err := webhookstore.WebhookAttempts(context.Background(), s.store.Bun, deadID)
	require.NoError(t, err)
	require.Len(t, attempts, 5)
	for i, a := range attempts {
		require.Equal(t, i+1, a.Attempt)
		require.Equal(t, 500, *a.StatusCode)
		require.NotNil(t, a.Error)
	}
	require.Len(t, s.recv.receivedOn("/dead"), 5, "no sixth attempt")

	// The failed delivery is listed under ?status=failed; the success counts
	// reset the flaky webhook, the failure counts for the dead one.
	code, res := s.do(t, http.MethodGet, fmt.Sprintf("/v1/webhooks/%d?status=failed", dead), key, nil)
	require.Equal(t, http.StatusOK, code)
	failed := res["data"].(map[string]any)["deliveries"].([]any)
	require.Len(t, failed, 1)
	require.Equal(t, deadID, failed[0].(map[string]any)["id"])
	code, res = s.do(t, http.MethodGet, fmt.Sprintf("/v1/webhooks/%d?status=failed", flaky), key, nil)
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, res["data"].(map[string]any)["deliveries"])
	require.Equal(t, 1, s.webhookRow(t, dead).ConsecutiveFailures)
	require.Equal(t, 0, s.webhookRow(t, flaky).ConsecutiveFailures)
}

// TestWebhookAutoDisable: 50 consecutive failed deliveries disable the
// webhook (the count is seeded at 47 and the last 3 fail through real
// deliveries); events while disabled are not delivered; PATCH active=true
// re-enables and resets the count.
func TestWebhookAutoDisable(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	s := startWebhookServer(t, webhookServerOpts{status: func(string, int) int {
		if healthy.Load() {
			return http.StatusNoContent
		}
		return http.StatusServiceUnavailable
	}})
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	id, _ := s.create(t, key, "/down", "radar")
	_, err := s.store.Pool.Exec(context.Background(), `UPDATE webhooks SET consecutive_failures = 47 WHERE id = $1`, id)
	require.NoError(t, err)

	s.ingest(t, whEntityLine(1, "Acme"), whEventLine(1, nil, 1), whEventLine(2, nil, 1), whEventLine(3, nil, 1))
	require.Eventually(t, func() bool { return !s.webhookRow(t, id).Active }, 60*time.Second, 20*time.Millisecond)
	h := s.webhookRow(t, id)
	require.Equal(t, 50, h.ConsecutiveFailures)
	require.Len(t, s.recv.all(), 15, "3 deliveries × 5 attempts")

	code, res := s.do(t, http.MethodGet, fmt.Sprintf("/v1/webhooks/%d", id), key, nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, false, res["data"].(map[string]any)["active"])

	// While disabled, new events get no delivery.
	s.ingest(t, whEventLine(4, nil, 1))
	_, err = jobs.PollWebhooks(context.Background(), s.store, s.clients[0])
	require.NoError(t, err)
	var n int
	require.NoError(t, s.store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE event_id = 4`).Scan(&n))
	require.Zero(t, n)

	healthy.Store(true)
	code, res = s.do(t, http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", id), key, map[string]any{"active": true})
	require.Equal(t, http.StatusOK, code, "%v", res)
	require.Equal(t, true, res["data"].(map[string]any)["active"])
	require.Equal(t, 0, s.webhookRow(t, id).ConsecutiveFailures)

	s.ingest(t, whEventLine(5, nil, 1))
	require.Eventually(t, func() bool {
		for _, g := range s.recv.all() {
			var b struct {
				Event struct {
					ID int64 `json:"id"`
				} `json:"event"`
			}
			if json.Unmarshal(g.Body, &b) == nil && b.Event.ID == 5 {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond)
}

// TestWebhookFanOutOnceWithTwoWorkers: two River clients (two worker
// processes) on one database, both polling on every notification and on a
// fast period: every (webhook, event) pair gets exactly one delivery and
// one job, and each delivery id is received.
func TestWebhookFanOutOnceWithTwoWorkers(t *testing.T) {
	t.Parallel()
	s := startWebhookServer(t, webhookServerOpts{workers: 2, pollInterval: 50 * time.Millisecond})
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	s.create(t, key, "/a", "radar")
	s.create(t, key, "/b", "radar", "signal")
	s.create(t, key, "/c", "signal")

	s.ingest(t, whEntityLine(1, "Acme"))
	const events = 60
	for batch := 0; batch < 6; batch++ {
		var lines []any
		for i := 0; i < events/6; i++ {
			id := int64(batch*10 + i + 1)
			var sig *float64
			if id%2 == 0 {
				sig = whPtr(0.5)
			}
			lines = append(lines, whEventLine(id, sig, 1))
		}
		s.ingest(t, lines...)
	}
	want := events + events + events/2 // radar: all; both: all; signal: the scored half
	require.Eventually(t, func() bool { return len(byDelivery(s.recv.all())) >= want }, 60*time.Second, 20*time.Millisecond)

	var pairs, distinct, jobsN int
	ctx := context.Background()
	require.NoError(t, s.store.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (webhook_id, event_id)) FROM webhook_deliveries`).Scan(&pairs, &distinct))
	require.Equal(t, want, pairs)
	require.Equal(t, want, distinct)
	require.NoError(t, s.store.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'webhook_delivery'`).Scan(&jobsN))
	require.Equal(t, want, jobsN, "one job per delivery")

	// Every pair received under exactly one delivery id.
	seen := map[string]string{}
	for _, g := range s.recv.all() {
		var b struct {
			Event struct {
				ID int64 `json:"id"`
			} `json:"event"`
		}
		require.NoError(t, json.Unmarshal(g.Body, &b))
		pair := fmt.Sprintf("%s/%d", g.Header.Get("X-Test-Path"), b.Event.ID)
		if prev, ok := seen[pair]; ok {
			require.Equal(t, prev, g.Header.Get("X-Service-Delivery"), pair)
		}
		seen[pair] = g.Header.Get("X-Service-Delivery")
	}
	require.Len(t, seen, want)
}
