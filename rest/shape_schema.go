package rest

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Deriving the response schema: the operation's selection typed by the
// GraphQL schema (see shape.go for the facade directives).

// componentOf is the component a fragment is: EntityFields is Entity.
func componentOf(fragment string) string { return strings.TrimSuffix(fragment, "Fields") }

// deriver derives JSON Schemas from shapes, collecting the components they
// name.
type deriver struct {
	schema     *ast.Schema
	components schema
	// fixed are the components written by hand (componentSchemas), which
	// derived shapes refer to and never redefine.
	fixed schema
	err   error
}

func (dv *deriver) fail(err error) {
	if dv.err == nil {
		dv.err = err
	}
}

// component records a derived component, which must be the same wherever
// it is derived.
func (dv *deriver) component(name string, derive func() schema) schema {
	if _, ok := dv.fixed[name]; ok {
		return ref(name)
	}
	s := derive()
	if old, ok := dv.components[name]; ok && !reflect.DeepEqual(old, s) {
		dv.fail(fmt.Errorf("component %s is derived twice, differently", name))
	}
	dv.components[name] = s
	return ref(name)
}

// object is the closed object schema of ns.
func (dv *deriver) object(s *shape, ns []*node, params []Param) schema {
	return obj(dv.props(s, ns, params)...)
}

func (dv *deriver) props(s *shape, ns []*node, params []Param) []prop {
	var out []prop
	for _, n := range ns {
		switch n.kind {
		case nodeFlatten:
			out = append(out, dv.props(s, n.members, params)...)
			continue
		case nodeSplit:
			item := dv.item(s, n, params)
			out = append(out, prop{name: n.key, s: item}, prop{name: n.rest, s: arr(item)})
			continue
		}
		if n.kind == nodeParam && !declared(params, n.param) {
			continue // a parameter this route neither takes nor echoes
		}
		ps := dv.nodeSchema(s, n, params)
		if n.desc != "" {
			ps = describe(ps, n.desc)
		}
		out = append(out, prop{name: n.key, s: ps, optional: n.optional})
	}
	return out
}

// item is the schema of an element of a rebuilt list.
func (dv *deriver) item(s *shape, n *node, params []Param) schema {
	if n.schema != "" {
		return dv.component(n.schema, func() schema { return dv.object(s, n.members, params) })
	}
	if sp := soleSpread(n.field.SelectionSet); sp != nil {
		return dv.fragmentComponent(s, sp.Name)
	}
	return dv.object(s, n.members, params)
}

// soleSpread is the fragment spread set is made of, when it is one spread
// without directives.
func soleSpread(set ast.SelectionSet) *ast.FragmentSpread {
	if len(set) != 1 {
		return nil
	}
	if sp, ok := set[0].(*ast.FragmentSpread); ok && len(sp.Directives) == 0 {
		return sp
	}
	return nil
}

// eventFragment is the fragment of the wire's event fields.
const eventFragment = "EventFields"

// eventMembers splits ns into the event's fields (a spread of
// eventFragment, or an object flattened from one) and the members after
// them; ok is false when ns does not start with the event.
func eventMembers(ns []*node) (rest []*node, ok bool) {
	if len(ns) > 0 && ns[0].kind == nodeFlatten && len(ns[0].members) > 0 {
		for _, m := range ns[0].members {
			if m.fragment != eventFragment {
				return nil, false
			}
		}
		return ns[1:], true
	}
	i := 0
	for i < len(ns) && ns[i].fragment == eventFragment {
		i++
	}
	return ns[i:], i > 0
}

// fragmentComponent is the component fragment name is (EntityFields is
// Entity), derived from its selection. An event with more fields (a
// search hit, a research item) is the wire's event shape with its legacy
// and lean forms (eventShape) and the fragment's comment as description.
func (dv *deriver) fragmentComponent(s *shape, name string) schema {
	f := s.fragments[name]
	if f == nil {
		dv.fail(fmt.Errorf("unknown fragment %s", name))
		return schema{}
	}
	return dv.component(componentOf(name), func() schema {
		c := &compiler{schema: dv.schema, s: s}
		members, err := c.selection(f.SelectionSet, dv.schema.Types[f.TypeCondition], "", false, false)
		if err != nil {
			dv.fail(err)
		}
		if rest, ok := eventMembers(members); ok && f.Comment != nil {
			return eventShape(comment(f.Comment), allFields, dv.props(s, rest, nil)...)
		}
		return dv.object(s, members, nil)
	})
}

func (dv *deriver) nodeSchema(s *shape, n *node, params []Param) schema {
	switch n.kind {
	case nodeParam:
		for _, p := range params {
			if p.Name == n.param {
				switch {
				case p.Type == TypeInteger:
					return integer()
				case len(p.Enum) > 0:
					return strEnum(p.Enum...)
				}
			}
		}
		return str()
	case nodeObject:
		if n.spread != "" && len(n.members) > 0 && n.field == nil {
			return dv.component(componentOf(n.spread), func() schema { return dv.object(s, n.members, params) })
		}
		if n.schema != "" {
			return dv.component(n.schema, func() schema { return dv.object(s, n.members, params) })
		}
		return dv.object(s, n.members, params)
	case nodeList:
		return arr(dv.item(s, n, params))
	}
	return dv.typeSchema(s, n.typ, n.field.SelectionSet, n.schema, n.nonNull, n.field)
}

// typeSchema is the schema of a value of GraphQL type t selected by set.
func (dv *deriver) typeSchema(s *shape, t *ast.Type, set ast.SelectionSet, name string, nonNull bool, f *ast.Field) schema {
	var out schema
	if t.Elem != nil {
		out = arr(dv.typeSchema(s, t.Elem, set, name, false, f))
	} else if over, ok := fieldSchemas[dv.parentOf(f)+"."+f.Name]; ok && set == nil {
		out = over
		return out
	} else {
		def := dv.schema.Types[t.NamedType]
		switch {
		case def == nil:
			dv.fail(fmt.Errorf("unknown type %s", t.NamedType))
			return schema{}
		case def.Kind == ast.Object || def.Kind == ast.Interface:
			out = dv.selectionSchema(s, def, set, name)
		case def.Kind == ast.Enum:
			out = str()
		default:
			out = scalarSchema(def.Name)
		}
	}
	if !t.NonNull && !nonNull {
		out = nullableType(out)
	}
	return out
}

// parentOf names the GraphQL type f was selected on, for fieldSchemas.
func (dv *deriver) parentOf(f *ast.Field) string {
	if f.ObjectDefinition != nil {
		return f.ObjectDefinition.Name
	}
	return ""
}

// selectionSchema is the schema of an object of type def selected by set:
// the component of its fragment when set is one fragment spread, or the
// component name, else the closed object of its fields.
func (dv *deriver) selectionSchema(s *shape, def *ast.Definition, set ast.SelectionSet, name string) schema {
	c := &compiler{schema: dv.schema, s: s}
	derive := func() schema {
		members, err := c.selection(set, def, "", false, false)
		if err != nil {
			dv.fail(err)
		}
		return dv.object(s, members, nil)
	}
	if name != "" {
		return dv.component(name, derive)
	}
	if sp := soleSpread(set); sp != nil {
		return dv.fragmentComponent(s, sp.Name)
	}
	return derive()
}

// scalarSchema is the schema of a GraphQL scalar.
func scalarSchema(name string) schema {
	switch name {
	case "Int":
		return integer()
	case "Float":
		return number()
	case "Boolean":
		return boolean()
	case "Time":
		return dateTime()
	}
	return str()
}

// nullableType lets s be null: "null" added to its type, or anyOf s and
// null when it has no type of its own (a $ref).
func nullableType(s schema) schema {
	t, ok := s["type"].(string)
	if !ok {
		return nullable(s)
	}
	out := schema{}
	for k, v := range s {
		out[k] = v
	}
	out["type"] = []any{t, "null"}
	return out
}

// mergeVariants documents a route that may run either of two operations
// (a compact brief): equal schemas stay one; objects of the same members
// merge member by member; anything else is anyOf the two.
func mergeVariants(a, b schema) schema {
	if reflect.DeepEqual(a, b) {
		return a
	}
	if a["type"] == "object" && b["type"] == "object" && reflect.DeepEqual(a["required"], b["required"]) {
		pa, _ := a["properties"].(schema)
		pb, _ := b["properties"].(schema)
		if len(pa) == len(pb) {
			props := schema{}
			for k, va := range pa {
				vb, ok := pb[k]
				if !ok {
					return anyOf(a, b)
				}
				props[k] = mergeVariants(va.(schema), vb.(schema))
			}
			out := schema{}
			for k, v := range a {
				out[k] = v
			}
			out["properties"] = props
			return out
		}
	}
	return anyOf(a, b)
}

// derivedSchemas are the response schemas of the graph routes and the
// components they name, derived once from the operations.
type derivedSchemas struct {
	responses  map[string]schema // by "METHOD /path"
	components schema
	// stream is the schema of the data of each /v1/stream message: the
	// value of its subscription's one root field.
	stream schema
}

// deriveResponses derives the response schema of every route of routes
// that runs an operation (and of its compact variant, when it has one).
func deriveResponses(routes []Route) (*derivedSchemas, error) {
	dv := &deriver{schema: gqlSchema(), components: schema{}, fixed: fixedComponents()}
	out := &derivedSchemas{responses: map[string]schema{}, components: dv.components}
	for i := range routes {
		r := &routes[i]
		if r.Operation == "" || r.Handler != nil {
			continue
		}
		var body schema
		for _, file := range []string{r.Operation, r.Operation + "_compact"} {
			s, err := shapeOf(file)
			if err != nil {
				if file == r.Operation {
					return nil, err
				}
				continue
			}
			b := dv.object(s, s.members, r.echoed())
			if body == nil {
				body = b
			} else {
				body = mergeVariants(body, b)
			}
		}
		if dv.err != nil {
			return nil, fmt.Errorf("error deriving the response of %s %s: %w", r.Method, r.Path, dv.err)
		}
		out.responses[r.Method+" "+r.Path] = body
	}
	op := fixedOperations()[streamOperation]
	if op == nil || len(op.Shape.Operations[0].SelectionSet) != 1 {
		return nil, fmt.Errorf("error deriving the /v1/stream message: %s.graphql must select one root field", streamOperation)
	}
	root, ok := op.Shape.Operations[0].SelectionSet[0].(*ast.Field)
	def := dv.schema.Subscription.Fields.ForName(root.Name)
	if !ok || def == nil {
		return nil, fmt.Errorf("error deriving the /v1/stream message: no subscription field %s", root.Name)
	}
	s := &shape{op: streamOperation, fragments: map[string]*ast.FragmentDefinition{}}
	for _, f := range op.Shape.Fragments {
		s.fragments[f.Name] = f
	}
	out.stream = dv.typeSchema(s, def.Type, root.SelectionSet, "", false, root)
	if dv.err != nil {
		return nil, fmt.Errorf("error deriving the /v1/stream message: %w", dv.err)
	}
	return out, nil
}

// typeShape records on each field of doc's operation and fragments the
// type it is selected on (ObjectDefinition), for fieldSchemas.
func typeShape(doc *ast.QueryDocument, schema *ast.Schema) {
	fragments := map[string]*ast.FragmentDefinition{}
	for _, f := range doc.Fragments {
		fragments[f.Name] = f
	}
	seen := map[string]bool{}
	var walk func(set ast.SelectionSet, parent *ast.Definition)
	walk = func(set ast.SelectionSet, parent *ast.Definition) {
		for _, sel := range set {
			switch x := sel.(type) {
			case *ast.Field:
				if parent == nil || x.Directives.ForName("param") != nil {
					continue
				}
				x.ObjectDefinition = parent
				if def := parent.Fields.ForName(x.Name); def != nil {
					walk(x.SelectionSet, schema.Types[def.Type.Name()])
				}
			case *ast.InlineFragment:
				t := parent
				if x.TypeCondition != "" {
					t = schema.Types[x.TypeCondition]
				}
				walk(x.SelectionSet, t)
			case *ast.FragmentSpread:
				if f := fragments[x.Name]; f != nil && !seen[x.Name] {
					seen[x.Name] = true
					walk(f.SelectionSet, schema.Types[f.TypeCondition])
				}
			}
		}
	}
	walk(doc.Operations[0].SelectionSet, schema.Query)
}
