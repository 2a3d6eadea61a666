// Command gen is the code generator behind `go generate` for package graph
// (its go:generate directive is in rest/ops/ops.go). It runs gqlgen on gqlgen.yml exactly as
// `gqlgen generate` does, with one plugin added that writes, from the same
// schema and bindings:
//
//   - graph/fastexec_gen.go: an executor for query operations, one function
//     per object type and per value shape, that resolves fields one after
//     another in document order and appends the response to one buffer
//     (graph/jsonw): no field context, goroutine or marshaler per field. It
//     calls the same resolvers, argument coercion and directives as gqlgen's
//     generated.go and reproduces its bytes, nulls and errors.
//   - graph/ops_gen.go: the fixed operations of the /v1 facade
//     (rest/ops/*.graphql), compiled: each operation's selection set is
//     walked here, once, and written out as straight-line calls.
//
// Both are checked byte for byte against gqlgen's executor by
// tests/differential_test.go.
package main

import (
	"fmt"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen: error loading gqlgen config:", err)
		os.Exit(2)
	}
	if err := api.Generate(cfg, api.AddPlugin(&plugin{})); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(3)
	}
}
