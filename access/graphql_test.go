package access_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
)

var graphqlPolicy = access.Policy{Surface: "graphql", Layer: access.LayerEvaluation, Name: "graphql", CreditCost: 1, CostByComplexity: true}

// graphqlServer is a gqlgen server (without generated code) whose single
// field costs fieldCost, with GraphQLCost installed and wrapped by the
// access layer.
func graphqlServer(t *testing.T, svc *access.Service, fieldCost int) http.Handler {
	t.Helper()
	srv := testserver.New()
	srv.AddTransport(transport.POST{})
	srv.SetCalculatedComplexity(fieldCost)
	srv.Use(&access.GraphQLCost{})
	return svc.Wrap(graphqlPolicy, srv)
}

func postGraphQL(h http.Handler, key, query string) *httptest.ResponseRecorder {
	body, _ := json.Marshal(map[string]any{"query": query})
	req := httptest.NewRequest("POST", "/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
	Extensions map[string]any `json:"extensions"`
}

func TestGraphQLChargesComplexity(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanPro)
	h := graphqlServer(t, b.svc, 7)

	rec := postGraphQL(h, key, "{ name }")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireAccessHeaders(t, rec)
	var resp gqlResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.Empty(t, resp.Errors)
	require.EqualValues(t, 7, resp.Extensions["cost"])
	require.Equal(t, "7", rec.Header().Get("X-Credit-Cost"))
	require.Equal(t, "7", rec.Header().Get("X-Monthly-Used"))
	require.Equal(t, "99", rec.Header().Get("X-RateLimit-Remaining"))
	require.Equal(t, "graphql", rec.Header().Get("X-Api-Surface"))

	// A parse error never reaches the cost extension: refused before an
	// operation ran, it is counted in the rate window at no cost.
	rec = postGraphQL(h, key, "{ name ")
	require.Equal(t, "0", rec.Header().Get("X-Credit-Cost"))
	require.Equal(t, "7", rec.Header().Get("X-Monthly-Used"))
	require.Equal(t, "98", rec.Header().Get("X-RateLimit-Remaining"))

	rec = postGraphQL(h, "", "{ name }")
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

func TestGraphQLRefusalsMapToStatuses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanFree) // 1000 credits
	h := graphqlServer(t, b.svc, 600)

	require.Equal(t, http.StatusOK, postGraphQL(h, key, "{ name }").Code)
	// 600 more would exceed the allowance: a GraphQL error, HTTP 403.
	rec := postGraphQL(h, key, "{ name }")
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	requireAccessHeaders(t, rec)
	var resp gqlResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.Len(t, resp.Errors, 1)
	require.Equal(t, access.MsgQuotaExceeded, resp.Errors[0].Message)
	require.Equal(t, "quota_exceeded", resp.Errors[0].Extensions["code"])
	require.Equal(t, "600", rec.Header().Get("X-Monthly-Used"))

	// The rate window is shared with /v1 and refuses with 429.
	cheap := graphqlServer(t, b.svc, 0)
	for i := 0; i < 98; i++ {
		require.Equal(t, http.StatusOK, postGraphQL(cheap, key, "{ name }").Code)
	}
	rec = postGraphQL(cheap, key, "{ name }")
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.Equal(t, access.MsgRateLimited, resp.Errors[0].Message)
	require.Equal(t, "rate_limited", resp.Errors[0].Extensions["code"])
	require.Equal(t, "45", rec.Header().Get("Retry-After"))

	// /v1 shares the window.
	rec = do(b.svc.Wrap(searchPolicy, okHandler), "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
}

func TestChargeOutsideDeferredRequestIsNoop(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanPro)
	var err error
	h := b.svc.Wrap(searchPolicy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err = access.Charge(r.Context(), 1000)
		okHandler(w, r)
	}))
	rec := do(h, "GET", "/v1/search", bearer(key))
	require.NoError(t, err)
	require.Equal(t, "2", rec.Header().Get("X-Monthly-Used"))
}

func TestGraphQLCostReusesComplexityLimitStats(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanPro)
	srv := testserver.New()
	srv.AddTransport(transport.POST{})
	srv.SetCalculatedComplexity(3)
	srv.Use(extension.FixedComplexityLimit(1000))
	srv.Use(&access.GraphQLCost{})
	rec := postGraphQL(b.svc.Wrap(graphqlPolicy, srv), key, "{ name }")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "3", rec.Header().Get("X-Credit-Cost"))
}
