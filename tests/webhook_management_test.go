package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// TestWebhookManagement covers the routes' contract: creation shows the
// secret once, list order, the exact PATCH messages, account isolation,
// the per-account limit and body errors.
func TestWebhookManagement(t *testing.T) {
	t.Parallel()
	s := startWebhookServer(t, webhookServerOpts{})
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	otherKey, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	hookURL := s.recv.srv.URL + "/in"

	code, res := s.do(t, http.MethodPost, "/v1/webhooks", key, map[string]any{"url": hookURL, "event_types": []string{"signal", "radar"}})
	require.Equal(t, http.StatusCreated, code, "%v", res)
	created := res["data"].(map[string]any)
	secret := created["secret"].(string)
	require.True(t, strings.HasPrefix(secret, "whsec_"))
	require.Equal(t, "********"+secret[len(secret)-4:], created["secret_hint"])
	require.Equal(t, []any{"radar", "signal"}, created["event_types"])
	require.Equal(t, true, created["active"])
	require.Equal(t, hookURL, created["url"])
	for _, f := range []string{"id", "created_at", "updated_at"} {
		require.Contains(t, created, f)
	}
	id := int64(created["id"].(float64))
	path := fmt.Sprintf("/v1/webhooks/%d", id)

	// The secret is never shown again.
	code, res = s.do(t, http.MethodGet, path, key, nil)
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, res["data"], "secret")
	require.Equal(t, created["secret_hint"], res["data"].(map[string]any)["secret_hint"])
	require.Equal(t, []any{}, res["data"].(map[string]any)["deliveries"])

	second, _ := s.create(t, key, "/second", "radar")
	code, res = s.do(t, http.MethodGet, "/v1/webhooks", key, nil)
	require.Equal(t, http.StatusOK, code)
	list := res["data"].([]any)
	require.Len(t, list, 2)
	require.Equal(t, float64(second), list[0].(map[string]any)["id"], "newest first")
	require.NotContains(t, list[0], "secret")

	// PATCH: exact messages.
	for _, tc := range []struct {
		body any
		msg  string
	}{
		{map[string]any{}, "No fields to update"},
		{map[string]any{"name": "x"}, "No fields to update"},
		{map[string]any{"url": "http://example.com/hook"}, "URL must use HTTPS"},
		{map[string]any{"url": 42}, "URL must use HTTPS"},
		{map[string]any{"event_types": []string{"radar", "news"}}, "event_types must only contain: radar, signal"},
		{map[string]any{"event_types": "radar"}, "event_types must only contain: radar, signal"},
	} {
		code, res = s.do(t, http.MethodPatch, path, key, tc.body)
		require.Equal(t, http.StatusBadRequest, code, "%v", tc.body)
		require.Equal(t, tc.msg, res["error"], "%v", tc.body)
	}
	// Another account's webhook and a missing one are both not found.
	for _, k := range []string{otherKey} {
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			code, res = s.do(t, m, path, k, nil)
			require.Equal(t, http.StatusNotFound, code)
			require.Equal(t, "Webhook not found", res["error"])
		}
		code, res = s.do(t, http.MethodPatch, path, k, map[string]any{"active": false})
		require.Equal(t, http.StatusNotFound, code)
		require.Equal(t, "Webhook not found", res["error"])
		code, res = s.do(t, http.MethodPost, path+"/rotate-secret", k, nil)
		require.Equal(t, http.StatusNotFound, code)
		require.Equal(t, "Webhook not found", res["error"])
		code, _ = s.do(t, http.MethodGet, "/v1/webhooks", k, nil)
		require.Equal(t, http.StatusOK, code)
	}
	code, res = s.do(t, http.MethodGet, "/v1/webhooks", otherKey, nil)
	require.Empty(t, res["data"], "accounts are isolated")
	code, res = s.do(t, http.MethodPatch, "/v1/webhooks/999999", key, map[string]any{"active": false})
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "Webhook not found", res["error"])

	// Only included fields change.
	code, res = s.do(t, http.MethodPatch, path, key, map[string]any{"event_types": []string{"signal"}})
	require.Equal(t, http.StatusOK, code, "%v", res)
	data := res["data"].(map[string]any)
	require.Equal(t, []any{"signal"}, data["event_types"])
	require.Equal(t, hookURL, data["url"])
	require.Equal(t, true, data["active"])
	code, res = s.do(t, http.MethodPatch, path, key, map[string]any{"active": false})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, false, res["data"].(map[string]any)["active"])
	require.Equal(t, []any{"signal"}, res["data"].(map[string]any)["event_types"])

	// Delivery filter validation.
	code, res = s.do(t, http.MethodGet, path+"?status=bogus", key, nil)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "status must be one of: pending, succeeded, failed", res["error"])

	// POST errors.
	for _, tc := range []struct {
		body any
		code int
		msg  string
	}{
		{map[string]any{"url": "http://example.com/", "event_types": []string{"radar"}}, 400, "URL must use HTTPS"},
		{map[string]any{"url": hookURL, "event_types": []string{"radar", "x"}}, 400, "event_types must only contain: radar, signal"},
		{map[string]any{"url": hookURL, "event_types": []string{}}, 400, "event_types must contain at least one of: radar, signal"},
		{map[string]any{"event_types": []string{"radar"}}, 400, "url is required"},
		{map[string]any{"url": hookURL}, 400, "event_types is required (radar, signal, or both)"},
		{map[string]any{"url": hookURL, "event_types": []string{"radar"}, "secret": "mine"}, 400, `Unknown field "secret" (allowed: url, event_types)`},
		{map[string]any{"url": "https://10.0.0.1/hook", "event_types": []string{"radar"}}, 400, "URL must resolve to a public address"},
		{"{not json", 400, "Request body must be a JSON object"},
		{"[1,2]", 400, "Request body must be a JSON object"},
		{"", 400, "Request body must be a JSON object"},
		{`{"url":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "Request body too large (max 1 MB)"},
	} {
		code, res = s.do(t, http.MethodPost, "/v1/webhooks", key, tc.body)
		require.Equal(t, tc.code, code, "%.80v", tc.body)
		require.Equal(t, tc.msg, res["error"], "%.80v", tc.body)
	}
	req, err := http.NewRequest(http.MethodPost, s.url+"/v1/webhooks", strings.NewReader("url=x"))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, res = s.send(t, req)
	require.Equal(t, http.StatusUnsupportedMediaType, code)
	require.Equal(t, "Content-Type must be application/json", res["error"])

	// At most 5 per account; the other account is unaffected.
	for i := 0; i < 3; i++ {
		s.create(t, key, fmt.Sprintf("/more%d", i), "radar")
	}
	code, res = s.do(t, http.MethodPost, "/v1/webhooks", key, map[string]any{"url": hookURL, "event_types": []string{"radar"}})
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "Maximum 5 webhooks per account", res["error"])
	s.create(t, otherKey, "/other", "radar")

	// DELETE frees a slot; the webhook is gone.
	code, res = s.do(t, http.MethodDelete, path, key, nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, true, res["data"].(map[string]any)["deleted"])
	code, res = s.do(t, http.MethodGet, path, key, nil)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "Webhook not found", res["error"])
	s.create(t, key, "/again", "radar")
}

// TestWebhookPlanGate: a plan without webhook access is refused with 403.
func TestWebhookPlanGate(t *testing.T) {
	t.Parallel()
	s := startWebhookServer(t, webhookServerOpts{})
	free, _ := accesstest.NewKey(t, s.store, cryptointel.PlanFree)
	code, res := s.do(t, http.MethodGet, "/v1/webhooks", free, nil)
	require.Equal(t, http.StatusForbidden, code, "%v", res)
	code, _ = s.do(t, http.MethodGet, "/v1/webhooks", "ci_unknown", nil)
	require.Equal(t, http.StatusUnauthorized, code)
}

// TestWebhookRotateTestRedeliver: rotate-secret shows a new secret that
// signs from then on; /test sends a signed ping; redelivering a failed
// delivery sends it again under the same delivery id, every time it is
// asked (no unique-job deduplication).
func TestWebhookRotateTestRedeliver(t *testing.T) {
	t.Parallel()
	s := startWebhookServer(t, webhookServerOpts{status: func(path string, n int) int {
		if path == "/down" {
			return http.StatusBadGateway
		}
		return http.StatusOK
	}})
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	otherKey, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	id, oldSecret := s.create(t, key, "/ok", "radar")

	code, res := s.do(t, http.MethodPost, fmt.Sprintf("/v1/webhooks/%d/rotate-secret", id), key, nil)
	require.Equal(t, http.StatusOK, code)
	newSecret := res["data"].(map[string]any)["secret"].(string)
	require.NotEqual(t, oldSecret, newSecret)

	code, res = s.do(t, http.MethodPost, fmt.Sprintf("/v1/webhooks/%d/test", id), key, nil)
	require.Equal(t, http.StatusAccepted, code, "%v", res)
	pingID := res["data"].(map[string]any)["id"].(string)
	require.Equal(t, "ping", res["data"].(map[string]any)["event_type"])
	require.Eventually(t, func() bool { return len(s.recv.receivedOn("/ok")) == 1 }, 30*time.Second, 10*time.Millisecond)
	ping := s.recv.receivedOn("/ok")[0]
	require.Equal(t, pingID, ping.Header.Get("X-Service-Delivery"))
	require.Equal(t, "ping", ping.Header.Get("X-Service-Event"))
	require.True(t, webhook.Verify(newSecret, ping.Body, ping.Header.Get("X-Service-Signature")))
	require.False(t, webhook.Verify(oldSecret, ping.Body, ping.Header.Get("X-Service-Signature")))
	code, _ = s.do(t, http.MethodPost, fmt.Sprintf("/v1/webhooks/%d/test", id), otherKey, nil)
	require.Equal(t, http.StatusNotFound, code)

	// A delivery that failed 5 times, then redelivered twice.
	down, _ := s.create(t, key, "/down", "radar")
	s.ingest(t, whEntityLine(1, "Acme"), whEventLine(9, nil, 1))
	require.Eventually(t, func() bool { return len(s.recv.receivedOn("/down")) == 5 }, 60*time.Second, 10*time.Millisecond)
	deliveryID := s.recv.receivedOn("/down")[0].Header.Get("X-Service-Delivery")
	require.Eventually(t, func() bool { return s.delivery(t, deliveryID).Status == webhook.DeliveryFailed }, 30*time.Second, 10*time.Millisecond)

	redeliver := fmt.Sprintf("/v1/webhooks/%d/deliveries/%s/redeliver", down, deliveryID)
	code, res = s.do(t, http.MethodPost, fmt.Sprintf("/v1/webhooks/%d/deliveries/%s/redeliver", id, deliveryID), key, nil)
	require.Equal(t, http.StatusNotFound, code, "the delivery belongs to another webhook")
	require.Equal(t, "Delivery not found", res["error"])
	code, _ = s.do(t, http.MethodPost, redeliver, otherKey, nil)
	require.Equal(t, http.StatusNotFound, code)
	code, res = s.do(t, http.MethodPost, fmt.Sprintf("/v1/webhooks/%d/deliveries/not-a-uuid/redeliver", down), key, nil)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, "Delivery not found", res["error"])

	for round := 1; round <= 2; round++ {
		code, res = s.do(t, http.MethodPost, redeliver, key, nil)
		require.Equal(t, http.StatusAccepted, code, "%v", res)
		require.Equal(t, deliveryID, res["data"].(map[string]any)["id"])
		require.Eventually(t, func() bool { return len(s.recv.receivedOn("/down")) == 5+5*round }, 60*time.Second, 10*time.Millisecond)
		require.Eventually(t, func() bool { return s.delivery(t, deliveryID).Status == webhook.DeliveryFailed }, 30*time.Second, 10*time.Millisecond)
	}
	ids := byDelivery(s.recv.receivedOn("/down"))
	require.Len(t, ids, 1, "redelivery keeps the delivery id")
	require.Equal(t, 15, s.delivery(t, deliveryID).Attempts)

	// Paused webhooks refuse redelivery of events.
	code, _ = s.do(t, http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", down), key, map[string]any{"active": false})
	require.Equal(t, http.StatusOK, code)
	code, res = s.do(t, http.MethodPost, redeliver, key, nil)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, webhookstore.MsgWebhookInactive, res["error"])
}
