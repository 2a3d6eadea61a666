package graph

import (
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// opContext parses and validates query against the schema, as the
// executor's caller does before planning.
func opContext(t *testing.T, query string, vars map[string]any) *graphql.OperationContext {
	t.Helper()
	schema := NewExecutableSchema(Config{}).Schema()
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	require.NoError(t, err)
	require.Empty(t, validator.Validate(schema, doc))
	return &graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: vars}
}

// keys lists a plan's response keys with what it notes of each.
func keys(pl *plan) map[string][3]any {
	out := map[string][3]any{}
	for i, f := range pl.fields {
		same := ""
		if j := pl.same[i]; j >= 0 {
			same = pl.fields[j].Alias
		}
		out[f.Alias] = [3]any{same, pl.src[i] >= 0, pl.marks[i]}
	}
	return out
}

// TestPlanRepeatsAndMarks: a field repeated under another key with the
// same arguments and selection is written once and copied (not when the
// arguments or the selection differ, nor when marks lie inside it), and
// the marks follow the rule: members reached without crossing a list, and
// a root list's elements and their members.
func TestPlanRepeatsAndMarks(t *testing.T) {
	t.Parallel()
	schema := NewExecutableSchema(Config{}).Schema()
	opCtx := opContext(t, `query($legacy: Boolean! = true) {
		events(first: 2) { limit nodes {
			id summary owners { id } evidence { id }
			globalSummary: summary @include(if: $legacy)
			eventOwner: owners @include(if: $legacy) { id }
			posts: evidence { id url }
		} }
		topSignals(first: 1) { id owners { id } signal: significance significance }
		entity(id: 1) { id a: relationships(first: 1) { direction } b: relationships(first: 2) { direction } }
	}`, map[string]any{"legacy": true})
	op := newPlanCache(4).get(schema, opCtx, false)
	require.NotNil(t, op)
	root := op.root
	require.Equal(t, map[string][3]any{
		"events": {"", false, "events"}, "topSignals": {"", false, "topSignals"}, "entity": {"", false, "entity"},
	}, keys(root))
	events := root.kids[0]
	require.Equal(t, map[string][3]any{"limit": {"", false, "events.limit"}, "nodes": {"", false, "events.nodes"}}, keys(events))
	require.Equal(t, map[string][3]any{
		"id": {"", false, ""}, "summary": {"", true, ""}, "owners": {"", true, ""}, "evidence": {"", false, ""},
		"globalSummary": {"summary", false, ""}, "eventOwner": {"owners", false, ""},
		"posts": {"", false, ""}, // another selection: resolved again
	}, keys(events.kids[1]))
	top := root.kids[1]
	require.Equal(t, "topSignals[]", top.self)
	require.Equal(t, map[string][3]any{
		"id": {"", false, "topSignals[].id"}, "owners": {"", false, "topSignals[].owners"},
		"signal": {"", true, "topSignals[].signal"}, "significance": {"signal", false, "topSignals[].significance"},
	}, keys(top))
	require.Empty(t, top.kids[1].marks[0], "no marks past a second list")
	entity := root.kids[2]
	require.Equal(t, -1, entity.same[2], "other arguments: resolved again")
	require.Equal(t, "entity.a", entity.marks[1])
	require.Equal(t, 5, op.nargs, "argument slots: events, topSignals, entity and its two relationships")
}

// TestPlanCache: a document is planned once per operation and per value of
// the variables its conditions read; other variables share the plan.
func TestPlanCache(t *testing.T) {
	t.Parallel()
	schema := NewExecutableSchema(Config{}).Schema()
	c := newPlanCache(4)
	q := `query($legacy: Boolean!, $n: Int) { events(first: $n) { nodes { id signal: significance @include(if: $legacy) } } }`
	p1 := c.get(schema, opContext(t, q, map[string]any{"legacy": true, "n": 1}), false)
	p2 := c.get(schema, opContext(t, q, map[string]any{"legacy": true, "n": 5}), false)
	p3 := c.get(schema, opContext(t, q, map[string]any{"legacy": false, "n": 1}), false)
	require.Same(t, p1, p2)
	require.NotSame(t, p1, p3)
	require.Len(t, p1.root.kids[0].kids[0].fields, 2)
	require.Len(t, p3.root.kids[0].kids[0].fields, 1)
	// Introspection runs on gqlgen's executor: no plan.
	require.Nil(t, c.get(schema, opContext(t, `{ __schema { queryType { name } } }`, nil), false))
}
