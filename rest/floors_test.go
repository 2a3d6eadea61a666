package rest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/graph"
)

// TestFieldFloors: every graph route gives the field its price is for a
// floor at the route's credits, and every priced route its price, so no
// route's price can go missing from /graphql's.
func TestFieldFloors(t *testing.T) {
	t.Parallel()
	rt, err := New(Config{Executor: nopExecutor{}, Schema: graph.NewExecutableSchema(graph.Config{}).Schema()})
	require.NoError(t, err)
	byRoute := map[string]string{}
	for _, f := range rt.FieldFloors() {
		byRoute[f.Route] = f.Field
		t.Logf("%-45s %-30s %d credits, priced %t", f.Route, f.Field, f.Credits, f.Pricing != nil)
	}
	for _, r := range rt.Routes() {
		if r.Operation == "" || r.Handler != nil {
			continue
		}
		field, ok := byRoute[r.Method+" "+r.Path]
		require.True(t, ok, "%s %s has no floor", r.Method, r.Path)
		require.NotEmpty(t, field)
	}
	require.Equal(t, "Query.searchEvents", byRoute["GET /v1/search"])
	require.Equal(t, "Entity.events", byRoute["GET /v1/signal/byOrganizationId"])
	require.Equal(t, "Query.events", byRoute["GET /v1/latest"])
}
