package rest

import (
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel/access"
)

// FieldFloors returns the least a selection of a field costs in a /graphql
// operation, from every route that runs a fixed operation: the field the
// route's `limit` pages (the `first` it feeds), or the operation's root
// field when the route has no `limit`, costs at least the route's credits
// and its pay-per-request price at the same page size. access.GraphQLCost
// charges every such selection at least its floor, so the same work costs
// at least as much on /graphql as on /v1, however many aliases repeat it.
// The route table is the one owner of those prices.
func (rt *Router) FieldFloors() []access.FieldFloor {
	var out []access.FieldFloor
	for i := range rt.routes {
		r := &rt.routes[i]
		op, ok := rt.ops[r.Operation]
		if r.Operation == "" || !ok || op.Doc == nil {
			continue
		}
		def := op.Doc.Operations.ForName(op.Name)
		if def == nil {
			continue
		}
		f := floorField(r, op.Doc, def)
		if f == nil {
			continue
		}
		parent := "Query"
		switch {
		case f.ObjectDefinition != nil:
			parent = f.ObjectDefinition.Name
		case def.Operation == ast.Subscription:
			parent = "Subscription"
		}
		fl := access.FieldFloor{Field: parent + "." + f.Name, Route: r.Method + " " + r.Path, Credits: r.Policy.CreditCost}
		if r.Policy.Pricing != nil {
			p := *r.Policy.Pricing
			fl.Pricing = &p
		}
		out = append(out, fl)
	}
	return out
}

// floorField is the field route r's price is for: the one its `limit`
// parameter pages (`first: $<var>`), or, without a `limit`, the single
// root field of its operation; nil when there is none.
func floorField(r *Route, doc *ast.QueryDocument, def *ast.OperationDefinition) *ast.Field {
	for _, p := range r.Params {
		if p.Name == "limit" && p.Var != "" {
			// A list the page is made of wins over a field that reports
			// on the same page (search: searchEvents, not searchReport).
			if f := pagedBy(doc, def.SelectionSet, p.Var, map[string]bool{}, true); f != nil {
				return f
			}
			return pagedBy(doc, def.SelectionSet, p.Var, map[string]bool{}, false)
		}
	}
	var root *ast.Field
	for _, sel := range def.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok || root != nil {
			return nil // a route's price cannot be split among fields
		}
		root = f
	}
	return root
}

// pagedBy finds the field of set whose `first` is the variable v (a list
// when list is set).
func pagedBy(doc *ast.QueryDocument, set ast.SelectionSet, v string, seen map[string]bool, list bool) *ast.Field {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if a := s.Arguments.ForName("first"); a != nil && a.Value != nil && a.Value.Kind == ast.Variable && a.Value.Raw == v &&
				(!list || (s.Definition != nil && s.Definition.Type.Elem != nil)) {
				return s
			}
			if f := pagedBy(doc, s.SelectionSet, v, seen, list); f != nil {
				return f
			}
		case *ast.InlineFragment:
			if f := pagedBy(doc, s.SelectionSet, v, seen, list); f != nil {
				return f
			}
		case *ast.FragmentSpread:
			if fd := doc.Fragments.ForName(s.Name); fd != nil && !seen[s.Name] {
				seen[s.Name] = true
				if f := pagedBy(doc, fd.SelectionSet, v, seen, list); f != nil {
					return f
				}
			}
		}
	}
	return nil
}
