package db

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
)

// SignalHistoryByEntityIDs returns, in one statement, the per-day event
// counts of the given entities from the UTC day of from onwards. Days
// without events are absent. Ordered by entity id, then newest day first.
func SignalHistoryByEntityIDs(ctx context.Context, idb bun.IDB, entityIDs []int64, from time.Time) ([]cryptointel.HistoryDay, error) {
	out := []cryptointel.HistoryDay{}
	if len(entityIDs) == 0 {
		return out, nil
	}
	err := idb.NewRaw(`
		SELECT entity_id, to_char(day, 'YYYY-MM-DD') AS day,
		       count(*) FILTER (WHERE significance IS NOT NULL) AS signal_count,
		       count(*) AS radar_count
		FROM (
			SELECT DISTINCT ee.entity_id, ee.event_id, ee.significance,
			       date_trunc('day', ee.latest_evidence_at AT TIME ZONE 'UTC') AS day
			FROM event_entities ee
			WHERE ee.entity_id = ANY(?) AND ee.latest_evidence_at >= ?
		) d
		GROUP BY entity_id, day
		ORDER BY entity_id, day DESC`, pgArray(entityIDs), from.UTC().Truncate(cryptointel.Day)).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("error selecting signal history: %w", err)
	}
	return out, nil
}
