package db_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
)

// TestRelationshipPagesReadOnlyTheirEdges: each entity's page of
// relationships, read from each direction's first offset + limit edges in
// index order, is the page of the whole ordering of its edges (outbound
// first, then type, then the other end), for pages before, across and
// after the outbound/inbound boundary, with and without a type or a
// direction, for entities with many edges and one with none.
func TestRelationshipPagesReadOnlyTheirEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	_, err := demo.Seed(ctx, store, demo.Options{Events: 300})
	require.NoError(t, err)
	rows, err := store.Pool.Query(ctx, `
		SELECT id FROM (
			SELECT e.id, (SELECT count(*) FROM relationships r WHERE r.source_entity_id = e.id) AS o,
			       (SELECT count(*) FROM relationships r WHERE r.target_entity_id = e.id) AS i
			FROM entities e) c
		WHERE (o >= 2 AND i >= 2) OR (o = 0 AND i = 0)
		ORDER BY o + i DESC, id LIMIT 6`)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(ids), 3)
	var typ string
	require.NoError(t, store.Pool.QueryRow(ctx,
		`SELECT relationship_type FROM relationships GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`).Scan(&typ))

	// The reference: every edge of each entity numbered in the page order.
	want := func(f db.RelationshipFilter) []string {
		cond := ""
		if f.Type != "" {
			cond = " AND x.relationship_type = '" + f.Type + "'"
		}
		if f.Direction != "" {
			cond += " AND x.direction = '" + f.Direction + "'"
		}
		rows, err := store.Pool.Query(ctx, `
			SELECT y.entity_id, y.direction, y.relationship_type, y.related_entity_id FROM (
				SELECT x.*, row_number() OVER (PARTITION BY x.entity_id
					ORDER BY x.direction DESC, x.relationship_type, x.related_entity_id) AS rn
				FROM (
					SELECT r.source_entity_id AS entity_id, 'outbound' AS direction, r.target_entity_id AS related_entity_id, r.relationship_type
					FROM relationships r WHERE r.source_entity_id = ANY($1)
					UNION ALL
					SELECT r.target_entity_id, 'inbound', r.source_entity_id, r.relationship_type
					FROM relationships r WHERE r.target_entity_id = ANY($1)) x
				WHERE true`+cond+`) y
			WHERE y.rn > $2 AND y.rn <= $2 + $3
			ORDER BY y.entity_id, y.rn`, ids, f.Offset, f.Limit)
		require.NoError(t, err)
		var out []string
		for rows.Next() {
			var e, rel int64
			var dir, ty string
			require.NoError(t, rows.Scan(&e, &dir, &ty, &rel))
			out = append(out, fmt.Sprint(e, dir, ty, rel))
		}
		require.NoError(t, rows.Err())
		return out
	}
	pages := 0
	for _, dir := range []string{"", db.DirectionOutbound, db.DirectionInbound} {
		for _, ty := range []string{"", typ} {
			for _, off := range []int{0, 1, 2, 3, 5, 8, 40} {
				for _, lim := range []int{1, 2, 3, 5, 50} {
					f := db.RelationshipFilter{Limit: lim, Offset: off, Type: ty, Direction: dir}
					got, err := db.RelationshipsByEntityIDs(ctx, store.Pool, append(ids, ids[0]), f)
					require.NoError(t, err)
					var gs []string
					for _, r := range got {
						require.Equal(t, r.RelatedEntityID, r.Related.ID)
						gs = append(gs, fmt.Sprint(r.EntityID, r.Direction, r.RelationshipType, r.RelatedEntityID))
					}
					require.Equal(t, want(f), gs, "%+v", f)
					if len(gs) > 0 {
						pages++
					}
				}
			}
		}
	}
	require.Greater(t, pages, 50)
}
