package rest

import (
	"net/http/httptest"
	"testing"
	"time"
)

// routeFor returns the table's route for method and path.
func routeFor(b *testing.B, method, path string) *Route {
	b.Helper()
	routes := Routes()
	for i := range routes {
		if routes[i].Method == method && routes[i].Path == path {
			return &routes[i]
		}
	}
	b.Fatalf("no route %s %s", method, path)
	return nil
}

// Parameter parsing of the hottest feed route: defaults, caps and the
// variables of its operation.
func BenchmarkParseCallLatest(b *testing.B) {
	route := routeFor(b, "GET", "/v1/latest")
	req := httptest.NewRequest("GET", "/v1/latest?limit=25&sort=recency", nil)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		c, err := parseCall(route, req, now)
		if err != nil {
			b.Fatal(err)
		}
		if route.Prepare != nil {
			if err := route.Prepare(c); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Parameter parsing of the batch brief: a list of 25 ids and a since.
func BenchmarkParseCallBriefBatch(b *testing.B) {
	route := routeFor(b, "GET", "/v1/brief/batch")
	req := httptest.NewRequest("GET", "/v1/brief/batch?ids=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25&since=2026-11-20T00:00:00Z&limit=5", nil)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		c, err := parseCall(route, req, now)
		if err != nil {
			b.Fatal(err)
		}
		if route.Prepare != nil {
			if err := route.Prepare(c); err != nil {
				b.Fatal(err)
			}
		}
	}
}
