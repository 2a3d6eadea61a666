package access

import (
	"context"
	"encoding/json"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph/validation"
)

// How a /graphql operation is priced, so that it costs what the work it
// causes costs on /v1, per unit of work, whatever its shape:
//
//   - Credits: the operation's complexity (every list field multiplies its
//     children by its effective page size), plus IntrospectionSchemaCredits
//     for each __schema selection — which a plain complexity counts as 0
//     although it answers the whole schema.
//   - Floors: a field that a /v1 route pages (or the root field of a route
//     without pages) costs, each time it is selected, at least what that
//     route costs, in credits and, paid per request, in USDC at the same
//     page size (Pricing.AmountForLimit of its `first`). So 100 aliases of
//     searchEvents(first: 1) cost 100 /v1/search requests' worth, not 100
//     tiny complexities. The route table owns the floors; the app hands
//     them to GraphQLCost (SetFieldFloors).
//   - Paid per request: PerCredit for each credit not under a floor, plus
//     each floored selection's own price, at least Min.
//   - Fields marked @access(layer, feature) that the caller's plan does not
//     include are found before anything runs: the operation is refused
//     forbidden, naming the field and the plan needed, and costs nothing —
//     as /v1 refuses a route the plan lacks.

// IntrospectionSchemaCredits is what one __schema selection costs: it
// answers the whole schema (tens of kilobytes, tens of milliseconds of
// CPU). An operation may select __schema at most once (resolvers'
// MaxSchemaIntrospections).
const IntrospectionSchemaCredits = 10

// FieldFloor is the least a selection of a field costs in a /graphql
// operation: what the /v1 route running it costs.
type FieldFloor struct {
	// Field is the field's schema coordinate, e.g. "Query.searchEvents" or
	// "Entity.events".
	Field string
	// Route names the /v1 route, e.g. "GET /v1/search".
	Route string
	// Credits is the route's credit cost.
	Credits int
	// Pricing is the route's pay-per-request price, nil when it has none.
	// A "range" price is taken at the field's `first` (or the route's
	// default limit when it is not given).
	Pricing *Pricing
}

// floorSet is every floor of one field.
type floorSet []FieldFloor

func (fs floorSet) credits() int {
	n := 0
	for _, f := range fs {
		n = max(n, f.Credits)
	}
	return n
}

// amount is the highest price of the field's routes for a page of limit
// items (given false: the routes' default limit).
func (fs floorSet) amount(limit int, given bool) int64 {
	var a int64
	for _, f := range fs {
		if f.Pricing == nil {
			continue
		}
		if given {
			a = max(a, f.Pricing.AmountForLimit(limit))
		} else {
			a = max(a, f.Pricing.AmountForLimit(f.Pricing.defaultLimit()))
		}
	}
	return a
}

// defaultLimit is the limit priced when a request sends none.
func (p Pricing) defaultLimit() int {
	if p.DefaultLimit <= 0 || p.DefaultLimit > p.MaxLimit {
		return p.MaxLimit
	}
	return p.DefaultLimit
}

// quote is what an operation costs and needs, worked out before it runs.
type quote struct {
	// base is the credits not under a floor.
	base int
	// floored are the selections of fields that have a floor.
	floored []flooredRoot
	// needs are the @access requirements of the fields it selects.
	needs []fieldNeed
	// refusedField is the field a refusal named, when one did.
	refusedField string
}

// flooredRoot is a selection of a field with a floor: its own
// complexity, its floors and its page size.
type flooredRoot struct {
	complexity int
	floors     floorSet
	limit      int
	given      bool
}

// credits is what the operation costs a key.
func (q *quote) credits() int {
	n := q.base
	for _, r := range q.floored {
		n += max(r.complexity, r.floors.credits())
	}
	return n
}

// amount is what the operation costs paid per request at pricing p, in
// USDC atomic units.
func (q *quote) amount(p *Pricing) int64 {
	perCredit := int64(math.Round(p.PerCredit * 1e6))
	total := perCredit * int64(q.base)
	for _, r := range q.floored {
		total += max(perCredit*int64(r.complexity), r.floors.amount(r.limit, r.given))
	}
	return max(int64(math.Round(p.Min*1e6)), total)
}

// fieldNeed is the @access(layer, feature) of a selected field.
type fieldNeed struct {
	layer, feature string
	// field is the first selected field that needs it, e.g. "feed".
	field string
}

// unmet returns the first need plan does not meet, or nil.
func (q *quote) unmet(plans []cryptointel.Plan, plan cryptointel.Plan) *fieldNeed {
	for i := range q.needs {
		if !planAllows(plans, plan, q.needs[i].layer, q.needs[i].feature, "") {
			return &q.needs[i]
		}
	}
	return nil
}

// unmetPaid returns the first need a pay-per-request caller (evaluation
// layer, no features) does not meet, or nil.
func (q *quote) unmetPaid() *fieldNeed {
	for i := range q.needs {
		if q.needs[i].layer != LayerEvaluation || q.needs[i].feature != "" {
			return &q.needs[i]
		}
	}
	return nil
}

// forbiddenField is the refusal of a field the plan does not include,
// word for word /v1's refusal of a route of the field's layer and feature
// (the field is named in extensions.field); it is recorded in q.
func (q *quote) forbiddenField(plans []cryptointel.Plan, n *fieldNeed) *cryptointel.Error {
	q.refusedField = n.field
	return forbidden(plans, n.layer, n.feature, "")
}

// quoteOperation works out op's quote from its complexity.
func (c *GraphQLCost) quoteOperation(ctx context.Context, opCtx *graphql.OperationContext, op *ast.OperationDefinition, complexity int) *quote {
	w := &shapeWalker{floors: c.floorMap(), seenNeed: map[[2]string]bool{},
		visiting: map[*ast.FragmentDefinition]bool{}, schemas: map[string]bool{}}
	w.set(op.SelectionSet, true)
	q := &quote{base: complexity + IntrospectionSchemaCredits*len(w.schemas), needs: w.needs}
	for _, o := range w.floored {
		fc := complexity // an operation of this one field costs what the field costs
		if len(op.SelectionSet) != 1 || op.SelectionSet[0] != ast.Selection(o.field) {
			fc = validation.Complexity(ctx, c.es, &ast.OperationDefinition{Operation: op.Operation, SelectionSet: ast.SelectionSet{o.field}}, opCtx.Variables)
		}
		if fc <= 1 && len(o.field.SelectionSet) > 0 {
			// A field with children that costs only itself is one its
			// complexity declares refused for its arguments before anything
			// loads (a list of ids over the cap): no route's work is done.
			continue
		}
		r := flooredRoot{complexity: fc, floors: o.floors}
		if v, ok := o.field.ArgumentMap(opCtx.Variables)["first"]; ok && v != nil {
			r.limit, r.given = intArg(v)
		}
		q.base -= fc
		q.floored = append(q.floored, r)
	}
	q.base = max(q.base, 0)
	return q
}

// intArg reads an Int argument's value.
func intArg(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(max(min(n, math.MaxInt32), math.MinInt32)), true
	case float64:
		return int(max(min(n, math.MaxInt32), math.MinInt32)), true
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 32)
		return int(i), err == nil
	}
	return 0, false
}

// shapeWalker reads what pricing needs of an operation: its __schema
// selections (by response name: selections under one name are answered
// once), the @access requirements of every field it selects, and every
// occurrence of a field that has a floor, fragments expanded (which the
// document bounds keep to MaxFields fields).
type shapeWalker struct {
	floors   map[string]floorSet
	floored  []floorOccurrence
	schemas  map[string]bool
	needs    []fieldNeed
	seenNeed map[[2]string]bool
	visiting map[*ast.FragmentDefinition]bool
}

// floorOccurrence is one selection of a field that has a floor.
type floorOccurrence struct {
	field  *ast.Field
	floors floorSet
}

// set walks a selection set; root tells the operation's own (where
// __schema may be selected).
func (w *shapeWalker) set(set ast.SelectionSet, root bool) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if root && s.Name == "__schema" {
				w.schemas[s.Alias] = true
			}
			w.field(s)
		case *ast.InlineFragment:
			w.set(s.SelectionSet, root)
		case *ast.FragmentSpread:
			if f := s.Definition; f != nil && !w.visiting[f] {
				w.visiting[f] = true
				w.set(f.SelectionSet, root)
				delete(w.visiting, f)
			}
		}
	}
}

// field records f's requirement and floor and walks below it.
func (w *shapeWalker) field(f *ast.Field) {
	if def := f.Definition; def != nil {
		if d := def.Directives.ForName("access"); d != nil {
			need := fieldNeed{layer: stringArg(d, "layer"), feature: stringArg(d, "feature"), field: f.Name}
			if k := [2]string{need.layer, need.feature}; !w.seenNeed[k] {
				w.seenNeed[k] = true
				w.needs = append(w.needs, need)
			}
		}
	}
	if f.ObjectDefinition != nil && len(w.floors) > 0 {
		if fs := w.floors[f.ObjectDefinition.Name+"."+f.Name]; len(fs) > 0 {
			w.floored = append(w.floored, floorOccurrence{field: f, floors: fs})
		}
	}
	w.set(f.SelectionSet, false)
}

// stringArg is a directive's string literal argument.
func stringArg(d *ast.Directive, name string) string {
	if a := d.Arguments.ForName(name); a != nil && a.Value != nil {
		return a.Value.Raw
	}
	return ""
}
