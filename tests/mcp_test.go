package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/wire"
)

// mcpToolNames are the tools the server lists, in order.
var mcpToolNames = []string{"search_events", "resolve_entity", "get_entity", "list_relationships", "entity_timeline",
	"latest_events", "top_signals", "organization_brief", "signal_history", "prediction_markets", "usage", "search", "fetch"}

// listTools returns the server's tools by name.
func listTools(t *testing.T, cs *sdk.ClientSession) map[string]*sdk.Tool {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	out := map[string]*sdk.Tool{}
	var names []string
	for _, tl := range res.Tools {
		out[tl.Name] = tl
		names = append(names, tl.Name)
	}
	require.ElementsMatch(t, mcpToolNames, names)
	return out
}

// schemaMap returns a tool schema as a generic map.
func schemaMap(t *testing.T, s any) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// TestMCPToolSchemas: every tool and every argument is described; the
// bounds, defaults and item limits of the tools' arguments are those of
// limits.go (through the route table), so a tool whose bounds drift from
// limits.go fails here; each tool says what it costs.
func TestMCPToolSchemas(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	tools := listTools(t, mcpSession(t, s.base, s.apiKey(t)))

	bounds := map[string]cryptointel.Bounds{
		"search_events.limit":            cryptointel.SearchEventsFirst,
		"resolve_entity.limit":           cryptointel.ResolveEntitiesFirst,
		"resolve_entity.offset":          cryptointel.ResolveEntitiesOffset,
		"get_entity.relationships_limit": cryptointel.RelationshipsFirst,
		"list_relationships.limit":       cryptointel.RelationshipsFirst,
		"list_relationships.offset":      cryptointel.RelationshipsOffset,
		"entity_timeline.limit":          cryptointel.TimelineFirst,
		"latest_events.limit":            cryptointel.EventsFirst,
		"latest_events.offset":           cryptointel.EventsOffset,
		"top_signals.limit":              cryptointel.TopSignalsFirst,
		"organization_brief.limit":       cryptointel.BriefsFirst,
		"signal_history.days":            cryptointel.SignalHistoryDays,
	}
	seen := map[string]bool{}
	for name, tl := range tools {
		require.NotEmpty(t, tl.Description, name)
		require.Contains(t, tl.Description, "Costs ", "%s says what it costs", name)
		require.True(t, tl.Annotations.ReadOnlyHint, name)
		in := schemaMap(t, tl.InputSchema)
		require.Equal(t, "object", in["type"], name)
		require.Equal(t, false, in["additionalProperties"], name)
		props, _ := in["properties"].(map[string]any)
		for arg, raw := range props {
			p := raw.(map[string]any)
			desc, _ := p["description"].(string)
			require.NotEmpty(t, desc, "%s.%s has a description", name, arg)
			if p["type"] != "integer" {
				continue
			}
			key := name + "." + arg
			b, ok := bounds[key]
			if arg == "id" || arg == "entityId" {
				require.Nil(t, p["maximum"], key)
				continue
			}
			require.True(t, ok, "%s is bounded: add it to this test's table with its limits.go bounds", key)
			seen[key] = true
			require.EqualValues(t, b.Min, p["minimum"], "%s minimum (limits.go)", key)
			require.EqualValues(t, b.Max, p["maximum"], "%s maximum (limits.go)", key)
			require.EqualValues(t, b.Default, p["default"], "%s default (limits.go)", key)
			require.Contains(t, desc, fmt.Sprintf("%d to %d, default %d.", b.Min, b.Max, b.Default), "%s description states its bounds", key)
		}
		out := schemaMap(t, tl.OutputSchema)
		require.Equal(t, "object", out["type"], "%s output schema", name)
	}
	for key := range bounds {
		require.True(t, seen[key], "%s is an argument of a tool", key)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "api", "mcp.md"))
	require.NoError(t, err)
	for _, name := range mcpToolNames {
		require.Contains(t, string(doc), "| `"+name+"` |", "docs/api/mcp.md's table lists the tool %s", name)
	}
	// And the page's tools table names no tool the server lacks.
	tableRow := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `(?:GET|POST) ")
	rows := tableRow.FindAllStringSubmatch(string(doc), -1)
	require.Len(t, rows, len(mcpToolNames), "docs/api/mcp.md's tools table has one row per tool")
	for _, m := range rows {
		require.Contains(t, tools, m[1], "docs/api/mcp.md lists %s, which is not a tool of the server", m[1])
	}
	ids := schemaMap(t, tools["organization_brief"].InputSchema)["properties"].(map[string]any)["ids"].(map[string]any)
	require.EqualValues(t, cryptointel.MaxIDsPerRequest, ids["maxItems"], "organization_brief ids: MaxIDsPerRequest")
	require.Contains(t, tools["search_events"].Description, "0.05 USD", "the search route's price")
	require.Contains(t, tools["get_entity"].Description, "Costs 2 credits a call", "the sum of its two routes")
}

// leanExpected is the tool data a /v1 body stands for: the body with the
// legacy aliases of every event dropped (and, at detail summary, the event
// fields the wire table does not mark Compact), written independently of
// the server's code from the wire table.
func leanExpected(v any, summary bool) any {
	switch v := v.(type) {
	case map[string]any:
		if _, event := v["latestEvidenceTimestamp"]; event {
			for _, f := range wire.EventFields {
				delete(v, f.Legacy)
				if summary && !f.Compact {
					delete(v, f.Name)
				}
			}
		}
		for k, e := range v {
			v[k] = leanExpected(e, summary)
		}
	case []any:
		for i, e := range v {
			v[i] = leanExpected(e, summary)
		}
	}
	return v
}

// decodeNumbers decodes JSON with numbers as json.Number.
func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v), "%s", b)
	return v
}

// validateOutput checks a structured result against its tool's output
// schema (the TypeScript SDK's client does the same with Ajv).
func validateOutput(t *testing.T, tl *sdk.Tool, res *sdk.CallToolResult) {
	t.Helper()
	b, err := json.Marshal(tl.OutputSchema)
	require.NoError(t, err)
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(b, &s))
	resolved, err := s.Resolve(nil)
	require.NoError(t, err, "%s output schema resolves", tl.Name)
	sb, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(sb, &v))
	require.NoError(t, resolved.Validate(v), "%s result matches its output schema: %s", tl.Name, sb)
}

// TestMCPDifferential: for each tool, the data it returns equals the data
// of the equivalent /v1 route (or routes) with the same parameters, less
// the legacy aliases (and, at detail summary, the fields the compact form
// leaves out); every result matches its tool's output schema.
func TestMCPDifferential(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	cs := mcpSession(t, s.base, s.apiKey(t))
	tools := listTools(t, cs)
	since := url.QueryEscape(ts(-7 * 24 * 3600e9))
	type route struct{ path, member string } // member: the composed result member the route's data fills
	cases := []struct {
		tool   string
		args   map[string]any
		routes []route
	}{
		{"search_events", map[string]any{"query": "Ethereum", "limit": 5}, []route{{"/v1/search?query=Ethereum&limit=5", ""}}},
		{"search_events", map[string]any{"query": "listing", "since": ts(-72 * 3600e9), "detail": "full"}, []route{{"/v1/search?query=listing&since=" + url.QueryEscape(ts(-72*3600e9)), ""}}},
		{"resolve_entity", map[string]any{"name": "eth", "limit": 3}, []route{{"/v1/entities/byName?name=eth&limit=3", ""}}},
		{"resolve_entity", map[string]any{"name": "Ethereum", "offset": 1}, []route{{"/v1/entities/byName?name=Ethereum&offset=1", ""}}},
		{"get_entity", map[string]any{"id": 101, "relationships_limit": 5}, []route{{"/v1/entities/byId?id=101", "entity"}, {"/v1/entities/101/relationships?limit=5", "relationships"}}},
		{"list_relationships", map[string]any{"id": 101, "limit": 1}, []route{{"/v1/entities/101/relationships?limit=1", ""}}},
		{"list_relationships", map[string]any{"id": 101, "direction": "inbound", "relationshipType": "FOUNDATION_OF"},
			[]route{{"/v1/entities/101/relationships?direction=inbound&relationshipType=FOUNDATION_OF", ""}}},
		{"entity_timeline", map[string]any{"id": 101, "limit": 4}, []route{{"/v1/timeline/byOrganizationId?id=101&limit=4", ""}}},
		{"entity_timeline", map[string]any{"id": 101, "limit": 3, "since": ts(-72 * 3600e9), "detail": "full"}, []route{{"/v1/timeline/byOrganizationId?id=101&limit=3&since=" + url.QueryEscape(ts(-72*3600e9)), ""}}},
		{"latest_events", map[string]any{}, []route{{"/v1/latest", ""}}},
		{"latest_events", map[string]any{"surface": "signal", "window": "7d", "sort": "recency", "limit": 5, "category": "partnership", "detail": "full"},
			[]route{{"/v1/signal/latest?window=7d&sort=recency&limit=5&category=partnership", ""}}},
		{"latest_events", map[string]any{"window": "30d", "offset": 3, "limit": 4, "entityId": 101, "detail": "full"},
			[]route{{"/v1/latest?window=30d&offset=3&limit=4&entityId=101", ""}}},
		{"top_signals", map[string]any{"limit": 3, "since": ts(-72 * 3600e9)}, []route{{"/v1/signal/top?limit=3&since=" + url.QueryEscape(ts(-72*3600e9)), ""}}},
		{"organization_brief", map[string]any{"ids": []int{101}, "since": ts(-7 * 24 * 3600e9), "limit": 3, "detail": "full"},
			[]route{{"/v1/brief?id=101&limit=3&since=" + since, ""}}},
		{"organization_brief", map[string]any{"ids": []int{101}, "since": ts(-7 * 24 * 3600e9)}, []route{{"/v1/brief?id=101&compact=true&since=" + since, ""}}},
		{"organization_brief", map[string]any{"ids": []int{101, 103, 999}, "since": ts(-7 * 24 * 3600e9), "limit": 2, "detail": "full"},
			[]route{{"/v1/brief/batch?ids=101,103,999&limit=2&since=" + since, ""}}},
		{"signal_history", map[string]any{"id": 101, "days": 7}, []route{{"/v1/organizations/101/signal-history?days=7", ""}}},
		{"prediction_markets", map[string]any{"id": 101}, []route{{"/v1/pmarket/byOrganizationId?id=101", ""}}},
		// Out of bounds: the tool treats it as the route does (one rule).
		{"search_events", map[string]any{"query": "Ethereum", "limit": 500}, []route{{"/v1/search?query=Ethereum&limit=500", ""}}},
		{"resolve_entity", map[string]any{"name": "eth", "limit": 0}, []route{{"/v1/entities/byName?name=eth&limit=0", ""}}},
		{"latest_events", map[string]any{"offset": 1e9, "detail": "full"}, []route{{"/v1/latest?offset=1000000000", ""}}},
	}
	// usage: its counts move with every call; see TestMCPAccessAsOnHTTP.
	// search and fetch reshape their reads: see TestMCPDeepResearchPair.
	covered := map[string]bool{"usage": true, "search": true, "fetch": true}
	for _, c := range cases {
		covered[c.tool] = true
		res := callTool(t, cs, c.tool, c.args)
		got := structured(t, res)
		validateOutput(t, tools[c.tool], res)
		hint, _ := got["hint"].(string)
		delete(got, "hint")
		summary := hasDetail(tools[c.tool]) && c.args["detail"] != "full"
		var want any
		if len(c.routes) == 1 && c.routes[0].member == "" {
			r := s.get(t, c.routes[0].path)
			require.Equal(t, 200, r.Status, "%s: %s", c.routes[0].path, r.Body)
			want = leanExpected(decodeNumbers(t, r.Body), summary)
		} else {
			composed := map[string]any{}
			for _, rt := range c.routes {
				r := s.get(t, rt.path)
				require.Equal(t, 200, r.Status, "%s: %s", rt.path, r.Body)
				composed[rt.member] = leanExpected(decodeNumbers(t, r.Body), summary).(map[string]any)["data"]
			}
			want = composed
		}
		gotJSON, _ := json.Marshal(got)
		require.Equal(t, want, decodeNumbers(t, gotJSON), "%s %v: the tool's data is the route's (hint %q)", c.tool, c.args, hint)
		require.NotContains(t, string(gotJSON), `"globalSummary"`, "no legacy aliases")
		require.NotEmpty(t, resultText(res), "%s has a text rendering", c.tool)
	}
	for _, name := range mcpToolNames {
		require.True(t, covered[name], "%s has a differential case", name)
	}
}

// hasDetail reports whether a tool takes `detail`.
func hasDetail(tl *sdk.Tool) bool {
	props, _ := schemaMapAny(tl.InputSchema)["properties"].(map[string]any)
	_, ok := props["detail"]
	return ok
}

func schemaMapAny(s any) map[string]any {
	b, _ := json.Marshal(s)
	var m map[string]any
	json.Unmarshal(b, &m) //nolint:errcheck
	return m
}
