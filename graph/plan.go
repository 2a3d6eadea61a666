package graph

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel/graph/validation"
)

// Plans. A document is planned once per operation (and per value of the
// variables its @skip and @include read): each selection set collected for
// its object type (fragments expanded, fields of one response key merged,
// conditions applied, as graphql.CollectFields does at run time), each
// field's child plan, its argument slot, its response key written out, the
// marks a surface reads and the fields that repeat an earlier one. The
// plan is cached and shared by every run; what varies per run (arguments,
// the spans of repeated fields) lives in the run (fastExec).

// DefaultPlanCacheSize is how many documents' plans are kept, least
// recently used first out: the /v1 facade's fixed operations and the
// /graphql documents clients send.
const DefaultPlanCacheSize = 1000

// MaxCachedQueryBytes bounds the documents whose parse and plans are kept:
// a larger one (at most a request body) is planned at every run and
// forgotten once answered, so the caches hold at most their entries times
// this.
const MaxCachedQueryBytes = 16 << 10

// plan is one selection set collected for one object type. Every slice is
// indexed like fields.
type plan struct {
	fields []graphql.CollectedField
	// keys are the members' keys as written: `"alias":`, with a leading
	// comma after the first.
	keys []string
	// kids are the plans of the fields' values of an object type.
	kids []*plan
	// slots are the fields' argument slots in the run (fastExec.argv); -1
	// for a field without arguments.
	slots []int
	// same is, for a field that repeats an earlier one of this selection
	// (the same field, arguments and selection under another response
	// key), that field's index; -1 otherwise. The repeat is written as a
	// copy of the first's bytes.
	same []int
	// src is, for a field that a later one repeats, its span's index in
	// the object's frame; -1 otherwise. nsrc counts them.
	src  []int
	nsrc int
	// marks are the fields' mark paths ("" when unmarked); self is this
	// object's own mark path (an element of a root list), else "".
	marks []string
	self  string
	// element: this object is an element of a list that the marks leave
	// out, its span recorded without a path (markElements).
	element bool
	// extra is set for a field with anything of the above to do
	// (repeat, src or mark), so the others skip the checks.
	extra []bool
}

// opPlan is the plan of one operation.
type opPlan struct {
	root *plan
	// nargs is the number of argument slots.
	nargs int
	// size is the length of the data its last run wrote for /graphql
	// (FastSchema.Exec), up to maxSizeHint: the next run's buffer starts
	// that large instead of doubling its way there, a dozen allocations
	// and copies for a page of events.
	size atomic.Int32
}

// maxSizeHint bounds the buffer a run of an operation starts with.
const maxSizeHint = 256 << 10

// sizeHint is the capacity a run of op starts its buffer with.
func (op *opPlan) sizeHint() int {
	return int(op.size.Load())
}

// noteSize records the length of the data a run of op wrote.
func (op *opPlan) noteSize(n int) {
	op.size.Store(int32(min(n+n/16, maxSizeHint)))
}

// docKey identifies an operation of a document.
type docKey struct{ query, op string }

// docPlans are the plans of one operation of a document, one per value of
// the variables its conditions read.
type docPlans struct {
	// supported: the plan executor runs the operation (see supported).
	supported bool
	// conds are the variables @skip and @include read, at most 64.
	conds []string
	// uncached: more than 64 such variables; planned at every run.
	uncached bool

	mu    sync.Mutex
	plans map[uint64]*opPlan
	// elements are the plans that record the spans of every list's
	// elements too (jsonw.Writer.Elements).
	elements map[uint64]*opPlan
}

// planCache holds the plans of recently run documents.
type planCache struct {
	lru *lru.Cache[docKey, *docPlans]
}

func newPlanCache(size int) *planCache {
	c, err := lru.New[docKey, *docPlans](size)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &planCache{lru: c}
}

// get returns the plan of opCtx's operation, built on first use, or nil
// when the plan executor does not run it; elements asks for the plan
// that records the spans of every list's elements.
func (c *planCache) get(schema *ast.Schema, opCtx *graphql.OperationContext, elements bool) *opPlan {
	if opCtx.Operation == nil || opCtx.Doc == nil {
		return nil
	}
	key := docKey{opCtx.RawQuery, opCtx.OperationName}
	d, ok := c.lru.Get(key)
	if !ok || opCtx.RawQuery == "" {
		d = newDocPlans(opCtx.Doc, opCtx.Operation)
		if opCtx.RawQuery != "" && len(opCtx.RawQuery) <= MaxCachedQueryBytes {
			c.lru.Add(key, d)
		}
	}
	if !d.supported {
		return nil
	}
	if d.uncached {
		return buildPlan(schema, opCtx, elements)
	}
	var bits uint64
	for i, v := range d.conds {
		b, ok := opCtx.Variables[v].(bool)
		if !ok {
			return buildPlan(schema, opCtx, elements) // not a Boolean: validation reports it
		}
		if b {
			bits |= 1 << i
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	plans := d.plans
	if elements {
		if d.elements == nil {
			d.elements = map[uint64]*opPlan{}
		}
		plans = d.elements
	}
	p := plans[bits]
	if p == nil {
		p = buildPlan(schema, opCtx, elements)
		plans[bits] = p
	}
	return p
}

func newDocPlans(doc *ast.QueryDocument, op *ast.OperationDefinition) *docPlans {
	d := &docPlans{supported: supported(doc, op), plans: map[uint64]*opPlan{}}
	if d.supported {
		d.conds = conditionVariables(doc, op)
		d.uncached = len(d.conds) > 64
	}
	return d
}

// conditionVariables are the variables the @skip and @include conditions
// of op read, each once, in document order.
func conditionVariables(doc *ast.QueryDocument, op *ast.OperationDefinition) []string {
	var vars []string
	validation.EachSelection(op.SelectionSet, doc.Fragments, func(sel ast.Selection, _ bool) bool {
		for _, d := range directivesOf(sel) {
			if d.Name != "skip" && d.Name != "include" {
				continue
			}
			if a := d.Arguments.ForName("if"); a != nil && a.Value != nil && a.Value.Kind == ast.Variable && !slices.Contains(vars, a.Value.Raw) {
				vars = append(vars, a.Value.Raw)
			}
		}
		return true
	})
	return vars
}

// directivesOf returns the directives of a field, inline fragment or
// fragment spread.
func directivesOf(sel ast.Selection) ast.DirectiveList {
	switch s := sel.(type) {
	case *ast.Field:
		return s.Directives
	case *ast.InlineFragment:
		return s.Directives
	case *ast.FragmentSpread:
		return s.Directives
	}
	return nil
}

// planBuilder builds one operation's plan.
type planBuilder struct {
	schema *ast.Schema
	opCtx  *graphql.OperationContext
	nargs  int
}

func buildPlan(schema *ast.Schema, opCtx *graphql.OperationContext, elements bool) *opPlan {
	b := &planBuilder{schema: schema, opCtx: opCtx}
	mark := markMembers | markRoot
	if elements {
		mark |= markElements
	}
	root := b.plan(opCtx.Operation.SelectionSet, schema.Query.Name, "", mark)
	return &opPlan{root: root, nargs: b.nargs}
}

// How the members of a selection are marked.
const (
	// markMembers: its members are marked (no list crossed from the root,
	// or only the list of a root field).
	markMembers = 1 << iota
	// markRoot: it is the root selection, whose list fields' elements are
	// marked too.
	markRoot
	// markElements: the object elements of every list below that is not
	// marked are recorded as spans (jsonw.Writer.Elements).
	markElements
)

// plan collects sel for the object type typ at path (the response keys
// from the root) and plans each field's value.
func (b *planBuilder) plan(sel ast.SelectionSet, typ, path string, mark int) *plan {
	fields := graphql.CollectFields(b.opCtx, sel, []string{typ})
	n := len(fields)
	pl := &plan{
		fields: fields,
		keys:   make([]string, n),
		kids:   make([]*plan, n),
		slots:  make([]int, n),
		same:   make([]int, n),
		src:    make([]int, n),
		marks:  make([]string, n),
		extra:  make([]bool, n),
	}
	for i := range fields {
		f := &fields[i]
		pl.keys[i] = `"` + f.Alias + `":`
		if i > 0 {
			pl.keys[i] = "," + pl.keys[i]
		}
		pl.slots[i], pl.same[i], pl.src[i] = -1, -1, -1
		fpath := f.Alias
		if path != "" {
			fpath = path + "." + f.Alias
		}
		if mark&markMembers != 0 {
			pl.marks[i] = fpath
		}
		if f.Definition == nil { // __typename
			continue
		}
		if len(f.Definition.Arguments) > 0 {
			pl.slots[i] = b.nargs
			b.nargs++
		}
		t := f.Definition.Type
		def := b.schema.Types[t.Name()]
		if def == nil || def.Kind != ast.Object {
			continue
		}
		isList := t.Elem != nil
		childMark := mark & markElements
		switch {
		case mark&markMembers == 0:
		case !isList:
			childMark |= markMembers
		case mark&markRoot != 0:
			childMark |= markMembers
			fpath += "[]"
		}
		pl.kids[i] = b.plan(f.Selections, def.Name, fpath, childMark)
		if isList && childMark&markMembers != 0 {
			pl.kids[i].self = fpath
		} else if isList && childMark&markElements != 0 {
			pl.kids[i].self, pl.kids[i].element = fpath+"[]", true
		}
	}
	// Repeated fields: the same field under another response key, with the
	// same arguments and selection, written once and copied.
	for i := range fields {
		for j := 0; j < i; j++ {
			if pl.same[j] < 0 && sameField(pl, j, pl, i) {
				pl.same[i] = j
				if pl.src[j] < 0 {
					pl.src[j] = pl.nsrc
					pl.nsrc++
				}
				break
			}
		}
	}
	for i := range fields {
		pl.extra[i] = pl.same[i] >= 0 || pl.src[i] >= 0 || pl.marks[i] != ""
	}
	return pl
}

// sameField reports whether field i of a and field j of b resolve to the
// same value: the same field with equal arguments, no directive but the
// conditions already applied, and equal selections with no marks (a
// repeat's copy records no marks inside it).
func sameField(a *plan, i int, b *plan, j int) bool {
	fa, fb := &a.fields[i], &b.fields[j]
	return fa.Name == fb.Name && onlyConditions(fa.Directives) && onlyConditions(fb.Directives) &&
		sameArguments(fa.Arguments, fb.Arguments) && samePlan(a.kids[i], b.kids[j])
}

// samePlan reports whether two selections write the same members and
// neither is marked.
func samePlan(a, b *plan) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.fields) != len(b.fields) || a.self != "" || b.self != "" {
		return false
	}
	for i := range a.fields {
		if a.fields[i].Alias != b.fields[i].Alias || a.marks[i] != "" || b.marks[i] != "" || !sameField(a, i, b, i) {
			return false
		}
	}
	return true
}

func onlyConditions(ds ast.DirectiveList) bool {
	for _, d := range ds {
		if d.Name != "skip" && d.Name != "include" {
			return false
		}
	}
	return true
}

func sameArguments(a, b ast.ArgumentList) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		y := b.ForName(x.Name)
		if y == nil || !sameValue(x.Value, y.Value) {
			return false
		}
	}
	return true
}

func sameValue(a, b *ast.Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Raw != b.Raw || len(a.Children) != len(b.Children) {
		return false
	}
	for i := range a.Children {
		if a.Children[i].Name != b.Children[i].Name || !sameValue(a.Children[i].Value, b.Children[i].Value) {
			return false
		}
	}
	return true
}
