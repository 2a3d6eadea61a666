// Command gen is the code generator behind `go generate` for package graph
// (its go:generate directive is in graph/doc.go). It runs gqlgen on
// gqlgen.yml exactly as `gqlgen generate` does, with one plugin added that
// writes, from the same schema and bindings, graph/fastexec_gen.go: the
// per-type code of the executor every query runs on, one function per
// object type and per value shape, that writes the fields of a cached plan
// (graph/plan.go) one after another, in document order, into one buffer
// (graph/jsonw): no field context, goroutine or marshaler per field. It
// calls the same resolvers, argument coercion and directives as gqlgen's
// generated.go and reproduces its bytes, nulls and errors, which
// tests/differential_test.go checks byte for byte against gqlgen's
// executor.
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
