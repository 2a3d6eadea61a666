package graph

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/cryptointel/cryptointel/graph/jsonw"
)

// This file is the hand-written runtime of the generated executor
// (fastexec_gen.go, ops_gen.go; see graph/gen). gqlgen's executor resolves
// every field in a field context of its own, runs resolver fields and list
// elements in goroutines and builds a tree of marshalers before writing a
// byte. The generated executor resolves the fields of a query one after
// another, in document order, and appends the response to one buffer; it
// calls the same resolvers, argument coercion and directives, and records
// errors through the same response context and presenter, so its bytes,
// nulls and errors are gqlgen's (tests/differential_test.go).

// FastExecutableSchema is the executable schema of cfg whose query
// operations run on the generated executor. Everything else — introspection,
// @defer, subscriptions and mutations — runs on gqlgen's generated executor,
// as do all operations when fast is false (the differential test's
// reference). Parsing, validation, complexity and every handler extension
// are gqlgen's in both cases: only the resolution of the selected fields
// differs.
func FastExecutableSchema(cfg Config) *FastSchema {
	es := NewExecutableSchema(cfg).(*executableSchema)
	s := &FastSchema{executableSchema: es, rs: newFastResolvers(cfg.Resolvers), compiled: map[string]*preparedOp{}}
	for query, op := range compiledOperations {
		s.compiled[query] = prepareOp(es.Schema(), query, op)
	}
	s.fast.Store(true)
	return s
}

// FastSchema is a graphql.ExecutableSchema; see FastExecutableSchema.
type FastSchema struct {
	*executableSchema
	rs       fastResolvers
	fast     atomic.Bool
	compiled map[string]*preparedOp
}

var _ graphql.ExecutableSchema = (*FastSchema)(nil)

// SetFast turns the generated executor on or off (on by default); off,
// every operation runs on gqlgen's executor.
func (s *FastSchema) SetFast(on bool) { s.fast.Store(on) }

// Exec runs the operation of ctx.
func (s *FastSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	if !s.fast.Load() || !fastSupported(opCtx) {
		return s.executableSchema.Exec(ctx)
	}
	done := false
	return func(ctx context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		ctx = context.WithValue(ctx, serialKey{}, true)
		x := s.newExec(opCtx)
		if op, ok := s.compiled[opCtx.RawQuery]; ok && op.name == opCtx.OperationName {
			if ctx.Value(facadeKey{}) != nil {
				// The /v1 facade's form of the data: events carry their
				// legacy aliases and strings are HTML-escaped, as the
				// facade would make them (rest/legacy.go, rest/envelope.go).
				x.legacy, x.w.HTML = true, true
				graphql.RegisterExtension(ctx, FacadeExtension, true)
				// The facade copies the data into its envelope and
				// then gives the buffer back (PooledDataExtension).
				x.w.B = jsonw.Buffer()
				graphql.RegisterExtension(ctx, PooledDataExtension, true)
			}
			x.cfields, x.cdirectives = op.fields, op.directives
			x.cargs = make([]planArgs, op.args)
			op.run(x, ctx)
		} else {
			x.o_Query(ctx, nil, x.newPlan(opCtx.Operation.SelectionSet, queryImplementors))
		}
		return &graphql.Response{Data: x.w.B}
	}
}

func (s *FastSchema) newExec(opCtx *graphql.OperationContext) *fastExec {
	return &fastExec{
		ec:    newExecutionContext(opCtx, s.executableSchema, nil),
		rs:    &s.rs,
		opCtx: opCtx,
	}
}

type serialKey struct{}

type facadeKey struct{}

// FacadeExtension is the response extension (true) of an operation whose
// data is already in the /v1 facade's form: every event object carries its
// legacy aliases (rest/legacy.go) and strings are HTML-escaped as
// encoding/json escapes them. Compiled operations run in a context from
// WithFacade answer so; anything else answers plain GraphQL data, which the
// facade then converts itself.
const FacadeExtension = "facade"

// PooledDataExtension is the response extension (true) of an operation
// whose data was written into a buffer of jsonw's pool: the caller owns it
// and gives it back with jsonw.Release once nothing refers to its bytes.
// Only the facade's operations (WithFacade) answer so.
const PooledDataExtension = "pooledData"

// WithFacade returns ctx asking for the facade's form of the data.
func WithFacade(ctx context.Context) context.Context {
	return context.WithValue(ctx, facadeKey{}, true)
}

// Serial reports whether ctx's fields are resolved by the generated
// executor, one after another: a loader then fetches at once instead of
// waiting for other fields to join its batch.
func Serial(ctx context.Context) bool {
	v, _ := ctx.Value(serialKey{}).(bool)
	return v
}

// fastSupported reports whether the generated executor runs opCtx's
// operation: a query without introspection at its root and without @defer.
func fastSupported(opCtx *graphql.OperationContext) bool {
	op := opCtx.Operation
	if op == nil || op.Operation != ast.Query {
		return false
	}
	w := supportWalk{frags: opCtx.Doc.Fragments, seen: map[string]bool{}}
	return w.ok(op.SelectionSet, true)
}

type supportWalk struct {
	frags ast.FragmentDefinitionList
	seen  map[string]bool
}

func (w *supportWalk) ok(set ast.SelectionSet, root bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if root && (s.Name == "__schema" || s.Name == "__type") {
				return false
			}
			if hasDefer(s.Directives) || !w.ok(s.SelectionSet, false) {
				return false
			}
		case *ast.InlineFragment:
			if hasDefer(s.Directives) || !w.ok(s.SelectionSet, root) {
				return false
			}
		case *ast.FragmentSpread:
			if hasDefer(s.Directives) {
				return false
			}
			key := s.Name
			if root {
				key = "^" + key // a fragment spread at the root is walked as root
			}
			if w.seen[key] {
				continue
			}
			w.seen[key] = true
			if f := w.frags.ForName(s.Name); f != nil && !w.ok(f.SelectionSet, root) {
				return false
			}
		}
	}
	return true
}

func hasDefer(ds ast.DirectiveList) bool {
	for _, d := range ds {
		if d.Name == "defer" || d.Name == "stream" {
			return true
		}
	}
	return false
}

// fastExec is one operation's run of the generated executor.
type fastExec struct {
	ec    *executionContext
	rs    *fastResolvers
	opCtx *graphql.OperationContext
	w     jsonw.Writer

	// A compiled operation's field nodes, directive lists and argument
	// slots (see preparedOp).
	cfields     []graphql.CollectedField
	cdirectives []ast.DirectiveList
	cargs       []planArgs
	// legacy: write the facade's legacy aliases (see FacadeExtension).
	legacy bool
}

// fpath is the response path of the value being written: a chain on the
// stack, turned into gqlgen field contexts only when an error is recorded.
type fpath struct {
	parent  *fpath
	field   *graphql.CollectedField
	index   int
	isIndex bool
}

// errCtx is ctx with the field contexts of p, as gqlgen would have them
// when resolving the value at p (errors take their path from them). Only
// the error paths build them.
func (x *fastExec) errCtx(ctx context.Context, p *fpath) context.Context {
	if p == nil {
		return ctx
	}
	// graphql.WithFieldContext sets each context's parent to the one
	// ctx carries, so the chain is built from the root down.
	ctx = x.errCtx(ctx, p.parent)
	fc := &graphql.FieldContext{}
	if p.isIndex {
		i := p.index
		fc.Index = &i
	} else {
		fc.Field = *p.field
	}
	return graphql.WithFieldContext(ctx, fc)
}

// plan is one selection set collected for one object type, with each
// field's arguments and child plan computed on first use: the elements of
// a list share their plan, so a list collects its fields and coerces their
// arguments once, not per element.
type plan struct {
	fields []graphql.CollectedField
	args   []planArgs
	kids   []*plan
}

type planArgs struct {
	done bool
	args map[string]any
	err  error
}

func (x *fastExec) newPlan(sel ast.SelectionSet, satisfies []string) *plan {
	fields := graphql.CollectFields(x.opCtx, sel, satisfies)
	return &plan{fields: fields}
}

// child is the plan of field i's value, of an object type.
func (x *fastExec) child(pl *plan, i int, satisfies []string) *plan {
	if pl.kids == nil {
		pl.kids = make([]*plan, len(pl.fields))
	}
	if pl.kids[i] == nil {
		pl.kids[i] = x.newPlan(pl.fields[i].Selections, satisfies)
	}
	return pl.kids[i]
}

// argsFunc is a generated field_<Type>_<field>_args method.
type argsFunc func(*executionContext, context.Context, map[string]any) (map[string]any, error)

// args returns field i's coerced arguments. A failure is recorded at p, as
// gqlgen's field-context function records it, and ok is false.
func (x *fastExec) args(ctx context.Context, p *fpath, pl *plan, i int, fn argsFunc) (map[string]any, bool) {
	if pl.args == nil {
		pl.args = make([]planArgs, len(pl.fields))
	}
	a := &pl.args[i]
	if !a.done {
		a.done = true
		a.args, a.err = fn(x.ec, ctx, pl.fields[i].ArgumentMap(x.opCtx.Variables))
	}
	if a.err == nil {
		return a.args, true
	}
	// Coerce again in the field's context so the error carries its path.
	ectx := x.errCtx(ctx, p)
	_, err := fn(x.ec, ectx, pl.fields[i].ArgumentMap(x.opCtx.Variables))
	if err == nil {
		err = a.err
	}
	x.ec.Error(ectx, err)
	return nil, false
}

// Outcomes of a resolve function that are not the resolver's own error.
var (
	// errRecorded: the error (a panic) is recorded already.
	errRecorded = errors.New("error recorded")
	// errUntypedNil: a directive chain returned nil, nil.
	errUntypedNil = errors.New("untyped nil")
	// errInfiniteFloat is gqlgen's error for a float JSON cannot carry.
	errInfiniteFloat = errors.New("cannot marshal infinite no NaN float values")
)

// plainError is an error gqlgen records without the field's location.
type plainError struct{ error }

func unexpectedType(got, want any) error {
	return plainError{fmt.Errorf(`unexpected type %T from middleware/directive chain, should be %T`, got, want)}
}

// fail records a resolve function's error at p as gqlgen's resolveField
// does.
func (x *fastExec) fail(ctx context.Context, p *fpath, err error, nonNull bool) {
	switch {
	case err == errRecorded:
	case err == errUntypedNil:
		if nonNull {
			ectx := x.errCtx(ctx, p)
			if fc := graphql.GetFieldContext(ectx); !graphql.HasFieldError(ectx, fc) {
				x.ec.Errorf(ectx, "must not be null")
			}
		}
	default:
		ectx := x.errCtx(ctx, p)
		var pe plainError
		if errors.As(err, &pe) {
			x.ec.Errorf(ectx, "%s", pe.Error())
			return
		}
		x.ec.Error(ectx, graphql.AddFieldLocationToError(ectx, err))
	}
}

// recovered records a panic of a resolver at p, as gqlgen does.
func (x *fastExec) recovered(ctx context.Context, p *fpath, r any) error {
	ectx := x.errCtx(ctx, p)
	x.ec.Error(ectx, x.ec.Recover(ectx, r))
	return errRecorded
}

// nullElement records that a non-null value at p is null, unless an error
// is recorded there already.
func (x *fastExec) nullElement(ctx context.Context, p *fpath) {
	ectx := x.errCtx(ctx, p)
	if !graphql.HasFieldError(ectx, graphql.GetFieldContext(ectx)) {
		graphql.AddErrorf(ectx, "the requested element is null which the schema does not allow")
	}
}

// addError records err at p.
func (x *fastExec) addError(ctx context.Context, p *fpath, err error) {
	graphql.AddError(x.errCtx(ctx, p), err)
}

// compiledOp is a compiled fixed operation (ops_gen.go): its code and the
// document nodes the code refers to, by their paths (selection indices,
// fragment spreads followed).
type compiledOp struct {
	name   string
	run    func(x *fastExec, ctx context.Context)
	fields [][]int
	args   int
}

// preparedOp is a compiledOp with its nodes found in its parsed and
// validated document: the fields (their positions for errors, their
// arguments and definitions for coercion) and the directive lists its
// @skip/@include conditions read.
type preparedOp struct {
	compiledOp
	fields     []graphql.CollectedField
	directives []ast.DirectiveList
}

func prepareOp(schema *ast.Schema, query string, op compiledOp) *preparedOp {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		panic(fmt.Sprintf("compiled operation %s does not parse: %v", op.name, err))
	}
	if errs := validator.ValidateWithRules(schema, doc, nil); len(errs) > 0 {
		panic(fmt.Sprintf("compiled operation %s does not validate: %v", op.name, errs))
	}
	p := &preparedOp{compiledOp: op, fields: make([]graphql.CollectedField, len(op.fields)), directives: make([]ast.DirectiveList, len(op.fields))}
	for i, path := range op.fields {
		set := doc.Operations[0].SelectionSet
		var node ast.Selection
		for _, idx := range path {
			node = set[idx]
			switch n := node.(type) {
			case *ast.Field:
				set = n.SelectionSet
			case *ast.InlineFragment:
				set = n.SelectionSet
			case *ast.FragmentSpread:
				set = doc.Fragments.ForName(n.Name).SelectionSet
			}
		}
		switch n := node.(type) {
		case *ast.Field:
			p.fields[i] = graphql.CollectedField{Field: n}
			p.directives[i] = n.Directives
		case *ast.InlineFragment:
			p.directives[i] = n.Directives
		case *ast.FragmentSpread:
			p.directives[i] = n.Directives
		}
	}
	return p
}

// opArgs returns the coerced arguments of a compiled operation's field at
// p, computed once per run in slot i; a failure is recorded at p.
func (x *fastExec) opArgs(ctx context.Context, p *fpath, i int, fn argsFunc) (map[string]any, bool) {
	a := &x.cargs[i]
	if !a.done {
		a.done = true
		a.args, a.err = fn(x.ec, ctx, p.field.ArgumentMap(x.opCtx.Variables))
	}
	if a.err == nil {
		return a.args, true
	}
	ectx := x.errCtx(ctx, p)
	_, err := fn(x.ec, ectx, p.field.ArgumentMap(x.opCtx.Variables))
	if err == nil {
		err = a.err
	}
	x.ec.Error(ectx, err)
	return nil, false
}

// shouldInclude evaluates @skip and @include as graphql.CollectFields does.
func (x *fastExec) shouldInclude(ds ast.DirectiveList) bool {
	skip, include := false, true
	if d := ds.ForName("skip"); d != nil {
		skip = x.ifArgument(d)
	}
	if d := ds.ForName("include"); d != nil {
		include = x.ifArgument(d)
	}
	return !skip && include
}

func (x *fastExec) ifArgument(d *ast.Directive) bool {
	arg := d.Arguments.ForName("if")
	if arg == nil {
		panic(fmt.Sprintf("%s: argument 'if' not defined", d.Name))
	}
	value, err := arg.Value.Value(x.opCtx.Variables)
	if err != nil {
		panic(err)
	}
	ret, ok := value.(bool)
	if !ok {
		panic(fmt.Sprintf("%s: argument 'if' is not a boolean", d.Name))
	}
	return ret
}
