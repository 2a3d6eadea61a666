package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// TestAccountIsolation checks that every account-owned resource (webhooks,
// their deliveries, export jobs, usage) is invisible and untouchable to
// another account: a plain 404 (never a 403 or a message naming the owner),
// absent from the other account's lists, and unchanged afterwards. It then
// greps the server's captured logs, after a run that includes refusals and
// failures, for the keys and the webhook secrets.
func TestAccountIsolation(t *testing.T) {
	t.Parallel()
	// The ping below goes to a closed port: on the contract's schedule its
	// retries would run for half an hour. Scaled down, its five attempts
	// are over within seconds and the delivery settles as failed, so that
	// A's webhook, attempts included, can be compared whole before and
	// after B's attempts.
	s := startHostileServer(t, func(c *app.Config) { c.WebhookTimeScale = 0.001 })
	keyA := s.newKey(t, cryptointel.PlanEnterprise)
	keyB := s.newKey(t, cryptointel.PlanEnterprise)
	jsonCT := "application/json"

	do := func(key, method, path, body string) *restResponse {
		t.Helper()
		req := hostileRequest{Method: method, Path: path}
		if body != "" {
			req.Body, req.ContentType = []byte(body), jsonCT
		}
		return s.send(t, key, req)
	}
	data := func(r *restResponse) map[string]any {
		t.Helper()
		d, ok := r.JSON(t)["data"].(map[string]any)
		require.True(t, ok, "%s", r.Body)
		return d
	}

	// Account A: a webhook, a ping delivery, a rotated secret, an export job.
	created := do(keyA, http.MethodPost, "/v1/webhooks", `{"url":"https://127.0.0.1:9/a","event_types":["radar","signal"]}`)
	require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
	hookID := data(created)["id"].(json.Number).String()
	firstSecret := data(created)["secret"].(string)
	ping := do(keyA, http.MethodPost, "/v1/webhooks/"+hookID+"/test", "")
	require.Equal(t, http.StatusAccepted, ping.Status, "%s", ping.Body)
	deliveryID := data(ping)["id"].(string)
	rotated := do(keyA, http.MethodPost, "/v1/webhooks/"+hookID+"/rotate-secret", "")
	require.Equal(t, http.StatusOK, rotated.Status, "%s", rotated.Body)
	secret := data(rotated)["secret"].(string)
	require.NotEqual(t, firstSecret, secret)
	job := do(keyA, http.MethodPost, "/v1/export/jobs", `{"scope":"organizations.registry","format":"jsonl","note":"A's export"}`)
	require.Equal(t, http.StatusCreated, job.Status, "%s", job.Body)
	jobID := data(job)["id"].(string)
	for i := 0; i < 10; i++ {
		require.Equal(t, http.StatusOK, do(keyA, http.MethodGet, "/v1/latest", "").Status)
	}
	// Nothing of A's may be moving when the "before" snapshot is taken: wait
	// until the ping has used its attempts and is failed, after which no
	// job touches the webhook or its deliveries.
	var settled webhook.Delivery
	require.Eventually(t, func() bool {
		err := s.store.Bun.NewSelect().Model(&settled).Where("id = ?", deliveryID).Scan(context.Background())
		return err == nil && settled.Status != webhook.DeliveryPending
	}, time.Minute, 50*time.Millisecond, "the ping delivery is still pending")
	require.Equal(t, webhook.DeliveryFailed, settled.Status)
	require.Equal(t, webhook.MaxAttempts, settled.Attempts)
	hookBefore := do(keyA, http.MethodGet, "/v1/webhooks/"+hookID, "")
	require.Equal(t, http.StatusOK, hookBefore.Status)

	// Account B: every operation on A's resources is a plain 404.
	hookPath := "/v1/webhooks/" + hookID
	for _, c := range []struct{ method, path, body, message string }{
		{http.MethodGet, hookPath, "", webhookstore.MsgWebhookNotFound},
		{http.MethodGet, hookPath + "?status=failed", "", webhookstore.MsgWebhookNotFound},
		{http.MethodPatch, hookPath, `{"active":false}`, webhookstore.MsgWebhookNotFound},
		{http.MethodPatch, hookPath, `{"url":"https://127.0.0.1:9/b"}`, webhookstore.MsgWebhookNotFound},
		{http.MethodPatch, hookPath, `{"event_types":["signal"],"active":true}`, webhookstore.MsgWebhookNotFound},
		{http.MethodDelete, hookPath, "", webhookstore.MsgWebhookNotFound},
		{http.MethodPost, hookPath + "/rotate-secret", "", webhookstore.MsgWebhookNotFound},
		{http.MethodPost, hookPath + "/test", "", webhookstore.MsgWebhookNotFound},
		{http.MethodPost, hookPath + "/deliveries/" + deliveryID + "/redeliver", "", ""},
		{http.MethodGet, "/v1/export/jobs/" + jobID, "", ""},
	} {
		r := do(keyB, c.method, c.path, c.body)
		name := c.method + " " + c.path
		require.Equal(t, http.StatusNotFound, r.Status, "%s: %s", name, r.Body)
		msg := r.Error(t)
		if c.message != "" {
			require.Equal(t, c.message, msg, name)
		}
		for _, leak := range []string{hookID + " ", "account", "owner", "forbidden", "another", jobID, deliveryID, "127.0.0.1"} {
			require.NotContains(t, strings.ToLower(msg), strings.ToLower(leak), "%s: the 404 says more than not found: %q", name, msg)
		}
	}
	// B's lists do not show A's resources, and B's usage counts only B.
	list := do(keyB, http.MethodGet, "/v1/webhooks", "")
	require.Equal(t, http.StatusOK, list.Status)
	require.JSONEq(t, `{"data":[]}`, string(list.Body))
	jobs := do(keyB, http.MethodGet, "/v1/export/jobs", "")
	require.Equal(t, http.StatusOK, jobs.Status)
	require.NotContains(t, string(jobs.Body), jobID)
	require.Empty(t, jobs.JSON(t)["data"])
	usageB := do(keyB, http.MethodGet, "/v1/usage", "")
	require.Equal(t, http.StatusOK, usageB.Status)
	usageA := do(keyA, http.MethodGet, "/v1/usage", "")
	require.Equal(t, http.StatusOK, usageA.Status)
	todayA, err := data(usageA)["today"].(json.Number).Int64()
	require.NoError(t, err)
	todayB, err := data(usageB)["today"].(json.Number).Int64()
	require.NoError(t, err)
	require.GreaterOrEqual(t, todayA, int64(15), "A's usage: %s", usageA.Body)
	require.Less(t, todayB, int64(15), "B's usage includes A's requests: %s", usageB.Body)

	// A's resources are untouched: the same webhook, byte for byte (url,
	// types, active, secret hint, failure count, updated_at, and each
	// delivery with its attempts), the export job still A's.
	hookAfter := do(keyA, http.MethodGet, "/v1/webhooks/"+hookID, "")
	require.Equal(t, http.StatusOK, hookAfter.Status)
	require.JSONEq(t, string(hookBefore.Body), string(hookAfter.Body))
	require.Contains(t, string(hookAfter.Body), deliveryID)
	jobAfter := do(keyA, http.MethodGet, "/v1/export/jobs/"+jobID, "")
	require.Equal(t, http.StatusOK, jobAfter.Status, "%s", jobAfter.Body)
	require.Equal(t, "A's export", data(jobAfter)["note"])
	listA := do(keyA, http.MethodGet, "/v1/webhooks", "")
	require.Contains(t, string(listA.Body), `"url":"https://127.0.0.1:9/a"`)

	// Failures and refusals by both keys, then grep the logs.
	for _, c := range []struct{ key, method, path, body string }{
		{keyA, http.MethodPatch, hookPath, `{"url":"http://insecure"}`},
		{keyA, http.MethodPost, "/v1/webhooks", `{"url":` + strings.Repeat("[", 50) + `}`},
		{keyA, http.MethodGet, "/v1/radar/all", ""},
		{keyA, http.MethodGet, "/v1/entities/byId?id=999999", ""},
		{keyB, http.MethodPost, "/v1/export/jobs", `{"scope":"nope","format":"jsonl"}`},
		{keyB, http.MethodGet, "/v1/radar/all?since=" + ts(-time.Hour) + "&cursor=tampered", ""},
		{keyA, http.MethodGet, "/v1/latest?api_key=" + keyA, ""}, // a key misplaced in the URL
		{keyA + "x", http.MethodGet, "/v1/latest", ""},
		{keyB, http.MethodPost, "/graphql", `{"query":"{ entity(id: ) }"}`},
	} {
		r := do(c.key, c.method, c.path, c.body)
		require.Less(t, r.Status, 500, "%s %s: %s", c.method, c.path, r.Body)
		for _, secretValue := range []string{keyA, keyB, secret, firstSecret} {
			require.NotContains(t, string(r.Body), secretValue, "%s %s: a key or secret in the response", c.method, c.path)
		}
	}
	logs := s.logs.String()
	require.NotEmpty(t, logs, "no logs captured")
	for name, v := range map[string]string{"key A": keyA, "key B": keyB, "webhook secret": secret, "first webhook secret": firstSecret} {
		require.NotContains(t, logs, v, "%s appears in the logs", name)
		// Nor a long piece of it (a log line cutting it would still leak).
		require.NotContains(t, logs, v[len(v)-16:], "part of %s appears in the logs", name)
	}
	summary(t, "isolation: %d log bytes checked for 2 keys and 2 secrets", len(logs))
}
