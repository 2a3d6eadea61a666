package mcp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/rest"
)

// windowFact is a stated window or age bound: "30 days", "24 hours".
var windowFact = regexp.MustCompile(`\b\d+ (days?|hours?)\b`)

// TestArgumentFactsAreTheRoutes checks that every tool argument that feeds
// a route parameter states that parameter's facts (its bounds, default,
// how far back it may go, its default window) as the route table has
// them, and that no hand-written argument description states a window or
// (for a route parameter) a default of its own: a fact the route owns is
// written once, in the route table.
func TestArgumentFactsAreTheRoutes(t *testing.T) {
	routes := append(rest.Routes(), rest.UsageRoute(nil))
	doc, err := json.Marshal(rest.OpenAPI(routes))
	require.NoError(t, err)
	d, err := parseOpenAPI(doc)
	require.NoError(t, err)
	tools, err := buildTools(toolDefs, d)
	require.NoError(t, err)
	byKey := map[string]*rest.Route{}
	for i := range routes {
		byKey[routes[i].Method+" "+routes[i].Path] = &routes[i]
	}
	param := func(r *rest.Route, name string) *rest.Param {
		for i := range r.Params {
			if r.Params[i].Name == name {
				return &r.Params[i]
			}
		}
		return nil
	}
	checked := 0
	for _, tl := range tools {
		defs := map[string]argDef{}
		for _, ad := range tl.def.Args {
			defs[ad.Name] = ad
			require.Empty(t, windowFact.FindAllString(ad.Description, -1),
				"%s.%s: a window or age bound is the route parameter's fact, not the tool's", tl.def.Name, ad.Name)
			if ad.Param != "-" {
				require.NotContains(t, strings.ToLower(ad.Description), "default",
					"%s.%s: a route parameter's default is its fact, not the tool's", tl.def.Name, ad.Name)
			}
		}
		for _, spec := range tl.args {
			if spec.param == "" {
				continue
			}
			var p *rest.Param
			if r := defs[spec.name].Route; r != "" {
				p = param(byKey[r], spec.param)
			} else {
				for _, key := range tl.def.Routes {
					if p = param(byKey[key], spec.param); p != nil {
						break
					}
				}
			}
			require.NotNil(t, p, "%s.%s", tl.def.Name, spec.name)
			desc, _ := spec.schema["description"].(string)
			lower := strings.ToLower(desc)
			where := tl.def.Name + "." + spec.name + ": " + desc
			if p.Min != nil && p.Max != nil {
				require.Contains(t, desc, fmt.Sprintf("%d to %d", *p.Min, *p.Max), where)
			}
			if p.Default != nil {
				require.Contains(t, lower, fmt.Sprintf("default %v", p.Default), where)
			}
			if p.MaxAge > 0 {
				require.Contains(t, lower, "within the last "+cryptointel.Days(p.MaxAge), where)
			}
			for _, w := range windowFact.FindAllString(desc, -1) {
				require.Contains(t, p.Description, w, "%s: the window %q is not the route parameter's", where, w)
			}
			checked++
		}
	}
	require.Greater(t, checked, 20)
}
