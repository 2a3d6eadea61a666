package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/search"
)

// TestSearchRefusalsOnEveryDoor: the bad inputs /v1/search refuses with a
// 400 (tests/search_api_test.go) are refused as clearly by GraphQL's
// searchEvents and the MCP search tool — an unknown sort, an inverted
// window, a 10,000-character query, a query of time words only — never
// with a server error.
func TestSearchRefusalsOnEveryDoor(t *testing.T) {
	t.Parallel()
	s := startRESTServerWith(t, func(store *db.DB) {
		_, err := demo.Seed(context.Background(), store, demo.Options{Events: 1000})
		require.NoError(t, err)
	})
	key := s.apiKey(t)
	long := strings.Repeat("a", 10000)

	gqlErr := func(query string) string {
		t.Helper()
		body, err := json.Marshal(map[string]any{"query": query})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, s.base+"/graphql", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Less(t, resp.StatusCode, 500, "%s", raw)
		var out struct {
			Errors []struct {
				Message string `json:"message"`
			} `json:"errors"`
		}
		require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
		require.NotEmpty(t, out.Errors, "%s", raw)
		return out.Errors[0].Message
	}
	for _, c := range []struct{ query, msg string }{
		{`{ searchEvents(query: "exploit", sort: NEWEST) { event { id } } }`, "NEWEST"},
		{`{ searchEvents(query: "exploit", from: "2026-11-10T00:00:00Z", to: "2026-11-01T00:00:00Z") { event { id } } }`, search.MsgSearchRange},
		{`{ searchEvents(query: "` + long + `") { event { id } } }`, "string arguments must be at most 2048 bytes"},
		{`{ searchEvents(query: "recently") { event { id } } }`, search.MsgQueryOnlyTimeWords},
		{`{ searchEvents(query: "what happened last week") { event { id } } }`, search.MsgQueryOnlyTimeWords},
	} {
		require.Contains(t, gqlErr(c.query), c.msg, "%.80s", c.query)
	}

	cs := mcpSession(t, s.base, key)
	for _, c := range []struct {
		args map[string]any
		msg  string
	}{
		{map[string]any{"query": "exploit", "sort": "newest"}, "sort must be one of: relevance, recency"},
		{map[string]any{"query": "exploit", "from": "2026-11-10T00:00:00Z", "to": "2026-11-01T00:00:00Z"}, search.MsgSearchRange},
		{map[string]any{"query": long}, "query is too long (at most 2048 bytes)"},
		{map[string]any{"query": "recently"}, search.MsgQueryOnlyTimeWords},
		{map[string]any{"query": "what happened last week"}, search.MsgQueryOnlyTimeWords},
	} {
		res := callTool(t, cs, "search_events", c.args)
		require.True(t, res.IsError, "%.80v", c.args)
		require.Contains(t, resultText(res), c.msg, "%.80v", c.args)
	}
}
