package db_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestContentPagesReadEachTypeInOrder: an entity's research (three
// content types) is read one type at a time, each in order from
// event_entities_entity_content_idx, and merged — not every event of the
// window fetched and sorted — and its pages are the pages of the plain
// condition (content_type = ANY), for every window, size, offset and
// keyset, for the busiest entities.
func TestContentPagesReadEachTypeInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := demoStore(t, 3000)
	rows, err := store.Pool.Query(ctx, `SELECT entity_id FROM event_entities WHERE content_type IS NOT NULL
		GROUP BY entity_id ORDER BY count(*) DESC, entity_id LIMIT 4`)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Len(t, ids, 4)
	var newest time.Time
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT max(latest_evidence_at) FROM events`).Scan(&newest))

	research := []string{cryptointel.ContentResearch, cryptointel.ContentCommentary, cryptointel.ContentAnalysis}
	// want is the page of the plain condition, each entity's in turn.
	want := func(f db.EntityEventFilter) []string {
		var out []string
		for _, id := range ids {
			var before any
			if f.Before != nil {
				before = f.Before.At
			}
			var beforeID int64
			if f.Before != nil {
				beforeID = f.Before.ID
			}
			rows, err := store.Pool.Query(ctx, `SELECT ee.event_id FROM event_entities ee
				WHERE ee.entity_id = $1 AND ee.content_type = ANY($2)
				  AND ($3::timestamptz IS NULL OR ee.latest_evidence_at >= $3)
				  AND ($4::timestamptz IS NULL OR (ee.latest_evidence_at, ee.event_id) < ($4, $5))
				  AND (ee.role = 'owner' OR NOT EXISTS (SELECT 1 FROM event_entities o
				      WHERE o.event_id = ee.event_id AND o.role = 'owner' AND o.entity_id = ee.entity_id))
				ORDER BY ee.latest_evidence_at DESC, ee.event_id DESC LIMIT $6 OFFSET $7`,
				id, f.ContentTypes, nullTime(f.Since), before, beforeID, f.Limit, f.Offset)
			require.NoError(t, err)
			evs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			require.NoError(t, err)
			for _, e := range evs {
				out = append(out, fmt.Sprintf("%d:%d", id, e))
			}
		}
		return out
	}
	checked := 0
	for _, types := range [][]string{research, {cryptointel.ContentMedia}, {cryptointel.ContentResearch, cryptointel.ContentMedia}} {
		for _, since := range []time.Time{{}, newest.Add(-7 * 24 * time.Hour)} {
			for _, page := range [][2]int{{5, 0}, {26, 0}, {3, 7}} {
				for _, before := range []*db.Keyset{nil, {At: newest.Add(-2 * 24 * time.Hour), ID: 1 << 40}} {
					f := db.EntityEventFilter{ContentTypes: types, Since: since, Sort: db.SortRecency, Limit: page[0], Offset: page[1], Before: before}
					got, err := db.EventsByEntityIDs(ctx, store.Pool, ids, f)
					require.NoError(t, err)
					var gotIDs []string
					for _, e := range got {
						gotIDs = append(gotIDs, fmt.Sprintf("%d:%d", e.EntityID, e.Event.ID))
					}
					w := want(f)
					require.Equal(t, w, gotIDs, "%v since %v page %v before %v", types, since, page, before)
					checked += len(w)
				}
			}
		}
	}
	require.Greater(t, checked, 200, "the pages hold events")

	// Planned generically, as the service plans it: each type's rows in
	// the index's order.
	conn := dbtest.PlanConn(t, ctx, store.Pool)
	_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	st := db.EntityEventsStatementForTest(ids[:1], db.EntityEventFilter{ContentTypes: research, Since: newest.Add(-30 * 24 * time.Hour),
		Sort: db.SortRecency, Limit: 26})
	_, err = conn.Exec(ctx, "PREPARE research_page AS "+st.SQL)
	require.NoError(t, err)
	text := dbtest.Explain(t, ctx, conn, fmt.Sprintf("EXECUTE research_page('{%d}', '%s', '{%s}', 26, 0)",
		ids[0], newest.Add(-30*24*time.Hour).Format(time.RFC3339Nano), strings.Join(research, ",")))
	// Each type's scan stops at the page's end (a Limit over it); only
	// the merge of those few rows is sorted.
	require.Regexp(t, `Limit [^\n]*\n\s*->  Index Scan using event_entities_entity_content_idx on event_entities ee\s`, text, text)
	require.NotContains(t, text, "Bitmap Heap Scan on event_entities", text)
}

// nullTime is t, or SQL NULL for the zero time.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}
