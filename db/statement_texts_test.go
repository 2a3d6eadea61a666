package db

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The kept texts are the texts their builders give.
func TestKeptStatementTextsAsBuilt(t *testing.T) {
	for _, long := range []bool{false, true} {
		for _, refs := range []bool{false, true} {
			sql := resolveFoldedTexts.Get([2]bool{long, refs}, func() string { return resolveFoldedSQL(long, refs) })
			require.Equal(t, resolveFoldedSQL(long, refs), sql)
		}
	}
	for _, c := range []EventChildren{{}, {Roles: true}, {Roles: true, Evidence: true, NoText: true, NoContent: true}} {
		page := "SELECT " + eventColumns + " FROM events e WHERE e.id = ANY($1)"
		require.Equal(t, buildFoldPage(page, "e.id", c), foldPage(page, "e.id", c))
		require.Equal(t, buildFoldPage(page, "e.id", c), foldPage(page, "e.id", c), "kept")
	}
	require.Equal(t, pageLayout.buildSelectList(pageRoleKind, roleRowColumns), pageLayout.selectList(pageRoleKind, roleRowColumns))

	// A brief's text is kept by the shape of its filter, never by a
	// value: each filter given with two sets of values gives the text
	// built for either, and the shapes give texts of their own.
	t1, t2 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	shapes := []func(v int) EntityEventFilter{
		func(v int) EntityEventFilter { return EntityEventFilter{Limit: 5 + v, Offset: v} },
		func(v int) EntityEventFilter { return EntityEventFilter{Limit: 5, Since: []time.Time{t1, t2}[v]} },
		func(v int) EntityEventFilter {
			return EntityEventFilter{Limit: 5, Category: []string{"hack", "listing"}[v]}
		},
		func(v int) EntityEventFilter {
			return EntityEventFilter{Limit: 5, ContentTypes: [][]string{{"news"}, {"news", "filing"}}[v]}
		},
		func(v int) EntityEventFilter { return EntityEventFilter{Limit: 5, Sort: SortSignificance, Since: t1} },
		func(v int) EntityEventFilter {
			return EntityEventFilter{Limit: 5, Before: &Keyset{At: []time.Time{t1, t2}[v], ID: int64(v + 1)}}
		},
	}
	ids := [][]int64{{101, 102}, {7}}
	seen := map[string]int{}
	for _, onePage := range []bool{false, true} {
		for _, c := range []EventChildren{{}, {Roles: true, Evidence: true}, {Roles: true, Evidence: true, NoText: true, NoContent: true}} {
			for i, shape := range shapes {
				var texts []string
				for v := range 2 {
					sql, args := briefsStatement(ids[v], shape(v), c, onePage)
					require.Equal(t, buildBriefs(ids[v], shape(v), c, onePage), sql, "shape %d, values %d", i, v)
					require.Equal(t, ids[v], args[0])
					texts = append(texts, sql)
				}
				require.Equal(t, texts[0], texts[1], "shape %d: one text for its values", i)
				seen[texts[0]]++
			}
		}
	}
	require.Len(t, seen, 2*3*len(shapes), "each shape, children read and pages read a text of its own")

	// An entity tree's text likewise, by its relationships' filter, its
	// events' filter (or none) and the children read.
	rels := []func(v int) RelationshipFilter{
		func(v int) RelationshipFilter { return RelationshipFilter{Limit: 5 + v, Offset: v} },
		func(v int) RelationshipFilter {
			return RelationshipFilter{Limit: 5, Type: []string{"investor", "partner"}[v]}
		},
		func(v int) RelationshipFilter { return RelationshipFilter{Limit: 5, Direction: "outbound"} },
	}
	evs := []func(v int) *EntityEventFilter{
		func(v int) *EntityEventFilter { return nil },
		func(v int) *EntityEventFilter { return &EntityEventFilter{Sort: SortRecency, Limit: 6 + v} },
		func(v int) *EntityEventFilter {
			return &EntityEventFilter{Sort: SortSignificance, Limit: 6, Since: []time.Time{t1, t2}[v]}
		},
	}
	seen = map[string]int{}
	for _, c := range []EventChildren{{Roles: true, Evidence: true}, {Roles: true, Evidence: true, Shown: 5}} {
		for i, rel := range rels {
			for j, ev := range evs {
				var texts []string
				for v := range 2 {
					sql, args := entityTreeStatement(ids[v], rel(v), ev(v), c)
					shape := treeShape{rel: relationshipsSQL(rel(v)), shift: len(rel(v).args(ids[v])) - 1, c: c}
					if e := ev(v); e != nil {
						shape.events, _ = entityEventsStatement([]int64{}, *e, EventChildren{})
					}
					require.Equal(t, buildEntityTree(shape, ev(v)), sql, "relationships %d, events %d, values %d", i, j, v)
					require.Equal(t, ids[v], args[0])
					texts = append(texts, sql)
				}
				require.Equal(t, texts[0], texts[1], "relationships %d, events %d: one text for its values", i, j)
				seen[texts[0]]++
			}
		}
	}
	require.Len(t, seen, 2*len(rels)*len(evs)-len(rels), "each shape a text of its own (without events, Shown changes nothing)")
}
