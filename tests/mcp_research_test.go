package tests

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/mcp"
)

// TestMCPDeepResearchPair: ChatGPT's deep-research tools. search takes
// one string and answers the /v1/search hits as ids, titles and urls;
// fetch takes one of those ids and answers the event whole (the event
// /graphql reads); both text contents are their structured results'
// JSON. A bad or unknown id is a tool error.
func TestMCPDeepResearchPair(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	cs := mcpSession(t, s.base, s.apiKey(t))
	tools := listTools(t, cs)

	for name, arg := range map[string]string{"search": "query", "fetch": "id"} {
		in := schemaMap(t, tools[name].InputSchema)
		require.Len(t, in["properties"], 1, "%s takes one argument", name)
		require.Equal(t, "string", in["properties"].(map[string]any)[arg].(map[string]any)["type"], name)
		require.Equal(t, []any{arg}, in["required"], name)
	}

	res := callTool(t, cs, "search", map[string]any{"query": "Solana"})
	validateOutput(t, tools["search"], res)
	got := structured(t, res)
	var text map[string]any
	require.NoError(t, json.Unmarshal([]byte(resultText(res)), &text), "the text is JSON: %s", resultText(res))
	require.Equal(t, got, text, "the text is the structured result")
	route := s.get(t, "/v1/search?query=Solana").JSON(t)["data"].([]any)
	results := got["results"].([]any)
	require.NotEmpty(t, results)
	require.Len(t, results, len(route), "one result per hit of the route")
	for i, r := range results {
		hit := route[i].(map[string]any)
		m := r.(map[string]any)
		require.Equal(t, fmt.Sprint(hit["id"]), m["id"])
		require.Equal(t, hit["title"], m["title"])
		require.Equal(t, hit["evidence"].([]any)[0].(map[string]any)["url"], m["url"], "its first evidence link")
	}

	first := results[0].(map[string]any)
	res = callTool(t, cs, "fetch", map[string]any{"id": first["id"]})
	validateOutput(t, tools["fetch"], res)
	doc := structured(t, res)
	text = nil
	require.NoError(t, json.Unmarshal([]byte(resultText(res)), &text))
	require.Equal(t, doc, text, "the text is the structured result")
	id, _ := strconv.Atoi(first["id"].(string))
	gql := s.post(t, "/graphql", fmt.Sprintf(`{"query":"{ event(id: %d) { title summary bullets eventCategory owners { label } } }"}`, id)).JSON(t)
	event := gql["data"].(map[string]any)["event"].(map[string]any)
	require.Equal(t, first["id"], doc["id"])
	require.Equal(t, event["title"], doc["title"])
	require.Equal(t, first["url"], doc["url"])
	require.Contains(t, doc["text"], event["summary"])
	for _, b := range event["bullets"].([]any) {
		require.Contains(t, doc["text"], b)
	}
	meta := doc["metadata"].(map[string]any)
	require.Equal(t, event["eventCategory"], meta["category"])
	require.Equal(t, event["owners"].([]any)[0].(map[string]any)["label"], meta["owners"].([]any)[0])

	for _, c := range []struct{ id, msg string }{
		{"abc", fmt.Sprintf(mcp.MsgFetchIDFmt, "abc")},
		{"0", fmt.Sprintf(mcp.MsgFetchIDFmt, "0")},
		{"99999999999", fmt.Sprintf(mcp.MsgFetchIDFmt, "99999999999")},
		{"999999", fmt.Sprintf(mcp.MsgFetchNotFoundFmt, "999999")},
	} {
		res := callTool(t, cs, "fetch", map[string]any{"id": c.id})
		require.True(t, res.IsError, c.id)
		require.Equal(t, c.msg, resultText(res))
	}
	res = callTool(t, cs, "fetch", map[string]any{"id": 5016})
	require.True(t, res.IsError)
	require.Equal(t, "id must be a string", resultText(res))
}

// TestMCPCompletion: completion/complete suggests entity names through
// the resolver (the last name of a watchlist; entity ids for the entity
// template), the categories and relationship types in use, and day
// counts; anything else gets an empty list, never an error.
func TestMCPCompletion(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	cs := mcpSession(t, s.base, s.apiKey(t))
	require.NotNil(t, cs.InitializeResult().Capabilities.Completions, "the capability is declared")

	complete := func(ref *sdk.CompleteReference, arg, value string) []string {
		t.Helper()
		res, err := cs.Complete(t.Context(), &sdk.CompleteParams{Ref: ref, Argument: sdk.CompleteParamsArgument{Name: arg, Value: value}})
		require.NoError(t, err)
		require.NotNil(t, res.Completion.Values, "values is always a list")
		return res.Completion.Values
	}
	prompt := func(name string) *sdk.CompleteReference {
		return &sdk.CompleteReference{Type: "ref/prompt", Name: name}
	}
	template := func(uri string) *sdk.CompleteReference { return &sdk.CompleteReference{Type: "ref/resource", URI: uri} }

	require.Contains(t, complete(prompt("what_happened"), "subject", "Ether"), "Ethereum")
	require.Contains(t, complete(prompt("entity_network"), "subject", "sol"), "Solana")
	require.Contains(t, complete(prompt("daily_brief"), "watchlist", "Uniswap, Ethere"), "Uniswap, Ethereum")
	require.Equal(t, []string{"7"}, complete(prompt("what_happened"), "days", "7"))
	require.Equal(t, []string{"partnership"}, complete(prompt("market_pulse"), "category", "partn"))
	require.Equal(t, []string{"FOUNDATION_OF"}, complete(prompt("entity_network"), "relationshipType", "found"))
	require.Contains(t, complete(template(mcp.EntityURITemplate), "id", "Solana"), "103", "a name typed, its id suggested")
	require.Empty(t, complete(template(mcp.EntityURITemplate), "id", "103"), "an id needs no completion")
	require.Empty(t, complete(template(mcp.EventURITemplate), "id", "50"))
	require.Empty(t, complete(prompt("what_happened"), "subject", "   "))
	require.Empty(t, complete(prompt("no_such_prompt"), "arg1", "test"))
	require.Empty(t, complete(prompt("market_pulse"), "category", "zzz"))
}
