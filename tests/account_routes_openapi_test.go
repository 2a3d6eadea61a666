package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestAccountRoutesConformToOpenAPI drives the webhook and export-job
// routes, which run no GraphQL operation, through their whole life — a
// webhook registered, listed, changed, pinged, redelivered and deleted; an
// export job requested, listed and read once completed — and validates
// every response against what /openapi.json documents for its route and
// status, and every request body sent against the route's documented
// request body: a client generated from the document gets typed bodies
// that match the wire, with the statuses the routes answer (201 and 202
// included).
func TestAccountRoutesConformToOpenAPI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	recv := newWebhookReceiver(t, nil)
	a, err := app.New(ctx, app.Config{
		DatabaseURL:       dbtest.NewURL(t),
		ExportDir:         t.TempDir(),
		WebhookAllowCIDRs: "127.0.0.0/8,::1",
		WebhookTLSConfig:  recv.srv.Client().Transport.(*http.Transport).TLSClientConfig,
		WebhookTimeScale:  0.001,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() }) //nolint:errcheck
	require.NoError(t, a.StartJobs(ctx))
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)

	resp, err := http.Get(srv.URL + "/openapi.json")
	require.NoError(t, err)
	doc, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	v := newOpenAPIValidator(t, doc)

	// requestSchema is the documented request body of method path.
	requestSchema := func(method, path string) *jsonschema.Schema {
		loc := openAPIURL + "#/paths/" + jsonPointer(path) + "/" + strings.ToLower(method) + "/requestBody/content/application~1json/schema"
		sch, err := v.compiler.Compile(loc)
		require.NoError(t, err, "%s %s documents no JSON request body", method, path)
		return sch
	}
	conforms := func(sch *jsonschema.Schema, body any) error {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		require.NoError(t, err)
		return sch.Validate(inst)
	}
	// send sends method url with the key, and body (of content type
	// ctype) when there is one; it answers the status and the body.
	send := func(method, url string, body []byte, ctype string) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+url, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		return resp.StatusCode, raw
	}
	// call sends method url (with body as JSON, checked against the
	// documented request body of route first) and validates the response
	// against route's documented one for its status, which must be want.
	call := func(method, route, url string, body any, want int) map[string]any {
		t.Helper()
		var b []byte
		ctype := ""
		if body != nil {
			require.NoError(t, conforms(requestSchema(method, route), body), "%s %s: the body sent does not conform", method, route)
			var err error
			b, err = json.Marshal(body)
			require.NoError(t, err)
			ctype = "application/json"
		}
		status, raw := send(method, url, b, ctype)
		require.Equal(t, want, status, "%s %s: %s", method, url, raw)
		v.validate(method, route, status, raw)
		var out map[string]any
		require.NoError(t, json.Unmarshal(raw, &out))
		return out
	}

	// Webhooks, from registration to deletion.
	created := call("POST", "/v1/webhooks", "/v1/webhooks", map[string]any{"url": recv.srv.URL + "/doc", "event_types": []string{"radar"}}, http.StatusCreated)
	hook := created["data"].(map[string]any)
	require.NotEmpty(t, hook["secret"], "the secret is shown on creation")
	id := strconv.FormatInt(int64(hook["id"].(float64)), 10)
	list := call("GET", "/v1/webhooks", "/v1/webhooks", nil, http.StatusOK)
	require.Len(t, list["data"], 1)
	require.NotContains(t, list["data"].([]any)[0], "secret", "a listed webhook hides its secret")
	call("PATCH", "/v1/webhooks/{id}", "/v1/webhooks/"+id, map[string]any{"event_types": []string{"radar", "signal"}, "active": true}, http.StatusOK)
	rotated := call("POST", "/v1/webhooks/{id}/rotate-secret", "/v1/webhooks/"+id+"/rotate-secret", nil, http.StatusOK)
	require.NotEqual(t, hook["secret"], rotated["data"].(map[string]any)["secret"])
	ping := call("POST", "/v1/webhooks/{id}/test", "/v1/webhooks/"+id+"/test", nil, http.StatusAccepted)
	deliveryID := ping["data"].(map[string]any)["id"].(string)
	require.Eventually(t, func() bool {
		got := call("GET", "/v1/webhooks/{id}", "/v1/webhooks/"+id+"?status=succeeded", nil, http.StatusOK)
		ds, _ := got["data"].(map[string]any)["deliveries"].([]any)
		return len(ds) == 1 && ds[0].(map[string]any)["id"] == deliveryID
	}, 30*time.Second, 50*time.Millisecond, "the ping was not delivered")
	call("POST", "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", "/v1/webhooks/"+id+"/deliveries/"+deliveryID+"/redeliver", nil, http.StatusAccepted)

	// A body the document refuses is one the route refuses, and the other
	// way round: unknown fields, a missing required one, an empty update.
	for _, c := range []struct {
		method, route, url string
		body               map[string]any
	}{
		{"POST", "/v1/webhooks", "/v1/webhooks", map[string]any{"url": recv.srv.URL, "event_types": []string{"radar"}, "secret": "mine"}},
		{"POST", "/v1/webhooks", "/v1/webhooks", map[string]any{"url": recv.srv.URL}},
		{"POST", "/v1/webhooks", "/v1/webhooks", map[string]any{"url": recv.srv.URL, "event_types": []string{"prices"}}},
		{"PATCH", "/v1/webhooks/{id}", "/v1/webhooks/" + id, map[string]any{}},
		{"POST", "/v1/export/jobs", "/v1/export/jobs", map[string]any{"scope": "organizations.registry"}},
	} {
		require.Error(t, conforms(requestSchema(c.method, c.route), c.body), "%s %s %v", c.method, c.route, c.body)
		b, err := json.Marshal(c.body)
		require.NoError(t, err)
		status, raw := send(c.method, c.url, b, "application/json")
		require.Equal(t, http.StatusBadRequest, status, "%s %s %v: %s", c.method, c.url, c.body, raw)
		v.validate(c.method, c.route, status, raw)
	}
	// Not JSON at all: 415, as documented.
	status, raw := send("POST", "/v1/webhooks", []byte("url=x"), "application/x-www-form-urlencoded")
	require.Equal(t, http.StatusUnsupportedMediaType, status, "%s", raw)
	v.validate("POST", "/v1/webhooks", status, raw)

	call("DELETE", "/v1/webhooks/{id}", "/v1/webhooks/"+id, nil, http.StatusOK)
	call("GET", "/v1/webhooks/{id}", "/v1/webhooks/"+id, nil, http.StatusNotFound)

	// An export job, requested, listed, and read once completed (with its
	// signed link, size and checksum).
	job := call("POST", "/v1/export/jobs", "/v1/export/jobs", map[string]any{"scope": "organizations.registry", "format": "jsonl", "note": "doc"}, http.StatusCreated)
	jobID := job["data"].(map[string]any)["id"].(string)
	jobs := call("GET", "/v1/export/jobs", "/v1/export/jobs?limit=5", nil, http.StatusOK)
	require.Len(t, jobs["data"], 1)
	require.Eventually(t, func() bool {
		got := call("GET", "/v1/export/jobs/{id}", "/v1/export/jobs/"+jobID, nil, http.StatusOK)
		return got["data"].(map[string]any)["status"] == "completed"
	}, 60*time.Second, 100*time.Millisecond, "the export job did not complete")
	done := call("GET", "/v1/export/jobs/{id}", "/v1/export/jobs/"+jobID, nil, http.StatusOK)["data"].(map[string]any)
	require.NotEmpty(t, done["downloadUrl"])
	require.NotEmpty(t, done["sha256"])
	call("GET", "/v1/export/jobs/{id}", "/v1/export/jobs/00000000-0000-0000-0000-000000000000", nil, http.StatusNotFound)
}
