// Package validation holds every walk over a client's GraphQL document —
// the bounds checked before validation, the validation rules, the depth and
// the complexity — each in time linear in the size of the document.
//
// A document can be small and still describe an enormous operation: a chain
// of fragments that each spread the next one twice expands to 2^n fields in
// n lines, and a walk that expands fragment spreads without a memo costs
// that much. So every walk here measures each fragment once (memoised by
// fragment), the bounds are checked on the parsed document before any rule
// of gqlparser walks it, and the one gqlparser rule that is superlinear even
// without fragments (OverlappingFieldsCanBeMerged, which compares fields
// pairwise at every level) is replaced by a linear one (see Rules).
package validation

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Limits bound a parsed document before it is validated.
type Limits struct {
	// MaxFragments bounds the fragment definitions of a document. gqlparser's
	// validator walks every fragment reachable from each fragment definition,
	// which costs up to MaxFragments times the document. Defaults to
	// DefaultMaxFragments.
	MaxFragments int
	// MaxFields bounds the fields of each operation once its fragment spreads
	// are expanded (a fragment counts every time it is spread). Defaults to
	// DefaultMaxFields.
	MaxFields int
}

// Default limits.
const (
	// DefaultMaxFragments is the default of Limits.MaxFragments.
	DefaultMaxFragments = 100
	// DefaultMaxFields is the default of Limits.MaxFields: as many fields as
	// a document may have tokens (resolvers.MaxTokens), so spreading
	// fragments cannot make an operation larger than the largest document.
	DefaultMaxFields = 10_000
)

// CodeDocumentLimit is extensions.code of a document refused by Bound. It
// is a request error, like a validation error.
const CodeDocumentLimit = "DOCUMENT_LIMIT_EXCEEDED"

// Bound checks doc, parsed but not yet validated, against l in time linear
// in the document. It returns the first problem as a GraphQL error with
// extensions.code CodeDocumentLimit: too many fragment definitions, a
// fragment that spreads itself (directly or through others), or an
// operation or fragment that expands to more than l.MaxFields fields.
// Unknown fragments are left to validation.
func Bound(doc *ast.QueryDocument, l Limits) *gqlerror.Error {
	if l.MaxFragments <= 0 {
		l.MaxFragments = DefaultMaxFragments
	}
	if l.MaxFields <= 0 {
		l.MaxFields = DefaultMaxFields
	}
	if n := len(doc.Fragments); n > l.MaxFragments {
		return limitError("document has %d fragments, which exceeds the limit of %d", n, l.MaxFragments)
	}
	c := &fieldCounter{
		frags:    make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		memo:     make(map[string]int, len(doc.Fragments)),
		visiting: map[string]bool{},
		max:      l.MaxFields,
	}
	for _, f := range doc.Fragments {
		if _, dup := c.frags[f.Name]; !dup {
			c.frags[f.Name] = f
		}
	}
	for _, op := range doc.Operations {
		n := c.count(op.SelectionSet)
		if c.cycle != "" {
			return limitError("Cannot spread fragment %q within itself.", c.cycle)
		}
		if n > l.MaxFields {
			return limitError("operation has more than %d fields once its fragment spreads are expanded (the limit is %d)",
				l.MaxFields, l.MaxFields)
		}
	}
	// Fragments no operation spreads are walked by the validator too.
	for _, f := range doc.Fragments {
		n := c.count(ast.SelectionSet{&ast.FragmentSpread{Name: f.Name}})
		if c.cycle != "" {
			return limitError("Cannot spread fragment %q within itself.", c.cycle)
		}
		if n > l.MaxFields {
			return limitError("fragment %s has more than %d fields once its fragment spreads are expanded (the limit is %d)",
				f.Name, l.MaxFields, l.MaxFields)
		}
	}
	return nil
}

func limitError(format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": CodeDocumentLimit}
	return err
}

// fieldCounter counts the fields of selection sets with fragment spreads
// expanded, each fragment counted once and memoised, saturating just above
// max so that counts never overflow.
type fieldCounter struct {
	frags    map[string]*ast.FragmentDefinition
	memo     map[string]int
	visiting map[string]bool
	max      int
	cycle    string
}

func (c *fieldCounter) count(set ast.SelectionSet) int {
	n := 0
	for _, sel := range set {
		if c.cycle != "" {
			return n
		}
		switch s := sel.(type) {
		case *ast.Field:
			n = c.add(n, 1+c.count(s.SelectionSet))
		case *ast.InlineFragment:
			n = c.add(n, c.count(s.SelectionSet))
		case *ast.FragmentSpread:
			if m, ok := c.memo[s.Name]; ok {
				n = c.add(n, m)
				continue
			}
			f := c.frags[s.Name]
			if f == nil {
				continue
			}
			if c.visiting[s.Name] {
				c.cycle = s.Name
				return n
			}
			c.visiting[s.Name] = true
			m := c.count(f.SelectionSet)
			delete(c.visiting, s.Name)
			if c.cycle == "" {
				c.memo[s.Name] = m
			}
			n = c.add(n, m)
		}
	}
	return n
}

// add is a + b, saturating at max+1.
func (c *fieldCounter) add(a, b int) int {
	if a > c.max-b {
		return c.max + 1
	}
	return a + b
}
