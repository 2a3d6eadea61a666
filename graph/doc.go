// Package graph is the executable GraphQL schema of schema.graphqls and
// the executor every query runs on. `go generate ./...` writes, from
// schema.graphqls and gqlgen.yml (the generator is graph/gen, which runs
// gqlgen with a plugin of its own):
//
//   - generated.go and models_gen.go: gqlgen's executor and the models not
//     bound to domain types; gqlgen's executor serves subscriptions,
//     introspection and @defer, and is the reference the differential test
//     compares with;
//   - fastexec_gen.go: the executor's per-type code, resolving the fields
//     of a plan one after another into one buffer (jsonw) with the same
//     resolvers, argument coercion, directives and errors.
//
// The hand-written files are this one, plan.go (a document's plan, built
// once per operation and cached), fastexec.go (the runtime: running a plan
// for /graphql or for an in-process surface, paths, errors) and the scalar
// marshalers in graph/scalar. Generated files are never edited by hand.
//
//go:generate go run ./gen
package graph
