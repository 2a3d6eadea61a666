package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/search"
)

// TestSearchMatchMetadataOnEveryRoute checks, over the demo seed, that every
// lookup route and GraphQL field carries the match metadata, and that REST
// and GraphQL agree: the /v1 routes run the same resolution and search.
func TestSearchMatchMetadataOnEveryRoute(t *testing.T) {
	t.Parallel()
	s := startRESTServerWith(t, func(store *db.DB) {
		_, err := demo.Seed(context.Background(), store, demo.Options{Events: 2000})
		require.NoError(t, err)
	})
	ids := entityIDsByName(t, s.store)
	cosmos, atomic := int(ids["Cosmos"]), int(ids["Atomic Finance"])

	getOK := func(path string) map[string]any {
		t.Helper()
		r := s.get(t, path)
		require.Equal(t, http.StatusOK, r.Status, "GET %s: %s", path, r.Body)
		return r.JSON(t)
	}
	requireMatch := func(m map[string]any, via, typ string, rank int, value string) {
		t.Helper()
		require.Equal(t, via, m["matchedVia"], "%v", m)
		require.Equal(t, typ, m["matchType"], "%v", m)
		require.Equal(t, rank, jint(t, m["matchRank"]), "%v", m)
		require.Equal(t, value, m["matchedValue"], "%v", m)
	}

	// A shared ticker: every candidate, with how it matched.
	byName := jlist(t, getOK("/v1/entities/byName?name=ATOM")["data"])
	require.Len(t, byName, 2)
	var got []int
	for _, it := range byName {
		m := jobj(t, it)
		requireMatch(m, "alias", "exact", 2, "ATOM")
		got = append(got, jint(t, m["id"]))
	}
	require.ElementsMatch(t, []int{cosmos, atomic}, got)
	orgs := jlist(t, getOK("/v1/organizations/byOrganizationName?name=atom")["data"])
	require.GreaterOrEqual(t, len(orgs), 2)
	for _, it := range orgs[:2] {
		requireMatch(jobj(t, it), "alias", "exact", 2, "ATOM")
	}

	// A typo: the top match and the other candidates.
	top := getOK("/v1/entities/byTopName?name=Etherium&limit=3")
	data := jobj(t, top["data"])
	require.Equal(t, int(ids["Ethereum"]), jint(t, data["id"]))
	require.Equal(t, "fuzzy", data["matchType"])
	require.Equal(t, "Ethereum", data["matchedValue"])
	require.GreaterOrEqual(t, jint(t, data["matchRank"]), search.RankFuzzyBase)
	for _, it := range jlist(t, top["matches"]) {
		m := jobj(t, it)
		require.GreaterOrEqual(t, jint(t, m["matchRank"]), jint(t, data["matchRank"]))
		require.NotEmpty(t, m["matchedVia"])
		require.NotEmpty(t, m["matchedValue"])
	}

	// Search: match metadata on every event, ranks non-decreasing, both
	// projects behind the shared ticker present.
	search := getOK("/v1/search?q=" + url.QueryEscape("ATOM"))
	require.Equal(t, "ATOM", search["query"])
	events := jlist(t, search["data"])
	require.NotEmpty(t, events)
	owners := map[int]bool{}
	prev := -1.0
	for _, it := range events {
		e := jobj(t, it)
		require.Contains(t, []any{"entity", "text", "related_entity"}, e["matchedVia"])
		require.NotEmpty(t, e["matchType"])
		rank := jfloat(t, e["matchRank"])
		require.GreaterOrEqual(t, rank, prev)
		prev = rank
		for _, o := range jlist(t, e["owners"]) {
			owners[jint(t, jobj(t, o)["id"])] = true
		}
	}
	require.True(t, owners[cosmos] && owners[atomic], "owners %v", owners)
	r := s.get(t, "/v1/search?limit=5")
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)

	// GraphQL answers the same.
	gql := s.graphql(t, `{
		resolveEntities(name: "ATOM") { matchedVia matchType matchRank matchedValue entity { id } }
		searchEvents(query: "ATOM") { matchedVia matchType matchRank event { id } }
		organizationsByName(name: "atom") { id matchedVia matchType matchRank matchedValue }
	}`)
	res := jlist(t, gql["resolveEntities"])
	require.Len(t, res, len(byName))
	for i, it := range res {
		m := jobj(t, it)
		requireMatch(m, "alias", "exact", 2, "ATOM")
		require.Equal(t, jint(t, jobj(t, byName[i])["id"]), jint(t, jobj(t, m["entity"])["id"]))
	}
	gevents := jlist(t, gql["searchEvents"])
	require.Len(t, gevents, len(events))
	for i, it := range gevents {
		g, e := jobj(t, it), jobj(t, events[i])
		require.Equal(t, jint(t, e["id"]), jint(t, jobj(t, g["event"])["id"]))
		require.Equal(t, e["matchedVia"], g["matchedVia"])
		require.Equal(t, e["matchType"], g["matchType"])
		require.InDelta(t, jfloat(t, e["matchRank"]), jfloat(t, g["matchRank"]), 1e-9)
	}
	for _, it := range jlist(t, gql["organizationsByName"])[:2] {
		requireMatch(jobj(t, it), "alias", "exact", 2, "ATOM")
	}
}

// graphql posts query to /graphql and returns its data, failing on errors.
func (s *restServer) graphql(t *testing.T, query string) map[string]any {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.base+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.apiKey(t))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&out))
	require.Empty(t, out.Errors, "%s", raw)
	return out.Data
}

// TestSearchAPIOptionsAndRefusals checks /v1/search's sort, report, facets
// and cursor over the demo seed, and that bad input is a clear 400: an
// unknown sort or surface, an inverted window, a cursor of another search,
// a 10,000-character query, a query of time words only, an entity that
// names none.
func TestSearchAPIOptionsAndRefusals(t *testing.T) {
	t.Parallel()
	s := startRESTServerWith(t, func(store *db.DB) {
		_, err := demo.Seed(context.Background(), store, demo.Options{Events: 1000})
		require.NoError(t, err)
	})
	getOK := func(path string) map[string]any {
		t.Helper()
		r := s.get(t, path)
		require.Equal(t, http.StatusOK, r.Status, "GET %s: %s", path, r.Body)
		return r.JSON(t)
	}
	ids := func(body map[string]any) []int {
		var out []int
		for _, it := range jlist(t, body["data"]) {
			out = append(out, jint(t, jobj(t, it)["id"]))
		}
		return out
	}

	// Newest first, with how the query was read.
	rec := getOK("/v1/search?q=" + url.QueryEscape("which chains had an outage recently") + "&sort=recency&limit=5&facets=true")
	require.Equal(t, "recency", rec["sort"])
	report := jobj(t, rec["report"])
	require.Contains(t, report["dropped"], map[string]any{"text": "recently", "reason": "time"})
	require.Contains(t, report["dropped"], map[string]any{"text": "which", "reason": "question"})
	prev := ""
	for i, it := range jlist(t, rec["data"]) {
		at := jobj(t, it)["latestEvidenceTimestamp"].(string)
		if i > 0 {
			require.LessOrEqual(t, at, prev, "newest first")
		}
		prev = at
		require.NotNil(t, jobj(t, it)["alsoReportedAs"])
	}
	require.NotEmpty(t, jlist(t, jobj(t, rec["facets"])["categories"]))

	// Paging with the cursor: the next page continues the ranking.
	p1 := getOK("/v1/search?q=exploit&limit=3")
	cur, ok := p1["next_cursor"].(string)
	require.True(t, ok, "a next page: %v", p1["next_cursor"])
	p2 := getOK("/v1/search?q=exploit&limit=3&cursor=" + url.QueryEscape(cur))
	require.NotEmpty(t, ids(p2))
	for _, id := range ids(p2) {
		require.NotContains(t, ids(p1), id)
	}

	// A `to` given alone ends the default window: it is the lookback
	// before `to`, so a `to` older than the lookback is a window like any
	// other, not an empty one (only a start the caller gave can invert it).
	to := restNow.Add(-4 * 24 * time.Hour)
	before := getOK("/v1/search?q=Solana&to=" + url.QueryEscape(to.Format(time.RFC3339)))
	require.NotEmpty(t, ids(before))
	for _, it := range jlist(t, before["data"]) {
		at, err := time.Parse(time.RFC3339, jobj(t, it)["latestEvidenceTimestamp"].(string))
		require.NoError(t, err)
		require.True(t, at.Before(to), "%v is not before to %v", at, to)
	}
	old := getOK("/v1/search?q=Solana&to=" + url.QueryEscape(restNow.Add(-400*24*time.Hour).Format(time.RFC3339)))
	require.Empty(t, ids(old))

	for _, c := range []struct{ path, msg string }{
		{"/v1/search?q=exploit&sort=newest", "sort must be one of: relevance, recency"},
		{"/v1/search?q=exploit&surface=feed", "surface must be one of: radar, signal"},
		{"/v1/search?q=exploit&from=2026-11-10T00:00:00Z&to=2026-11-01T00:00:00Z", search.MsgSearchRange},
		{"/v1/search?q=exploit&since=2026-11-10T00:00:00Z&to=2025-11-01T00:00:00Z", search.MsgSearchRange},
		{"/v1/search?q=hack&cursor=" + url.QueryEscape(cur), "cursor does not match this query (different route, since or filters)"},
		{"/v1/search?q=" + strings.Repeat("a", 10000), "query is too long (at most 2048 bytes)"},
		{"/v1/search?q=" + strings.Repeat("hack+", 60), search.MsgQueryTooLong},
		{"/v1/search?q=" + url.QueryEscape("what happened last week"), search.MsgQueryOnlyTimeWords},
		{"/v1/search?q=recently", search.MsgQueryOnlyTimeWords},
		{"/v1/search?q=exploit&entity=Qwxzvbnm", fmt.Sprintf(search.MsgSearchEntity, "Qwxzvbnm")},
	} {
		r := s.get(t, c.path)
		require.Equal(t, http.StatusBadRequest, r.Status, "GET %.80s: %s", c.path, r.Body)
		require.Equal(t, c.msg, r.JSON(t)["error"], "GET %.80s", c.path)
	}
}
