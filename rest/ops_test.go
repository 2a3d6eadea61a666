package rest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/graph"
)

// Every embedded operation assembles, parses and validates against the
// schema the GraphQL core is generated from, and every graph route of the
// table names one of them.
func TestOperationsValidateAgainstSchema(t *testing.T) {
	t.Parallel()
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	ops, err := loadOperations(schema)
	require.NoError(t, err)
	used := map[string]bool{}
	for _, r := range append(Routes(), (&Router{}).streamRoute()) {
		if r.Handler != nil && r.Operation == "" {
			continue
		}
		require.Contains(t, ops, r.Operation, r.Path)
		used[r.Operation] = true
	}
	for _, compact := range []string{"brief_compact", "briefs_compact"} {
		require.Contains(t, ops, compact)
		used[compact] = true
	}
	for name := range ops {
		require.True(t, used[name], "operation %s is embedded but no route runs it", name)
	}
}
