package graph

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanElements: the plan asked for the spans of every list's elements
// records each object element of a list the marks leave out (element),
// at any depth, and marks nothing more; it is cached beside the usual
// plan, which it leaves as it was.
func TestPlanElements(t *testing.T) {
	t.Parallel()
	schema := NewExecutableSchema(Config{}).Schema()
	c := newPlanCache(4)
	q := `query($legacy: Boolean! = true) {
		events(first: 2) { limit nodes {
			id bullets owners { id label } evidence { url }
			eventOwner: owners @include(if: $legacy) { id label }
		} }
		topSignals(first: 1) { id owners { id } }
	}`
	vars := map[string]any{"legacy": true}
	usual, elements := c.get(schema, opContext(t, q, vars), false), c.get(schema, opContext(t, q, vars), true)
	require.NotSame(t, usual, elements)
	require.Same(t, elements, c.get(schema, opContext(t, q, vars), true))
	require.Same(t, usual, c.get(schema, opContext(t, q, vars), false))

	nodes := elements.root.kids[0].kids[1]
	require.True(t, nodes.element, "an element of a list below a field")
	require.Equal(t, "events.nodes[]", nodes.self)
	require.Equal(t, map[string][3]any{
		"id": {"", false, ""}, "bullets": {"", false, ""}, "owners": {"", false, ""}, "evidence": {"", false, ""},
		// An element inside: resolved again rather than copied, so that
		// its elements are recorded.
		"eventOwner": {"", false, ""},
	}, keys(nodes), "no member marked")
	for _, k := range []int{2, 3, 4} {
		require.True(t, nodes.kids[k].element, "an element of a list inside an element")
		require.Empty(t, nodes.kids[k].marks[0])
	}
	top := elements.root.kids[1]
	require.False(t, top.element, "a root list's elements are marked")
	require.Equal(t, "topSignals[]", top.self)
	require.Equal(t, "topSignals[].id", top.marks[0])
	require.True(t, top.kids[1].element)
	require.False(t, elements.root.kids[0].element)

	// The usual plan: nothing below the nested list is recorded, and the
	// repeated selection is copied.
	unmarked := usual.root.kids[0].kids[1]
	require.False(t, unmarked.element)
	require.Empty(t, unmarked.self)
	require.Equal(t, map[string][3]any{
		"id": {"", false, ""}, "bullets": {"", false, ""}, "owners": {"", true, ""}, "evidence": {"", false, ""},
		"eventOwner": {"owners", false, ""},
	}, keys(unmarked))
	require.Empty(t, unmarked.kids[2].self)
	require.Empty(t, usual.root.kids[1].kids[1].self)
}
