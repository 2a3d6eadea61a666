package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/graph/validation"
)

// This file is the executor's runtime; fastexec_gen.go (written by
// graph/gen) is its per-type code and plan.go builds and caches its plans.
// gqlgen's executor resolves every field in a field context of its own,
// runs resolver fields and list elements in goroutines and builds a tree of
// marshalers before writing a byte. This executor runs a document's plan,
// built once and cached (plan.go): the fields of each selection one after
// another, in document order, appended to one buffer; it calls the same
// resolvers, argument coercion and directives, and records errors through
// the same response context and presenter, so its bytes, nulls and errors
// are gqlgen's (tests/differential_test.go).

// FastExecutableSchema is the executable schema of cfg whose query
// operations run on the plan executor. Everything else — introspection,
// @defer, subscriptions and mutations — runs on gqlgen's generated executor,
// as do all operations when fast is false (the differential test's
// reference). Parsing, validation, complexity and every handler extension
// are gqlgen's in both cases: only the resolution of the selected fields
// differs.
func FastExecutableSchema(cfg Config) *FastSchema {
	es := NewExecutableSchema(cfg).(*executableSchema)
	s := &FastSchema{executableSchema: es, rs: newFastResolvers(cfg.Resolvers), plans: newPlanCache(DefaultPlanCacheSize)}
	s.fast.Store(true)
	return s
}

// FastSchema is a graphql.ExecutableSchema; see FastExecutableSchema.
type FastSchema struct {
	*executableSchema
	rs    fastResolvers
	fast  atomic.Bool
	plans *planCache
}

var _ graphql.ExecutableSchema = (*FastSchema)(nil)

// SetFast turns the plan executor on or off (on by default); off, every
// operation runs on gqlgen's executor.
func (s *FastSchema) SetFast(on bool) { s.fast.Store(on) }

// Exec runs the operation of ctx (gqlgen's entry point: /graphql). Its
// data is compact and HTML-escaped as json.Marshal writes a
// json.RawMessage, so a transport may write it as it is (encoding/json's
// second pass over it changes nothing).
func (s *FastSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	var op *opPlan
	if s.fast.Load() {
		op = s.plans.get(s.Schema(), opCtx, false)
	}
	if op == nil {
		next := s.executableSchema.Exec(ctx)
		return func(ctx context.Context) *graphql.Response {
			resp := next(ctx)
			if resp != nil && len(resp.Data) > 0 {
				var b bytes.Buffer
				json.HTMLEscape(&b, resp.Data)
				resp.Data = b.Bytes()
			}
			return resp
		}
	}
	done := false
	return func(ctx context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		w := jsonw.Writer{HTML: true}
		if n := op.sizeHint(); n > 0 {
			w.B = make([]byte, 0, n)
		}
		s.run(ctx, opCtx, op, &w)
		op.noteSize(len(w.B))
		return &graphql.Response{Data: w.B}
	}
}

// Run runs the query operation of ctx's operation context in process,
// appending its data — the object of its root fields — to w.B, for a
// surface that wraps the data in a form of its own. ctx must carry the
// operation context (its document validated and its variables coerced)
// and a response context, whose errors are the operation's.
//
// With w.HTML set, strings are HTML-escaped as encoding/json escapes them.
// With w.Marking set, w.Marks receive the spans of the values a surface
// reads to build its envelope, so that it never scans the data again:
// every member whose path from the root crosses no list, and for a root
// field holding a list, each object element ("key[]") and each member below
// one crossing no further list ("key[].member"); a value's marks come
// before its own. jsonw.MarkData finds the same marks in any data. With
// w.Elements set too, w.Spans receive the spans of the object elements of
// every list the marks leave out, in the same order; gqlgen's executor
// (an operation the plans do not run) records none.
func (s *FastSchema) Run(ctx context.Context, w *jsonw.Writer) {
	opCtx := graphql.GetOperationContext(ctx)
	if s.fast.Load() {
		if op := s.plans.get(s.Schema(), opCtx, w.Marking && w.Elements); op != nil {
			s.run(ctx, opCtx, op, w)
			return
		}
	}
	// gqlgen's executor, its data brought to the same form.
	resp := s.executableSchema.Exec(ctx)(ctx)
	if resp == nil || len(resp.Data) == 0 {
		w.B = append(w.B, "null"...)
		return
	}
	start := len(w.B)
	if w.HTML {
		buf := bytes.NewBuffer(w.B)
		json.HTMLEscape(buf, resp.Data)
		w.B = buf.Bytes()
	} else {
		w.B = append(w.B, resp.Data...)
	}
	if w.Marking {
		if marks, err := jsonw.MarkData(w.B, start); err == nil {
			w.Marks = append(w.Marks, marks...)
		}
	}
}

// run runs op, the plan of opCtx's operation, into w.
func (s *FastSchema) run(ctx context.Context, opCtx *graphql.OperationContext, op *opPlan, w *jsonw.Writer) {
	x := &fastExec{
		ec:    newExecutionContext(opCtx, s.executableSchema, nil),
		rs:    &s.rs,
		opCtx: opCtx,
		w:     *w,
	}
	x.marking = w.Marking
	if op.nargs > 0 {
		x.argv = make([]planArgs, op.nargs)
	}
	x.o_Query(context.WithValue(ctx, runKey{}, x), op.root)
	*w = x.w
}

// runKey carries a run in the context its resolvers are called with
// (ResolvingField).
type runKey struct{}

// ResolvingField returns the field whose resolver is called with ctx, on
// either executor, or nil outside a resolver: the plan executor's current
// field, gqlgen's field context. A resolver reads the selection below it
// from it to fold the children it will be asked for into its own
// statement (resolvers: SelectedChildren).
func ResolvingField(ctx context.Context) *graphql.CollectedField {
	if x, ok := ctx.Value(runKey{}).(*fastExec); ok {
		for i := len(x.path) - 1; i >= 0; i-- {
			if !x.path[i].isIndex {
				return x.path[i].field
			}
		}
		return nil
	}
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Field.Field != nil {
		return &fc.Field
	}
	return nil
}

// FieldArgs returns the arguments of f, a field of the object type typ in
// the selection below the field being resolved in ctx, coerced as its
// resolver will receive them, and whether it could: only on the plan
// executor, for the fields a resolver folds into its statement
// (Entity.relationships, and the event pages Entity.events,
// Entity.timeline, Entity.research, Entity.media, Organization.radar,
// Organization.signal and Organization.signalHistory), and when they coerce without
// error (the field reports its own error when resolved).
func FieldArgs(ctx context.Context, typ string, f *ast.Field) (map[string]any, bool) {
	x, ok := ctx.Value(runKey{}).(*fastExec)
	if !ok {
		return nil, false
	}
	var fn argsFunc
	switch typ + "." + f.Name {
	case "Entity.relationships":
		fn = (*executionContext).field_Entity_relationships_args
	case "Entity.events":
		fn = (*executionContext).field_Entity_events_args
	case "Entity.timeline":
		fn = (*executionContext).field_Entity_timeline_args
	case "Entity.research":
		fn = (*executionContext).field_Entity_research_args
	case "Entity.media":
		fn = (*executionContext).field_Entity_media_args
	case "Organization.radar":
		fn = (*executionContext).field_Organization_radar_args
	case "Organization.signal":
		fn = (*executionContext).field_Organization_signal_args
	case "Organization.signalHistory":
		fn = (*executionContext).field_Organization_signalHistory_args
	default:
		return nil, false
	}
	args, err := fn(x.ec, ctx, f.ArgumentMap(x.opCtx.Variables))
	return args, err == nil
}

// fastExec is one operation's run of a plan.
type fastExec struct {
	ec    *executionContext
	rs    *fastResolvers
	opCtx *graphql.OperationContext
	w     jsonw.Writer

	// argv are the coerced arguments of the plan's fields, by slot.
	argv []planArgs
	// marking: record the plan's marks in w.
	marking bool
	// nerr counts the errors recorded: a repeated field is copied only
	// when its first writing recorded none.
	nerr int
	// spans are the value spans of the repeated fields' first writings
	// (see plan.same), a stack of one frame per object being written.
	spans []span
	// path is the response path of the value being written, turned into
	// gqlgen field contexts only when an error is recorded.
	path []pathElem
}

type span struct{ start, end int }

// pathElem is one step of a response path: a field, or an index in a
// list of objects (gqlgen gives scalar elements their list's context).
type pathElem struct {
	field   *graphql.CollectedField
	index   int
	isIndex bool
}

// errCtx is ctx with the field contexts of the current path, as gqlgen
// would have them when resolving the value there (errors take their path
// from them). Only the error paths build them.
func (x *fastExec) errCtx(ctx context.Context) context.Context {
	// graphql.WithFieldContext sets each context's parent to the one ctx
	// carries, so the chain is built from the root down.
	for _, p := range x.path {
		fc := &graphql.FieldContext{}
		if p.isIndex {
			i := p.index
			fc.Index = &i
		} else {
			fc.Field = *p.field
		}
		ctx = graphql.WithFieldContext(ctx, fc)
	}
	return ctx
}

type planArgs struct {
	done bool
	args map[string]any
	err  error
}

// argsFunc is a generated field_<Type>_<field>_args method.
type argsFunc func(*executionContext, context.Context, map[string]any) (map[string]any, error)

// args returns field i's coerced arguments, coerced once per run (the
// elements of a list share their plan). A failure is recorded at the
// field, as gqlgen's field-context function records it, the field's value
// written as null, and ok is false.
func (x *fastExec) args(ctx context.Context, pl *plan, i int, fn argsFunc) (map[string]any, bool) {
	a := &x.argv[pl.slots[i]]
	if !a.done {
		a.done = true
		a.args, a.err = fn(x.ec, ctx, pl.fields[i].ArgumentMap(x.opCtx.Variables))
	}
	if a.err == nil {
		return a.args, true
	}
	// Coerce again in the field's context so the error carries its path.
	ectx := x.errCtx(ctx)
	_, err := fn(x.ec, ectx, pl.fields[i].ArgumentMap(x.opCtx.Variables))
	if err == nil {
		err = a.err
	}
	x.nerr++
	x.ec.Error(ectx, err)
	x.w.Null()
	return nil, false
}

// open starts writing an object of plan pl: it reserves the spans of its
// repeated fields' first writings and returns the frame's base, for
// repeat, noted and close.
func (x *fastExec) open(pl *plan) int {
	base := len(x.spans)
	for range pl.nsrc {
		x.spans = append(x.spans, span{})
	}
	return base
}

// close ends the object opened at base.
func (x *fastExec) close(base int) { x.spans = x.spans[:base] }

// repeat writes field i of pl, which repeats an earlier field of the same
// object (same field, arguments and selection under another response
// key), as a copy of that field's bytes, and reports whether it did: it
// does not when writing the first recorded an error (the repeat then
// resolves and records its own, as gqlgen would).
func (x *fastExec) repeat(pl *plan, i, base, nerr int) bool {
	if x.nerr != nerr {
		return false
	}
	s := x.spans[base+pl.src[pl.same[i]]]
	x.w.B = append(x.w.B, x.w.B[s.start:s.end]...)
	return true
}

// noted records what the plan notes of field i's value, written from
// start: its span when a later field repeats it, its mark when marked.
func (x *fastExec) noted(pl *plan, i, base, start int) {
	if k := pl.src[i]; k >= 0 {
		x.spans[base+k] = span{start, len(x.w.B)}
	}
	if x.marking && pl.marks[i] != "" {
		x.w.Mark(pl.marks[i], start)
	}
}

// markSelf records the mark of an object of plan pl written from start
// (an element of a root list).
func (x *fastExec) markSelf(pl *plan, start int) {
	if x.marking {
		if pl.element {
			x.w.Span(start)
		} else {
			x.w.Mark(pl.self, start)
		}
	}
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

// failed reports whether a resolve function failed: its error is then
// recorded (fail) and the field's value written as null.
func (x *fastExec) failed(ctx context.Context, err error, nonNull bool) bool {
	if err == nil {
		return false
	}
	x.fail(ctx, err, nonNull)
	x.w.Null()
	return true
}

// fail records a resolve function's error at the current path as gqlgen's
// resolveField does.
func (x *fastExec) fail(ctx context.Context, err error, nonNull bool) {
	x.nerr++
	switch {
	case err == errRecorded:
	case err == errUntypedNil:
		if nonNull {
			ectx := x.errCtx(ctx)
			if fc := graphql.GetFieldContext(ectx); !graphql.HasFieldError(ectx, fc) {
				x.ec.Errorf(ectx, "must not be null")
			}
		}
	default:
		ectx := x.errCtx(ctx)
		var pe plainError
		if errors.As(err, &pe) {
			x.ec.Errorf(ectx, "%s", pe.Error())
			return
		}
		x.ec.Error(ectx, graphql.AddFieldLocationToError(ectx, err))
	}
}

// catch, deferred by a resolve function, turns a panic of its resolver into
// the error it returns, recorded at the current path as gqlgen does.
func (x *fastExec) catch(ctx context.Context, err *error) {
	if r := recover(); r != nil {
		*err = x.recovered(ctx, r)
	}
}

// recovered records a panic of a resolver at the current path, as gqlgen
// does.
func (x *fastExec) recovered(ctx context.Context, r any) error {
	x.nerr++
	ectx := x.errCtx(ctx)
	x.ec.Error(ectx, x.ec.Recover(ectx, r))
	return errRecorded
}

// nullElement records that the non-null value at the current path is null,
// unless an error is recorded there already.
func (x *fastExec) nullElement(ctx context.Context) {
	x.nerr++
	ectx := x.errCtx(ctx)
	if !graphql.HasFieldError(ectx, graphql.GetFieldContext(ectx)) {
		graphql.AddErrorf(ectx, "the requested element is null which the schema does not allow")
	}
}

// addError records err at the current path.
func (x *fastExec) addError(ctx context.Context, err error) {
	x.nerr++
	graphql.AddError(x.errCtx(ctx), err)
}

// supported reports whether the plan executor runs op: a query without
// introspection at its root and without @defer.
func supported(doc *ast.QueryDocument, op *ast.OperationDefinition) bool {
	if op == nil || op.Operation != ast.Query {
		return false
	}
	return validation.EachSelection(op.SelectionSet, doc.Fragments, func(sel ast.Selection, root bool) bool {
		if f, ok := sel.(*ast.Field); ok && root && (f.Name == "__schema" || f.Name == "__type") {
			return false
		}
		for _, d := range directivesOf(sel) {
			if d.Name == "defer" || d.Name == "stream" {
				return false
			}
		}
		return true
	})
}
