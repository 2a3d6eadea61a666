package exportstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
)

type exportBundle struct {
	store     *db.DB
	ctx       context.Context
	accountID int64
	keyID     int64
}

func setupExportDB(t *testing.T) *exportBundle {
	t.Helper()
	store := dbtest.New(t)
	ctx := context.Background()
	_, key, err := db.CreateAPIKey(ctx, store.Bun, fmt.Sprintf("export-%d", time.Now().UnixNano()), cryptointel.PlanEnterprise)
	require.NoError(t, err)
	return &exportBundle{store: store, ctx: ctx, accountID: key.AccountID, keyID: key.ID}
}

func (b *exportBundle) newJob(t *testing.T, accountID, keyID int64) *exportjob.Job {
	t.Helper()
	job := &exportjob.Job{AccountID: accountID, APIKeyID: keyID, Scope: exportjob.ScopeOrganizationsRegistry, Format: exportjob.FormatCSV, RequestedParams: []byte(`{}`)}
	require.NoError(t, exportstore.CreateExportJob(b.ctx, b.store, job, exportstore.ExportBounds{}, func(context.Context, pgx.Tx) error { return nil }))
	return job
}

// TestExportJobLifecycle walks a job through its states; transitions out of
// order are refused.
func TestExportJobLifecycle(t *testing.T) {
	t.Parallel()
	b := setupExportDB(t)
	job := b.newJob(t, b.accountID, b.keyID)
	require.True(t, exportstore.IsUUID(job.ID))
	require.Equal(t, exportjob.StatusRequested, job.Status)

	// A failing enqueue rolls the row back.
	bad := &exportjob.Job{AccountID: b.accountID, APIKeyID: b.keyID, Scope: "x", Format: "csv", RequestedParams: []byte(`{}`)}
	require.Error(t, exportstore.CreateExportJob(b.ctx, b.store, bad, exportstore.ExportBounds{}, func(context.Context, pgx.Tx) error { return errors.New("queue down") }))
	list, err := exportstore.ListExportJobs(b.ctx, b.store.Bun, b.accountID, 50, 0)
	require.NoError(t, err)
	require.Len(t, list, 1)

	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ok, err := exportstore.CompleteExportJob(b.ctx, b.store.Bun, job.ID, exportstore.ExportResult{StorageKey: "k"}, now)
	require.NoError(t, err)
	require.False(t, ok, "a job that is not running cannot complete")

	started, err := exportstore.StartExportJob(b.ctx, b.store.Bun, job.ID, now)
	require.NoError(t, err)
	require.True(t, started)
	require.NoError(t, exportstore.ReportExportProgress(b.ctx, b.store.Bun, job.ID, 42, now))
	got, err := exportstore.ExportJobByID(b.ctx, b.store.Bun, b.accountID, job.ID)
	require.NoError(t, err)
	require.Equal(t, int64(42), *got.RowCount)

	// A retried attempt restarts a running job and resets its progress.
	started, err = exportstore.StartExportJob(b.ctx, b.store.Bun, job.ID, now)
	require.NoError(t, err)
	require.True(t, started)
	got, err = exportstore.ExportJobByID(b.ctx, b.store.Bun, b.accountID, job.ID)
	require.NoError(t, err)
	require.Equal(t, int64(0), *got.RowCount)

	res := exportstore.ExportResult{StorageKey: job.ID + ".csv", RowCount: 7, ByteSize: 99, SHA256: "ab", ExpiresAt: now.Add(time.Hour)}
	ok, err = exportstore.CompleteExportJob(b.ctx, b.store.Bun, job.ID, res, now)
	require.NoError(t, err)
	require.True(t, ok)
	started, err = exportstore.StartExportJob(b.ctx, b.store.Bun, job.ID, now)
	require.NoError(t, err)
	require.False(t, started, "a completed job is not started again")
	require.NoError(t, exportstore.FailExportJob(b.ctx, b.store.Bun, job.ID, "late failure", now))
	got, err = exportstore.ExportJobByID(b.ctx, b.store.Bun, b.accountID, job.ID)
	require.NoError(t, err)
	require.Equal(t, exportjob.StatusCompleted, got.Status, "a completed job cannot fail")

	expired, err := exportstore.ExpireExportJobs(b.ctx, b.store.Bun, now.Add(59*time.Minute))
	require.NoError(t, err)
	require.Empty(t, expired)
	expired, err = exportstore.ExpireExportJobs(b.ctx, b.store.Bun, now.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, expired, 1)
	require.Equal(t, job.ID, expired[0].ID)
	require.Equal(t, job.ID+".csv", *expired[0].StorageKey)
}

// TestExportJobVisibility: another account's job, an unknown id and a
// malformed id are all ENOTFOUND "Export job not found".
func TestExportJobVisibility(t *testing.T) {
	t.Parallel()
	b := setupExportDB(t)
	_, other, err := db.CreateAPIKey(b.ctx, b.store.Bun, "other", cryptointel.PlanEnterprise)
	require.NoError(t, err)
	theirs := b.newJob(t, other.AccountID, other.ID)
	for _, id := range []string{theirs.ID, "00000000-0000-0000-0000-000000000000", "nope", "'; DROP TABLE export_jobs; --"} {
		_, err := exportstore.ExportJobByID(b.ctx, b.store.Bun, b.accountID, id)
		require.Equal(t, cryptointel.ENOTFOUND, cryptointel.ErrorCode(err), id)
		require.Equal(t, "Export job not found", cryptointel.ErrorMessage(err))
	}
	got, err := exportstore.ExportJobByID(b.ctx, b.store.Bun, other.AccountID, theirs.ID)
	require.NoError(t, err)
	require.Equal(t, theirs.ID, got.ID)
}

// TestFailAbandonedExportJobs: a running export whose River job was
// discarded (a worker killed in its last attempt) is failed by the sweep;
// one still being worked is not.
func TestFailAbandonedExportJobs(t *testing.T) {
	t.Parallel()
	b := setupExportDB(t)
	abandoned := b.newJob(t, b.accountID, b.keyID)
	alive := b.newJob(t, b.accountID, b.keyID)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, j := range []*exportjob.Job{abandoned, alive} {
		_, err := exportstore.StartExportJob(b.ctx, b.store.Bun, j.ID, now)
		require.NoError(t, err)
	}
	for id, state := range map[string]string{abandoned.ID: "discarded", alive.ID: "running"} {
		_, err := b.store.Pool.Exec(b.ctx, `INSERT INTO river_job (kind, args, state, max_attempts, attempt, attempted_at, finalized_at)
			VALUES ('export', jsonb_build_object('job_id', $1::text), $2::river_job_state, 5, 5, now(), CASE WHEN $2::text = 'discarded' THEN now() END)`, id, state)
		require.NoError(t, err)
	}
	n, err := exportstore.FailAbandonedExportJobs(b.ctx, b.store.Bun, now)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	got, err := exportstore.ExportJobByID(b.ctx, b.store.Bun, b.accountID, abandoned.ID)
	require.NoError(t, err)
	require.Equal(t, exportjob.StatusFailed, got.Status)
	require.Equal(t, exportstore.MsgExportAbandoned, *got.Error)
	got, err = exportstore.ExportJobByID(b.ctx, b.store.Bun, b.accountID, alive.ID)
	require.NoError(t, err)
	require.Equal(t, exportjob.StatusRunning, got.Status)
}
