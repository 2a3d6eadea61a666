package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

// TestExecStartsFromTheLastSize: a run of an operation on /graphql's entry
// point starts its buffer as large as the operation's last data (and a
// sixteenth), so it is not doubled its way there; the hint is bounded.
func TestExecStartsFromTheLastSize(t *testing.T) {
	t.Parallel()
	// No resolvers: the document asks for none.
	s := &FastSchema{executableSchema: NewExecutableSchema(Config{}).(*executableSchema), plans: newPlanCache(4)}
	s.fast.Store(true)
	run := func() *graphql.Response {
		opCtx := opContext(t, `{ a: __typename b: __typename c: __typename }`, nil)
		ctx := graphql.WithOperationContext(context.Background(), opCtx)
		ctx = graphql.WithResponseContext(ctx, graphql.DefaultErrorPresenter, graphql.DefaultRecover)
		return s.Exec(ctx)(ctx)
	}
	first := run()
	require.JSONEq(t, `{"a":"Query","b":"Query","c":"Query"}`, string(first.Data))
	n := len(first.Data)
	second := run()
	require.Equal(t, string(first.Data), string(second.Data))
	require.Equal(t, n+n/16, cap(second.Data), "the second run starts from the first's size")

	op := s.plans.get(s.Schema(), opContext(t, `{ a: __typename b: __typename c: __typename }`, nil), false)
	require.NotNil(t, op)
	op.noteSize(10 << 20)
	require.Equal(t, maxSizeHint, op.sizeHint(), "a large response does not size every later run")
}
