// Package ops holds the fixed GraphQL operations of the /v1 facade: one
// operation per file (named after the file) and shared fragments in
// fragments/, appended to each operation that spreads them. The facade
// (package rest) runs them through the executor like any document: planned
// once, the plan cached.
//
// An operation is also its route's response: its response keys (aliases
// included) are the body's keys, in order, and a few facade directives say
// how the data becomes the body (package rest, shape.go). They are not
// GraphQL: Load strips them from the document the executor runs (Query,
// Doc) and keeps them in Shape. A field carrying @param is the facade's
// alone (an echoed parameter) and is stripped with its line.
package ops

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

//go:embed *.graphql fragments/*.graphql
var files embed.FS

// Operation is one fixed GraphQL operation, ready to execute.
type Operation struct {
	// File is the operation's file name without extension; routes refer to
	// it in Route.Operation.
	File string
	// Name is the GraphQL operation name.
	Name string
	// Query is the full document: the operation and the fragments it uses,
	// in name order.
	Query string
	// Doc is Query parsed.
	Doc *ast.QueryDocument
	// Shape is the document as written, facade directives, @param fields
	// and comments included: what the facade reads the response's shape
	// from.
	Shape *ast.QueryDocument
}

// FacadeDirectives are the directives of the facade (package rest reads
// them from Shape); Load strips them from the document it executes.
var FacadeDirectives = []string{"flatten", "group", "notFound", "split", "nonNull", "schema", "param"}

var (
	// paramLine is a line holding a field the facade writes itself.
	paramLine = regexp.MustCompile(`(?m)^[^\n#]*@param\b[^\n]*\n`)
	// facadeDirective is one facade directive with its arguments.
	facadeDirective = regexp.MustCompile(`[ \t]*@(flatten|group|notFound|split|nonNull|schema)\b(\([^)]*\))?`)
)

// executable returns src without the facade's directives and fields.
func executable(src string) string {
	return facadeDirective.ReplaceAllString(paramLine.ReplaceAllString(src, ""), "")
}

// checkExecutable refuses a document that still holds a facade directive
// (one the stripping did not recognize, for example across lines).
func checkExecutable(f string, doc *ast.QueryDocument) error {
	var bad string
	var walk func(ast.SelectionSet)
	check := func(ds ast.DirectiveList) {
		for _, d := range ds {
			for _, n := range FacadeDirectives {
				if d.Name == n && bad == "" {
					bad = d.Name
				}
			}
		}
	}
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				check(s.Directives)
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				check(s.Directives)
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				check(s.Directives)
			}
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet)
	}
	for _, fr := range doc.Fragments {
		walk(fr.SelectionSet)
	}
	if bad != "" {
		return fmt.Errorf("error loading %s: @%s must stand on the line of its field", f, bad)
	}
	return nil
}

// parseFile reads and parses one embedded .graphql file.
func parseFile(f string) ([]byte, *ast.QueryDocument, error) {
	src, err := fs.ReadFile(files, f)
	if err != nil {
		return nil, nil, fmt.Errorf("error reading %s: %w", f, err)
	}
	doc, err := parser.ParseQuery(&ast.Source{Name: f, Input: string(src)})
	if err != nil {
		return nil, nil, fmt.Errorf("error parsing %s: %w", f, err)
	}
	return src, doc, nil
}

// Load reads, assembles and parses every embedded operation.
func Load() (map[string]*Operation, error) {
	fragments := map[string]string{}
	fragDeps := map[string][]string{}
	fragFiles, err := fs.Glob(files, "fragments/*.graphql")
	if err != nil {
		return nil, fmt.Errorf("error listing fragments: %w", err)
	}
	for _, f := range fragFiles {
		src, doc, err := parseFile(f)
		if err != nil {
			return nil, err
		}
		if len(doc.Fragments) != 1 || len(doc.Operations) != 0 {
			return nil, fmt.Errorf("error loading %s: a fragment file holds exactly one fragment", f)
		}
		name := doc.Fragments[0].Name
		fragments[name] = strings.TrimSpace(string(src))
		fragDeps[name] = spreads(doc.Fragments[0].SelectionSet, nil)
	}

	opFiles, err := fs.Glob(files, "*.graphql")
	if err != nil {
		return nil, fmt.Errorf("error listing operations: %w", err)
	}
	ops := map[string]*Operation{}
	for _, f := range opFiles {
		src, doc, err := parseFile(f)
		if err != nil {
			return nil, err
		}
		if len(doc.Operations) != 1 || doc.Operations[0].Name == "" || len(doc.Fragments) != 0 {
			return nil, fmt.Errorf("error loading %s: an operation file holds exactly one named operation and no fragments", f)
		}
		// The fragments the operation uses, transitively, each once.
		used := map[string]bool{}
		queue := spreads(doc.Operations[0].SelectionSet, nil)
		for len(queue) > 0 {
			name := queue[0]
			queue = queue[1:]
			if used[name] {
				continue
			}
			if _, ok := fragments[name]; !ok {
				return nil, fmt.Errorf("error loading %s: unknown fragment %s", f, name)
			}
			used[name] = true
			queue = append(queue, fragDeps[name]...)
		}
		names := make([]string, 0, len(used))
		for name := range used {
			names = append(names, name)
		}
		sort.Strings(names)
		parts := []string{strings.TrimSpace(string(src))}
		for _, name := range names {
			parts = append(parts, fragments[name])
		}
		written := strings.Join(parts, "\n\n") + "\n"
		shape, err := parser.ParseQuery(&ast.Source{Name: f, Input: written})
		if err != nil {
			return nil, fmt.Errorf("error parsing assembled %s: %w", f, err)
		}
		query := executable(written)
		full, err := parser.ParseQuery(&ast.Source{Name: f, Input: query})
		if err != nil {
			return nil, fmt.Errorf("error parsing assembled %s without its facade directives: %w", f, err)
		}
		if err := checkExecutable(f, full); err != nil {
			return nil, err
		}
		file := strings.TrimSuffix(path.Base(f), ".graphql")
		ops[file] = &Operation{File: file, Name: doc.Operations[0].Name, Query: query, Doc: full, Shape: shape}
	}
	return ops, nil
}

// spreads appends the names of the fragments spread anywhere in set.
func spreads(set ast.SelectionSet, out []string) []string {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			out = spreads(s.SelectionSet, out)
		case *ast.InlineFragment:
			out = spreads(s.SelectionSet, out)
		case *ast.FragmentSpread:
			out = append(out, s.Name)
		}
	}
	return out
}
