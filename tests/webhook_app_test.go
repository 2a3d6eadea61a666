package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
	"github.com/cryptointel/cryptointel/webhook"
)

// TestWebhookAppWiring runs webhooks through the service as app wires it:
// the /v1 router with the access layer, the River client started by the
// app, and the ingest NOTIFY waking the poller.
func TestWebhookAppWiring(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recv := newWebhookReceiver(t, nil)
	a, err := app.New(ctx, app.Config{
		DatabaseURL:       dbtest.NewURL(t),
		WebhookAllowCIDRs: "127.0.0.0/8,::1",
		WebhookTLSConfig:  recv.srv.Client().Transport.(*http.Transport).TLSClientConfig,
		WebhookTimeScale:  0.001,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	require.NoError(t, a.StartJobs(ctx))
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)

	key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanPro)
	body, _ := json.Marshal(map[string]any{"url": recv.srv.URL + "/app", "event_types": []string{"radar"}})
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/webhooks", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(raw))
	require.Equal(t, "operational", resp.Header.Get("X-Access-Layer"))
	require.Equal(t, "delivery", resp.Header.Get("X-Api-Surface"))
	require.Equal(t, "webhooks.create", resp.Header.Get("X-Endpoint-Policy"))
	var created struct {
		Data struct {
			Secret string `json:"secret"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &created))

	// A private address is refused at registration without the allowlist
	// entry for it.
	body, _ = json.Marshal(map[string]any{"url": "https://192.168.1.10/hook", "event_types": []string{"radar"}})
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/v1/webhooks", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.JSONEq(t, `{"error":"URL must resolve to a public address"}`, errorOnly(t, raw))

	var lines bytes.Buffer
	for _, l := range []any{whEntityLine(1, "Acme"), whEventLine(42, nil, 1)} {
		b, _ := json.Marshal(l)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	_, err = ingest.Write(ctx, a.DB, &lines, ingest.Options{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(recv.receivedOn("/app")) == 1 }, 30*time.Second, 10*time.Millisecond)
	got := recv.receivedOn("/app")[0]
	require.True(t, webhook.Verify(created.Data.Secret, got.Body, got.Header.Get("X-Service-Signature")))
	require.Equal(t, "radar", got.Header.Get("X-Service-Event"))
}
