package observe

import (
	"context"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
)

// GraphQLMetrics is a gqlgen handler extension that counts operations by
// type and outcome and records their complexity. Add it to the server with
// srv.Use(observe.NewGraphQLMetrics()). Complexity is gqlgen's (the schema's
// complexity functions, 1 per field by default), computed once per
// operation.
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

func (m *GraphQLMetrics) complexity(ctx context.Context, opCtx *graphql.OperationContext) int {
	if m.schema == nil {
		return 0
	}
	return complexity.Calculate(ctx, m.schema, opCtx.Operation, opCtx.Variables)
}
