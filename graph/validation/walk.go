package validation

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Depth returns the depth of op's selections with fragment spreads
// expanded: 1 for `{ a }`, 2 for `{ a { b } }`. Fields named __schema and
// __type at the top are not counted (introspection is static and cheap, and
// tools nest it deeply). Each fragment is measured once; a fragment that
// spreads itself counts as empty where it recurs.
func Depth(op *ast.OperationDefinition, frags ast.FragmentDefinitionList) int {
	w := &depthWalker{frags: byName(frags), memo: map[depthKey]int{}, visiting: map[string]bool{}}
	return w.height(op.SelectionSet, true)
}

func byName(frags ast.FragmentDefinitionList) map[string]*ast.FragmentDefinition {
	m := make(map[string]*ast.FragmentDefinition, len(frags))
	for _, f := range frags {
		if _, dup := m[f.Name]; !dup {
			m[f.Name] = f
		}
	}
	return m
}

type depthKey struct {
	name string
	top  bool
}

type depthWalker struct {
	frags    map[string]*ast.FragmentDefinition
	memo     map[depthKey]int
	visiting map[string]bool
}

// height is the depth of set measured from its parent; top tells whether
// set is the operation's own selection set (or a fragment spread there).
func (w *depthWalker) height(set ast.SelectionSet, top bool) int {
	best := 0
	for _, sel := range set {
		var h int
		switch s := sel.(type) {
		case *ast.Field:
			if top && (s.Name == "__schema" || s.Name == "__type") {
				continue
			}
			h = 1 + w.height(s.SelectionSet, false)
		case *ast.InlineFragment:
			h = w.height(s.SelectionSet, top)
		case *ast.FragmentSpread:
			key := depthKey{s.Name, top}
			if m, ok := w.memo[key]; ok {
				h = m
				break
			}
			f := w.frags[s.Name]
			if f == nil || w.visiting[s.Name] {
				continue
			}
			w.visiting[s.Name] = true
			h = w.height(f.SelectionSet, top)
			delete(w.visiting, s.Name)
			w.memo[key] = h
		}
		best = max(best, h)
	}
	return best
}

// Complexity returns op's complexity the way gqlgen's complexity.Calculate
// computes it — each field costs its schema complexity function (es) given
// its children's complexity, or 1 plus its children's; fragment spreads
// count once per spread; __schema counts nothing — but measures each
// fragment once, so that a document whose fragments spread each other
// twice per level costs n steps, not 2^n. The sum saturates at the largest
// int. op must be validated (its fields carry their definitions).
func Complexity(ctx context.Context, es graphql.ExecutableSchema, op *ast.OperationDefinition, vars map[string]any) int {
	w := &complexityWalker{es: es, schema: es.Schema(), vars: vars,
		memo: map[*ast.FragmentDefinition]int{}, visiting: map[*ast.FragmentDefinition]bool{}}
	return w.set(ctx, op.SelectionSet)
}

type complexityWalker struct {
	es       graphql.ExecutableSchema
	schema   *ast.Schema
	vars     map[string]any
	memo     map[*ast.FragmentDefinition]int
	visiting map[*ast.FragmentDefinition]bool
}

func (w *complexityWalker) set(ctx context.Context, set ast.SelectionSet) int {
	total := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			total = safeAdd(total, w.field(ctx, s))
		case *ast.InlineFragment:
			total = safeAdd(total, w.set(ctx, s.SelectionSet))
		case *ast.FragmentSpread:
			f := s.Definition
			if f == nil || w.visiting[f] {
				continue
			}
			c, ok := w.memo[f]
			if !ok {
				w.visiting[f] = true
				c = w.set(ctx, f.SelectionSet)
				delete(w.visiting, f)
				w.memo[f] = c
			}
			total = safeAdd(total, c)
		}
	}
	return total
}

func (w *complexityWalker) field(ctx context.Context, s *ast.Field) int {
	if s.Definition == nil || s.ObjectDefinition == nil {
		return 0
	}
	def := w.schema.Types[s.Definition.Type.Name()]
	if def == nil || def.Name == "__Schema" {
		return 0
	}
	child := 0
	switch def.Kind {
	case ast.Object, ast.Interface, ast.Union:
		child = w.set(ctx, s.SelectionSet)
	}
	args := s.ArgumentMap(w.vars)
	if s.ObjectDefinition.Kind != ast.Interface {
		return w.fieldOf(ctx, s.ObjectDefinition, def.Kind, s.Name, child, args)
	}
	// An interface field costs what its most expensive implementation does.
	best := 0
	for _, t := range w.schema.GetPossibleTypes(s.ObjectDefinition) {
		best = max(best, w.fieldOf(ctx, t, def.Kind, s.Name, child, args))
	}
	return best
}

func (w *complexityWalker) fieldOf(ctx context.Context, parent *ast.Definition, kind ast.DefinitionKind, name string, child int, args map[string]any) int {
	if c, ok := w.es.Complexity(ctx, parent.Name, name, child, args); ok && c >= 1 {
		return c
	}
	return safeAdd(1, child)
}

// safeAdd is gqlgen's saturating add that ignores negative operands.
func safeAdd(a, b int) int {
	if a < 0 {
		if b < 0 {
			return 1
		}
		return b
	} else if b < 0 {
		return a
	}
	if c := a + b; c >= a {
		return c
	}
	return int(^uint(0) >> 1)
}

// EachSelection calls visit for every selection of set — fields, inline
// fragments and fragment spreads, then what they select — in document
// order, with the fragments of frags expanded where they are spread: each
// fragment's selections once per place kind (at the top of the operation,
// where root is true, or below it). A fragment that is not defined is
// visited as a spread only. visit returning false stops the walk, and
// EachSelection then returns false.
func EachSelection(set ast.SelectionSet, frags ast.FragmentDefinitionList, visit func(sel ast.Selection, root bool) bool) bool {
	w := selectionWalker{frags: byName(frags), seen: map[depthKey]bool{}, visit: visit}
	return w.walk(set, true)
}

type selectionWalker struct {
	frags map[string]*ast.FragmentDefinition
	seen  map[depthKey]bool
	visit func(ast.Selection, bool) bool
}

func (w *selectionWalker) walk(set ast.SelectionSet, root bool) bool {
	for _, sel := range set {
		if !w.visit(sel, root) {
			return false
		}
		var ok bool
		switch s := sel.(type) {
		case *ast.Field:
			ok = w.walk(s.SelectionSet, false)
		case *ast.InlineFragment:
			ok = w.walk(s.SelectionSet, root)
		case *ast.FragmentSpread:
			key := depthKey{s.Name, root}
			f := w.frags[s.Name]
			if w.seen[key] || f == nil {
				continue
			}
			w.seen[key] = true
			ok = w.walk(f.SelectionSet, root)
		}
		if !ok {
			return false
		}
	}
	return true
}
