package db_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// feedPlans is a database of the test's own on which the feeds'
// statements are planned.
type feedPlans struct {
	store *db.DB
	ctx   context.Context
	now   time.Time
}

// entEthereum is an entity id the plans filter by.
const entEthereum int64 = 1

func setupFeedPlans(t *testing.T) *feedPlans {
	t.Helper()
	return &feedPlans{store: dbtest.New(t), ctx: context.Background(), now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
}

// planConn is dbtest.PlanConn on b's database.
func planConn(t *testing.T, b *feedPlans) *pgxpool.Conn {
	t.Helper()
	return dbtest.PlanConn(t, b.ctx, b.store.Pool)
}

// explain is dbtest.Explain.
var explain = dbtest.Explain

// TestFeedPagesNeedNoSort checks that the feeds' pages in both orders are
// read from an index in their whole order, the window a condition of the
// index scan, whatever the plan's parameters: a page that had to sort
// read every event of the window's top significance values (10,400 rows
// for 25 at ten million events) and, planned generically, a sequential
// scan of the table.
func TestFeedPagesNeedNoSort(t *testing.T) {
	t.Parallel()
	b := setupFeedPlans(t)
	conn := planConn(t, b)
	since := b.now.Add(-24 * time.Hour)
	for i, c := range []struct {
		name  string
		f     db.EventFilter
		index string
	}{
		{"latest by significance", db.EventFilter{Since: since, Sort: db.SortSignificance, Limit: 25}, "events_significance_recency_idx"},
		{"top signals", db.EventFilter{Since: since, SignalOnly: true, Sort: db.SortSignificance, Limit: 10}, "events_significance_recency_idx"},
		{"latest by recency", db.EventFilter{Since: since, Sort: db.SortRecency, Limit: 25, Offset: 25}, "events_recency_idx"},
		{"a category by significance", db.EventFilter{Since: since, Category: "security", Sort: db.SortSignificance, Limit: 25}, "events_category_significance_idx"},
		{"a category by recency", db.EventFilter{Since: since, Category: "security", Sort: db.SortRecency, Limit: 25}, "events_category_idx"},
		{"an entity by significance", db.EventFilter{Since: since, EntityID: entEthereum, Sort: db.SortSignificance, Limit: 25}, "event_entities_entity_significance_idx"},
		{"an entity's signals", db.EventFilter{Since: since, EntityID: entEthereum, SignalOnly: true, Sort: db.SortSignificance, Limit: 25}, "event_entities_entity_significance_idx"},
		{"an entity by recency", db.EventFilter{Since: since, EntityID: entEthereum, Sort: db.SortRecency, Limit: 25}, "event_entities_entity_recency_idx"},
	} {
		st, err := db.ListEventsStatementForTest(c.f)
		require.NoError(t, err)
		// Prepared as the service's statements are, and planned as they
		// are: generically (plan_cache_mode), the window unknown.
		stmt := fmt.Sprintf("feed_plan_%d", i)
		_, err = conn.Exec(b.ctx, "PREPARE "+stmt+" AS "+st.SQL)
		require.NoError(t, err, c.name)
		lits := make([]string, len(st.Args))
		for j, a := range st.Args {
			switch v := a.(type) {
			case time.Time:
				lits[j] = "'" + v.Format(time.RFC3339Nano) + "'"
			case string:
				lits[j] = "'" + v + "'"
			case []int64:
				lits[j] = "'{" + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ","), "[]") + "}'"
			default:
				lits[j] = fmt.Sprint(v)
			}
		}
		text := explain(t, b.ctx, conn, "EXECUTE "+stmt+"("+strings.Join(lits, ", ")+")")
		require.Regexp(t, `Index Scan using `+c.index+` on (events e|event_entities ee)\s`, text, "%s:\n%s", c.name, text)
		require.Regexp(t, `Index Cond: .*latest_evidence_at >= \$\d`, text, "%s: the window bounds the scan:\n%s", c.name, text)
		if c.f.EntityID == 0 {
			require.NotContains(t, text, "Sort", "%s:\n%s", c.name, text)
		} else {
			// The entity's page is sorted once fetched (its rows only).
			require.NotContains(t, text, "Sort Key: ee.", "%s:\n%s", c.name, text)
		}
	}
}
