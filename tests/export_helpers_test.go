package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/rest"
)

// exportServer is the export surface served the way the service serves it:
// the /v1 router with the real access layer in front of the export routes,
// the signed download handler mounted outside the key middleware, and a
// River client working the export jobs, on a random local port.
type exportServer struct {
	store    *db.DB
	url      string
	storage  *exportstore.Bucket
	dir      string // the local store's directory ("" for S3)
	client   *river.Client[pgx.Tx]
	handlers *rest.ExportHandlers
	now      *atomic.Pointer[time.Time]
}

// noExecutor satisfies rest.Executor for routers serving only handler
// routes (exports, webhooks), which never run a graph operation.
type noExecutor struct{}

func (noExecutor) Run(_ context.Context, _, _ string, _ map[string]any, w *jsonw.Writer) gqlerror.List {
	w.B = append(w.B, "null"...)
	return nil
}

type exportServerOpts struct {
	// storage wraps the local storage the worker writes to (crash tests).
	storage func(exportstore.Storage) exportstore.Storage
	// noStart leaves the River client stopped.
	noStart bool
	// storageURL is the export store (EXPORT_STORAGE_URL); empty is a
	// temporary directory.
	storageURL string
	// redirect answers downloads with a redirect to a presigned URL
	// (EXPORT_DOWNLOAD_REDIRECT).
	redirect bool
	// maxBytesPerDay bounds the worker's bytes per account and day
	// (EXPORT_MAX_BYTES_PER_DAY).
	maxBytesPerDay int64
}

func startExportServer(t *testing.T, opts exportServerOpts) *exportServer {
	t.Helper()
	store := dbtest.New(t)
	now := new(atomic.Pointer[time.Time])
	start := time.Now().UTC()
	now.Store(&start)
	store.Now = func() time.Time { return *now.Load() }
	dir := t.TempDir()
	var local *exportstore.Bucket
	var err error
	if opts.storageURL != "" {
		dir = ""
		local, err = exportstore.Open(context.Background(), opts.storageURL, exportstore.Options{})
	} else {
		local, err = exportstore.OpenDir(context.Background(), dir)
	}
	require.NoError(t, err)
	t.Cleanup(func() { local.Close() })
	var workerStorage exportstore.Storage = local
	if opts.storage != nil {
		workerStorage = opts.storage(local)
	}
	logger := testLogger(t)
	client, err := jobs.NewClient(store, logger, jobs.ExportRegistration(store, jobs.ExportConfig{Storage: workerStorage, BatchSize: 7, RowGroupRows: 10, WriteBufferSize: 4096, LinkTTL: time.Hour, Logger: logger,
		MaxBytesPerDay: opts.maxBytesPerDay}))
	require.NoError(t, err)
	if !opts.noStart {
		require.NoError(t, client.Start(context.Background()))
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			client.StopAndCancel(ctx) //nolint:errcheck
		})
	}
	h := &rest.ExportHandlers{Store: store, Storage: local, RedirectDownloads: opts.redirect, Enqueue: jobs.EnqueueExport(client, 0), Secret: []byte("export-test-secret")}
	svc := access.New(store, access.Config{Now: store.Now, Logger: logger, RateLimit: 1 << 20})
	router, err := rest.New(rest.Config{Executor: noExecutor{}, Wrap: svc.Wrap, Routes: rest.ExportRoutes(h), Logger: logger, Now: store.Now})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/v1/", router)
	mux.Handle("GET /v1/export/files/{id}", h.Download())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &exportServer{store: store, url: srv.URL, storage: local, dir: dir, client: client, handlers: h, now: now}
}

// do sends a request with key (none when empty) and returns the status,
// headers and body.
func (s *exportServer) do(t *testing.T, method, path, key string, body []byte, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	url := path
	if len(path) > 0 && path[0] == '/' {
		url = s.url + path
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// exportJobBody is the job resource as a client decodes it.
type exportJobBody struct {
	ID              string `json:"id"`
	AppUserID       string `json:"appUserId"`
	APIKeyID        int64  `json:"apiKeyId"`
	Scope           string `json:"scope"`
	Format          string `json:"format"`
	Status          string `json:"status"`
	RequestedParams struct {
		Since           *string `json:"since"`
		Until           *string `json:"until"`
		Category        *string `json:"category"`
		IncludeEvidence bool    `json:"includeEvidence"`
		OrganizationIDs []int64 `json:"organizationIds"`
	} `json:"requestedParams"`
	Note        string  `json:"note"`
	DownloadURL *string `json:"downloadUrl"`
	ExpiresAt   *string `json:"expiresAt"`
	Error       *string `json:"error"`
	CreatedAt   string  `json:"createdAt"`
	UpdatedAt   string  `json:"updatedAt"`
	RowCount    *int64  `json:"rowCount"`
	ByteSize    *int64  `json:"byteSize"`
	SHA256      *string `json:"sha256"`
}

func (s *exportServer) create(t *testing.T, key string, body any) exportJobBody {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	status, _, resp := s.do(t, http.MethodPost, "/v1/export/jobs", key, b)
	require.Equal(t, http.StatusCreated, status, string(resp))
	var out struct{ Data exportJobBody }
	require.NoError(t, json.Unmarshal(resp, &out))
	return out.Data
}

func (s *exportServer) get(t *testing.T, key, id string) exportJobBody {
	t.Helper()
	status, _, resp := s.do(t, http.MethodGet, "/v1/export/jobs/"+id, key, nil)
	require.Equal(t, http.StatusOK, status, string(resp))
	var out struct{ Data exportJobBody }
	require.NoError(t, json.Unmarshal(resp, &out))
	return out.Data
}

// waitDone polls the job until it leaves requested/running. The bound only
// guards against a hung test; nothing asserts on timing.
func (s *exportServer) waitDone(t *testing.T, key, id string) exportJobBody {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		j := s.get(t, key, id)
		if j.Status != exportjob.StatusRequested && j.Status != exportjob.StatusRunning {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("export job %s still %s", id, j.Status)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// exportSeed inserts entities and n events (owners, participants,
// evidence) through Bun; events are an hour apart from base, in pairs
// sharing a timestamp.
func exportSeed(t *testing.T, store *db.DB, base time.Time, n int) {
	t.Helper()
	ctx := context.Background()
	var ents []cryptointel.Entity
	for i := 1; i <= 4; i++ {
		ents = append(ents, cryptointel.Entity{ID: int64(i), CanonicalName: fmt.Sprintf("org-%d", i), DisplayName: fmt.Sprintf("Org %d", i),
			EntityType: "project", Status: "active", Aliases: []string{fmt.Sprintf("O%d", i)}})
	}
	_, err := store.Bun.NewInsert().Model(&ents).Exec(ctx)
	require.NoError(t, err)
	var events []cryptointel.Event
	var links []cryptointel.EventEntity
	var evidence []cryptointel.Evidence
	cats := []string{"partnership", "funding", "listing"}
	for i := 0; i < n; i++ {
		id := int64(500 + i)
		ts := base.Add(time.Duration(i/2) * time.Hour)
		var sig *float64
		if i%3 == 0 {
			v := float64(i) / 10
			sig = &v
		}
		events = append(events, cryptointel.Event{ID: id, Title: fmt.Sprintf("Event %d, \"q\"", i), Category: cats[i%3], Summary: fmt.Sprintf("Summary %d", i),
			Bullets: []string{"a", "b"}, Significance: sig, LatestEvidenceAt: ts})
		links = append(links, cryptointel.EventEntity{EventID: id, EntityID: int64(i%4 + 1), Role: cryptointel.RoleOwner, LatestEvidenceAt: ts, Significance: sig, Category: cats[i%3]})
		if i%5 == 0 {
			links = append(links, cryptointel.EventEntity{EventID: id, EntityID: int64((i+2)%4 + 1), Role: cryptointel.RoleParticipant, LatestEvidenceAt: ts, Significance: sig, Category: cats[i%3]})
		}
		evidence = append(evidence, cryptointel.Evidence{ID: id * 10, EventID: id, Content: "post", URL: fmt.Sprintf("https://example.com/%d", id), TS: ts})
	}
	_, err = store.Bun.NewInsert().Model(&events).Exec(ctx)
	require.NoError(t, err)
	_, err = store.Bun.NewInsert().Model(&links).Exec(ctx)
	require.NoError(t, err)
	_, err = store.Bun.NewInsert().Model(&evidence).Exec(ctx)
	require.NoError(t, err)
}

// exportEnterpriseKey creates an enterprise account and key.
func exportEnterpriseKey(t *testing.T, store *db.DB) (string, int64) {
	t.Helper()
	return accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
}

// restartWorker starts a new worker process's River client (plain
// storage, same database) and makes job id's retry available at once,
// skipping the retry backoff, as after a crash.
func (s *exportServer) restartWorker(t *testing.T, id string) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client, err := jobs.NewClient(s.store, logger, jobs.ExportRegistration(s.store, jobs.ExportConfig{Storage: s.storage, BatchSize: 7, RowGroupRows: 10, LinkTTL: time.Hour, Logger: logger}))
	require.NoError(t, err)
	require.NoError(t, client.Start(context.Background()))
	t.Cleanup(func() { client.Stop(context.Background()) }) //nolint:errcheck
	var riverID int64
	require.NoError(t, s.store.Pool.QueryRow(context.Background(), "SELECT id FROM river_job WHERE kind = 'export' AND args->>'job_id' = $1", id).Scan(&riverID))
	_, err = client.JobRetry(context.Background(), riverID)
	require.NoError(t, err)
}
