package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access"
)

// TestUnknownParametersAreLoud sends a misspelt parameter to every /v1
// route of the table: each answers 400 naming the parameters it accepts
// (as /v1/stream did alone), before a missing required one. The
// cache-busting `_` that jQuery-era clients append is accepted everywhere.
func TestUnknownParametersAreLoud(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	pathValue := regexp.MustCompile(`\{[^}]+\}`)
	routes := 0
	for _, r := range s.app.V1Routes() {
		path := pathValue.ReplaceAllString(r.Path, "101")
		var accepted []string
		for _, p := range r.Params {
			if p.In == "query" {
				accepted = append(append(accepted, p.Name), p.Aliases...)
			}
		}
		want := fmt.Sprintf(`unknown parameter "limt": %s accepts %s`, r.Path, strings.Join(accepted, ", "))
		if len(accepted) == 0 {
			want = fmt.Sprintf(`unknown parameter "limt": %s accepts no query parameters`, r.Path)
		}
		resp := s.send(t, r.Method, path+"?limt=5", "")
		require.Equal(t, http.StatusBadRequest, resp.Status, "%s %s: %s", r.Method, r.Path, resp.Body)
		require.Equal(t, want, resp.Error(t), "%s %s", r.Method, r.Path)
		if r.Method == http.MethodGet && r.ContentType == "" { // not the endless /v1/stream
			resp = s.get(t, path+"?_=1732096800000")
			if resp.Status == http.StatusBadRequest {
				require.NotContains(t, resp.Error(t), "unknown parameter", "%s: the cache buster is accepted", r.Path)
			}
		}
		routes++
	}
	summary(t, "unknown parameters: %d /v1 routes refuse limt=5 naming what they accept; _ (cache buster) accepted on every GET route", routes)

	// The traps the issue met: limt silently answered the default 10, and
	// type= filtered nothing.
	resp := s.get(t, "/v1/latest?limt=5")
	require.Equal(t, `unknown parameter "limt": /v1/latest accepts window, since, limit, offset, category, entityId, topic, sort, mode, legacy`, resp.Error(t))
	resp = s.get(t, "/v1/entities/101/relationships?type=FOUNDATION_OF")
	require.Equal(t, `unknown parameter "type": /v1/entities/{id}/relationships accepts limit, offset, relationshipType, direction`, resp.Error(t))
	resp = s.get(t, "/v1/latest?limit=3&window=30d&_=1732096800000")
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	require.Equal(t, 3, dataLen(t, resp.JSON(t)))
}

// TestRelationshipFilters filters an entity's relationships by type and
// direction, on /v1 and in GraphQL.
func TestRelationshipFilters(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	ingestLines(t, s.store, []string{
		`{"kind":"relationship","sourceEntityId":101,"targetEntityId":103,"relationshipType":"PARTNER_OF","status":"active","searchExpand":false}`,
		`{"kind":"relationship","sourceEntityId":104,"targetEntityId":101,"relationshipType":"BUILT_ON","status":"active","searchExpand":false}`,
		`{"kind":"relationship","sourceEntityId":101,"targetEntityId":104,"relationshipType":"PARTNER_OF","status":"active","searchExpand":false}`,
	})
	edges := func(path string) []string {
		t.Helper()
		resp := s.get(t, path)
		require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
		var out []string
		for _, it := range jlist(t, resp.JSON(t)["data"]) {
			rel := jobj(t, it)
			out = append(out, fmt.Sprintf("%s %s %s", rel["direction"], rel["relationshipType"], jobj(t, rel["relatedEntity"])["id"]))
		}
		return out
	}
	require.Equal(t, []string{"outbound PARTNER_OF 103", "outbound PARTNER_OF 104", "inbound BUILT_ON 104", "inbound FOUNDATION_OF 102"},
		edges("/v1/entities/101/relationships"))
	require.Equal(t, []string{"outbound PARTNER_OF 103", "outbound PARTNER_OF 104"}, edges("/v1/entities/101/relationships?relationshipType=PARTNER_OF"))
	require.Equal(t, []string{"inbound BUILT_ON 104", "inbound FOUNDATION_OF 102"}, edges("/v1/entities/101/relationships?direction=inbound"))
	require.Equal(t, []string{"inbound FOUNDATION_OF 102"}, edges("/v1/entities/101/relationships?direction=INBOUND&relationshipType=FOUNDATION_OF"))
	require.Equal(t, []string{"outbound PARTNER_OF 104"}, edges("/v1/entities/101/relationships?relationshipType=PARTNER_OF&offset=1"))
	require.Empty(t, edges("/v1/entities/101/relationships?relationshipType=FOUNDATION_OF&direction=outbound"))
	resp := s.get(t, "/v1/entities/101/relationships?direction=both")
	require.Equal(t, "direction must be one of: outbound, inbound", resp.Error(t))

	data := s.graphql(t, `{ entity(id: 101) {
		inbound: relationships(direction: INBOUND) { relationshipType relatedEntity { id } }
		partners: relationships(relationshipType: "PARTNER_OF", first: 1) { direction relatedEntity { id } }
	} }`)
	ent := jobj(t, data["entity"])
	require.Len(t, jlist(t, ent["inbound"]), 2)
	partners := jlist(t, ent["partners"])
	require.Len(t, partners, 1)
	require.Equal(t, "outbound", jobj(t, partners[0])["direction"])
}

// TestCategoriesListedAndUnknownOnesRefused lists the categories in use
// (/v1/categories/all, the route the contract announced, and the GraphQL
// field) and refuses a category filter that names none of them, listing
// them, instead of answering an empty list.
func TestCategoriesListedAndUnknownOnesRefused(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	resp := s.get(t, "/v1/categories/all")
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	require.JSONEq(t, `{"data":[
		{"name":"analysis","subcategories":["sub_analysis"]},
		{"name":"funding","subcategories":["sub_funding"]},
		{"name":"listing","subcategories":["sub_listing"]},
		{"name":"partnership","subcategories":["sub_partnership"]},
		{"name":"technology","subcategories":["sub_technology"]}]}`, string(resp.Body))
	data := s.graphql(t, `{ categories { name subcategories } }`)
	require.Len(t, jlist(t, data["categories"]), 5)

	const unknown = `unknown category "partnerships": categories in use are analysis, funding, listing, partnership, technology (their subcategories: GET /v1/categories/all, or the categories query)`
	for _, path := range []string{
		"/v1/latest?category=partnerships",
		"/v1/signal/latest?category=partnerships",
		"/v1/signal/byCategory?category=partnerships",
		"/v1/radar/byCategory?category=partnerships",
		"/v1/radar/byOrganizationId?id=101&category=partnerships",
		"/v1/replay/global?category=partnerships&since=" + ts(-2*restDay),
	} {
		resp := s.get(t, path)
		require.Equal(t, http.StatusBadRequest, resp.Status, "%s: %s", path, resp.Body)
		require.Equal(t, unknown, resp.Error(t), path)
	}
	resp = s.get(t, "/v1/signal/byCategory?category=partnership&limit=10")
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	require.Positive(t, dataLen(t, resp.JSON(t)))

	// A category ingested a moment ago is known at once.
	ingestLines(t, s.store, []string{eventLine(fixtureEvent{ID: 6001, At: restNow.Add(-time.Hour), Owner: entSolana, Category: "security"})})
	resp = s.get(t, "/v1/radar/byCategory?category=security")
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	require.Equal(t, 1, dataLen(t, resp.JSON(t)))

	// GraphQL: the field is refused with extensions.code invalid.
	body, _ := json.Marshal(map[string]any{"query": `{ eventsByCategory(category: "partnerships") { id } }`})
	resp = s.post(t, "/graphql", string(body))
	var gql struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &gql), "%s", resp.Body)
	require.Len(t, gql.Errors, 1, "%s", resp.Body)
	require.Contains(t, gql.Errors[0].Message, `unknown category "partnerships": categories in use are analysis, funding, listing, partnership, security, technology`)
	require.Equal(t, "invalid", gql.Errors[0].Extensions["code"])
}

// TestBearerSchemeMissing: a key sent without "Bearer " is told so, on
// /v1 and /graphql alike.
func TestBearerSchemeMissing(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key := s.apiKey(t)
	for _, path := range []string{"/v1/latest", "/graphql?query=%7B__typename%7D"} {
		req, err := http.NewRequest(http.MethodGet, s.base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body struct {
			Error string `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
		require.Equal(t, access.MsgBearerMissing, body.Error, path)
	}
}

// TestUsageUnitsLabelled: /v1/usage names the unit of each contract field
// and gives the credits spent beside the request counts.
func TestUsageUnitsLabelled(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key := s.apiKey(t)
	require.Equal(t, http.StatusOK, s.doAs(t, key, http.MethodGet, "/v1/brief?id=101&since="+ts(-restDay)).Status)
	require.Equal(t, http.StatusOK, s.doAs(t, key, http.MethodGet, "/v1/latest").Status)
	resp := s.doAs(t, key, http.MethodGet, "/v1/usage")
	require.Equal(t, http.StatusOK, resp.Status, "%s", resp.Body)
	data := jobj(t, resp.JSON(t)["data"])
	require.Equal(t, map[string]any{"today": "requests", "thisWeek": "requests", "thisMonth": "requests", "budget": "credits"}, data["units"])
	require.Equal(t, 3, jint(t, data["today"]), "three requests, the usage one included")
	credits := jobj(t, data["credits"])
	require.Equal(t, 3, jint(t, credits["today"]), "a brief costs 2, latest 1, usage 0")
	require.Equal(t, jint(t, jobj(t, data["budget"])["used"]), jint(t, credits["thisMonth"]))
}
