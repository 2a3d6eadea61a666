package exportstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/exportjob"
)

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsUUID reports whether s is a UUID in its canonical textual form.
func IsUUID(s string) bool { return uuidRE.MatchString(s) }

// MsgExportAbandoned is the error of an export River gave up on.
const MsgExportAbandoned = "Export failed after repeated attempts. Please request a new export."

// MsgExportReclaimed is the error River records on an export attempt that
// was reclaimed because its worker stopped reporting progress.
const MsgExportReclaimed = "export worker stopped reporting progress (killed or stalled); attempt reclaimed"

// ExportArgs are the River job arguments of an export job's fulfillment.
type ExportArgs struct {
	// JobID is the export job's UUID.
	JobID string `json:"job_id"`
}

// Kind implements river.JobArgs.
func (ExportArgs) Kind() string { return "export" }

// ExportExpireArgs are the River job arguments of the periodic sweep that
// expires completed export jobs whose download link lifetime has ended.
type ExportExpireArgs struct{}

// Kind implements river.JobArgs.
func (ExportExpireArgs) Kind() string { return "export_expire" }

// errExportNotFound is returned for an unknown, foreign or malformed id.
func errExportNotFound() *cryptointel.Error {
	return cryptointel.Errorf(cryptointel.ENOTFOUND, "Export job not found")
}

// ExportBounds are the per-account bounds an export job must fit in when
// it is created; a zero field is no bound.
type ExportBounds struct {
	// MaxActive is how many jobs the account may have requested or
	// running, the new one included.
	MaxActive int
	// MaxBytesPerDay bounds the bytes written by the account's jobs
	// created in the current UTC day, whatever their outcome (failed
	// jobs and retried attempts count): at it, no new job is created.
	MaxBytesPerDay int64
}

// ExportBoundError is why an export job was not created: the account's
// active jobs or the day's bytes, as counted under its lock.
type ExportBoundError struct {
	// Active is the account's jobs requested or running.
	Active int
	// BytesToday is the bytes written by its jobs created today (UTC).
	BytesToday int64
	// Bounds are the bounds it met.
	Bounds ExportBounds
}

func (e *ExportBoundError) Error() string {
	return fmt.Sprintf("export bounds reached: %d active jobs, %d bytes today", e.Active, e.BytesToday)
}

// CreateExportJob inserts job in status requested and, in the same pgx
// transaction, calls enqueue so the River job that fulfills it is inserted
// atomically with the row (client.InsertTx). job.ID, Status, CreatedAt and
// UpdatedAt are set from the database.
//
// The account's row is locked first, so concurrent creations by one
// account (on any server) are counted one after the other against bounds:
// an *ExportBoundError is returned, and nothing inserted, when the account
// is at MaxActive or MaxBytesPerDay.
func CreateExportJob(ctx context.Context, store *db.DB, job *exportjob.Job, bounds ExportBounds, enqueue func(ctx context.Context, tx pgx.Tx) error) error {
	tx, err := store.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("error beginning export job transaction: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	now := store.Now().UTC().Truncate(time.Microsecond)
	if bounds.MaxActive > 0 || bounds.MaxBytesPerDay > 0 {
		day := now.Truncate(24 * time.Hour)
		db.CountStatement(ctx)
		if _, err := tx.Exec(ctx, `SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, job.AccountID); err != nil {
			return fmt.Errorf("error locking account for export: %w", err)
		}
		var be ExportBoundError
		db.CountStatement(ctx)
		err := tx.QueryRow(ctx, `
			SELECT (SELECT count(*) FROM export_jobs WHERE account_id = $1 AND status IN ('requested', 'running')),
				(SELECT coalesce(sum(bytes_written), 0) FROM export_jobs WHERE account_id = $1 AND created_at >= $2)`,
			job.AccountID, day).Scan(&be.Active, &be.BytesToday)
		if err != nil {
			return fmt.Errorf("error counting the account's exports: %w", err)
		}
		if (bounds.MaxActive > 0 && be.Active >= bounds.MaxActive) || (bounds.MaxBytesPerDay > 0 && be.BytesToday >= bounds.MaxBytesPerDay) {
			be.Bounds = bounds
			return &be
		}
	}
	db.CountStatement(ctx)
	err = tx.QueryRow(ctx, `
		INSERT INTO export_jobs (id, account_id, api_key_id, scope, format, status, requested_params, note, created_at, updated_at)
		VALUES (gen_random_uuid(), $1, $2, $3, $4, 'requested', $5, $6, $7, $7)
		RETURNING id::text, status, created_at, updated_at`,
		job.AccountID, job.APIKeyID, job.Scope, job.Format, []byte(job.RequestedParams), job.Note, now,
	).Scan(&job.ID, &job.Status, &job.CreatedAt, &job.UpdatedAt)
	if err != nil {
		return fmt.Errorf("error inserting export job: %w", err)
	}
	if err := enqueue(ctx, tx); err != nil {
		return fmt.Errorf("error enqueueing export job: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("error committing export job: %w", err)
	}
	return nil
}

// ExportBytesOfDay returns the bytes written by accountID's export jobs
// created on the UTC day of day, by every attempt recorded so far
// (AddExportBytes), whatever its outcome.
func ExportBytesOfDay(ctx context.Context, idb bun.IDB, accountID int64, day time.Time) (int64, error) {
	start := day.UTC().Truncate(24 * time.Hour)
	var n int64
	db.CountStatement(ctx)
	err := idb.QueryRowContext(ctx, `
		SELECT coalesce(sum(bytes_written), 0) FROM export_jobs
		WHERE account_id = ? AND created_at >= ? AND created_at < ?`,
		accountID, start, start.Add(24*time.Hour)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("error reading the account's export bytes: %w", err)
	}
	return n, nil
}

// ExportJobByID returns accountID's export job id.
//
// Returns ENOTFOUND "Export job not found" when the job does not exist,
// belongs to another account, or id is not a UUID.
func ExportJobByID(ctx context.Context, idb bun.IDB, accountID int64, id string) (*exportjob.Job, error) {
	if !IsUUID(id) {
		return nil, errExportNotFound()
	}
	job := new(exportjob.Job)
	err := idb.NewSelect().Model(job).Where("id = ?", id).Where("account_id = ?", accountID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errExportNotFound()
	} else if err != nil {
		return nil, fmt.Errorf("error loading export job: %w", err)
	}
	return job, nil
}

// ExportJobForWorker returns export job id whatever its account; the worker
// and the signed download use it.
//
// Returns ENOTFOUND when the job does not exist or id is not a UUID.
func ExportJobForWorker(ctx context.Context, idb bun.IDB, id string) (*exportjob.Job, error) {
	if !IsUUID(id) {
		return nil, errExportNotFound()
	}
	job := new(exportjob.Job)
	err := idb.NewSelect().Model(job).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errExportNotFound()
	} else if err != nil {
		return nil, fmt.Errorf("error loading export job: %w", err)
	}
	return job, nil
}

// ListExportJobs returns accountID's export jobs, newest first.
func ListExportJobs(ctx context.Context, idb bun.IDB, accountID int64, limit, offset int) ([]*exportjob.Job, error) {
	jobs := []*exportjob.Job{}
	err := idb.NewSelect().Model(&jobs).
		Where("account_id = ?", accountID).
		OrderExpr("created_at DESC, id DESC").
		Limit(int64(limit)).Offset(int64(offset)).
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("error listing export jobs: %w", err)
	}
	return jobs, nil
}

// StartExportJob moves job id to running and resets its progress. It
// returns false, without error, when the job is no longer requested or
// running (completed, failed or expired), so a duplicate run does nothing.
func StartExportJob(ctx context.Context, idb bun.IDB, id string, now time.Time) (bool, error) {
	res, err := idb.NewUpdate().Model((*exportjob.Job)(nil)).
		Set("status = ?", exportjob.StatusRunning).
		Set("row_count = 0").
		Set("byte_size = NULL").
		Set("sha256 = NULL").
		Set("error = NULL").
		Set("updated_at = ?", now).
		Where("id = ?", id).
		Where("status IN (?, ?)", exportjob.StatusRequested, exportjob.StatusRunning).
		Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("error starting export job: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ReportExportProgress records how many rows a running job has written.
func ReportExportProgress(ctx context.Context, idb bun.IDB, id string, rows int64, now time.Time) error {
	_, err := idb.NewUpdate().Model((*exportjob.Job)(nil)).
		Set("row_count = ?", rows).
		Set("updated_at = ?", now).
		Where("id = ?", id).
		Where("status = ?", exportjob.StatusRunning).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("error reporting export progress: %w", err)
	}
	return nil
}

// AddExportBytes adds n to the bytes job id's attempts wrote: every
// attempt records what it wrote, completed or not, so the account's daily
// volume counts it.
func AddExportBytes(ctx context.Context, idb bun.IDB, id string, n int64) error {
	if n <= 0 {
		return nil
	}
	db.CountStatement(ctx)
	if _, err := idb.ExecContext(ctx, `UPDATE export_jobs SET bytes_written = bytes_written + ? WHERE id::text = ?`, n, id); err != nil {
		return fmt.Errorf("error recording export bytes: %w", err)
	}
	return nil
}

// ExportResult describes a published export file.
type ExportResult struct {
	// StorageKey names the file in export storage.
	StorageKey string
	// RowCount is the number of rows (events or entities) in the file.
	RowCount int64
	// ByteSize is the file's size in bytes.
	ByteSize int64
	// SHA256 is the lowercase hex SHA-256 of the file.
	SHA256 string
	// ExpiresAt is when the download link stops working.
	ExpiresAt time.Time
}

// CompleteExportJob marks running job id completed with res. It returns
// false when the job was not running (another run finished first), in which
// case the caller deletes its own file.
func CompleteExportJob(ctx context.Context, idb bun.IDB, id string, res ExportResult, now time.Time) (bool, error) {
	r, err := idb.NewUpdate().Model((*exportjob.Job)(nil)).
		Set("status = ?", exportjob.StatusCompleted).
		Set("storage_key = ?", res.StorageKey).
		Set("row_count = ?", res.RowCount).
		Set("byte_size = ?", res.ByteSize).
		Set("sha256 = ?", res.SHA256).
		Set("expires_at = ?", res.ExpiresAt).
		Set("error = NULL").
		Set("updated_at = ?", now).
		Where("id = ?", id).
		Where("status = ?", exportjob.StatusRunning).
		Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("error completing export job: %w", err)
	}
	n, _ := r.RowsAffected()
	return n == 1, nil
}

// FailExportJob marks job id failed with message, unless it already
// completed or expired.
func FailExportJob(ctx context.Context, idb bun.IDB, id, message string, now time.Time) error {
	_, err := idb.NewUpdate().Model((*exportjob.Job)(nil)).
		Set("status = ?", exportjob.StatusFailed).
		Set("error = ?", message).
		Set("updated_at = ?", now).
		Where("id = ?", id).
		Where("status IN (?, ?)", exportjob.StatusRequested, exportjob.StatusRunning).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("error failing export job: %w", err)
	}
	return nil
}

// ExpiredExport is a job ExpireExportJobs moved to expired, with the file
// to delete.
type ExpiredExport struct {
	ID         string  `bun:"id"`
	StorageKey *string `bun:"storage_key"`
}

// ExpireExportJobs moves every completed job whose expires_at is at or
// before now to expired and returns them so their files can be deleted.
func ExpireExportJobs(ctx context.Context, idb bun.IDB, now time.Time) ([]ExpiredExport, error) {
	out := []ExpiredExport{}
	err := idb.NewRaw(`
		UPDATE export_jobs SET status = ?, updated_at = ?
		WHERE status = ? AND expires_at <= ?
		RETURNING id::text AS id, storage_key`,
		exportjob.StatusExpired, now, exportjob.StatusCompleted, now).Scan(ctx, &out)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("error expiring export jobs: %w", err)
	}
	return out, nil
}

// FailAbandonedExportJobs marks failed every requested or running export
// whose River job was discarded or cancelled without the worker recording
// the outcome (for example a worker killed during its last attempt, which
// River's rescuer then discards). It returns how many jobs it failed.
func FailAbandonedExportJobs(ctx context.Context, idb bun.IDB, now time.Time) (int, error) {
	res, err := idb.NewRaw(`
		UPDATE export_jobs SET status = ?, error = ?, updated_at = ?
		WHERE status IN (?, ?) AND id::text IN (
			SELECT args->>'job_id' FROM river_job
			WHERE kind = ? AND state IN ('discarded', 'cancelled'))`,
		exportjob.StatusFailed, MsgExportAbandoned, now, exportjob.StatusRequested, exportjob.StatusRunning, ExportArgs{}.Kind()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("error failing abandoned export jobs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ReclaimStalledExportJobs hands back to River every export attempt whose
// worker has stopped reporting progress since staleBefore: the worker
// records progress after every batch, so a running export silent that long
// belongs to a process that was killed. River itself would rescue such a
// job only after the export's whole attempt timeout. A reclaimed attempt is
// retried at once, or discarded when it was the last (FailAbandonedExportJobs
// then fails the export). It returns how many attempts it reclaimed.
func ReclaimStalledExportJobs(ctx context.Context, idb bun.IDB, staleBefore time.Time) (int, error) {
	res, err := idb.NewRaw(`
		WITH stalled AS (
			SELECT rj.id FROM river_job rj
			JOIN export_jobs ej ON ej.id::text = rj.args->>'job_id'
			WHERE rj.kind = ? AND rj.state = 'running' AND rj.attempted_at < ?
			  AND ej.status IN (?, ?) AND ej.updated_at < ?
			FOR UPDATE OF rj SKIP LOCKED
		)
		UPDATE river_job rj SET
			state = CASE WHEN rj.attempt >= rj.max_attempts THEN 'discarded' ELSE 'retryable' END::river_job_state,
			finalized_at = CASE WHEN rj.attempt >= rj.max_attempts THEN now() END,
			scheduled_at = now(),
			errors = array_append(rj.errors, jsonb_build_object('at', now(), 'attempt', rj.attempt, 'error', ?::text, 'trace', ''))
		FROM stalled WHERE rj.id = stalled.id`,
		ExportArgs{}.Kind(), staleBefore, exportjob.StatusRequested, exportjob.StatusRunning, staleBefore, MsgExportReclaimed).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("error reclaiming stalled export jobs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
