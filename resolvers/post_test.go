package resolvers

import (
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestPostTransportWritesAsJSONMarshal: the POST transport's response
// writer makes the bytes json.Marshal makes of the response (data that is
// compact and HTML-escaped already, as the executor writes it), for data,
// errors and extensions present or not, and falls back to json.Marshal for
// the parts of a deferred response.
func TestPostTransportWritesAsJSONMarshal(t *testing.T) {
	t.Parallel()
	yes := true
	for _, resp := range []*graphql.Response{
		{Data: json.RawMessage(`{"a":[1,{"b":"\u003cx\u003e"}]}`)},
		{},
		{Errors: gqlerror.List{{Message: "<boom> & co", Path: ast.Path{ast.PathName("a"), ast.PathIndex(1)},
			Extensions: map[string]any{"code": "invalid"}}}, Data: json.RawMessage(`null`)},
		{Errors: gqlerror.List{{Message: "x"}, {Message: "y"}}},
		{Data: json.RawMessage(`{}`), Extensions: map[string]any{"cost": 3, "z": "<a>"}},
		{Data: json.RawMessage(`{}`), Label: "l", Path: ast.Path{ast.PathName("p")}, HasNext: &yes},
		nil,
	} {
		want, err := json.Marshal(resp)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendResponse(nil, resp)))
	}
}
