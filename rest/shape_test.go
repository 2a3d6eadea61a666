package rest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph/jsonw"
)

// testShape compiles an operation written with the facade directives.
func testShape(t *testing.T, src string) (*shape, error) {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Name: "t.graphql", Input: src})
	require.NoError(t, err)
	return compileShape("t", doc, gqlSchema())
}

// writeShape writes the body of s from data, as the executor wrote it.
func writeShape(t *testing.T, s *shape, values map[string]any, data string) (string, error) {
	t.Helper()
	marks, err := jsonw.MarkData([]byte(data), 0)
	require.NoError(t, err)
	body, err := s.body(&Call{Values: values}, newData([]byte(data), marks), nil)
	return string(body), err
}

// TestShapeWritesTheOperationsKeys: each facade directive shapes the body
// as the operation says: flattened members, a group, echoed parameters,
// an @include left out, a split list with its rebuilt elements.
func TestShapeWritesTheOperationsKeys(t *testing.T) {
	t.Parallel()
	s, err := testShape(t, `query T($id: Int!, $name: String!, $radar: Boolean!) {
  entity(id: $id) @notFound(resource: "Entity") @flatten {
    ... @group(key: "summary") {
      id
    }
    ... @group(key: "names") {
      canonical: canonicalName
      displayName
    }
    limit @param
    aliases @include(if: $radar)
  }
  top: resolveEntities(name: $name) @split(rest: "others") {
    entity @flatten {
      id
    }
    matchRank
  }
}`)
	require.NoError(t, err)
	body, err := writeShape(t, s, map[string]any{"limit": 7},
		`{"entity":{"canonical":"Ethereum","displayName":"Ether"},"top":[{"entity":{"id":1},"matchRank":0},{"entity":{"id":2},"matchRank":3}]}`)
	require.NoError(t, err)
	require.Equal(t, `{"summary":{"id":null},"names":{"canonical":"Ethereum","displayName":"Ether"},"limit":7,"top":{"id":1,"matchRank":0},"others":[{"id":2,"matchRank":3}]}`+"\n", body)

	// A null resource is the route's 404, and so is an empty split list.
	_, err = writeShape(t, s, nil, `{"entity":null,"top":[{"entity":{"id":1},"matchRank":0}]}`)
	var ce *cryptointel.Error
	require.True(t, errors.As(err, &ce))
	require.Equal(t, cryptointel.ENOTFOUND, ce.Code)
	require.Equal(t, cryptointel.MsgEntityNotFound, ce.Message)

	s, err = testShape(t, `query T($name: String!) { data: resolveEntities(name: $name) @split(rest: "matches") @notFound(resource: "Organization") { matchRank } }`)
	require.NoError(t, err)
	_, err = writeShape(t, s, nil, `{"data":[]}`)
	require.True(t, errors.As(err, &ce))
	require.Equal(t, cryptointel.MsgOrganizationNotFound, ce.Message)
}

// TestShapeRefusesWhatItCannotWrite: a shape the writer cannot honour
// fails when the table is built, not on a request.
func TestShapeRefusesWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"unknown resource":  `query T($id: Int!) { entity(id: $id) @notFound(resource: "Planet") { id } }`,
		"flattened list":    `query T { categories @flatten { name } }`,
		"rebuilt deep list": `query T($id: Int!) { entity(id: $id) { relationships { relatedEntity @flatten { id } } } }`,
		"unknown field":     `query T { nope }`,
		"group on a field":  `query T($id: Int!) { entity(id: $id) { id @group(key: "x") } }`,
	} {
		_, err := testShape(t, src)
		require.Error(t, err, name)
	}
}

// TestDerivedSchemaFollowsTheSelection: the response schema is the
// selection typed by the GraphQL schema: nullability, @nonNull, optional
// @include members, descriptions from comments, parameters by their
// declaration, fragments as components.
func TestDerivedSchemaFollowsTheSelection(t *testing.T) {
	t.Parallel()
	s, err := testShape(t, `query T($id: Int!, $radar: Boolean!) {
  organization(id: $id) @notFound(resource: "Organization") @flatten {
    ...OrganizationFields @group(key: "data")
    limit @param
    sort @param
    # The radar events.
    radar @include(if: $radar) {
      signal
    }
  }
}
fragment OrganizationFields on Organization {
  id
  label
}`)
	require.NoError(t, err)
	dv := &deriver{schema: gqlSchema(), components: schema{}, fixed: schema{}}
	got := dv.object(s, s.members, []Param{{Name: "limit", Type: TypeInteger}, {Name: "sort", Type: TypeString, Enum: []string{"a", "b"}}})
	require.NoError(t, dv.err)
	require.Equal(t, obj(
		p("data", ref("Organization")),
		p("limit", integer()),
		p("sort", strEnum("a", "b")),
		optional("radar", describe(arr(obj(p("signal", nullNum()))), "The radar events."))), got)
	require.Equal(t, schema{"Organization": obj(p("id", integer()), p("label", str()))}, dv.components)
}

// TestMergeVariants: a route with a compact variant documents both: anyOf
// where they differ, the rest shared.
func TestMergeVariants(t *testing.T) {
	t.Parallel()
	full := obj(p("data", obj(p("organizations", arr(ref("A"))))))
	compact := obj(p("data", obj(p("organizations", arr(ref("B"))))))
	require.Equal(t, obj(p("data", obj(p("organizations", anyOf(arr(ref("A")), arr(ref("B"))))))), mergeVariants(full, compact))
	require.Equal(t, full, mergeVariants(full, full))
}
