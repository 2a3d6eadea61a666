package tests

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
)

// TestExportThroughApp runs the whole service (app.New + Serve on a random
// port): an enterprise key requests an export, the app's River client
// fulfills it, and the signed link downloads without an API key, through
// the route mounted outside the access layer.
func TestExportThroughApp(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, app.Config{
		DatabaseURL: dbtest.NewURL(t),
		ExportDir:   t.TempDir(),
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() }) //nolint:errcheck
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-served })
	base := "http://" + ln.Addr().String()

	exportSeed(t, a.DB, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 9)
	key, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanEnterprise)
	business, _ := accesstest.NewKey(t, a.DB, cryptointel.PlanBusiness)

	call := func(method, path, key, body string) (int, http.Header, []byte) {
		req, err := http.NewRequest(method, path, strings.NewReader(body))
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, b
	}
	body := `{"scope":"signal.history","format":"csv","since":"2026-10-25T00:00:00Z"}`
	status, hdr, resp := call(http.MethodPost, base+"/v1/export/jobs", business, body)
	require.Equal(t, http.StatusForbidden, status, string(resp))
	require.Equal(t, "export", hdr.Get("X-Api-Surface"))
	require.Equal(t, "premium", hdr.Get("X-Access-Layer"))

	status, hdr, resp = call(http.MethodPost, base+"/v1/export/jobs", key, body)
	require.Equal(t, http.StatusCreated, status, string(resp))
	require.Equal(t, "export.jobs", hdr.Get("X-Endpoint-Policy"))
	var created struct{ Data exportJobBody }
	require.NoError(t, json.Unmarshal(resp, &created))

	var job exportJobBody
	deadline := time.Now().Add(90 * time.Second)
	for {
		status, _, resp = call(http.MethodGet, base+"/v1/export/jobs/"+created.Data.ID, key, "")
		require.Equal(t, http.StatusOK, status, string(resp))
		var got struct{ Data exportJobBody }
		require.NoError(t, json.Unmarshal(resp, &got))
		job = got.Data
		if job.Status != exportjob.StatusRequested && job.Status != exportjob.StatusRunning {
			break
		}
		require.False(t, time.Now().After(deadline), "export still %s", job.Status)
		time.Sleep(25 * time.Millisecond)
	}
	require.Equal(t, exportjob.StatusCompleted, job.Status, "error: %v", job.Error)
	require.NotNil(t, job.DownloadURL)
	require.True(t, strings.HasPrefix(*job.DownloadURL, base+"/v1/export/files/"), *job.DownloadURL)

	status, hdr, file := call(http.MethodGet, *job.DownloadURL, "", "")
	require.Equal(t, http.StatusOK, status, string(file))
	require.Equal(t, "text/csv; charset=utf-8", hdr.Get("Content-Type"))
	want := exportDBRows(t, a.DB, "e.latest_evidence_at >= '2026-10-25T00:00:00Z' AND e.significance IS NOT NULL", false)
	require.Len(t, want, 3)
	require.Equal(t, want, exportParseRows(t, exportjob.FormatCSV, file))

	// The OpenAPI document lists the export routes.
	status, _, doc := call(http.MethodGet, base+"/openapi.json", "", "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(doc), "/v1/export/jobs/{id}")
}
