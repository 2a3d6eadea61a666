package tests

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/jobs"
)

// stallingStorage lets the worker write its first buffer of bytes, tells
// the test, and then blocks until the attempt's context is cancelled: the
// export is caught mid-file when the worker is stopped.
type stallingStorage struct {
	exportstore.Storage
	started chan struct{}
}

func (s *stallingStorage) Create(ctx context.Context, key string) (exportstore.Upload, error) {
	tmp, err := s.Storage.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	return &stallingTemp{Upload: tmp, ctx: ctx, s: s}, nil
}

type stallingTemp struct {
	exportstore.Upload
	ctx    context.Context
	s      *stallingStorage
	writes int
}

func (t *stallingTemp) Write(p []byte) (int, error) {
	t.writes++
	if t.writes > 1 {
		return 0, t.ctx.Err()
	}
	n, err := t.Upload.Write(p)
	if err != nil {
		return n, err
	}
	close(t.s.started)
	<-t.ctx.Done()
	return n, t.ctx.Err()
}

// TestExportCrashAndRetry stops the River worker in the middle of an
// export (after it has written part of the file), checks that the job is
// not completed and no file can be downloaded, then starts a fresh worker:
// the retried job completes from scratch with exactly the database's rows,
// and only the final file is left in storage.
func TestExportCrashAndRetry(t *testing.T) {
	t.Parallel()
	for _, format := range exportjob.Formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			stall := &stallingStorage{started: make(chan struct{})}
			s := startExportServer(t, exportServerOpts{storage: func(st exportstore.Storage) exportstore.Storage {
				stall.Storage = st
				return stall
			}})
			exportSeed(t, s.store, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 200)
			key, _ := exportEnterpriseKey(t, s.store)
			created := s.create(t, key, map[string]any{"scope": "radar.history", "format": format, "since": "2026-10-01T00:00:00Z", "includeEvidence": true})

			select {
			case <-stall.started:
			case <-time.After(60 * time.Second):
				t.Fatal("export never started")
			}
			// Partial bytes exist on disk, but only as a temporary file.
			entries, err := os.ReadDir(s.dir)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			require.NotEqual(t, exportstore.Key(created.ID, format), entries[0].Name())

			stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, s.client.StopAndCancel(stopCtx))

			mid := s.get(t, key, created.ID)
			require.Equal(t, exportjob.StatusRunning, mid.Status)
			require.Nil(t, mid.DownloadURL)
			// Even a correctly signed link finds no file.
			owner, err := strconv.ParseInt(created.AppUserID, 10, 64)
			require.NoError(t, err)
			status, _, _ := s.do(t, http.MethodGet, s.handlers.DownloadURL(nil, owner, created.ID, time.Now().Add(time.Hour)), "", nil)
			require.Equal(t, http.StatusNotFound, status)
			_, err = s.storage.Open(context.Background(), exportstore.Key(created.ID, format))
			require.ErrorIs(t, err, exportstore.ErrNotFound)

			// A new worker process: plain storage, same database.
			s.restartWorker(t, created.ID)

			job := s.waitDone(t, key, created.ID)
			require.Equal(t, exportjob.StatusCompleted, job.Status, "error: %v", job.Error)
			data := exportDownload(t, s, job)
			want := exportDBRows(t, s.store, "e.latest_evidence_at >= '2026-10-01T00:00:00Z'", true)
			require.Len(t, want, 200)
			require.Equal(t, int64(200), *job.RowCount)
			require.Equal(t, want, exportParseRows(t, format, data))
			entries, err = os.ReadDir(s.dir)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			require.Equal(t, exportstore.Key(created.ID, format), entries[0].Name())
		})
	}
}

// TestExportKilledWorkerReclaimed reproduces what a SIGKILLed worker leaves
// in the database: the River job still `running` with an old attempt and the
// export `running` with no progress since. A worker process started later
// must reclaim the attempt once it has been silent for StaleAfter (not after
// the export's 30-minute attempt timeout) and complete the export with every
// row.
func TestExportKilledWorkerReclaimed(t *testing.T) {
	t.Parallel()
	s := startExportServer(t, exportServerOpts{noStart: true})
	exportSeed(t, s.store, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 50)
	key, _ := exportEnterpriseKey(t, s.store)
	created := s.create(t, key, map[string]any{"scope": "radar.history", "format": "jsonl", "since": "2026-10-01T00:00:00Z"})

	ctx := context.Background()
	tag, err := s.store.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = now() - interval '10 minutes', attempted_by = ARRAY['killed-worker']
		WHERE kind = 'export' AND args->>'job_id' = $1`, created.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
	_, err = s.store.Pool.Exec(ctx, `UPDATE export_jobs SET status = 'running', row_count = 7, updated_at = $2 WHERE id = $1`,
		created.ID, s.store.Now().Add(-10*time.Minute))
	require.NoError(t, err)

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client, err := jobs.NewClient(s.store, logger, jobs.ExportRegistration(s.store, jobs.ExportConfig{
		Storage: s.storage, StaleAfter: time.Second, LinkTTL: time.Hour, Logger: logger}))
	require.NoError(t, err)
	require.NoError(t, client.Start(ctx))
	defer client.Stop(ctx) //nolint:errcheck

	job := s.waitDone(t, key, created.ID)
	require.Equal(t, exportjob.StatusCompleted, job.Status, "error: %v", job.Error)
	require.Equal(t, int64(50), *job.RowCount)
	require.Len(t, exportParseRows(t, "jsonl", exportDownload(t, s, job)), 50)

	var attempt int
	var reclaimed bool
	require.NoError(t, s.store.Pool.QueryRow(ctx, `SELECT attempt, EXISTS (SELECT 1 FROM unnest(errors) e WHERE e->>'error' = $2)
		FROM river_job WHERE kind = 'export' AND args->>'job_id' = $1`, created.ID, exportstore.MsgExportReclaimed).Scan(&attempt, &reclaimed))
	require.Equal(t, 2, attempt, "the killed attempt is retried as attempt 2")
	require.True(t, reclaimed, "River's job records why the attempt was reclaimed")
}
