// Command configdoc writes the configuration reference
// (docs/operations/configuration.md) from app.Config. `go generate ./...`
// runs it after the packages whose generated code app compiles against.
package main

//go:generate go run . ../../docs/operations/configuration.md

import (
	"fmt"
	"os"

	"github.com/cryptointel/cryptointel/app"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: configdoc OUTPUT.md")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(app.ConfigReference()), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "configdoc: %v\n", err)
		os.Exit(1)
	}
}
