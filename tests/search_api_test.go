package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/demo"
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
	require.GreaterOrEqual(t, jint(t, data["matchRank"]), cryptointel.RankFuzzyBase)
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
