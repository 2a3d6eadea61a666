// Package jobs holds the River workers: the event poller, webhook delivery,
// export fulfillment and the pruning of old rate windows, one file per job
// kind.
package jobs

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/cryptointel/cryptointel/db"
)

// Registration adds workers and periodic jobs to a River configuration.
// Each job kind provides one.
type Registration func(workers *river.Workers, cfg *river.Config) error

// NewClient builds the River client over the service's pgx pool with every
// registration applied. It starts nothing; call Start on the result.
func NewClient(store *db.DB, logger *slog.Logger, regs ...Registration) (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	cfg := &river.Config{
		Logger:  logger,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
		Workers: workers,
		// A worker killed mid-job is rescued and retried within about two
		// minutes.
		RescueStuckJobsAfter: 90 * time.Second,
		JobTimeout:           60 * time.Second,
	}
	for _, reg := range regs {
		if err := reg(workers, cfg); err != nil {
			return nil, fmt.Errorf("error registering workers: %w", err)
		}
	}
	client, err := river.NewClient(riverpgxv5.New(store.Pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("error creating river client: %w", err)
	}
	return client, nil
}
