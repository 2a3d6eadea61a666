package observe

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"

	"github.com/cryptointel/cryptointel/graph/validation"
)

// GraphQLMetrics is a gqlgen handler extension that counts operations by
// type and outcome and records their complexity. Add it to the server with
// srv.Use(observe.NewGraphQLMetrics()). Complexity is gqlgen's (the schema's
// complexity functions, 1 per field by default): the one the complexity
// limit recorded, else computed once per operation.
type GraphQLMetrics struct {
	schema graphql.ExecutableSchema
}

var (
	_ graphql.HandlerExtension    = (*GraphQLMetrics)(nil)
	_ graphql.ResponseInterceptor = (*GraphQLMetrics)(nil)
)

// NewGraphQLMetrics returns the extension. Use one per gqlgen server.
func NewGraphQLMetrics() *GraphQLMetrics { return &GraphQLMetrics{} }

// ExtensionName implements graphql.HandlerExtension.
func (*GraphQLMetrics) ExtensionName() string { return "PrometheusMetrics" }

// Validate implements graphql.HandlerExtension; it keeps the schema for
// computing complexity.
func (m *GraphQLMetrics) Validate(schema graphql.ExecutableSchema) error {
	m.schema = schema
	return nil
}

// InterceptResponse implements graphql.ResponseInterceptor. It sees every
// response, including the errors of documents that fail to parse or
// validate (counted with operation "unknown").
func (m *GraphQLMetrics) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	op := "unknown"
	var opCtx *graphql.OperationContext
	if graphql.HasOperationContext(ctx) {
		opCtx = graphql.GetOperationContext(ctx)
		if opCtx.Operation != nil {
			op = string(opCtx.Operation.Operation)
		}
	}
	outcome := "ok"
	if len(resp.Errors) > 0 {
		outcome = "error"
	}
	graphqlOperations.WithLabelValues(op, outcome).Inc()
	if op != "unknown" {
		graphqlComplexity.WithLabelValues(op).Observe(float64(m.complexity(ctx, opCtx)))
	}
	return resp
}

// complexity is the operation's complexity as the complexity limit recorded
// it, else computed (linear in the document). An operation refused before
// validation completed has no fields annotated and counts 0.
func (m *GraphQLMetrics) complexity(ctx context.Context, opCtx *graphql.OperationContext) int {
	if stats, ok := opCtx.Stats.GetExtension("ComplexityLimit").(*extension.ComplexityStats); ok {
		return stats.Complexity
	}
	if m.schema == nil {
		return 0
	}
	return validation.Complexity(ctx, m.schema, opCtx.Operation, opCtx.Variables)
}
