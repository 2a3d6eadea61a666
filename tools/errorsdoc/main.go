// Command errorsdoc writes the code table of the error reference
// (docs/api/errors.md) from the error table (httperr.Table),
// between its markers; the rest of the page is prose and stays as written.
// `go generate ./...` runs it; a test in package rest fails when the page
// differs from what it would write.
package main

//go:generate go run . ../../docs/api/errors.md

import (
	"fmt"
	"os"

	"github.com/cryptointel/cryptointel/httperr"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: errorsdoc PAGE.md")
		os.Exit(2)
	}
	page, err := os.ReadFile(os.Args[1])
	if err == nil {
		var out string
		if out, err = httperr.SpliceCodes(string(page)); err == nil {
			err = os.WriteFile(os.Args[1], []byte(out), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "errorsdoc: %v\n", err)
		os.Exit(1)
	}
}
