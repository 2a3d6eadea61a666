package observe

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Job outcomes that JobMetrics reports.
const (
	// JobCompleted is a job whose worker returned nil.
	JobCompleted = "completed"
	// JobRetried is a failed attempt that River will try again.
	JobRetried = "retried"
	// JobDiscarded is a failed last attempt: River gives the job up.
	JobDiscarded = "discarded"
	// JobCancelled is a job whose worker returned river.JobCancel.
	JobCancelled = "cancelled"
	// JobSnoozed is a job whose worker returned river.JobSnooze.
	JobSnoozed = "snoozed"
	// JobPanicked is an attempt whose worker panicked.
	JobPanicked = "panicked"
)

// JobMetrics is River worker middleware that reports every worked job to
// JobOutcome (completed, retried, discarded, cancelled, snoozed or
// panicked) and its duration, for every job kind, so workers need not call
// JobOutcome themselves. Install it with RegisterJobMetrics.
type JobMetrics struct {
	river.MiddlewareDefaults
}

var _ rivertype.WorkerMiddleware = (*JobMetrics)(nil)

// Work implements rivertype.WorkerMiddleware.
func (*JobMetrics) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) (err error) {
	start := time.Now()
	panicked := true
	defer func() {
		if panicked {
			record(job.Kind, JobPanicked, time.Since(start))
		}
	}()
	err = doInner(ctx)
	panicked = false
	record(job.Kind, jobOutcome(job, err), time.Since(start))
	return err
}

func record(kind, outcome string, d time.Duration) {
	JobOutcome(kind, outcome)
	jobDuration.WithLabelValues(kind, outcome).Observe(d.Seconds())
}

func jobOutcome(job *rivertype.JobRow, err error) string {
	if err == nil {
		return JobCompleted
	}
	var cancelErr *rivertype.JobCancelError
	if errors.As(err, &cancelErr) {
		return JobCancelled
	}
	var snoozeErr *rivertype.JobSnoozeError
	if errors.As(err, &snoozeErr) {
		return JobSnoozed
	}
	if job.Attempt >= job.MaxAttempts {
		return JobDiscarded
	}
	return JobRetried
}

// RegisterJobMetrics installs JobMetrics on a River configuration. Its
// signature is jobs.Registration's, so it goes in the list passed to
// jobs.NewClient.
func RegisterJobMetrics(_ *river.Workers, cfg *river.Config) error {
	cfg.Middleware = append(cfg.Middleware, &JobMetrics{})
	return nil
}
