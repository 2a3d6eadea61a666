package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel/db"
)

// replicaRerun runs a /graphql query again, once, from the start, when it
// answered with errors while a replica failed under it: the reader takes a
// statement that fails before its first row to the primary by itself, but
// not one whose replica failed after rows had begun (stopped while a large
// result streamed), whose rows were the resolver's already. The request
// then reads the primary (db.ReplicaFailed) and the query runs again with
// fresh loaders; the failed attempt's response is dropped. The operation
// was priced and charged when its context was created, which a rerun does
// not repeat; the metrics count the dropped attempt as an operation with
// errors. Executor.Run does the same for the /v1 facade's operations.
type replicaRerun struct{ e *Executor }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = replicaRerun{}

// ExtensionName implements graphql.HandlerExtension.
func (replicaRerun) ExtensionName() string { return "ReplicaRerun" }

// Validate implements graphql.HandlerExtension.
func (replicaRerun) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation implements graphql.OperationInterceptor.
func (x replicaRerun) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	h := next(ctx)
	if op := graphql.GetOperationContext(ctx).Operation; op == nil || op.Operation != ast.Query {
		return h
	}
	again := false
	return func(rctx context.Context) *graphql.Response {
		resp := h(rctx)
		if again || resp == nil || len(resp.Errors) == 0 || rctx.Err() != nil || !db.ReplicaFailed(rctx) {
			return resp
		}
		again = true
		fresh := NewLoaders(x.e.store)
		return next(WithLoaders(ctx, fresh))(WithLoaders(rctx, fresh))
	}
}
