package rest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph"
)

// variableArgs maps each variable of a validated operation to the schema
// coordinate ("Type.field.argument") of the argument it is passed to.
func variableArgs(set ast.SelectionSet, out map[string]string) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			for _, a := range s.Arguments {
				if a.Value.Kind == ast.Variable && s.ObjectDefinition != nil {
					out[a.Value.Raw] = s.ObjectDefinition.Name + "." + s.Name + "." + a.Name
				}
			}
			variableArgs(s.SelectionSet, out)
		case *ast.InlineFragment:
			variableArgs(s.SelectionSet, out)
		case *ast.FragmentSpread:
			variableArgs(s.Definition.SelectionSet, out)
		}
	}
}

// TestRouteLimitsAreTheArgumentsBounds holds every bounded /v1 parameter to
// cryptointel's limits table: one that feeds an operation variable has
// exactly the bounds of the GraphQL argument the variable is passed to (so
// /v1 and /graphql clamp alike), a REST-only one its own entry; and a
// priced route prices its limit's bounds.
func TestRouteLimitsAreTheArgumentsBounds(t *testing.T) {
	t.Parallel()
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	ops, err := loadOperations(schema)
	require.NoError(t, err)
	checked := 0
	for _, r := range Routes() {
		args := map[string]string{}
		if r.Handler == nil {
			doc, errs := gqlparser.LoadQuery(schema, ops[r.Operation].Query)
			require.Empty(t, errs, r.Path)
			for _, op := range doc.Operations {
				variableArgs(op.SelectionSet, args)
			}
		}
		for _, p := range r.Params {
			if p.Type != TypeInteger || p.Max == nil {
				continue
			}
			coord := r.Method + " " + r.Path + " " + p.Name
			if p.Var != "" && r.Handler == nil {
				var ok bool
				coord, ok = args[p.Var]
				require.True(t, ok, "%s: %s feeds $%s, which no argument takes", r.Path, p.Name, p.Var)
				if coord == "Query.eventsByCategory.first" {
					coord += map[bool]string{true: "(SIGNAL)", false: "(RADAR)"}[strings.Contains(r.Path, "/signal/")]
				}
			}
			want := cryptointel.LimitOf(coord)
			require.Equal(t, want, cryptointel.Bounds{Default: p.Default.(int), Min: *p.Min, Max: *p.Max}, "%s %s (%s)", r.Path, p.Name, coord)
			if p.Name == "limit" && r.Policy.Pricing != nil && r.Policy.Pricing.Mode == "range" {
				require.Equal(t, want.Max, r.Policy.Pricing.MaxLimit, "%s prices up to its limit's maximum", r.Path)
				require.Equal(t, want.Default, r.Policy.Pricing.DefaultLimit, "%s prices its limit's default", r.Path)
			}
			checked++
		}
	}
	require.Greater(t, checked, 30)
}

// TestSchemaLimitsAreTheTable holds the GraphQL schema to the limits
// table: every paging argument (first, offset, days) has an entry, and its
// default is the entry's.
func TestSchemaLimitsAreTheTable(t *testing.T) {
	t.Parallel()
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	seen := map[string]bool{}
	for _, def := range schema.Types {
		if def.BuiltIn || def.Kind != ast.Object {
			continue
		}
		for _, f := range def.Fields {
			for _, a := range f.Arguments {
				if a.Name != "first" && a.Name != "offset" && a.Name != "days" {
					continue
				}
				coord := def.Name + "." + f.Name + "." + a.Name
				variants := []string{coord}
				if _, ok := cryptointel.Limits[coord]; !ok {
					variants = []string{coord + "(SIGNAL)", coord + "(RADAR)"}
				}
				for _, v := range variants {
					b, ok := cryptointel.Limits[v]
					require.True(t, ok, "%s has no bounds in cryptointel.Limits", v)
					seen[v] = true
					if a.DefaultValue != nil {
						require.Equal(t, strconv.Itoa(b.Default), a.DefaultValue.Raw, "%s default", v)
					}
				}
			}
		}
	}
	for coord := range cryptointel.Limits {
		if strings.HasPrefix(coord, "GET ") {
			continue
		}
		require.True(t, seen[coord], "cryptointel.Limits has %s, which the schema lacks", coord)
	}
}

// TestRouteWindowsAreTheTables holds the route table's date-time bounds and
// named windows to cryptointel's: the bulk feeds reach back FeedLookback,
// every other bounded `since` HistoryLookback, and `window` offers
// EventWindows with its default.
func TestRouteWindowsAreTheTables(t *testing.T) {
	t.Parallel()
	bounded := 0
	for _, r := range Routes() {
		for _, p := range r.Params {
			switch {
			case p.Type == TypeDateTime && p.MaxAge > 0:
				want := cryptointel.HistoryLookback
				if r.Path == "/v1/radar/all" || r.Path == "/v1/signal/all" {
					want = cryptointel.FeedLookback
				}
				require.Equal(t, want, p.MaxAge, "%s %s", r.Path, p.Name)
				require.Contains(t, p.Description, cryptointel.Days(want), "%s %s documents its bound", r.Path, p.Name)
				bounded++
			case p.Name == "window":
				require.Equal(t, cryptointel.EventWindowNames(), p.Enum, r.Path)
				require.Equal(t, cryptointel.DefaultEventWindow, p.Default, r.Path)
			}
		}
	}
	require.GreaterOrEqual(t, bounded, 6)
}
