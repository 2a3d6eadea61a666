package resolvers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/graph"
)

// refuseMarked refuses every operation whose document holds "#refuse",
// as the access layer's charge refuses one (a key over its window).
type refuseMarked struct{}

func (refuseMarked) ExtensionName() string                   { return "RefuseMarked" }
func (refuseMarked) Validate(graphql.ExecutableSchema) error { return nil }
func (refuseMarked) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if strings.Contains(opCtx.RawQuery, "#refuse") {
		return gqlerror.Errorf("refused")
	}
	return nil
}

// TestOnlyAdmittedSmallDocumentsAreCached: the parsed-document cache keeps
// a document once its operation was admitted, never one of a refused
// operation, nor one over graph.MaxCachedQueryBytes.
func TestOnlyAdmittedSmallDocumentsAreCached(t *testing.T) {
	t.Parallel()
	e := NewExecutor(Config{Store: dbtest.New(t), CursorSecret: "test-secret", Extensions: []graphql.HandlerExtension{refuseMarked{}}})
	post := func(query string) {
		body, _ := json.Marshal(map[string]string{"query": query})
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		e.ServeHTTP(httptest.NewRecorder(), req)
	}
	cached := func(query string) bool {
		_, ok := e.docs.Get(context.Background(), query)
		return ok
	}
	refused := "{ __typename } #refuse"
	post(refused)
	require.False(t, cached(refused), "a refused operation's document is not kept")

	admitted := "{ __typename }"
	post(admitted)
	require.True(t, cached(admitted))

	large := "# " + strings.Repeat("x", graph.MaxCachedQueryBytes) + "\n{ __typename }"
	post(large)
	require.False(t, cached(large), "a document over the bound is not kept")
}
