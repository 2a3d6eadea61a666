package access

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

// TestGraphQLCostLeavesTheResultAlone: the result GraphQLCost is given may
// be shared by every subscriber of an event, so the cost goes on a copy,
// and a result that already reports the operation's cost is passed on as it
// is.
func TestGraphQLCostLeavesTheResultAlone(t *testing.T) {
	c := &GraphQLCost{}
	costing := func(cost int) context.Context {
		opCtx := &graphql.OperationContext{}
		opCtx.Stats.SetExtension(costExtension, cost)
		return graphql.WithOperationContext(context.Background(), opCtx)
	}
	respond := func(ctx context.Context, resp *graphql.Response) *graphql.Response {
		return c.InterceptResponse(ctx, func(context.Context) *graphql.Response { return resp })
	}

	shared := &graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"cursor": "c1"}}
	got := respond(costing(7), shared)
	require.Equal(t, map[string]any{"cursor": "c1", "cost": 7}, got.Extensions)
	require.JSONEq(t, `{"a":1}`, string(got.Data))
	require.Equal(t, map[string]any{"cursor": "c1"}, shared.Extensions, "the result given is not modified")

	withCost := &graphql.Response{Extensions: map[string]any{"cursor": "c1", "cost": 7}}
	require.Same(t, withCost, respond(costing(7), withCost), "it already says the cost")
	other := respond(costing(9), withCost)
	require.Equal(t, map[string]any{"cursor": "c1", "cost": 9}, other.Extensions, "another operation's cost")
	require.Equal(t, map[string]any{"cursor": "c1", "cost": 7}, withCost.Extensions)

	query := respond(costing(3), &graphql.Response{Data: json.RawMessage(`{}`)})
	require.Equal(t, map[string]any{"cost": 3}, query.Extensions, "a query's result without extensions")

	cost, ok := OperationCost(costing(5))
	require.True(t, ok)
	require.Equal(t, 5, cost)
	_, ok = OperationCost(context.Background())
	require.False(t, ok, "no operation")
}
