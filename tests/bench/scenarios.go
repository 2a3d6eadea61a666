package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// threeHopQuery is the /graphql scenario: entity → relationships →
// related entity → events (with owners, participants and evidence), five
// items per level (25 events in all).
const threeHopQuery = `query ThreeHop($id: Int!, $n: Int) {
  entity(id: $id) {
    id
    canonicalName
    relationships(first: $n) {
      direction
      relationshipType
      relatedEntity {
        id
        label
        events(first: $n) {
          nodes {
            id title significance latestEvidenceTimestamp
            owners { id label aliases }
            participants { id label }
            evidence { id url timestamp }
          }
          nextCursor
        }
      }
    }
  }
}`

// scenarios are the measured service routes, in report order.
func scenarios(fx *fixtures) []scenario {
	pick := func(w *worker, n int) int { return (w.id*7919 + w.iter) % n }
	get := func(path string, q url.Values) (*http.Request, error) {
		u := path
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		return http.NewRequest(http.MethodGet, u, nil)
	}
	walkSince := fx.now.Add(-6 * 24 * time.Hour).UTC().Format(time.RFC3339)
	briefSince := fx.now.Add(-7 * 24 * time.Hour).UTC().Format(time.RFC3339)
	return []scenario{
		{name: "GET /v1/latest?limit=25", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/latest", url.Values{"limit": {"25"}})
		}},
		{name: "GET /v1/signal/top", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/signal/top", nil)
		}},
		{name: "GET /v1/search?q=…", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/search", url.Values{"q": {fx.names[pick(w, len(fx.names))]}})
		}},
		{name: "GET /v1/entities/byName", key: true, next: func(w *worker) (*http.Request, error) {
			return get("/v1/entities/byName", url.Values{"name": {fx.names[pick(w, len(fx.names))]}})
		}},
		{name: "GET /v1/entities/{id}/relationships", key: true, next: func(w *worker) (*http.Request, error) {
			id := fx.entityIDs[pick(w, len(fx.entityIDs))]
			return get("/v1/entities/"+strconv.FormatInt(id, 10)+"/relationships", nil)
		}},
		{name: "GET /v1/radar/all (cursor walk)", key: true,
			next: func(w *worker) (*http.Request, error) {
				q := url.Values{"since": {walkSince}, "limit": {"25"}}
				if w.cursor != "" {
					q.Set("cursor", w.cursor)
				}
				return get("/v1/radar/all", q)
			},
			after: func(w *worker, body []byte) { w.cursor = nextCursor(body) },
		},
		{name: "GET /v1/brief/batch (25 ids)", key: true, next: func(w *worker) (*http.Request, error) {
			start := pick(w, len(fx.entityIDs)-24)
			ids := make([]string, 25)
			for i := range ids {
				ids[i] = strconv.FormatInt(fx.entityIDs[start+i], 10)
			}
			return get("/v1/brief/batch", url.Values{"ids": {strings.Join(ids, ",")}, "since": {briefSince}})
		}},
		{name: "POST /graphql (3 hops, 5 per level)", key: true, next: func(w *worker) (*http.Request, error) {
			body, err := json.Marshal(map[string]any{
				"query":     threeHopQuery,
				"variables": map[string]any{"id": fx.entityIDs[pick(w, len(fx.entityIDs))], "n": 5},
			})
			if err != nil {
				return nil, err
			}
			req, err := http.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			if err != nil {
				return nil, err
			}
			req.Header.Set("Content-Type", "application/json")
			return req, nil
		}},
	}
}

// floorScenario is the floor's /v1/latest?limit=25 (no key: the floor has
// no access layer).
func floorScenario() scenario {
	return scenario{name: "floor: GET /v1/latest?limit=25", next: func(w *worker) (*http.Request, error) {
		return http.NewRequest(http.MethodGet, "/v1/latest?limit=25", nil)
	}}
}

// nextCursor reads the envelope's next_cursor ("" when null or absent)
// without decoding the whole page: events carry no next_cursor field, so
// the first occurrence is the envelope's.
func nextCursor(body []byte) string {
	i := bytes.Index(body, []byte(`"next_cursor":`))
	if i < 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(body[i+len(`"next_cursor":`):]))
	var s *string
	if err := dec.Decode(&s); err != nil || s == nil {
		return ""
	}
	return *s
}
