package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
)

// TestEntityTreeReadsChildrenOfShownEventsOnly: a tree's events page reads
// one event more than it shows (to know whether another page follows);
// with EventChildren.Shown the children of that event are not read, and
// the children of the events shown are those of the whole read.
func TestEntityTreeReadsChildrenOfShownEventsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	_, err := demo.Seed(ctx, store, demo.Options{Events: 1000})
	require.NoError(t, err)
	rows, err := store.Pool.Query(ctx, `SELECT source_entity_id FROM relationships
		GROUP BY source_entity_id ORDER BY count(*) DESC, source_entity_id LIMIT 1`)
	require.NoError(t, err)
	root, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[int64])
	require.NoError(t, err)

	const shown = 2
	rf := db.RelationshipFilter{Limit: 5}
	ef := db.EntityEventFilter{Sort: db.SortRecency, Limit: shown + 1}
	all := db.EventChildren{Roles: true, Evidence: true}
	whole, err := db.EntityTreeFolded(ctx, store.Pool, []int64{root}, rf, &ef, all)
	require.NoError(t, err)
	lean := all
	lean.Shown = shown
	tree, err := db.EntityTreeFolded(ctx, store.Pool, []int64{root}, rf, &ef, lean)
	require.NoError(t, err)
	require.Equal(t, whole.Events, tree.Events, "the events are read as before, one more than shown")

	inPage := map[int64]bool{}
	perEntity := map[int64]int{}
	extra := 0
	for _, row := range tree.Events {
		if perEntity[row.EntityID] < shown {
			inPage[row.Event.ID] = true
		} else {
			extra++
		}
		perEntity[row.EntityID]++
	}
	require.Positive(t, extra, "some related entity has more events than its page shows")
	hidden := 0
	for id := range whole.Children.Roles {
		if inPage[id] {
			require.Equal(t, whole.Children.Roles[id], tree.Children.Roles[id])
			require.Equal(t, whole.Children.Evidence[id], tree.Children.Evidence[id])
		} else {
			hidden++
		}
	}
	require.Positive(t, hidden, "the whole read has children of events no page shows")
	for id := range tree.Children.Roles {
		require.True(t, inPage[id], "roles of event %d, which no page shows", id)
	}
	for id := range tree.Children.Evidence {
		require.True(t, inPage[id], "evidence of event %d, which no page shows", id)
	}
}
