package validation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// Rules returns gqlparser's default validation rules with
// OverlappingFieldsCanBeMerged replaced by FieldsCanMergeRule, which checks
// the same thing in linear time. Give it to the executor
// (executor.SetDefaultRulesFn). The other rules walk each fragment once per
// operation or fragment definition; Bound keeps that walk small.
func Rules() *rules.Rules {
	r := rules.NewDefaultRules()
	r.ReplaceRule(rules.OverlappingFieldsCanBeMergedRule.Name, FieldsCanMergeRule.RuleFunc)
	return r
}

// FieldsCanMergeRule is the GraphQL rule "Field Selection Merging" (fields
// with one response name must be one field with one set of arguments, and
// return the same shape), checked in time linear in the operation once its
// fragment spreads are expanded.
//
// gqlparser's OverlappingFieldsCanBeMerged (graphql-js's algorithm)
// compares the fields of one response name pairwise and, for each pair,
// their sub-selections pairwise again, level after level: k repeated fields
// nested d levels deep cost k^(2d), about a second for a 10,000-token
// document. Here the fields of one response name are merged instead and
// their children checked once as one set (the approach of XING's
// "Validating GraphQL Field Merging in linear time"), so each field of the
// expanded operation is looked at once per level it sits at (more often
// only where fields on different object types share a response name, which
// takes interfaces or unions: a field is then looked at once more per such
// level above it). Bound must have refused fragment cycles and oversized
// expansions first; a budget of fields looked at stops the check (with an
// error) if it has not.
var FieldsCanMergeRule = core.Rule{
	Name: "OverlappingFieldsCanBeMerged",
	RuleFunc: func(observers *core.Events, addError core.AddErrFunc) {
		m := &merger{budget: mergeBudget, ids: map[*ast.Selection]int{}, done: map[string]bool{}}
		report := func(cs []*conflict, at *ast.Position) {
			for _, c := range cs {
				var b strings.Builder
				c.write(&b)
				addError(
					core.Message(`Fields "%s" conflict because %s. Use different aliases on the fields to fetch both if this was intentional.`,
						c.responseName, b.String()),
					core.At(c.position))
			}
			if m.budget < 0 && !m.overBudget {
				m.overBudget = true
				addError(core.Message("document is too large to validate"), core.At(at))
			}
		}
		// Every operation is checked with its fragments expanded, which
		// checks every fragment it spreads. A fragment no operation reaches
		// (an unused one, which another rule refuses) is checked on its own.
		observers.OnOperation(func(walker *core.Walker, op *ast.OperationDefinition) {
			m.schema = walker.Schema
			report(m.check([]ast.SelectionSet{op.SelectionSet}, false), op.Position)
		})
		var used map[string]bool
		observers.OnFragment(func(walker *core.Walker, f *ast.FragmentDefinition) {
			if used == nil {
				used = usedFragments(walker.Document)
			}
			if used[f.Name] {
				return
			}
			m.schema = walker.Schema
			report(m.check([]ast.SelectionSet{f.SelectionSet}, false), f.Position)
		})
	},
}

// usedFragments returns the names of the fragments doc's operations spread,
// directly or through other fragments.
func usedFragments(doc *ast.QueryDocument) map[string]bool {
	used := map[string]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if !used[s.Name] {
					used[s.Name] = true
					if f := doc.Fragments.ForName(s.Name); f != nil {
						walk(f.SelectionSet)
					}
				}
			}
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet)
	}
	return used
}

// mergeBudget bounds the fields FieldsCanMergeRule looks at in one
// document: ten times an operation of DefaultMaxFields fields.
const mergeBudget = 10 * DefaultMaxFields

type merger struct {
	schema     *ast.Schema
	budget     int
	overBudget bool
	// ids numbers selection sets (by their first selection); done holds the
	// keys of the merged sets already checked, so that a combination met
	// again (through a fragment that spreads itself below a field, or
	// twice) is checked once.
	ids  map[*ast.Selection]int
	done map[string]bool
}

// conflict is a merge conflict of the fields named responseName: a reason,
// or the conflicts of their sub-fields.
type conflict struct {
	responseName string
	reason       string
	sub          []*conflict
	position     *ast.Position
}

func (c *conflict) write(b *strings.Builder) {
	if len(c.sub) == 0 {
		b.WriteString(c.reason)
		return
	}
	for i, s := range c.sub {
		if i > 0 {
			b.WriteString(" and ")
		}
		fmt.Fprintf(b, `subfields "%s" conflict because `, s.responseName)
		s.write(b)
	}
}

// key names the merge of sets in a mode.
func (m *merger) key(sets []ast.SelectionSet, shapeOnly bool) string {
	ids := make([]int, 0, len(sets))
	for _, set := range sets {
		id, ok := m.ids[&set[0]]
		if !ok {
			id = len(m.ids)
			m.ids[&set[0]] = id
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	if shapeOnly {
		b.WriteByte('s')
	}
	for _, id := range ids {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}

// collect returns the fields of sets with inline fragments and fragment
// spreads expanded, each fragment once (spreading one fragment twice at a
// level gives the same fields). Fields the validator could not resolve
// (unknown fields) are skipped: another rule reports them.
func (m *merger) collect(sets []ast.SelectionSet) []*ast.Field {
	var out []*ast.Field
	seen := map[*ast.FragmentDefinition]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			if m.budget < 0 {
				return
			}
			switch s := sel.(type) {
			case *ast.Field:
				m.budget--
				if s.ObjectDefinition != nil {
					out = append(out, s)
				}
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if s.Definition != nil && !seen[s.Definition] {
					seen[s.Definition] = true
					walk(s.Definition.SelectionSet)
				}
			}
		}
	}
	for _, set := range sets {
		walk(set)
	}
	return out
}

func responseName(f *ast.Field) string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

// check checks the fields of sets merged into one level (the selection
// sets of fields that share a response name) and returns their conflicts.
// When shapeOnly is set the fields' parents can never apply to the same
// object, so only the shapes of their results must agree.
func (m *merger) check(sets []ast.SelectionSet, shapeOnly bool) []*conflict {
	if len(sets) == 0 || m.budget < 0 {
		return nil
	}
	key := m.key(sets, shapeOnly)
	if m.done[key] {
		return nil
	}
	m.done[key] = true
	var names []string
	groups := map[string][]*ast.Field{}
	for _, f := range m.collect(sets) {
		name := responseName(f)
		if _, ok := groups[name]; !ok {
			names = append(names, name)
		}
		groups[name] = append(groups[name], f)
	}
	var out []*conflict
	for _, name := range names {
		out = append(out, m.checkGroup(name, groups[name], shapeOnly)...)
	}
	return out
}

// checkGroup checks the fields of one response name. Conflicts found among
// the sub-fields of a single field are its own (reported as they are);
// those between the sub-fields of several are reported as theirs.
func (m *merger) checkGroup(name string, group []*ast.Field, shapeOnly bool) []*conflict {
	if c := m.sameShape(name, group); c != nil {
		return []*conflict{c}
	}
	parts := [][]*ast.Field{group}
	if !shapeOnly {
		parts = partitionByParent(group)
		for _, part := range parts {
			if c := sameFieldAndArguments(name, part); c != nil {
				return []*conflict{c}
			}
		}
	}
	var own, between []*conflict
	add := func(fields []*ast.Field, shapeOnly bool) {
		if cs := m.check(children(fields), shapeOnly); len(fields) == 1 {
			own = append(own, cs...)
		} else {
			between = append(between, cs...)
		}
	}
	if len(parts) == 1 {
		add(group, shapeOnly)
	} else {
		for _, part := range parts {
			add(part, false)
		}
		between = append(between, m.check(children(group), true)...)
	}
	if len(between) > 0 {
		own = append(own, &conflict{responseName: name, sub: between, position: group[len(group)-1].Position})
	}
	return own
}

func children(fields []*ast.Field) []ast.SelectionSet {
	sets := make([]ast.SelectionSet, 0, len(fields))
	for _, f := range fields {
		if len(f.SelectionSet) > 0 {
			sets = append(sets, f.SelectionSet)
		}
	}
	return sets
}

// partitionByParent splits a group into the sets of fields that can apply
// to one object: fields on two different object types never do, fields on
// an interface or union may meet any of them. A group on one object type
// (every group, in a schema without abstract types) is one set.
func partitionByParent(group []*ast.Field) [][]*ast.Field {
	var objects []string
	byObject := map[string][]*ast.Field{}
	var shared []*ast.Field
	for _, f := range group {
		if f.ObjectDefinition.Kind == ast.Object && f.Definition != nil {
			name := f.ObjectDefinition.Name
			if _, ok := byObject[name]; !ok {
				objects = append(objects, name)
			}
			byObject[name] = append(byObject[name], f)
		} else {
			shared = append(shared, f)
		}
	}
	if len(objects) <= 1 {
		return [][]*ast.Field{group}
	}
	parts := make([][]*ast.Field, 0, len(objects))
	for _, name := range objects {
		parts = append(parts, append(append([]*ast.Field{}, byObject[name]...), shared...))
	}
	return parts
}

// sameFieldAndArguments requires the fields of part, which may apply to
// one object, to be one field called with the same arguments.
func sameFieldAndArguments(name string, part []*ast.Field) *conflict {
	first := part[0]
	for _, f := range part[1:] {
		if f.Name != first.Name {
			return &conflict{responseName: name, position: f.Position,
				reason: fmt.Sprintf(`"%s" and "%s" are different fields`, first.Name, f.Name)}
		}
		if !sameArguments(first.Arguments, f.Arguments) {
			return &conflict{responseName: name, position: f.Position, reason: "they have differing arguments"}
		}
	}
	return nil
}

// sameArguments is gqlparser's comparison: the same names with the same
// literal values, in any order.
func sameArguments(a, b ast.ArgumentList) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		y := b.ForName(x.Name)
		if y == nil || x.Value.Kind != y.Value.Kind || x.Value.Raw != y.Value.Raw {
			return false
		}
	}
	return true
}

// sameShape requires the fields of a group to return the same shape: the
// same list and non-null wrapping and, where both are scalars or enums,
// the same type (composite results are compared through their sub-fields).
func (m *merger) sameShape(name string, group []*ast.Field) *conflict {
	var wrapped *ast.Field // the first field with a known type
	var leaf *ast.Field    // the first field whose type is a scalar or an enum
	for _, f := range group {
		if f.Definition == nil {
			continue
		}
		if wrapped == nil {
			wrapped = f
		} else if wrapping(wrapped.Definition.Type) != wrapping(f.Definition.Type) {
			return typeConflict(name, wrapped, f)
		}
		if def := m.schema.Types[f.Definition.Type.Name()]; def != nil && (def.Kind == ast.Scalar || def.Kind == ast.Enum) {
			if leaf == nil {
				leaf = f
			} else if leaf.Definition.Type.Name() != f.Definition.Type.Name() {
				return typeConflict(name, leaf, f)
			}
		}
	}
	return nil
}

func typeConflict(name string, a, b *ast.Field) *conflict {
	return &conflict{responseName: name, position: b.Position,
		reason: fmt.Sprintf(`they return conflicting types "%s" and "%s"`, a.Definition.Type.String(), b.Definition.Type.String())}
}

// wrapping writes t's list and non-null wrapping, one letter and one mark
// per level: "L!T?" for [T]!, "L?T!" for [T!].
func wrapping(t *ast.Type) string {
	var b strings.Builder
	for ; t != nil; t = t.Elem {
		if t.Elem != nil {
			b.WriteByte('L')
		} else {
			b.WriteByte('T')
		}
		if t.NonNull {
			b.WriteByte('!')
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}
