package main

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/cryptointel/cryptointel/rest/ops"
	"github.com/cryptointel/cryptointel/wire"
)

// compiledOps writes ops_gen.go: every fixed /v1 operation (rest/ops)
// compiled. Its selection set is collected here, once, the way
// graphql.CollectFields collects it at run time (fragments expanded, fields
// of one response key merged, @skip/@include kept as run-time conditions),
// and written out as one function per selection: the fields in order, each
// resolved and written, no plan, no field switch.
func (g *gen) compiledOps() ([]byte, error) {
	// The value writers fastexec_gen.go has are reused (values and done
	// carry over); only this file's imports start afresh.
	g.imports = map[string]string{}
	g.use("context", "context")
	all, err := ops.Load()
	if err != nil {
		return nil, err
	}
	files := make([]string, 0, len(all))
	for f := range all {
		files = append(files, f)
	}
	sort.Strings(files)
	var body, reg bytes.Buffer
	reg.WriteString("// compiledOperations are the fixed operations of the /v1 facade\n// (rest/ops), compiled, by their exact query text.\nvar compiledOperations = map[string]compiledOp{\n")
	for _, file := range files {
		op := all[file]
		if errs := validator.ValidateWithRules(g.data.Schema, op.Doc, nil); len(errs) > 0 {
			return nil, fmt.Errorf("%s.graphql does not validate: %w", file, errs)
		}
		def := op.Doc.Operations[0]
		if def.Operation != ast.Query {
			continue // subscriptions and mutations run on gqlgen's executor
		}
		c := &opCompiler{g: g, op: op, def: def, name: op.Name, b: &body}
		if err := c.compile(); err != nil {
			return nil, fmt.Errorf("%s.graphql: %w", file, err)
		}
		fmt.Fprintf(&reg, "\t%s: {name: %q, run: (*fastExec).op_%s, fields: %s, args: %d},\n",
			c.queryConst(), op.Name, op.Name, c.fieldsVar(), c.nargs)
	}
	reg.WriteString("}\n\n")
	if err := g.flushValues(&body); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Write(reg.Bytes())
	out.Write(body.Bytes())
	return g.header(out.Bytes()), nil
}

// opCompiler compiles one operation.
type opCompiler struct {
	g    *gen
	op   *ops.Operation
	def  *ast.OperationDefinition
	name string
	b    *bytes.Buffer

	// fields are the paths of the field nodes the code refers to, by
	// index (fieldsVar()[i]).
	fields [][]int
	nsel   int // selection functions emitted
	nargs  int // fields with arguments (per-run argument slots)
}

func (c *opCompiler) queryConst() string { return "opQuery_" + c.name }
func (c *opCompiler) fieldsVar() string  { return "opFields_" + c.name }

// collected is one response key of a selection set collected for a type.
type collected struct {
	alias string
	field *ast.Field // the first field of the key (its position, arguments)
	path  []int      // its path in the document
	// conds are the directive lists that must all allow the key
	// (@skip/@include on the field and on the fragments around it).
	conds []ast.DirectiveList
	// subPaths are the paths of every field merged into the key.
	subPaths [][]int
}

// sel is a selection with its path and the conditions above it.
type sel struct {
	s     ast.Selection
	path  []int
	conds []ast.DirectiveList
}

// collect mirrors graphql.CollectFields for the concrete type typ.
func (c *opCompiler) collect(sels []sel, typ string) ([]*collected, error) {
	var out []*collected
	byAlias := map[string]*collected{}
	var walk func(sels []sel) error
	walk = func(sels []sel) error {
		for _, s := range sels {
			switch x := s.s.(type) {
			case *ast.Field:
				conds := withConds(s.conds, x.Directives)
				alias := x.Alias
				if alias == "" {
					alias = x.Name
				}
				if k, ok := byAlias[alias]; ok {
					if !sameConds(k.conds, conds) {
						return fmt.Errorf("response key %s appears under different @skip/@include conditions; the compiler does not merge those (give it one)", alias)
					}
					k.subPaths = append(k.subPaths, s.path)
					continue
				}
				k := &collected{alias: alias, field: x, path: s.path, conds: conds, subPaths: [][]int{s.path}}
				byAlias[alias] = k
				out = append(out, k)
			case *ast.InlineFragment:
				if x.TypeCondition != "" && x.TypeCondition != typ {
					continue
				}
				if err := walk(children(x.SelectionSet, s.path, withConds(s.conds, x.Directives))); err != nil {
					return err
				}
			case *ast.FragmentSpread:
				f := c.op.Doc.Fragments.ForName(x.Name)
				if f == nil {
					return fmt.Errorf("unknown fragment %s", x.Name)
				}
				if f.TypeCondition != typ {
					continue
				}
				if err := walk(children(f.SelectionSet, s.path, withConds(s.conds, x.Directives))); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(sels); err != nil {
		return nil, err
	}
	return out, nil
}

// children are the selections of set under a node at path.
func children(set ast.SelectionSet, path []int, conds []ast.DirectiveList) []sel {
	out := make([]sel, len(set))
	for i, s := range set {
		out[i] = sel{s: s, path: append(append([]int(nil), path...), i), conds: conds}
	}
	return out
}

func withConds(conds []ast.DirectiveList, ds ast.DirectiveList) []ast.DirectiveList {
	if ds.ForName("skip") == nil && ds.ForName("include") == nil {
		return conds
	}
	return append(append([]ast.DirectiveList(nil), conds...), ds)
}

func sameConds(a, b []ast.DirectiveList) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// fieldRef registers a field node by path and returns its expression.
func (c *opCompiler) fieldRef(path []int) string {
	c.fields = append(c.fields, path)
	return fmt.Sprintf("&x.cfields[%d]", len(c.fields)-1)
}

func (c *opCompiler) compile() error {
	root := children(c.def.SelectionSet, nil, nil)
	keys, err := c.collect(root, c.g.data.QueryRoot.Name)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.b, "// op_%s runs %s (rest/ops), compiled.\nfunc (x *fastExec) op_%s(ctx context.Context) {\n", c.name, c.name, c.name)
	c.b.WriteString("\tvar p *fpath\n")
	if err := c.selection(c.g.data.QueryRoot, keys, ""); err != nil {
		return err
	}
	c.b.WriteString("}\n\n")
	if err := c.flushSelections(); err != nil {
		return err
	}
	// The query text and the paths of the nodes the code refers to.
	fmt.Fprintf(c.b, "const %s = %s\n\n", c.queryConst(), strconv.Quote(c.op.Query))
	fmt.Fprintf(c.b, "var %s = [][]int{\n", c.fieldsVar())
	for _, p := range c.fields {
		fmt.Fprintf(c.b, "\t{%s},\n", joinInts(p))
	}
	c.b.WriteString("}\n\n")
	return nil
}

func joinInts(p []int) string {
	s := make([]string, len(p))
	for i, v := range p {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ", ")
}

// pendingSel is a selection function still to emit.
type pendingSel struct {
	name string
	obj  *codegen.Object
	keys []*collected
}

var pendingSels = map[*opCompiler][]pendingSel{}

func (c *opCompiler) flushSelections() error {
	for len(pendingSels[c]) > 0 {
		ps := pendingSels[c][0]
		pendingSels[c] = pendingSels[c][1:]
		fmt.Fprintf(c.b, "func (x *fastExec) %s(ctx context.Context, p *fpath, obj %s) bool {\n", ps.name, c.g.typ(ps.obj.Reference()))
		if err := c.selection(ps.obj, ps.keys, "obj"); err != nil {
			return err
		}
		c.b.WriteString("}\n\n")
	}
	delete(pendingSels, c)
	return nil
}

// selection emits the body writing one collected selection of object o:
// in the root function it writes the data object, in a selection function
// it returns whether the object came out non-null.
func (c *opCompiler) selection(o *codegen.Object, keys []*collected, objVar string) error {
	b := c.b
	b.WriteString("\tstart := len(x.w.B)\n\tx.w.Byte('{')\n\tinvalid := false\n")
	conditional := false
	for _, k := range keys {
		if len(k.conds) > 0 {
			conditional = true
		}
	}
	if conditional {
		b.WriteString("\tfirst := true\n")
	}
	legacy := legacyPlan(keys)
	if legacy != nil && conditional {
		return fmt.Errorf("an event selection with @skip/@include conditions cannot carry the facade's legacy aliases")
	}
	if legacy != nil {
		for i, span := range legacy.spanOf {
			if span >= 0 && i > legacy.insertAfter {
				return fmt.Errorf("%s follows the members the legacy aliases are written after; select it before them", keys[i].alias)
			}
		}
	}
	for i, k := range keys {
		if conditional {
			fmt.Fprintf(b, "\tif %s {\n", c.condExpr(k))
			fmt.Fprintf(b, "\tx.w.Key(%q, first)\n\tfirst = false\n", k.alias)
		} else if i == 0 {
			fmt.Fprintf(b, "\tx.w.Raw(%q)\n", `"`+k.alias+`":`)
		} else {
			fmt.Fprintf(b, "\tx.w.Raw(%q)\n", `,"`+k.alias+`":`)
		}
		span := -1
		if legacy != nil {
			span = legacy.spanOf[i]
		}
		if span >= 0 {
			fmt.Fprintf(b, "\tls%d := len(x.w.B)\n", span)
		}
		if err := c.field(o, k); err != nil {
			return fmt.Errorf("%s.%s: %w", o.Name, k.field.Name, err)
		}
		if span >= 0 {
			fmt.Fprintf(b, "\tle%d := len(x.w.B)\n", span)
		}
		if legacy != nil && legacy.insertAfter == i {
			// The facade's legacy aliases (rest/legacy.go, from
			// wire.EventFields): copies of the canonical values, written
			// after the last of them, in table order.
			b.WriteString("\tif x.legacy {\n")
			for _, a := range legacy.aliases {
				fmt.Fprintf(b, "\t\tx.w.Raw(%q)\n\t\tx.w.B = append(x.w.B, x.w.B[ls%d:le%d]...)\n", `,"`+a.legacy+`":`, a.span, a.span)
			}
			b.WriteString("\t}\n")
		}
		if conditional {
			b.WriteString("\t}\n")
		}
	}
	if objVar == "" {
		b.WriteString("\tif invalid {\n\t\tx.w.Truncate(start)\n\t\tx.w.Null()\n\t\treturn\n\t}\n\tx.w.Byte('}')\n")
		return nil
	}
	b.WriteString("\tif invalid {\n\t\tx.w.Truncate(start)\n\t\tx.w.Null()\n\t\treturn false\n\t}\n\tx.w.Byte('}')\n\treturn true\n")
	return nil
}

// condExpr is the run-time test of a key's @skip/@include conditions.
func (c *opCompiler) condExpr(k *collected) string {
	if len(k.conds) == 0 {
		return "true"
	}
	var parts []string
	for _, ds := range k.conds {
		// The directive lists live in the parsed document: refer to the
		// field (or fragment) node by the key's field and compare by
		// evaluating the same lists at run time.
		parts = append(parts, fmt.Sprintf("x.shouldInclude(%s)", c.directivesExpr(k, ds)))
	}
	return strings.Join(parts, " && ")
}

// directivesExpr finds, at run time, the directive list ds: the key's own
// field's, or that of the fragment node on its path.
func (c *opCompiler) directivesExpr(k *collected, ds ast.DirectiveList) string {
	// Walk the key's path to find which node holds ds.
	var set ast.SelectionSet = c.def.SelectionSet
	for depth, idx := range k.path {
		s := set[idx]
		var nodeDirs ast.DirectiveList
		var next ast.SelectionSet
		switch x := s.(type) {
		case *ast.Field:
			nodeDirs, next = x.Directives, x.SelectionSet
		case *ast.InlineFragment:
			nodeDirs, next = x.Directives, x.SelectionSet
		case *ast.FragmentSpread:
			nodeDirs, next = x.Directives, c.op.Doc.Fragments.ForName(x.Name).SelectionSet
		}
		if len(nodeDirs) > 0 && len(ds) > 0 && &nodeDirs[0] == &ds[0] {
			c.fields = append(c.fields, append([]int(nil), k.path[:depth+1]...))
			return fmt.Sprintf("x.cdirectives[%d]", len(c.fields)-1)
		}
		set = next
	}
	panic("directive list not on the key's path")
}

// field emits the resolution and writing of one key.
func (c *opCompiler) field(o *codegen.Object, k *collected) error {
	var f *codegen.Field
	for _, ff := range o.Fields {
		if ff.Name == k.field.Name {
			f = ff
		}
	}
	b := c.b
	if k.field.Name == "__typename" {
		fmt.Fprintf(b, "\tx.w.Raw(%q)\n", strconv.Quote(o.Name))
		return nil
	}
	if f == nil {
		return fmt.Errorf("no field %s", k.field.Name)
	}
	ref := f.TypeReference
	nn := ref.GQL.NonNull
	vname, err := c.value(ref, k)
	if err != nil {
		return err
	}
	markInvalid := ""
	if nn {
		markInvalid = "\t\t\tinvalid = true\n"
	}
	fmt.Fprintf(b, "\t{\n\t\tfp := fpath{parent: p, field: %s}\n", c.fieldRef(k.path))
	if !needsCall(f) {
		if nn {
			fmt.Fprintf(b, "\t\tif x.%s(ctx, &fp, nil, obj.%s) {\n\t\t\tinvalid = true\n\t\t}\n\t}\n", vname, f.GoFieldName)
		} else {
			fmt.Fprintf(b, "\t\tx.%s(ctx, &fp, nil, obj.%s)\n\t}\n", vname, f.GoFieldName)
		}
		return nil
	}
	b.WriteString("\t\tfor once := true; once; once = false {\n")
	argsCall := ""
	if len(f.Args) > 0 {
		argsCall = fmt.Sprintf("x.opArgs(ctx, &fp, %d, (*executionContext).%s)", c.nargs, f.ArgsFunc())
		c.nargs++
	}
	resolveCall(b, "\t\t", o, f, argsCall, markInvalid, nn, vname, "nil")
	b.WriteString("\t\t}\n\t}\n")
	return nil
}

// value returns the writer of ref for key k: the shared one for scalars,
// one of this operation's own for a value holding objects (it writes them
// with k's compiled selection).
func (c *opCompiler) value(ref *config.TypeReference, k *collected) (string, error) {
	inner := ref
	for inner.IsSlice() || inner.IsPtrToSlice() {
		inner = inner.Elem()
	}
	if inner.Definition.Kind != ast.Object {
		return c.g.value(ref)
	}
	obj := c.g.objects[inner.Definition.Name]
	if obj == nil {
		return "", fmt.Errorf("no object %s", inner.Definition.Name)
	}
	keys, err := c.collectMerged(k, obj.Name)
	if err != nil {
		return "", err
	}
	c.nsel++
	selName := fmt.Sprintf("cs_%s_%d", c.name, c.nsel)
	pendingSels[c] = append(pendingSels[c], pendingSel{name: selName, obj: obj, keys: keys})
	return c.g.valueWith(fmt.Sprintf("cv_%s_%d_", c.name, c.nsel), ref, selName), nil
}

// collectMerged collects the child selections of every field of key k,
// each with its real path.
func (c *opCompiler) collectMerged(k *collected, typ string) ([]*collected, error) {
	var all []sel
	for _, p := range k.subPaths {
		f := c.nodeAt(p).(*ast.Field)
		all = append(all, children(f.SelectionSet, p, nil)...)
	}
	return c.collect(all, typ)
}

// nodeAt returns the selection at path.
func (c *opCompiler) nodeAt(path []int) ast.Selection {
	var set ast.SelectionSet = c.def.SelectionSet
	var s ast.Selection
	for _, idx := range path {
		s = set[idx]
		switch x := s.(type) {
		case *ast.Field:
			set = x.SelectionSet
		case *ast.InlineFragment:
			set = x.SelectionSet
		case *ast.FragmentSpread:
			set = c.op.Doc.Fragments.ForName(x.Name).SelectionSet
		}
	}
	return s
}

// legacyAliases is what the facade's legacy writer (rest/legacy.go) does to
// an event object with these keys, worked out once: which keys' values it
// copies, under which legacy names, after which key.
type legacyAliases struct {
	insertAfter int   // index of the key the aliases follow
	spanOf      []int // per key: the index of its recorded value span, or -1
	aliases     []struct {
		legacy string
		span   int
	}
}

// legacyPlan applies rest/legacy.go's rule to a selection's keys: an object
// with a latestEvidenceTimestamp member is an event; after the last of its
// members that wire.EventFields places at or after that marker, each
// legacy name of wire.EventFields whose canonical member is present and
// which is not a member itself, in table order, repeats the canonical
// value. It returns nil for any other object.
func legacyPlan(keys []*collected) *legacyAliases {
	const marker = "latestEvidenceTimestamp"
	index := map[string]int{}
	for i, k := range keys {
		index[k.alias] = i
	}
	if _, ok := index[marker]; !ok {
		return nil
	}
	markerField := -1
	for i, f := range wire.EventFields {
		if f.Name == marker {
			markerField = i
		}
	}
	l := &legacyAliases{insertAfter: -1, spanOf: make([]int, len(keys))}
	for i := range l.spanOf {
		l.spanOf[i] = -1
	}
	for fi, f := range wire.EventFields {
		i, ok := index[f.Name]
		if !ok {
			continue
		}
		if fi >= markerField && i > l.insertAfter {
			l.insertAfter = i
		}
	}
	for _, f := range wire.EventFields {
		i, ok := index[f.Name]
		if !ok {
			continue
		}
		if f.Legacy == "" {
			continue
		}
		if _, present := index[f.Legacy]; present {
			continue
		}
		span := len(l.aliases)
		l.spanOf[i] = span
		l.aliases = append(l.aliases, struct {
			legacy string
			span   int
		}{f.Legacy, span})
	}
	return l
}
