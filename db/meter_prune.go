package db

import (
	"context"
	"fmt"
	"time"
)

// pruneRateWindowsSQL deletes up to $2 of the accounts' rate windows that
// started before $1: each account's oldest, found through the primary key
// (account_id, window_start) from the accounts and deleted by their row
// addresses, so the statement reads the accounts and the rows it deletes,
// not the table (no index leads with window_start: one would be written for
// every new window). Metering never writes a window that old, so the
// addresses cannot change under the statement.
const pruneRateWindowsSQL = `DELETE FROM account_rate_windows
WHERE ctid = ANY (ARRAY(
	SELECT o.ctid
	FROM accounts a
	CROSS JOIN LATERAL (
		SELECT r.ctid FROM account_rate_windows r
		WHERE r.account_id = a.id AND r.window_start < $1
		ORDER BY r.window_start
		LIMIT $2) o
	LIMIT $2))`

// PruneAccountRateWindows deletes the accounts' rate windows that started
// before before, batch rows a statement (each its own transaction, so no
// long transaction holds back vacuum), at most maxBatches statements; it
// returns how many rows it deleted. Metering reads and writes only the
// current window of each account, so a window older than the longest rate
// window is never read again; without pruning the table gains a row per
// active account per window, on pages metering leaves nine tenths free
// (migration 026).
func (d *DB) PruneAccountRateWindows(ctx context.Context, before time.Time, batch, maxBatches int) (int64, error) {
	if batch <= 0 || maxBatches <= 0 {
		return 0, fmt.Errorf("error pruning rate windows: batch %d and batches %d must be positive", batch, maxBatches)
	}
	var total int64
	for range maxBatches {
		tag, err := d.Pool.Exec(ctx, pruneRateWindowsSQL, before, batch)
		if err != nil {
			return total, fmt.Errorf("error pruning rate windows: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			break
		}
	}
	return total, nil
}
