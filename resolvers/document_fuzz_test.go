package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/graph/validation"
	"github.com/cryptointel/cryptointel/graph/validation/validationtest"
	"github.com/cryptointel/cryptointel/internal/testsummary"
)

// FuzzGraphQLDocument sends GraphQL documents — the seeds below, and
// documents whose syntax tree the fuzzer mutates (fragments extracted and
// spread twice, fields duplicated, aliased and nested, directives and
// inline fragments added) — to /graphql and through the executor's
// validation. It fails when
//
//   - any answer is a 5xx, or an error with extensions.code "internal";
//   - validating one document (parsing, bounds, gqlparser's rules, depth,
//     aliases and complexity) takes more than validationFactor times the
//     validation of the largest linear document (a 10,000-token flat
//     selection, measured when the target starts): since a document has at
//     most MaxTokens tokens, anything superlinear in the document — a walk
//     that expands fragments without a memo, a rule comparing fields
//     pairwise level after level — shows up as a multiple of that, while
//     the bound is far above what load on a small machine does to a
//     linear walk;
//   - the linear field-merging rule and gqlparser's own disagree on a small
//     document, or the linear complexity differs from gqlgen's.
//
// The largest validation time seen is reported through TEST_SUMMARY_FILE
// (printed by make test and make fuzz).
func FuzzGraphQLDocument(f *testing.F) {
	for _, seed := range documentSeeds() {
		f.Add(seed, []byte{})
	}
	f.Add(`{ entity(id: 101) { id relationships { relatedEntity { id label } } } }`, []byte{1, 0, 5, 0, 5, 1, 5, 2, 5, 3, 5, 4, 5, 5, 5, 6, 5, 7, 5, 8})
	f.Add(`{ entity(id: 101) { id canonicalName events { nodes { id title } } } }`, []byte{0, 1, 0, 1, 0, 1, 3, 2, 3, 3, 4, 1, 6, 2, 6, 3, 2, 0})
	f.Add(`{ organizations { id label radar { id title } } }`, []byte{6, 0, 6, 1, 6, 2, 6, 3, 0, 0, 0, 1, 3, 0, 3, 1, 7, 0, 7, 1})

	store := dbtest.New(f)
	e := NewExecutor(Config{Store: store, CursorSecret: "fuzz-secret"})
	schema := e.schema
	baseline := linearBaseline(e)
	stats := &fuzzStats{}
	f.Cleanup(func() {
		if stats.documents.Load() == 0 {
			return
		}
		worst := time.Duration(stats.worst.Load())
		testsummary.Write(f, "GraphQL documents: %d validated, largest validation time %s (%.1f× the %s of the largest linear document; the bound is %d×), %d answered 5xx",
			stats.documents.Load(), worst.Round(time.Microsecond), float64(worst)/float64(baseline), baseline.Round(time.Microsecond),
			validationFactor, stats.fivexx.Load())
	})

	f.Fuzz(func(t *testing.T, query string, mutations []byte) {
		if len(mutations) > 0 {
			var ok bool
			if query, ok = mutateDocument(schema, query, mutations); !ok {
				return
			}
		}
		if len(query) > MaxBodyBytes/2 {
			return
		}
		stats.documents.Add(1)

		limit := validationFactor * baseline
		took, done := validationTime(e, query, limit)
		if !done || took > limit {
			// Measured again next to a fresh baseline: a machine busy with
			// other work slows both alike, a GC pause or a descheduled
			// process is not the document's doing.
			now := measureBaseline(e)
			limit = validationFactor * now
			took, done = validationTime(e, query, limit)
			if !done || took > limit {
				t.Fatalf("validating a %d-byte document took more than %s, %d× the %s of the largest linear document:\n%s",
					len(query), limit, validationFactor, now, abbreviateDoc(query))
			}
			took = took * baseline / now // reported at the quiet baseline's scale
		}
		stats.record(took)

		if len(query) <= 4096 {
			compareWithGqlgen(t, e, query)
		}

		body, _ := json.Marshal(map[string]any{"query": query})
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
		defer cancel()
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req.WithContext(ctx))
		if rec.Code >= 500 {
			stats.fivexx.Add(1)
			t.Fatalf("answered %d: %s\n%s", rec.Code, rec.Body.String(), abbreviateDoc(query))
		}
		var resp struct {
			Errors []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
			t.Fatalf("answer is not JSON (%v): %s", err, rec.Body.String())
		}
		for _, e := range resp.Errors {
			if e.Extensions["code"] == "internal" {
				t.Fatalf("internal error %q for:\n%s", e.Message, abbreviateDoc(query))
			}
		}
	})
}

// validationFactor bounds one document's validation time in multiples of
// the largest linear document's. Every document measured here costs at
// most about 3× on a quiet machine (about 20× seen on a machine running
// five test suites at once); the superlinear walks this target was written
// against cost 300× to millions.
const validationFactor = 100

type fuzzStats struct {
	documents atomic.Int64
	fivexx    atomic.Int64
	worst     atomic.Int64
}

func (s *fuzzStats) record(d time.Duration) {
	for {
		old := s.worst.Load()
		if int64(d) <= old || s.worst.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

var uncached atomic.Int64

// validationTime times the executor's preparation of query — parsing, the
// document bounds, validation and the operation-context extensions (depth,
// aliases, strings, complexity) — never from the parsed-query cache. It
// gives up waiting after limit (done false): a walk gone exponential would
// otherwise hold the test for hours. Such a walk keeps a core busy until
// the failed test's process ends.
func validationTime(e *Executor, query string, limit time.Duration) (took time.Duration, done bool) {
	query += fmt.Sprintf("\n# %d", uncached.Add(1))
	ctx := graphql.StartOperationTrace(context.Background())
	params := &graphql.RawParams{Query: query, ReadTime: graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}}
	finished := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		e.exec.CreateOperationContext(ctx, params) //nolint:errcheck // only the time matters here
		finished <- time.Since(start)
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case took := <-finished:
		return took, true
	case <-timer.C:
		return limit, false
	}
}

var (
	baselineOnce sync.Once
	baselineTime time.Duration
	baselineDoc  string
)

// linearBaseline is the validation time of the largest linear document,
// measured once when the target starts.
func linearBaseline(e *Executor) time.Duration {
	baselineOnce.Do(func() { baselineTime = measureBaseline(e) })
	return baselineTime
}

// measureBaseline times the validation of the largest linear document:
// MaxTokens tokens of distinct, valid fields (the lesser of five runs).
func measureBaseline(e *Executor) time.Duration {
	if baselineDoc == "" {
		// `{ entity ( id : 101 ) {` and `} }` are 10 tokens, `fN: id` 3.
		var b strings.Builder
		b.WriteString("{ entity(id: 101) {")
		for i := 0; i < (MaxTokens-10)/3; i++ {
			fmt.Fprintf(&b, " f%d: id", i)
		}
		b.WriteString(" } }")
		baselineDoc = b.String()
	}
	best := time.Hour
	for i := 0; i < 5; i++ {
		took, _ := validationTime(e, baselineDoc, time.Minute)
		best = min(best, took)
	}
	return best
}

// compareWithGqlgen checks the linear field-merging rule against
// gqlparser's own, and the linear complexity against gqlgen's, on a small
// document both can afford.
func compareWithGqlgen(t *testing.T, e *Executor, query string) {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, MaxTokens)
	if err != nil || validation.Bound(doc, validation.Limits{MaxFragments: MaxFragments, MaxFields: 2000}) != nil {
		return
	}
	schema := e.schema
	ours := validator.ValidateWithRules(schema.Schema(), doc, rules.NewRules(validation.FieldsCanMergeRule))
	doc2, _ := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, MaxTokens)
	theirs := validator.ValidateWithRules(schema.Schema(), doc2, rules.NewRules(rules.OverlappingFieldsCanBeMergedRule))
	if (len(ours) > 0) != (len(theirs) > 0) {
		t.Fatalf("field merging: gqlparser says %v, the linear rule says %v, for:\n%s", theirs, ours, query)
	}
	all := validator.ValidateWithRules(schema.Schema(), doc, validation.Rules())
	if len(all) > 0 {
		return
	}
	for _, op := range doc.Operations {
		got := validation.Complexity(context.Background(), schema, op, nil)
		want := complexity.Calculate(context.Background(), schema, op, nil)
		if got != want {
			t.Fatalf("complexity %d, gqlgen's %d, for:\n%s", got, want, query)
		}
	}
}

func abbreviateDoc(s string) string {
	if len(s) > 2000 {
		return s[:2000] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// mutateDocument parses query, applies the mutations (pairs of an
// operation and an operand byte) to its syntax tree and prints it back. It
// returns false when query does not parse or the result is too large.
func mutateDocument(schema graphql.ExecutableSchema, query string, mutations []byte) (string, bool) {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, MaxTokens)
	if err != nil || len(doc.Operations) == 0 {
		return "", false
	}
	// Validation annotates the fields with their types (errors or not),
	// which mutations read to give new fragments their type condition.
	setTypes = map[*ast.Selection]string{}
	validator.ValidateWithRules(schema.Schema(), doc, rules.NewRules())
	annotate(schema.Schema(), doc)
	m := &mutator{doc: doc}
	for i := 0; i+1 < len(mutations) && i < 64; i += 2 {
		m.apply(mutations[i], int(mutations[i+1]))
		if m.size > maxMutatedSelections {
			return "", false
		}
	}
	var b bytes.Buffer
	formatter.NewFormatter(&b, formatter.WithCompacted()).FormatQueryDocument(doc)
	return b.String(), true
}

// annotate records, for every selection set, the type it selects on, as
// the validator's walk found it.
func annotate(schema *ast.Schema, doc *ast.QueryDocument) {
	var walk func(set ast.SelectionSet, on string)
	walk = func(set ast.SelectionSet, on string) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if s.Definition != nil {
					walk(s.SelectionSet, s.Definition.Type.Name())
				}
			case *ast.InlineFragment:
				if s.TypeCondition != "" {
					walk(s.SelectionSet, s.TypeCondition)
				} else {
					walk(s.SelectionSet, on)
				}
			}
		}
		if on != "" && len(set) > 0 {
			setTypes[&set[0]] = on
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet, schema.Query.Name)
	}
	for _, f := range doc.Fragments {
		walk(f.SelectionSet, f.TypeCondition)
	}
}

// setTypes maps a selection set (by its first selection) to the type it
// selects on. Only read and written while one document is mutated.
var setTypes = map[*ast.Selection]string{}

type mutator struct {
	doc  *ast.QueryDocument
	size int
	n    int
}

// sets lists every selection set with a known type, in document order.
func (m *mutator) sets() []*ast.SelectionSet {
	var out []*ast.SelectionSet
	var walk func(set *ast.SelectionSet)
	walk = func(set *ast.SelectionSet) {
		if len(*set) > 0 {
			if _, ok := setTypes[&(*set)[0]]; ok {
				out = append(out, set)
			}
		}
		for _, sel := range *set {
			switch s := sel.(type) {
			case *ast.Field:
				walk(&s.SelectionSet)
			case *ast.InlineFragment:
				walk(&s.SelectionSet)
			}
		}
	}
	for _, op := range m.doc.Operations {
		walk(&op.SelectionSet)
	}
	for _, f := range m.doc.Fragments {
		walk(&f.SelectionSet)
	}
	return out
}

// retype gives the new selection set the type of the old one.
func retype(old, new ast.SelectionSet) ast.SelectionSet {
	if len(old) > 0 && len(new) > 0 {
		if t, ok := setTypes[&old[0]]; ok {
			setTypes[&new[0]] = t
		}
	}
	return new
}

var (
	aliasNames = []string{"a", "b", "id", "label", "x"}
	directives = []string{"include", "skip"}
)

// apply applies one mutation to the document.
func (m *mutator) apply(op byte, operand int) {
	sets := m.sets()
	if len(sets) == 0 {
		return
	}
	set := sets[operand%len(sets)]
	typ := setTypes[&(*set)[0]]
	sel := (*set)[operand%len(*set)]
	switch op % 8 {
	case 0: // duplicate a selection in its set
		*set = retype(*set, append(append(ast.SelectionSet{}, *set...), m.clone(sel)))
	case 1: // move the set into a new fragment, spread twice
		m.n++
		name := fmt.Sprintf("Z%d", m.n)
		body := append(ast.SelectionSet{}, *set...)
		setTypes[&body[0]] = typ
		m.doc.Fragments = append(m.doc.Fragments, &ast.FragmentDefinition{Name: name, TypeCondition: typ, SelectionSet: body})
		*set = retype(*set, ast.SelectionSet{&ast.FragmentSpread{Name: name}, &ast.FragmentSpread{Name: name}})
	case 2: // wrap a selection in an inline fragment with a directive
		inner := ast.SelectionSet{sel}
		setTypes[&inner[0]] = typ
		frag := &ast.InlineFragment{TypeCondition: typ, SelectionSet: inner,
			Directives: ast.DirectiveList{directive(operand)}}
		(*set)[operand%len(*set)] = frag
	case 3: // alias a field, sometimes to a name another field answers to
		if f, ok := sel.(*ast.Field); ok {
			f.Alias = aliasNames[operand%len(aliasNames)]
		}
	case 4: // add a directive
		if f, ok := sel.(*ast.Field); ok {
			f.Directives = append(f.Directives, directive(operand))
		}
	case 5: // spread an existing fragment of the set's type twice
		for _, fr := range m.doc.Fragments {
			if fr.TypeCondition == typ {
				*set = retype(*set, append(append(ast.SelectionSet{}, *set...),
					&ast.FragmentSpread{Name: fr.Name}, &ast.FragmentSpread{Name: fr.Name}))
				return
			}
		}
	case 6: // nest: a field selecting the set's type gets a copy of the set
		for _, s := range *set {
			if f, ok := s.(*ast.Field); ok && f.Definition != nil && f.Definition.Type.Name() == typ && len(f.SelectionSet) > 0 {
				f.SelectionSet = retype(f.SelectionSet, append(append(ast.SelectionSet{}, f.SelectionSet...), m.cloneSet(*set)...))
				return
			}
		}
		// Otherwise a composite field is repeated inside its own selection.
		if f, ok := sel.(*ast.Field); ok && len(f.SelectionSet) > 0 {
			cp := m.clone(f)
			f.SelectionSet = retype(f.SelectionSet, append(append(ast.SelectionSet{}, f.SelectionSet...), cp))
		}
	case 7: // a fragment's body becomes two spreads of a new fragment holding it
		if len(m.doc.Fragments) == 0 {
			return
		}
		fr := m.doc.Fragments[operand%len(m.doc.Fragments)]
		if len(fr.SelectionSet) == 0 {
			return
		}
		m.n++
		name := fmt.Sprintf("Z%d", m.n)
		body := retype(fr.SelectionSet, append(ast.SelectionSet{}, fr.SelectionSet...))
		m.doc.Fragments = append(m.doc.Fragments, &ast.FragmentDefinition{Name: name, TypeCondition: fr.TypeCondition, SelectionSet: body})
		fr.SelectionSet = retype(fr.SelectionSet, ast.SelectionSet{&ast.FragmentSpread{Name: name}, &ast.FragmentSpread{Name: name}})
	}
}

// clone copies a selection deeply (fragment spreads stay spreads), counting
// the copied selections in m.size.
func (m *mutator) clone(sel ast.Selection) ast.Selection {
	m.size++
	switch s := sel.(type) {
	case *ast.Field:
		cp := *s
		cp.SelectionSet = m.cloneSet(s.SelectionSet)
		return &cp
	case *ast.InlineFragment:
		cp := *s
		cp.SelectionSet = m.cloneSet(s.SelectionSet)
		return &cp
	case *ast.FragmentSpread:
		cp := *s
		return &cp
	}
	return sel
}

func (m *mutator) cloneSet(set ast.SelectionSet) ast.SelectionSet {
	if len(set) == 0 || m.size > maxMutatedSelections {
		return set
	}
	out := make(ast.SelectionSet, len(set))
	for i, sel := range set {
		out[i] = m.clone(sel)
	}
	return retype(set, out)
}

// maxMutatedSelections bounds the selections mutations may copy into one
// document.
const maxMutatedSelections = 20_000

func directive(operand int) *ast.Directive {
	name := directives[operand%2]
	value := "true"
	if name == "skip" {
		value = "false"
	}
	return &ast.Directive{Name: name, Arguments: ast.ArgumentList{{Name: "if", Value: &ast.Value{Kind: ast.BooleanValue, Raw: value}}}}
}

// documentSeeds are the seed documents: ordinary operations, the fragment
// bomb of the red team's report and its relatives, wide and repeated
// fields, directive piles, and the shapes that made gqlparser's field
// merging superlinear.
func documentSeeds() []string {
	bomb, nested := validationtest.FragmentBomb, validationtest.RepeatedNesting
	var aliases, same strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&aliases, "a%d: __typename ", i)
		same.WriteString("__typename ")
	}
	return []string{
		`{ __typename }`,
		`query($n: Int) { entity(id: 101) { id relationships(first: $n) { direction relationshipType relatedEntity { id label events(first: $n) { nodes { id title owners { id label aliases } participants { id } evidence { id timestamp } } nextCursor } } } } }`,
		`{ feed(since: "2026-11-19T00:00:00Z") { limit nextCursor nodes { id title } } }`,
		`{ events(window: "7d", first: 5) { limit nodes { id title significance } } topSignals { id } }`,
		`{ brief(id: 101, since: "2026-11-19T00:00:00Z") { label counts { radar signal } } }`,
		`{ organizations { id label radar { id } signal { id } signalHistory(days: 7) { date } } }`,
		`{ resolveEntities(name: "eth") { matchType entity { id label } } searchEvents(query: "eth") { matchType } }`,
		`{ entity(id: 101) { ...A } } fragment A on Entity { id ...B } fragment B on Entity { label relationships { relatedEntity { ...A } } }`,
		`{ entity(id: 101) { x: id x: label } }`,
		`{ entity(id: 101) { id @include(if: true) id @skip(if: false) } }`,
		`{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }`,
		bomb("query { entity(id: 101) { ...F0 } }", "Entity", "id", 30),
		bomb("query { entity(id: 101) { ...F0 } }", "Entity", "id", 12),
		bomb("query { __schema { types { ...F0 } } }", "__Type", "name", 30),
		bomb("query { entity(id: 101) { ...F0 } }", "Entity", "id label x: id", 24),
		"{ entity(id: 101) { " + nested(9, 2) + " } }",
		"{ entity(id: 101) { " + nested(3, 6) + " } }",
		"{ entity(id: 101) { " + nested(2, 30) + " } }",
		"{ " + aliases.String() + "}",
		"{ " + same.String() + "}",
		"{ __typename " + strings.Repeat("@include(if: true) ", 2000) + "}",
	}
}
