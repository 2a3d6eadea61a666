package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// pricedRouteDocs is, for every priced /v1 route, its path with a page of
// %d items and the /graphql document doing the same work.
var pricedRouteDocs = map[string]struct{ path, doc string }{
	"/v1/latest":                  {"/v1/latest?limit=%d", `events(first: %d) { nodes { id } }`},
	"/v1/signal/latest":           {"/v1/signal/latest?limit=%d", `events(surface: SIGNAL, first: %d) { nodes { id } }`},
	"/v1/search":                  {"/v1/search?query=eth&limit=%d", `searchEvents(query: "eth", first: %d) { matchType }`},
	"/v1/signal/top":              {"/v1/signal/top?limit=%d", `topSignals(first: %d) { id }`},
	"/v1/signal/byOrganizationId": {"/v1/signal/byOrganizationId?id=101&limit=%d", `entity(id: 101) { events(surface: SIGNAL, first: %d) { nodes { id } } }`},
	"/v1/radar/byOrganizationId":  {"/v1/radar/byOrganizationId?id=101&limit=%d", `entity(id: 101) { events(surface: RADAR, first: %d) { nodes { id } } }`},
	"/v1/signal/byCategory":       {"/v1/signal/byCategory?category=funding&limit=%d", `eventsByCategory(category: "funding", surface: SIGNAL, first: %d) { id }`},
	"/v1/entities/byTopName":      {"/v1/entities/byTopName?name=eth&limit=%d", `resolveEntities(name: "eth", first: %d) { matchType }`},
}

// quotedPrice is the price a request is offered in its 402 (x402 v1), in
// USDC atomic units.
func quotedPrice(t *testing.T, s *accessServer, method, path, body string) int64 {
	t.Helper()
	r := s.request(t, method, path, body, nil)
	require.Equal(t, http.StatusPaymentRequired, r.status, "%s %s: %s", method, path, r.body)
	var b struct {
		Accepts []struct {
			MaxAmountRequired string `json:"maxAmountRequired"`
		} `json:"accepts"`
	}
	require.NoError(t, json.Unmarshal(r.body, &b))
	n, err := strconv.ParseInt(b.Accepts[0].MaxAmountRequired, 10, 64)
	require.NoError(t, err)
	return n
}

// gqlBody is a /graphql request body for query.
func gqlBody(query string) string {
	b, _ := json.Marshal(map[string]string{"query": query})
	return string(b)
}

// aliased repeats selection n times under aliases a0…
func aliased(selection string, n int) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "a%d: %s ", i, selection)
	}
	b.WriteString("}")
	return b.String()
}

// TestGraphQLPricedLikeV1: the work of every priced /v1 route costs at
// least as much on /graphql, per unit — in credits by key and in USDC paid
// per request, at every page size — and 100 aliases of it cost at least
// 100 times the route (an alias once bought a /v1/search for 0.002 USDC
// instead of 0.05).
func TestGraphQLPricedLikeV1(t *testing.T) {
	t.Parallel()
	s := startAccessServer(t, dbtest.NewURL(t), accesstest.NewFacilitator(t))
	ingestLines(t, s.app.DB, restFixture())
	key, _ := accesstest.NewKey(t, s.app.DB, cryptointel.PlanEnterprise)
	credits := func(query string) int {
		r := s.request(t, "POST", "/graphql", gqlBody(query), keyHeader(key))
		require.Equal(t, http.StatusOK, r.status, "%s: %s", query, r.body)
		n, err := strconv.Atoi(r.header.Get("X-Credit-Cost"))
		require.NoError(t, err)
		return n
	}
	covered := 0
	for _, route := range s.app.V1Routes() {
		if route.Policy.Pricing == nil || route.Handler != nil {
			continue
		}
		rd, ok := pricedRouteDocs[route.Path]
		require.True(t, ok, "priced route %s has no /graphql equivalent in pricedRouteDocs", route.Path)
		covered++
		maxLimit := max(route.Policy.Pricing.MaxLimit, 1)
		for _, n := range []int{1, (maxLimit + 1) / 2, maxLimit} {
			v1 := quotedPrice(t, s, "GET", fmt.Sprintf(rd.path, n), "")
			doc := fmt.Sprintf("{ "+rd.doc+" }", n)
			gql := quotedPrice(t, s, "POST", "/graphql", gqlBody(doc))
			require.GreaterOrEqual(t, gql, v1, "%s at %d: /graphql %d < /v1 %d", route.Path, n, gql, v1)
			require.GreaterOrEqual(t, credits(doc), route.Policy.CreditCost, "%s at %d", route.Path, n)
		}
		// One hundred aliases cost one hundred routes' worth.
		v1 := quotedPrice(t, s, "GET", fmt.Sprintf(rd.path, 1), "")
		doc := aliased(fmt.Sprintf(rd.doc, 1), 100)
		require.GreaterOrEqual(t, quotedPrice(t, s, "POST", "/graphql", gqlBody(doc)), 100*v1, "%s ×100", route.Path)
		require.GreaterOrEqual(t, credits(doc), 100*route.Policy.CreditCost, "%s ×100", route.Path)
	}
	require.Equal(t, len(pricedRouteDocs), covered)

	// The case: 100 aliased searchEvents(first: 1) cost 100
	// /v1/search requests, 5 USDC, not 0.2.
	require.EqualValues(t, 100*50_000, quotedPrice(t, s, "POST", "/graphql", gqlBody(aliased(`searchEvents(query: "eth", first: 1) { matchType }`, 100))))
	summary(t, "pricing: %d priced /v1 routes × 3 page sizes and ×100 aliases: /graphql never cheaper, in credits or USDC", covered)
}

// TestIntrospectionPricedAndBounded: __schema costs
// access.IntrospectionSchemaCredits (it once cost 0), and an operation may
// select it once: 100 aliased __schema (4.8 MB, 3.6 CPU-seconds for 0
// credits) are refused before they run, at no cost.
func TestIntrospectionPricedAndBounded(t *testing.T) {
	t.Parallel()
	s := startAccessServer(t, dbtest.NewURL(t), accesstest.NewFacilitator(t))
	key, _ := accesstest.NewKey(t, s.app.DB, cryptointel.PlanFree)
	r := s.request(t, "POST", "/graphql", gqlBody(`{ __schema { queryType { name } types { name } } }`), keyHeader(key))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, strconv.Itoa(access.IntrospectionSchemaCredits), r.header.Get("X-Credit-Cost"))
	require.Equal(t, strconv.Itoa(access.IntrospectionSchemaCredits), r.header.Get("X-Monthly-Used"))

	for _, n := range []int{2, 100} {
		r = s.request(t, "POST", "/graphql", gqlBody(aliased(`__schema { types { name fields { name } } }`, n)), keyHeader(key))
		require.GreaterOrEqual(t, r.status, 400, "%s", r.body)
		require.Less(t, r.status, 500, "%s", r.body)
		require.Contains(t, string(r.body), "INTROSPECTION_LIMIT_EXCEEDED")
		require.NotContains(t, string(r.body), `"types"`)
		require.Equal(t, strconv.Itoa(access.IntrospectionSchemaCredits), r.header.Get("X-Monthly-Used"), "a refusal costs nothing")
	}
	// Fragments spreading __schema under one name are answered once.
	r = s.request(t, "POST", "/graphql", gqlBody(`{ ...A ...A } fragment A on Query { __schema { queryType { name } } }`), keyHeader(key))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, strconv.Itoa(access.IntrospectionSchemaCredits), r.header.Get("X-Credit-Cost"))
}
