package db

import (
	"context"
	"fmt"
)

// QueueDepth is how many River jobs of one queue sit in one unfinished
// state.
type QueueDepth struct {
	// Queue is the River queue name.
	Queue string
	// State is available, scheduled, retryable, running or pending.
	State string
	// Count is the number of jobs.
	Count int64
}

// UnfinishedJobStates are the River job states that QueueDepths counts:
// every state a job is in before it is completed, cancelled or discarded.
var UnfinishedJobStates = []string{"available", "pending", "retryable", "running", "scheduled"}

// QueueDepths counts River jobs that are not finished, by queue and state.
// It reads only unfinished rows through River's (state, queue, …) index, so
// it stays cheap however many finished jobs the table retains. The metrics
// collector calls it on every scrape.
func (d *DB) QueueDepths(ctx context.Context) ([]QueueDepth, error) {
	CountStatement(ctx)
	rows, err := d.Pool.Query(ctx, `
		SELECT queue, state::text, count(*)
		FROM river_job
		WHERE state = ANY($1::river_job_state[])
		GROUP BY queue, state`, UnfinishedJobStates)
	if err != nil {
		return nil, fmt.Errorf("error counting river jobs: %w", err)
	}
	defer rows.Close()
	var out []QueueDepth
	for rows.Next() {
		var q QueueDepth
		if err := rows.Scan(&q.Queue, &q.State, &q.Count); err != nil {
			return nil, fmt.Errorf("error scanning river job count: %w", err)
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error counting river jobs: %w", err)
	}
	return out, nil
}
