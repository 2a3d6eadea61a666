package validation_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/cryptointel/cryptointel/graph/validation"
	"github.com/cryptointel/cryptointel/graph/validation/validationtest"
)

// overlapSpec is graphql-js's test suite of the field merging rule.
type overlapSpec struct {
	Schemas []string `json:"schemas"`
	Tests   []struct {
		Name   string `json:"name"`
		Schema int    `json:"schema"`
		Query  string `json:"query"`
		Errors int    `json:"errors"`
	} `json:"tests"`
}

// skipped are the cases gqlparser itself skips (validator/imported/
// deviations.yml).
var skipped = map[string]string{
	"return types must be unambiguous/reports correctly when a non-exclusive follows an exclusive": "the case queries a field its schema lacks",
}

// ruleErrors validates doc with the one rule and returns its errors.
func ruleErrors(schema *ast.Schema, query string, rule core.Rule) gqlerror.List {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		panic(err)
	}
	var out gqlerror.List
	for _, e := range validator.ValidateWithRules(schema, doc, rules.NewRules(rule)) {
		if e.Rule == rule.Name {
			out = append(out, e)
		}
	}
	return out
}

// TestFieldsCanMergeSpec runs graphql-js's cases of "Field Selection
// Merging" through FieldsCanMergeRule: a case expecting errors gets some,
// a case expecting none gets none, exactly as gqlparser's own rule.
func TestFieldsCanMergeSpec(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/overlapping-fields.json")
	require.NoError(t, err)
	var spec overlapSpec
	require.NoError(t, json.Unmarshal(raw, &spec))
	require.GreaterOrEqual(t, len(spec.Tests), 40)
	schemas := map[int]*ast.Schema{}
	for _, tc := range spec.Tests {
		t.Run(tc.Name, func(t *testing.T) {
			if why, ok := skipped[tc.Name]; ok {
				t.Skip(why)
			}
			schema := schemas[tc.Schema]
			if schema == nil {
				schema = gqlparser.MustLoadSchema(&ast.Source{Input: spec.Schemas[tc.Schema]})
				schemas[tc.Schema] = schema
			}
			got := ruleErrors(schema, tc.Query, validation.FieldsCanMergeRule)
			require.Equal(t, tc.Errors > 0, len(got) > 0, "errors: %v", got)
			theirs := ruleErrors(schema, tc.Query, rules.OverlappingFieldsCanBeMergedRule)
			require.Equal(t, len(theirs) > 0, len(got) > 0, "gqlparser: %v, ours: %v", theirs, got)
		})
	}
}

// testSchema is a small schema with an interface and a union, so both
// branches of the merging rule (fields on one type, fields on types that
// never meet) are exercised.
var testSchema = gqlparser.MustLoadSchema(&ast.Source{Input: `
	interface Pet { name: String nickname: String }
	type Dog implements Pet { name: String nickname: String barkVolume: Int owner: Human doesKnowCommand(cmd: String): Boolean }
	type Cat implements Pet { name: String nickname: String meowVolume: Int owner: Human }
	union CatOrDog = Cat | Dog
	type Human { name: String pets: [Pet] friends: [Human] pet(id: ID): Pet }
	type Query { dog: Dog pet: Pet catOrDog: CatOrDog human(id: ID): Human humans: [Human!] }
`})

// TestFieldsCanMergeAgreesWithGqlparser: on documents mixing nesting,
// aliases, arguments, fragments, inline fragments on an interface and a
// union, FieldsCanMergeRule accepts exactly what gqlparser's rule accepts,
// and names the same response name.
func TestFieldsCanMergeAgreesWithGqlparser(t *testing.T) {
	t.Parallel()
	for i, q := range []string{
		`{ dog { name name } }`,
		`{ dog { name: nickname name } }`,
		`{ dog { doesKnowCommand(cmd: "a") doesKnowCommand(cmd: "b") } }`,
		`{ dog { doesKnowCommand(cmd: "a") doesKnowCommand(cmd: "a") } }`,
		`{ dog { owner { name } owner { n: name } } }`,
		`{ dog { owner { name } owner { name: nickname } } }`,
		`{ human(id: 1) { name } human(id: 2) { name } }`,
		`{ human(id: 1) { pets { name } } h: human(id: 1) { pets { name: nickname } } }`,
		`{ pet { ... on Dog { x: barkVolume } ... on Cat { x: meowVolume } } }`,
		`{ pet { ... on Dog { x: name } ... on Cat { x: meowVolume } } }`,
		`{ pet { ... on Dog { x: nickname } ... on Cat { x: name } } }`,
		`{ pet { ... on Dog { owner { n: name } } ... on Cat { owner { n: friends { name } } } } }`,
		`{ pet { name ... on Dog { name: nickname } } }`,
		`{ catOrDog { ... on Dog { v: barkVolume } ... on Cat { v: name } } }`,
		`{ catOrDog { ... on Dog { owner { a: name } } ... on Cat { owner { a: pet(id: 1) { name } } } } }`,
		`{ pet { ... on Dog { owner { x: name x: nickname } } ... on Cat { owner { name } } } }`,
		`{ dog { ...A ...B } } fragment A on Dog { x: name } fragment B on Dog { x: nickname }`,
		`{ dog { ...A ...A } } fragment A on Dog { x: name y: owner { name } }`,
		`{ dog { ...A owner { q: name } } } fragment A on Dog { owner { q: nickname } }`,
		`{ dog { ...A } } fragment A on Dog { owner { ...B } } fragment B on Human { name n: name name: friends { name } }`,
		`{ humans { friends { friends { name } } } humans { friends { friends { name: nickname } } } }`,
		`{ humans { friends { friends { name } } } humans { friends { friends { name } } } }`,
		`{ a: dog { name } a: pet { name } }`,
		`{ a: humans { name } a: human(id: 1) { name } }`,
		`query Q { dog { name } } query R { dog { name: nickname } }`,
		`{ dog { name @include(if: true) name @skip(if: false) } }`,
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ours := ruleErrors(testSchema, q, validation.FieldsCanMergeRule)
			theirs := ruleErrors(testSchema, q, rules.OverlappingFieldsCanBeMergedRule)
			require.Equal(t, len(theirs) > 0, len(ours) > 0, "%s\ngqlparser: %v\nours: %v", q, theirs, ours)
			if len(theirs) > 0 {
				require.Equal(t, responseNames(theirs), responseNames(ours), q)
			}
		})
	}
}

// responseNames returns the distinct response names errors name, in order.
func responseNames(errs gqlerror.List) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range errs {
		name := strings.SplitN(strings.TrimPrefix(e.Message, `Fields "`), `"`, 2)[0]
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// TestRulesReplaceOnlyTheMergingRule: Rules is gqlparser's default set with
// the merging rule's function replaced under the same name.
func TestRulesReplaceOnlyTheMergingRule(t *testing.T) {
	t.Parallel()
	ours, theirs := validation.Rules().GetInner(), rules.NewDefaultRules().GetInner()
	require.Len(t, ours, len(theirs))
	for name := range theirs {
		require.Contains(t, ours, name)
	}
	doc := `{ dog { x: name x: nickname } }`
	got := validator.ValidateWithRules(testSchema, parse(t, doc), validation.Rules())
	require.Len(t, got, 1)
	require.Equal(t, `Fields "x" conflict because "name" and "nickname" are different fields. Use different aliases on the fields to fetch both if this was intentional.`, got[0].Message)
}

func parse(t *testing.T, q string) *ast.QueryDocument {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	require.NoError(t, err)
	return doc
}

var bomb = validationtest.FragmentBomb

func TestBound(t *testing.T) {
	t.Parallel()
	limits := validation.Limits{MaxFragments: 10, MaxFields: 100}
	for _, c := range []struct {
		name, query, err string
	}{
		{"plain", `{ dog { name owner { name } } }`, ""},
		{"fragments within the field limit", bomb("{ dog { ...F0 } }", "Dog", "name", 6), ""},
		{"fragment bomb", bomb("{ dog { ...F0 } }", "Dog", "name", 9),
			"operation has more than 100 fields once its fragment spreads are expanded (the limit is 100)"},
		{"fragment bomb no operation spreads", "{ dog { name } }\n" + bomb("", "Dog", "name", 9),
			"fragment F0 has more than 100 fields once its fragment spreads are expanded (the limit is 100)"},
		{"too many fragments", bomb("{ dog { ...F0 } }", "Dog", "name", 10), "document has 11 fragments, which exceeds the limit of 10"},
		{"fields beyond the limit", "{ " + strings.Repeat("dog { name } ", 51) + "}",
			"operation has more than 100 fields once its fragment spreads are expanded (the limit is 100)"},
		{"cycle", `{ dog { ...A } } fragment A on Dog { owner { pets { ...B } } } fragment B on Dog { ...A }`, `Cannot spread fragment "A" within itself.`},
		{"self cycle, unused", `{ dog { name } } fragment A on Dog { ...A }`, `Cannot spread fragment "A" within itself.`},
		{"unknown fragment", `{ dog { ...Nope } }`, ""},
		{"duplicate fragment names", `{ dog { ...A } } fragment A on Dog { name } fragment A on Dog { nickname }`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := validation.Bound(parse(t, c.query), limits)
			if c.err == "" {
				require.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			require.Equal(t, c.err, err.Message)
			require.Equal(t, validation.CodeDocumentLimit, err.Extensions["code"])
		})
	}
}

func TestDepth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		query string
		depth int
	}{
		{`{ dog { name } }`, 2},
		{`{ __typename }`, 1},
		{`{ __schema { types { fields { type { ofType { name } } } } } dog { name } }`, 2},
		{`{ dog { ...A } } fragment A on Dog { owner { ...B } } fragment B on Human { friends { name } }`, 4},
		{`{ ...Q } fragment Q on Query { __schema { types { name } } }`, 0},
		{`{ ...Q } fragment Q on Query { dog { ... on Dog { name } } }`, 2},
		{bomb("{ dog { ...F0 } }", "Dog", "owner { name }", 40), 3},
		{`{ dog { ...A } } fragment A on Dog { owner { pets { ...A } } }`, 3},
	} {
		doc := parse(t, c.query)
		require.Equal(t, c.depth, validation.Depth(doc.Operations[0], doc.Fragments), c.query)
	}
}
