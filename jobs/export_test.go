package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
)

type exportTestBundle struct {
	store   *db.DB
	storage *exportstore.Bucket
	dir     string
	fx      *exportFixture
	worker  *ExportWorker
	now     *atomic.Pointer[time.Time]
}

func setupExport(t *testing.T, events int) *exportTestBundle {
	t.Helper()
	store := dbtest.New(t)
	now := new(atomic.Pointer[time.Time])
	start := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	now.Store(&start)
	store.Now = func() time.Time { return *now.Load() }
	dir := t.TempDir()
	storage, err := exportstore.OpenDir(context.Background(), dir)
	require.NoError(t, err)
	fx := seedExportFixture(t, store, events)
	// Small batches and row groups so every export crosses several keyset
	// pages and Parquet row groups.
	w := NewExportWorker(store, ExportConfig{Storage: storage, BatchSize: 7, RowGroupRows: 10, LinkTTL: time.Hour})
	return &exportTestBundle{store: store, storage: storage, dir: dir, fx: fx, worker: w, now: now}
}

func (b *exportTestBundle) readFile(t *testing.T, job *exportjob.Job) []byte {
	t.Helper()
	require.NotNil(t, job.StorageKey)
	obj, err := b.storage.Open(context.Background(), *job.StorageKey)
	require.NoError(t, err)
	defer obj.Close()
	data, err := io.ReadAll(obj)
	require.NoError(t, err)
	require.Equal(t, obj.Size(), int64(len(data)))
	return data
}

func (b *exportTestBundle) reload(t *testing.T, id string) *exportjob.Job {
	t.Helper()
	job, err := exportstore.ExportJobForWorker(context.Background(), b.store.Bun, id)
	require.NoError(t, err)
	return job
}

func ptime(t time.Time) *exportjob.Time { return &exportjob.Time{Time: t} }

// TestExportEveryScopeAndFormat runs one export per scope and format and
// checks the file against the database: row count, checksum, size, and
// every field of every row.
func TestExportEveryScopeAndFormat(t *testing.T) {
	t.Parallel()
	b := setupExport(t, 40)
	base := b.fx.base
	funding := "funding"
	paramsByScope := map[string]exportjob.Params{
		exportjob.ScopeOrganizationsRegistry: {},
		exportjob.ScopeRadarHistory:          {Since: ptime(base.Add(2 * time.Hour)), Until: ptime(base.Add(15 * time.Hour)), IncludeEvidence: true},
		exportjob.ScopeSignalHistory:         {Since: ptime(base), Category: &funding},
		exportjob.ScopeReplayGlobal:          {Since: ptime(base.Add(-time.Hour)), IncludeEvidence: true},
		exportjob.ScopeTimelineByOrg:         {Since: ptime(base), OrganizationIDs: []int64{2, 4}, IncludeEvidence: true},
	}
	for _, scope := range exportjob.Scopes {
		for _, format := range exportjob.Formats {
			t.Run(scope+"/"+format, func(t *testing.T) {
				p := paramsByScope[scope]
				job := b.fx.createJob(t, b.store, scope, format, p)
				require.NoError(t, b.worker.Run(context.Background(), job.ID, false))
				job = b.reload(t, job.ID)
				require.Equal(t, exportjob.StatusCompleted, job.Status)
				require.Nil(t, job.Error)
				require.NotNil(t, job.ExpiresAt)
				require.Equal(t, b.store.Now().Add(time.Hour), job.ExpiresAt.UTC())
				data := b.readFile(t, job)
				sum := sha256.Sum256(data)
				require.Equal(t, hex.EncodeToString(sum[:]), *job.SHA256)
				require.Equal(t, int64(len(data)), *job.ByteSize)

				if scope == exportjob.ScopeOrganizationsRegistry {
					got := decodeEntities(t, format, data)
					require.Equal(t, int64(len(b.fx.entities)), *job.RowCount)
					require.Len(t, got, len(b.fx.entities))
					for i, e := range b.fx.entities {
						require.Equal(t, e.ID, got[i].ID)
						require.Equal(t, e.CanonicalName, got[i].CanonicalName)
						require.Equal(t, e.DisplayName, got[i].DisplayName)
						require.Equal(t, e.EntityType, got[i].EntityType)
						require.Equal(t, e.Status, got[i].Status)
						require.Equal(t, e.Aliases, got[i].Aliases)
					}
					return
				}
				want := b.fx.expected(scope, p)
				require.NotEmpty(t, want, "fixture must select rows for %s", scope)
				require.Less(t, len(want), len(b.fx.events)+1)
				require.Equal(t, int64(len(want)), *job.RowCount)
				got := decodeEvents(t, format, data)
				require.Equal(t, normalizeFor(format, want), normalizeFor(format, got))
			})
		}
	}
}

// TestExportEmptyResult: an export that selects nothing still completes
// with a valid, empty file.
func TestExportEmptyResult(t *testing.T) {
	t.Parallel()
	b := setupExport(t, 5)
	for _, format := range exportjob.Formats {
		job := b.fx.createJob(t, b.store, exportjob.ScopeRadarHistory, format, exportjob.Params{Since: ptime(b.fx.base.Add(1000 * time.Hour))})
		require.NoError(t, b.worker.Run(context.Background(), job.ID, false))
		job = b.reload(t, job.ID)
		require.Equal(t, exportjob.StatusCompleted, job.Status)
		require.Equal(t, int64(0), *job.RowCount)
		require.Empty(t, decodeEvents(t, format, b.readFile(t, job)))
	}
}

// cancellingStorage wraps a Storage so the attempt's context is cancelled
// after a number of writes, as when the worker is stopped mid-export.
type cancellingStorage struct {
	exportstore.Storage
	after  int
	cancel context.CancelFunc
}

func (s *cancellingStorage) Create(ctx context.Context, key string) (exportstore.Upload, error) {
	tmp, err := s.Storage.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	return &cancellingTemp{Upload: tmp, s: s}, nil
}

type cancellingTemp struct {
	exportstore.Upload
	s      *cancellingStorage
	writes int
}

func (t *cancellingTemp) Write(p []byte) (int, error) {
	t.writes++
	if t.writes == t.s.after {
		t.s.cancel()
	}
	return t.Upload.Write(p)
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestExportCrashThenRetry stops an attempt mid-export (its context is
// cancelled after the first writes), checks that nothing was published,
// then simulates a killed process (a stale temporary file left behind),
// and retries: the job completes with exactly the expected rows and only
// the final file remains.
func TestExportCrashThenRetry(t *testing.T) {
	t.Parallel()
	for _, format := range exportjob.Formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			b := setupExport(t, 60)
			p := exportjob.Params{Since: ptime(b.fx.base), IncludeEvidence: true}
			job := b.fx.createJob(t, b.store, exportjob.ScopeReplayGlobal, format, p)
			key := exportstore.Key(job.ID, format)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// A 256 KiB buffer would hold this whole fixture, so flush
			// through a tiny batch size: the first write happens after the
			// first batch for csv/jsonl; cancel on it.
			crashing := NewExportWorker(b.store, ExportConfig{Storage: &cancellingStorage{Storage: b.storage, after: 1, cancel: cancel}, BatchSize: 7, RowGroupRows: 7, WriteBufferSize: 64})
			err := crashing.Run(ctx, job.ID, false)
			require.ErrorIs(t, err, context.Canceled)

			mid := b.reload(t, job.ID)
			require.Equal(t, exportjob.StatusRunning, mid.Status)
			require.Nil(t, mid.StorageKey)
			_, err = b.storage.Open(context.Background(), key)
			require.ErrorIs(t, err, exportstore.ErrNotFound, "no partial file may be visible")
			require.Empty(t, listDir(t, b.dir), "the aborted attempt removes its temp file")

			// A killed process cannot clean up: leave a partial temp file.
			stale, err := b.storage.Create(context.Background(), key)
			require.NoError(t, err)
			_, err = stale.Write([]byte("partial garbage"))
			require.NoError(t, err)
			require.Len(t, listDir(t, b.dir), 1)
			_, err = b.storage.Open(context.Background(), key)
			require.ErrorIs(t, err, exportstore.ErrNotFound)

			// Retry.
			require.NoError(t, b.worker.Run(context.Background(), job.ID, false))
			done := b.reload(t, job.ID)
			require.Equal(t, exportjob.StatusCompleted, done.Status)
			require.Equal(t, []string{key}, listDir(t, b.dir))
			want := b.fx.expected(exportjob.ScopeReplayGlobal, p)
			require.Equal(t, int64(len(want)), *done.RowCount)
			got := decodeEvents(t, format, b.readFile(t, done))
			require.Equal(t, normalizeFor(format, want), normalizeFor(format, got))
		})
	}
}

type failingStorage struct{ exportstore.Storage }

func (failingStorage) Create(context.Context, string) (exportstore.Upload, error) {
	return nil, errors.New("disk full")
}

// TestExportFailsOnLastAttempt: an error on an early attempt leaves the job
// running for a retry; on the last attempt the job is failed with an
// error message.
func TestExportFailsOnLastAttempt(t *testing.T) {
	t.Parallel()
	b := setupExport(t, 3)
	job := b.fx.createJob(t, b.store, exportjob.ScopeOrganizationsRegistry, exportjob.FormatCSV, exportjob.Params{})
	w := NewExportWorker(b.store, ExportConfig{Storage: failingStorage{b.storage}})

	require.Error(t, w.Run(context.Background(), job.ID, false))
	require.Equal(t, exportjob.StatusRunning, b.reload(t, job.ID).Status)

	require.Error(t, w.Run(context.Background(), job.ID, true))
	failed := b.reload(t, job.ID)
	require.Equal(t, exportjob.StatusFailed, failed.Status)
	require.NotNil(t, failed.Error)
	require.Contains(t, *failed.Error, "Export failed")

	// A failed job is final: another run does nothing.
	require.NoError(t, b.worker.Run(context.Background(), job.ID, false))
	require.Equal(t, exportjob.StatusFailed, b.reload(t, job.ID).Status)
}

// TestExportUnknownScopeIsCancelled: a job River cannot fulfill is failed
// at once and not retried.
func TestExportUnknownScopeIsCancelled(t *testing.T) {
	t.Parallel()
	b := setupExport(t, 1)
	job := b.fx.createJob(t, b.store, "nonsense.scope", exportjob.FormatCSV, exportjob.Params{})
	err := b.worker.Run(context.Background(), job.ID, false)
	var cancelErr *river.JobCancelError
	require.ErrorAs(t, err, &cancelErr)
	failed := b.reload(t, job.ID)
	require.Equal(t, exportjob.StatusFailed, failed.Status)
	require.Contains(t, *failed.Error, "nonsense.scope")
}

// TestExportExpiry: once the link lifetime has passed, the sweep moves the
// job to expired and deletes its file; a completed job is not run again.
func TestExportExpiry(t *testing.T) {
	t.Parallel()
	b := setupExport(t, 4)
	job := b.fx.createJob(t, b.store, exportjob.ScopeOrganizationsRegistry, exportjob.FormatJSONL, exportjob.Params{})
	require.NoError(t, b.worker.Run(context.Background(), job.ID, false))
	job = b.reload(t, job.ID)
	require.Equal(t, exportjob.StatusCompleted, job.Status)

	// Running a completed job again is a no-op.
	require.NoError(t, b.worker.Run(context.Background(), job.ID, false))
	require.Equal(t, *job.SHA256, *b.reload(t, job.ID).SHA256)

	n, err := ExpireExports(context.Background(), b.store, b.storage)
	require.NoError(t, err)
	require.Equal(t, 0, n, "not expired yet")

	later := b.store.Now().Add(time.Hour)
	b.now.Store(&later)
	n, err = ExpireExports(context.Background(), b.store, b.storage)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, exportjob.StatusExpired, b.reload(t, job.ID).Status)
	_, err = b.storage.Open(context.Background(), *job.StorageKey)
	require.ErrorIs(t, err, exportstore.ErrNotFound)
	require.Empty(t, listDir(t, b.dir))
}

// TestExportThroughRiver inserts the row and its River job in one
// transaction and lets a real River client fulfill it; a rolled-back
// request leaves neither a row nor a River job.
func TestExportThroughRiver(t *testing.T) {
	t.Parallel()
	b := setupExport(t, 12)
	client, err := NewClient(b.store, nil, ExportRegistration(b.store, ExportConfig{Storage: b.storage}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, unsubscribe := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer unsubscribe()
	require.NoError(t, client.Start(ctx))
	defer client.Stop(context.Background()) //nolint:errcheck

	enqueue := EnqueueExport(client, 0)
	// Rolled back: the enqueue fails after the row was inserted.
	bad := &exportjob.Job{AccountID: b.fx.accountID, APIKeyID: b.fx.apiKeyID, Scope: exportjob.ScopeOrganizationsRegistry, Format: exportjob.FormatCSV, RequestedParams: []byte(`{}`)}
	err = exportstore.CreateExportJob(ctx, b.store, bad, exportstore.ExportBounds{}, func(ctx context.Context, tx pgx.Tx) error {
		if err := enqueue(ctx, tx, bad.ID); err != nil {
			return err
		}
		return errors.New("boom")
	})
	require.Error(t, err)
	var rows, riverJobs int
	require.NoError(t, b.store.Pool.QueryRow(ctx, "SELECT count(*) FROM export_jobs").Scan(&rows))
	require.NoError(t, b.store.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE kind = 'export'").Scan(&riverJobs))
	require.Zero(t, rows)
	require.Zero(t, riverJobs)

	job := &exportjob.Job{AccountID: b.fx.accountID, APIKeyID: b.fx.apiKeyID, Scope: exportjob.ScopeRadarHistory, Format: exportjob.FormatParquet,
		RequestedParams: []byte(`{"since":"2026-10-01T00:00:00.000Z","organizationIds":[]}`)}
	require.NoError(t, exportstore.CreateExportJob(ctx, b.store, job, exportstore.ExportBounds{}, func(ctx context.Context, tx pgx.Tx) error {
		return enqueue(ctx, tx, job.ID)
	}))
	for {
		select {
		case ev := <-events:
			if ev.Job.Kind != (exportstore.ExportArgs{}).Kind() {
				continue
			}
			require.Equal(t, river.EventKindJobCompleted, ev.Kind)
			done := b.reload(t, job.ID)
			require.Equal(t, exportjob.StatusCompleted, done.Status)
			require.Equal(t, int64(12), *done.RowCount)
			return
		case <-time.After(60 * time.Second):
			t.Fatal("export job was not worked")
		}
	}
}
