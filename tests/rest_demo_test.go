package tests

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/demo"
)

// TestRESTDemoData runs every /v1 graph route against the demo seed (the
// data `cryptointel seed` loads): each answers 200, conforms to
// /openapi.json, carries equal legacy fields, and the feeds are not empty.
func TestRESTDemoData(t *testing.T) {
	t.Parallel()
	s := startRESTServerWith(t, func(store *db.DB) {
		res, err := demo.Seed(context.Background(), store, demo.Options{Events: 3000})
		require.NoError(t, err)
		require.False(t, res.Skipped)
	})
	v := newOpenAPIValidator(t, fetchOpenAPI(t, s))

	getOK := func(route, path string) map[string]any {
		t.Helper()
		r := s.get(t, path)
		require.Equal(t, 200, r.Status, "GET %s: %s", path, r.Body)
		v.validate("GET", route, 200, r.Body)
		body := r.JSON(t)
		checkLegacy(t, body)
		return body
	}

	// Discover ids the way a client would.
	top := getOK("/v1/signal/top", "/v1/signal/top?limit=1&since="+url.QueryEscape(ts(-29*restDay)))
	require.Len(t, jlist(t, top["data"]), 1)
	ev := jobj(t, jlist(t, top["data"])[0])
	org := jint(t, jobj(t, jlist(t, ev["owners"])[0])["id"])
	category := ev["eventCategory"].(string)
	name := jobj(t, jlist(t, ev["owners"])[0])["label"].(string)
	id := strconv.Itoa(org)
	since7 := url.QueryEscape(ts(-6 * restDay))
	since29 := url.QueryEscape(ts(-29 * restDay))

	nonEmpty := map[string]string{
		"/v1/latest":                           "/v1/latest?window=7d",
		"/v1/signal/latest":                    "/v1/signal/latest?window=7d",
		"/v1/search":                           "/v1/search?q=" + url.QueryEscape(name),
		"/v1/signal/byOrganizationId":          "/v1/signal/byOrganizationId?id=" + id,
		"/v1/signal/byCategory":                "/v1/signal/byCategory?category=" + url.QueryEscape(category),
		"/v1/radar/byOrganizationId":           "/v1/radar/byOrganizationId?id=" + id,
		"/v1/radar/byCategory":                 "/v1/radar/byCategory?category=" + url.QueryEscape(category),
		"/v1/timeline/byOrganizationId":        "/v1/timeline/byOrganizationId?id=" + id,
		"/v1/replay/global":                    "/v1/replay/global?since=" + since29,
		"/v1/radar/all":                        "/v1/radar/all?since=" + since7,
		"/v1/signal/all":                       "/v1/signal/all?since=" + since7,
		"/v1/entities/byName":                  "/v1/entities/byName?name=" + url.QueryEscape(name),
		"/v1/organizations/byOrganizationName": "/v1/organizations/byOrganizationName?name=" + url.QueryEscape(name),
		"/v1/organizations/all":                "/v1/organizations/all",
		"/v1/pmarket/all":                      "/v1/pmarket/all",
	}
	for route, path := range nonEmpty {
		body := getOK(route, path)
		require.NotEmpty(t, jlist(t, body["data"]), "GET %s returned no data", path)
	}
	for route, path := range map[string]string{
		"/v1/entities/byTopName":                "/v1/entities/byTopName?name=" + url.QueryEscape(name),
		"/v1/entities/byId":                     "/v1/entities/byId?id=" + id,
		"/v1/entities/{id}/relationships":       "/v1/entities/" + id + "/relationships",
		"/v1/entities/{id}/references":          "/v1/entities/" + id + "/references",
		"/v1/entities/{id}/research":            "/v1/entities/" + id + "/research",
		"/v1/entities/{id}/media":               "/v1/entities/" + id + "/media",
		"/v1/organizations/byOrganizationId":    "/v1/organizations/byOrganizationId?include=radar,signal&id=" + id,
		"/v1/organizations/{id}/signal-history": "/v1/organizations/" + id + "/signal-history?days=90",
		"/v1/brief":                             "/v1/brief?since=" + since29 + "&id=" + id,
		"/v1/brief/batch":                       "/v1/brief/batch?compact=true&since=" + since29 + "&ids=" + id + ",1,2,3",
		"/v1/pmarket/byOrganizationId":          "/v1/pmarket/byOrganizationId?id=" + id,
	} {
		getOK(route, path)
	}
	brief := jobj(t, getOK("/v1/brief", "/v1/brief?since="+since29+"&id="+id)["data"])
	require.NotEmpty(t, jlist(t, brief["signal"]), "the owner of a signal has signals in its brief")
}
