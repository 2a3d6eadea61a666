package rest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph"
)

// The operation is the envelope: a graph route's body is its operation's
// data with the keys the operation writes (aliases included, snake_case
// ones too), in the order it selects them, read through a few facade
// directives that package ops strips before the operation runs:
//
//   - @flatten on an object field: its members are written into the
//     enclosing object (a feed's limit, offset... at the top of the body).
//   - @group(key: "k") on a fragment spread or an inline fragment (`...
//     @group(key: "report") { ... }`): its fields are written as one object
//     under k.
//   - @param on a field: the facade writes the parameter of the field's
//     name (as parsed and defaulted; a bounded one as its resolver served
//     it, graph.Bound), or the route's Echo of
//     that name, under the field's key; the field is not executed. A route
//     with neither leaves the field out.
//   - @notFound(resource: "Entity"): the route answers 404 "<resource> not
//     found" when the field is null (for a @split list: empty).
//   - @split(rest: "matches") on a root list: the first element under the
//     field's key, the others as a list under rest.
//   - @schema(name: "X") on a field: its value (or each element) is the
//     named OpenAPI component X; a fragment XFields is component X.
//   - @nonNull: the route guarantees a value the schema's type allows to be
//     null.
//
// A comment above a field, spread or inline fragment is its description in
// OpenAPI. The response schema of each route is derived from the same
// selection typed by the GraphQL schema (routeResponse), so the body and
// its documented shape are written once.

// nodeKind is how a member of a shape is written.
type nodeKind int

const (
	nodeValue   nodeKind = iota // the data's value at path, copied as it is
	nodeParam                   // a parameter echoed
	nodeFlatten                 // an object's members written into the enclosing object
	nodeObject                  // members written as an object under key
	nodeList                    // a root list whose elements are rebuilt from members
	nodeSplit                   // a root list: its first element under key, the others under rest
)

// node is one member of a response shape.
type node struct {
	kind nodeKind
	key  string
	// path is the data path of the value: response keys from the root
	// joined by ".", or, below a list element, from the element.
	path string
	// param is the echoed parameter (nodeParam).
	param string
	// members are the members of an object, of a flattened object rebuilt
	// member by member (raw false) or of each element of a list.
	members []*node
	// raw says a flattened object's members are copied as the data holds
	// them (nothing below needs rebuilding).
	raw bool
	// rest is the key of a split list's other elements.
	rest string
	// optional: absent when the operation leaves it out (@include, @skip).
	optional bool

	// For the derived schema: the field and its type (nil for groups and
	// parameters), the selection's parent type, its description, whether
	// it is declared non-null, and its component name.
	field  *ast.Field
	typ    *ast.Type
	spread string // the fragment a group is made of, when one alone
	// fragment is the fragment the member was selected through, if any.
	fragment string
	desc     string
	nonNull  bool
	schema   string
}

// notFoundRule is a route's 404: the value at path null (empty when list).
type notFoundRule struct {
	path string
	list bool
	err  *cryptointel.Error
}

// shape is an operation read as a response.
type shape struct {
	op       string
	members  []*node
	notFound []notFoundRule
	// fragments are the operation's fragments by name, for the schema.
	fragments map[string]*ast.FragmentDefinition
}

// notFoundMessages are the 404 messages @notFound names by resource.
var notFoundMessages = map[string]string{
	"Entity":       cryptointel.MsgEntityNotFound,
	"Organization": cryptointel.MsgOrganizationNotFound,
}

// gqlSchema is the GraphQL schema the shapes are typed by.
var gqlSchema = sync.OnceValue(func() *ast.Schema {
	return graph.NewExecutableSchema(graph.Config{}).Schema()
})

// operationShapes are the shapes of the embedded operations, compiled once.
var operationShapes = sync.OnceValues(func() (map[string]*shape, error) {
	out := map[string]*shape{}
	for file, op := range fixedOperations() {
		if op.Shape.Operations[0].Operation != ast.Query {
			continue
		}
		s, err := compileShape(file, op.Shape, gqlSchema())
		if err != nil {
			return nil, fmt.Errorf("error reading the response of %s.graphql: %w", file, err)
		}
		out[file] = s
	}
	return out, nil
})

// shapeOf returns the shape of operation file.
func shapeOf(file string) (*shape, error) {
	all, err := operationShapes()
	if err != nil {
		return nil, err
	}
	s, ok := all[file]
	if !ok {
		return nil, fmt.Errorf("error reading the response of %s: no such query operation", file)
	}
	return s, nil
}

// compiler reads one operation's selection into a shape.
type compiler struct {
	schema *ast.Schema
	s      *shape
}

func compileShape(file string, doc *ast.QueryDocument, schema *ast.Schema) (*shape, error) {
	s := &shape{op: file, fragments: map[string]*ast.FragmentDefinition{}}
	for _, f := range doc.Fragments {
		s.fragments[f.Name] = f
	}
	typeShape(doc, schema)
	c := &compiler{schema: schema, s: s}
	members, err := c.selection(doc.Operations[0].SelectionSet, schema.Query, "", false, false)
	if err != nil {
		return nil, err
	}
	s.members = members
	return s, nil
}

func directiveArg(d *ast.Directive, name string) string {
	if a := d.Arguments.ForName(name); a != nil && a.Value != nil {
		return a.Value.Raw
	}
	return ""
}

func comment(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	var lines []string
	for _, c := range g.List {
		lines = append(lines, strings.TrimSpace(strings.TrimPrefix(c.Value, "#")))
	}
	return strings.Join(lines, " ")
}

func conditional(ds ast.DirectiveList) bool {
	return ds.ForName("include") != nil || ds.ForName("skip") != nil
}

// facade reports whether set (fragments included) holds a facade
// directive, so that its value cannot be copied as the data holds it.
func (c *compiler) facade(set ast.SelectionSet) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Directives.ForName("param") != nil || s.Directives.ForName("flatten") != nil ||
				s.Directives.ForName("split") != nil || s.Directives.ForName("notFound") != nil ||
				s.Directives.ForName("group") != nil || c.facade(s.SelectionSet) {
				return true
			}
		case *ast.InlineFragment:
			if s.Directives.ForName("group") != nil || c.facade(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Directives.ForName("group") != nil {
				return true
			}
			if f := c.s.fragments[s.Name]; f != nil && c.facade(f.SelectionSet) {
				return true
			}
		}
	}
	return false
}

// selection compiles set, a selection on parent, whose values sit at
// prefix; inList says prefix is relative to a root list's element.
func (c *compiler) selection(set ast.SelectionSet, parent *ast.Definition, prefix string, inList, optional bool) ([]*node, error) {
	var out []*node
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.FragmentSpread:
			f := c.s.fragments[s.Name]
			if f == nil {
				return nil, fmt.Errorf("unknown fragment %s", s.Name)
			}
			members, err := c.selection(f.SelectionSet, c.schema.Types[f.TypeCondition], prefix, inList, optional || conditional(s.Directives))
			if err != nil {
				return nil, err
			}
			if g := s.Directives.ForName("group"); g != nil {
				out = append(out, &node{kind: nodeObject, key: directiveArg(g, "key"), members: members, spread: s.Name, desc: comment(s.Comment)})
				continue
			}
			for _, m := range members {
				if m.fragment == "" {
					m.fragment = s.Name
				}
			}
			out = append(out, members...)
		case *ast.InlineFragment:
			typ := parent
			if s.TypeCondition != "" {
				typ = c.schema.Types[s.TypeCondition]
			}
			members, err := c.selection(s.SelectionSet, typ, prefix, inList, optional || conditional(s.Directives))
			if err != nil {
				return nil, err
			}
			if g := s.Directives.ForName("group"); g != nil {
				out = append(out, &node{kind: nodeObject, key: directiveArg(g, "key"), members: members, desc: comment(s.Comment)})
				continue
			}
			out = append(out, members...)
		case *ast.Field:
			n, err := c.field(s, parent, prefix, inList, optional)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
	}
	return out, nil
}

// field compiles one field of parent.
func (c *compiler) field(f *ast.Field, parent *ast.Definition, prefix string, inList, optional bool) (*node, error) {
	key := f.Alias
	if key == "" {
		key = f.Name
	}
	n := &node{key: key, field: f, desc: comment(f.Comment), optional: optional || conditional(f.Directives),
		nonNull: f.Directives.ForName("nonNull") != nil}
	if f.Directives.ForName("group") != nil {
		return nil, fmt.Errorf("%s: @group goes on a fragment spread or an inline fragment", key)
	}
	if f.Directives.ForName("param") != nil {
		n.kind, n.param = nodeParam, f.Name
		return n, nil
	}
	if parent == nil {
		return nil, fmt.Errorf("%s: no parent type", key)
	}
	def := parent.Fields.ForName(f.Name)
	if def == nil {
		return nil, fmt.Errorf("%s has no field %s", parent.Name, f.Name)
	}
	n.typ = def.Type
	n.path = key
	if prefix != "" {
		n.path = prefix + "." + key
	}
	if d := f.Directives.ForName("schema"); d != nil {
		n.schema = directiveArg(d, "name")
	}
	if d := f.Directives.ForName("notFound"); d != nil {
		msg, ok := notFoundMessages[directiveArg(d, "resource")]
		if !ok {
			return nil, fmt.Errorf("%s: @notFound names no known resource", key)
		}
		if inList {
			return nil, fmt.Errorf("%s: @notFound inside a list", key)
		}
		c.s.notFound = append(c.s.notFound, notFoundRule{path: n.path, list: f.Directives.ForName("split") != nil,
			err: &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: msg}})
		n.nonNull = true
	}
	elem := c.schema.Types[def.Type.Name()]
	rebuilt := c.facade(f.SelectionSet)
	isList := def.Type.Elem != nil
	var err error
	switch {
	case f.Directives.ForName("flatten") != nil:
		if isList {
			return nil, fmt.Errorf("%s: @flatten on a list", key)
		}
		n.kind, n.raw = nodeFlatten, !rebuilt
		n.members, err = c.selection(f.SelectionSet, elem, n.path, inList, n.optional)
	case f.Directives.ForName("split") != nil || (rebuilt && isList):
		if !isList || prefix != "" || inList {
			return nil, fmt.Errorf("%s: only a root list's elements can be rebuilt", key)
		}
		n.kind = nodeList
		if d := f.Directives.ForName("split"); d != nil {
			n.kind, n.rest = nodeSplit, directiveArg(d, "rest")
		}
		n.members, err = c.selection(f.SelectionSet, elem, "", true, false)
	case rebuilt:
		n.kind = nodeObject
		n.members, err = c.selection(f.SelectionSet, elem, n.path, inList, n.optional)
	default:
		n.kind = nodeValue
	}
	return n, err
}

// Writing a body.

// bodyWriter writes a shape's members from an operation's data.
type bodyWriter struct {
	b []byte
	c *Call
	d *Data
}

func (w *bodyWriter) key(first *bool, k string) {
	if !*first {
		w.b = append(w.b, ',')
	}
	*first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

// lookup returns the value at path, from the root or from item.
func (w *bodyWriter) lookup(item *Item, path string) (raw, bool) {
	if item != nil {
		return item.lookup(path)
	}
	return w.d.lookup(path)
}

// members writes ns into the object being written.
func (w *bodyWriter) members(ns []*node, item *Item, first *bool) error {
	for _, n := range ns {
		switch n.kind {
		case nodeParam:
			val, ok := w.c.Values[n.param]
			if !ok && !w.c.Route.writes(n.param) {
				continue
			}
			v, err := json.Marshal(val)
			if err != nil {
				return fmt.Errorf("error encoding %s: %w", n.key, err)
			}
			w.key(first, n.key)
			w.b = append(w.b, v...)
		case nodeValue:
			v, ok := w.lookup(item, n.path)
			if !ok && n.optional {
				continue
			}
			w.key(first, n.key)
			if len(v) == 0 {
				v = raw("null")
			}
			w.put(v)
		case nodeFlatten:
			if !n.raw {
				if err := w.members(n.members, item, first); err != nil {
					return err
				}
				continue
			}
			v, ok := w.lookup(item, n.path)
			if !ok || len(v) < 2 || v[0] != '{' {
				continue
			}
			if inner := v[1 : len(v)-1]; len(inner) > 0 {
				if !*first {
					w.b = append(w.b, ',')
				}
				*first = false
				w.put(inner)
			}
		case nodeObject:
			if n.field != nil && n.optional {
				if _, ok := w.lookup(item, n.path); !ok {
					continue
				}
			}
			w.key(first, n.key)
			if err := w.object(n.members, item); err != nil {
				return err
			}
		case nodeList:
			w.key(first, n.key)
			w.b = append(w.b, '[')
			for i, it := range w.d.Items(n.key) {
				if i > 0 {
					w.b = append(w.b, ',')
				}
				if err := w.object(n.members, &it); err != nil {
					return err
				}
			}
			w.b = append(w.b, ']')
		case nodeSplit:
			items := w.d.Items(n.key)
			w.key(first, n.key)
			if len(items) == 0 {
				w.b = append(w.b, "null"...)
			} else if err := w.object(n.members, &items[0]); err != nil {
				return err
			}
			w.key(first, n.rest)
			w.b = append(w.b, '[')
			for i := 1; i < len(items); i++ {
				if i > 1 {
					w.b = append(w.b, ',')
				}
				if err := w.object(n.members, &items[i]); err != nil {
					return err
				}
			}
			w.b = append(w.b, ']')
		}
	}
	return nil
}

func (w *bodyWriter) object(ns []*node, item *Item) error {
	w.b = append(w.b, '{')
	first := true
	if err := w.members(ns, item, &first); err != nil {
		return err
	}
	w.b = append(w.b, '}')
	return nil
}

// body writes call c's response from its operation's data d: a 404 when a
// @notFound value is missing, else the body and its newline, appended to
// into (a pooled buffer) or, when into is nil, to a buffer of its own.
func (s *shape) body(c *Call, d *Data, into []byte) ([]byte, error) {
	for _, nf := range s.notFound {
		if nf.list {
			if len(d.Items(nf.path)) == 0 {
				return nil, nf.err
			}
		} else if v, ok := d.lookup(nf.path); !ok || v.isNull() {
			return nil, nf.err
		}
	}
	if n := len(d.b) + 256; cap(into) < n {
		into = make([]byte, 0, n) // a pooled buffer too small is left to the collector
	}
	w := bodyWriter{b: into[:0], c: c, d: d}
	if err := w.object(s.members, nil); err != nil {
		return nil, err
	}
	return append(w.b, '\n'), nil
}
