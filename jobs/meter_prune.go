package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/cryptointel/cryptointel/db"
)

// Defaults of MeterPruneConfig.
const (
	// DefaultMeterPruneKeep is how long an account's rate window is kept
	// after it started: far longer than any rate window, so no window
	// metering may still count in is ever deleted.
	DefaultMeterPruneKeep = time.Hour
	// DefaultMeterPruneInterval is how often old rate windows are pruned.
	DefaultMeterPruneInterval = 10 * time.Minute
	// meterPruneBatch rows a statement, meterPruneBatches statements a run
	// (a backlog left by a release without the job goes over several runs).
	meterPruneBatch   = 5000
	meterPruneBatches = 40
)

// MeterPruneConfig configures the periodic pruning of the accounts' old
// rate windows.
type MeterPruneConfig struct {
	Store *db.DB
	// Keep is how long a window is kept after it started. Defaults to
	// DefaultMeterPruneKeep; it must be longer than the rate window.
	Keep time.Duration
	// Interval defaults to DefaultMeterPruneInterval.
	Interval time.Duration
	Logger   *slog.Logger
	// Now returns the current time. Defaults to the store's clock (read
	// per run: metering stamps its windows with it, and tests pin it).
	Now func() time.Time
}

func (c *MeterPruneConfig) setDefaults() {
	if c.Keep <= 0 {
		c.Keep = DefaultMeterPruneKeep
	}
	if c.Interval <= 0 {
		c.Interval = DefaultMeterPruneInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		store := c.Store
		c.Now = func() time.Time {
			if store != nil && store.Now != nil {
				return store.Now()
			}
			return time.Now()
		}
	}
}

// MeterPruneArgs are the River job arguments of the periodic pruning of
// old rate windows.
type MeterPruneArgs struct{}

// Kind implements river.JobArgs.
func (MeterPruneArgs) Kind() string { return "meter_prune" }

// MeterPruneWorker deletes the accounts' rate windows that started more
// than Keep ago (db.PruneAccountRateWindows).
type MeterPruneWorker struct {
	river.WorkerDefaults[MeterPruneArgs]
	cfg MeterPruneConfig
}

// NewMeterPruneWorker returns the worker with cfg's defaults applied.
func NewMeterPruneWorker(cfg MeterPruneConfig) *MeterPruneWorker {
	cfg.setDefaults()
	return &MeterPruneWorker{cfg: cfg}
}

// Work implements river.Worker.
func (w *MeterPruneWorker) Work(ctx context.Context, _ *river.Job[MeterPruneArgs]) error {
	n, err := w.cfg.Store.PruneAccountRateWindows(ctx, w.cfg.Now().Add(-w.cfg.Keep), meterPruneBatch, meterPruneBatches)
	if err != nil {
		return err
	}
	if n > 0 {
		w.cfg.Logger.Debug("pruned old rate windows", slog.Int64("rows", n))
	}
	return nil
}

// MeterPruneRegistration registers the pruning worker and its periodic job
// (every Interval, also run on start).
func MeterPruneRegistration(cfg MeterPruneConfig) Registration {
	w := NewMeterPruneWorker(cfg)
	return func(workers *river.Workers, rc *river.Config) error {
		if err := river.AddWorkerSafely[MeterPruneArgs](workers, w); err != nil {
			return fmt.Errorf("error adding rate window pruning worker: %w", err)
		}
		rc.PeriodicJobs = append(rc.PeriodicJobs, river.NewPeriodicJob(
			river.PeriodicInterval(w.cfg.Interval),
			func() (river.JobArgs, *river.InsertOpts) { return MeterPruneArgs{}, nil },
			&river.PeriodicJobOpts{ID: "meter_prune", RunOnStart: true},
		))
		return nil
	}
}
