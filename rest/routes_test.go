package rest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/cryptointel/cryptointel/graph"
)

// sampleValue is a valid raw value for p, used to exercise the table.
func sampleValue(p Param, now time.Time) string {
	switch {
	case len(p.Enum) > 0:
		return p.Enum[len(p.Enum)-1]
	case p.Type == TypeInteger, p.Type == TypeIntegerList:
		return "101"
	case p.Type == TypeDateTime:
		return now.Add(-time.Hour).Format(time.RFC3339)
	case p.Type == TypeBoolean:
		return "true"
	}
	return "eth"
}

// TestRouteTable checks every graph route against its operation: path
// parameters are declared, every variable the route feeds is declared by
// the operation (with every non-null variable fed), pricing is complete,
// and the response is documented. Each route is exercised twice: with
// only its required parameters and with every parameter given.
func TestRouteTable(t *testing.T) {
	t.Parallel()
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	ops, err := loadOperations(schema)
	require.NoError(t, err)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	names := map[string]bool{}
	pathParam := regexp.MustCompile(`\{(\w+)\}`)
	for _, r := range Routes() {
		r := r
		require.False(t, names[r.Policy.Name], "policy name %s used twice", r.Policy.Name)
		names[r.Policy.Name] = true
		require.NotEmpty(t, r.Policy.Surface, r.Path)
		require.NotEmpty(t, r.Policy.Layer, r.Path)
		require.NotNil(t, r.Response, "%s has no documented response", r.Path)
		require.NotEmpty(t, r.Summary, r.Path)
		if r.Policy.Pricing != nil && r.Policy.Pricing.Mode == "range" {
			require.Positive(t, r.Policy.Pricing.MaxLimit, r.Path)
			require.Positive(t, r.Policy.Pricing.DefaultLimit, r.Path)
		}
		declared := map[string]Param{}
		for _, p := range r.Params {
			declared[p.Name] = p
			if p.Type == TypeInteger && (p.Name == "limit" || p.Name == "offset") {
				require.NotNil(t, p.Max, "%s %s has no cap", r.Path, p.Name)
				require.NotNil(t, p.Min, "%s %s has no floor", r.Path, p.Name)
				require.NotNil(t, p.Default, "%s %s has no default", r.Path, p.Name)
			}
		}
		for _, m := range pathParam.FindAllStringSubmatch(r.Path, -1) {
			p, ok := declared[m[1]]
			require.True(t, ok, "%s: path parameter %s undeclared", r.Path, m[1])
			require.Equal(t, "path", p.In)
			require.True(t, p.Required)
		}

		for _, all := range []bool{false, true} {
			path := pathParam.ReplaceAllString(r.Path, "101")
			q := url.Values{}
			for _, p := range r.Params {
				if p.In == "query" && (p.Required || all) {
					q.Set(p.Name, sampleValue(p, now))
				}
			}
			req := httptest.NewRequest("GET", path+"?"+q.Encode(), nil)
			req.SetPathValue("id", "101")
			c, err := parseCall(&r, req, now)
			require.NoError(t, err, "%s?%s", path, q.Encode())
			if r.Prepare != nil {
				require.NoError(t, r.Prepare(c), r.Path)
			}
			op, ok := ops[c.Operation]
			require.True(t, ok, "%s runs unknown operation %s", r.Path, c.Operation)
			doc, perr := parser.ParseQuery(&ast.Source{Input: op.Query})
			require.NoError(t, perr)
			defs := doc.Operations[0].VariableDefinitions
			for v := range c.Vars {
				require.NotNil(t, defs.ForName(v), "%s feeds $%s, which %s does not declare", r.Path, v, op.Name)
			}
			for _, def := range defs {
				if def.Type.NonNull && def.DefaultValue == nil {
					_, ok := c.Vars[def.Variable]
					require.True(t, ok, "%s does not feed required $%s of %s", r.Path, def.Variable, op.Name)
				}
			}
			// The parsed values are variables of the operation as they
			// are: the executor checks them so, with no JSON round trip.
			_, err = validator.VariableValues(schema, op.Doc.Operations[0], c.Vars)
			require.NoError(t, err, "%s?%s", path, q.Encode())
		}
	}
}

// TestRouterRejectsBadTables: duplicate routes and unknown operations fail
// at construction, not on a request.
func TestRouterRejectsBadTables(t *testing.T) {
	t.Parallel()
	exec := nopExecutor{}
	_, err := New(Config{Executor: exec, Routes: []Route{{Method: "GET", Path: "/v1/latest", Handler: func(w http.ResponseWriter, r *http.Request) error { return nil }}}})
	require.ErrorContains(t, err, "declared twice")
	_, err = New(Config{Executor: exec, Routes: []Route{{Method: "GET", Path: "/v1/x", Operation: "nope"}}})
	require.ErrorContains(t, err, "unknown operation")
	_, err = New(Config{Executor: exec, Routes: []Route{{Method: "GET", Path: "/v1/y"}}})
	require.ErrorContains(t, err, "neither a handler")
	_, err = New(Config{})
	require.ErrorContains(t, err, "no executor")
	rt, err := New(Config{Executor: exec, Schema: graph.NewExecutableSchema(graph.Config{}).Schema()})
	require.NoError(t, err)
	require.True(t, strings.Contains(string(rt.OpenAPI()), `"openapi": "3.1.0"`))
}
