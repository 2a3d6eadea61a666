package tests

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/rest"
	"github.com/cryptointel/cryptointel/search"
)

// restCase is one request of the contract test and what its response must
// be: a status, the exact error message for an error, and checks on the
// decoded body of a success.
type restCase struct {
	name   string
	path   string
	status int
	err    string
	check  func(t *testing.T, body map[string]any)
}

// Small accessors over decoded JSON (numbers are json.Number).

func jint(t *testing.T, v any) int {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "not a number: %#v", v)
	i, err := strconv.Atoi(n.String())
	require.NoError(t, err)
	return i
}

func jfloat(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "not a number: %#v", v)
	f, err := n.Float64()
	require.NoError(t, err)
	return f
}

func jlist(t *testing.T, v any) []any {
	t.Helper()
	l, ok := v.([]any)
	require.True(t, ok, "not a list: %#v", v)
	return l
}

func jobj(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	require.True(t, ok, "not an object: %#v", v)
	return m
}

func jtime(t *testing.T, v any) time.Time {
	t.Helper()
	s, ok := v.(string)
	require.True(t, ok, "not a string: %#v", v)
	tm, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return tm
}

// ids returns the ids of a list of objects.
func idsOf(t *testing.T, v any) []int {
	t.Helper()
	var out []int
	for _, it := range jlist(t, v) {
		out = append(out, jint(t, jobj(t, it)["id"]))
	}
	return out
}

// involves reports whether an event names entity id as owner or
// participant.
func involves(t *testing.T, ev map[string]any, id int) bool {
	t.Helper()
	for _, k := range []string{"owners", "participants"} {
		if slices.Contains(idsOf(t, ev[k]), id) {
			return true
		}
	}
	return false
}

// Envelope checks.

func keysOf(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func requireKeys(t *testing.T, m map[string]any, keys ...string) {
	t.Helper()
	want := append([]string{}, keys...)
	sort.Strings(want)
	require.Equal(t, want, keysOf(m))
}

// every runs f on each event of the list at key.
func eachEvent(t *testing.T, body map[string]any, key string, f func(ev map[string]any)) {
	t.Helper()
	for _, it := range jlist(t, body[key]) {
		f(jobj(t, it))
	}
}

func isSignal(ev map[string]any) bool { return ev["significance"] != nil }

func dataLen(t *testing.T, body map[string]any) int { return len(jlist(t, body["data"])) }

// legacyPairs maps each legacy event field to its canonical field.
var legacyPairs = map[string]string{
	"globalSummary":       "summary",
	"bulletSummary":       "bullets",
	"eventOwner":          "owners",
	"eventParticipants":   "participants",
	"posts":               "evidence",
	"latestPostTimestamp": "latestEvidenceTimestamp",
	"signal":              "significance",
}

// fullEventKeys are the fields of a full event (canonical and legacy).
var fullEventKeys = []string{
	"id", "title", "eventCategory", "eventSubcategory", "summary", "bullets", "owners", "participants",
	"evidence", "latestEvidenceTimestamp", "significance",
	"globalSummary", "bulletSummary", "eventOwner", "eventParticipants", "posts", "latestPostTimestamp", "signal",
}

// checkLegacy walks v and, for every event it finds (an object with
// globalSummary), requires each legacy field to equal its canonical field
// and both to be present or absent together. It returns how many events
// it checked.
func checkLegacy(t *testing.T, v any) int {
	t.Helper()
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["globalSummary"]; ok {
			n++
			for legacy, canonical := range legacyPairs {
				lv, lok := x[legacy]
				cv, cok := x[canonical]
				require.Equal(t, cok, lok, "event %v: %s and %s must come together", x["id"], legacy, canonical)
				require.Equal(t, cv, lv, "event %v: %s must equal %s", x["id"], legacy, canonical)
			}
		}
		for _, child := range x {
			n += checkLegacy(t, child)
		}
	case []any:
		for _, child := range x {
			n += checkLegacy(t, child)
		}
	}
	return n
}

// routeFor finds the table entry serving path (GET).
func routeFor(t *testing.T, path string) rest.Route {
	t.Helper()
	segs := strings.Split(strings.SplitN(path, "?", 2)[0], "/")
	for _, r := range rest.Routes() {
		rs := strings.Split(r.Path, "/")
		if r.Method != "GET" || len(rs) != len(segs) {
			continue
		}
		match := true
		for i := range rs {
			if !strings.HasPrefix(rs[i], "{") && rs[i] != segs[i] {
				match = false
				break
			}
		}
		if match {
			return r
		}
	}
	t.Fatalf("no route serves %s", path)
	return rest.Route{}
}

// requirePolicyHeaders checks the route-table headers and the request id.
func requirePolicyHeaders(t *testing.T, r *restResponse, route rest.Route) {
	t.Helper()
	require.NotEmpty(t, r.Header.Get("X-Request-Id"))
	require.Equal(t, route.Policy.Surface, r.Header.Get("X-Api-Surface"))
	require.Equal(t, route.Policy.Layer, r.Header.Get("X-Access-Layer"))
	require.Equal(t, route.Policy.Name, r.Header.Get("X-Endpoint-Policy"))
	require.Equal(t, strconv.Itoa(route.Policy.CreditCost), r.Header.Get("X-Credit-Cost"))
}

func restQuery(path string, kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return path + "?" + v.Encode()
}

const (
	restDay = 24 * time.Hour
)

// restContractCases is the table: every route with its defaults, caps,
// clamps, required-parameter errors (exact messages) and envelopes.
func restContractCases() map[string][]restCase {
	bulkMsg := "since parameter is required. Use an ISO 8601 timestamp (e.g. 2026-11-20T00:00:00Z)."
	since24h := "2026-11-19T12:00:00.000Z"

	latest := func(path string, signal bool) []restCase {
		envelope := []string{"window", "sort", "mode", "limit", "offset", "since", "data"}
		if signal {
			envelope = append(envelope, "surface")
		}
		return []restCase{
			{name: "defaults", path: path, status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, envelope...)
				require.Equal(t, "24h", b["window"])
				require.Equal(t, "significance", b["sort"])
				require.Equal(t, "largest", b["mode"])
				require.Equal(t, 10, jint(t, b["limit"]))
				require.Equal(t, 0, jint(t, b["offset"]))
				require.Equal(t, since24h, b["since"])
				if signal {
					require.Equal(t, "signal", b["surface"])
					require.Equal(t, 4, dataLen(t, b))
				} else {
					require.Equal(t, 8, dataLen(t, b))
				}
				require.Equal(t, 5006, idsOf(t, b["data"])[0], "most significant first")
				prev := 1e9
				eachEvent(t, b, "data", func(ev map[string]any) {
					requireKeys(t, ev, fullEventKeys...)
					require.False(t, jtime(t, ev["latestEvidenceTimestamp"]).Before(restNow.Add(-restDay)))
					if signal {
						require.True(t, isSignal(ev))
					}
					if isSignal(ev) {
						s := jfloat(t, ev["significance"])
						require.LessOrEqual(t, s, prev)
						prev = s
					} else {
						prev = -1
					}
				})
			}},
			{name: "limit capped", path: restQuery(path, "limit", "1000", "window", "30d"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 25, jint(t, b["limit"]))
				if signal {
					require.Equal(t, 22, dataLen(t, b), "every signal of the last 30 days")
				} else {
					require.Equal(t, 25, dataLen(t, b))
				}
			}},
			{name: "limit clamped", path: restQuery(path, "limit", "-5"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 1, jint(t, b["limit"]))
				require.Equal(t, 1, dataLen(t, b))
			}},
			{name: "limit zero clamped", path: restQuery(path, "limit", "0"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 1, jint(t, b["limit"]))
			}},
			{name: "offset capped", path: restQuery(path, "offset", "99999", "window", "30d"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 250, jint(t, b["offset"]))
				require.Equal(t, 0, dataLen(t, b))
			}},
			{name: "offset clamped", path: restQuery(path, "offset", "-3"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 0, jint(t, b["offset"]))
			}},
			{name: "limit not a number", path: restQuery(path, "limit", "abc"), status: 400, err: "limit must be an integer"},
			{name: "limit fractional", path: restQuery(path, "limit", "1.5"), status: 400, err: "limit must be an integer"},
			{name: "limit NaN", path: restQuery(path, "limit", "NaN"), status: 400, err: "limit must be an integer"},
			{name: "offset not a number", path: restQuery(path, "offset", "x"), status: 400, err: "offset must be an integer"},
			{name: "window 7d", path: restQuery(path, "window", "7d"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, "7d", b["window"])
				require.Equal(t, "2026-11-13T12:00:00.000Z", b["since"])
			}},
			{name: "window invalid", path: restQuery(path, "window", "1y"), status: 400, err: "window must be one of: 24h, 7d, 30d"},
			{name: "since wins over window", path: restQuery(path, "since", ts(-2*restDay), "window", "30d", "limit", "25"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, "2026-11-18T12:00:00.000Z", b["since"])
				eachEvent(t, b, "data", func(ev map[string]any) {
					require.False(t, jtime(t, ev["latestEvidenceTimestamp"]).Before(restNow.Add(-2*restDay)))
				})
			}},
			{name: "since unparseable", path: restQuery(path, "since", "yesterday"), status: 400, err: "since must be an ISO 8601 timestamp, for example 2026-11-19T12:00:00Z or 2026-11-19"},
			{name: "since older than 30 days", path: restQuery(path, "since", ts(-31*restDay)), status: 400, err: "since must be within the last 30 days"},
			{name: "mode new", path: restQuery(path, "mode", "new", "window", "7d"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, "recency", b["sort"])
				require.Equal(t, "new", b["mode"])
				requireNewestFirst(t, b)
			}},
			{name: "sort wins over mode", path: restQuery(path, "sort", "recency", "mode", "largest", "window", "7d"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, "recency", b["sort"])
				require.Equal(t, "new", b["mode"])
				requireNewestFirst(t, b)
			}},
			{name: "sort significance with mode new", path: restQuery(path, "sort", "significance", "mode", "new"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, "significance", b["sort"])
				require.Equal(t, "largest", b["mode"])
			}},
			{name: "sort invalid", path: restQuery(path, "sort", "best"), status: 400, err: "sort must be one of: significance, recency"},
			{name: "mode invalid", path: restQuery(path, "mode", "old"), status: 400, err: "mode must be one of: largest, new"},
			{name: "category filter", path: restQuery(path, "category", "partnership", "window", "30d", "limit", "25"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.NotZero(t, dataLen(t, b))
				eachEvent(t, b, "data", func(ev map[string]any) { require.Equal(t, "partnership", ev["eventCategory"]) })
			}},
			{name: "entity filter", path: restQuery(path, "entityId", "103", "window", "30d", "limit", "25"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.NotZero(t, dataLen(t, b))
				eachEvent(t, b, "data", func(ev map[string]any) { require.True(t, involves(t, ev, 103)) })
			}},
			{name: "entityId not a number", path: restQuery(path, "entityId", "eth"), status: 400, err: "entityId must be an integer"},
			{name: "duplicated parameter takes the first", path: path + "?limit=2&limit=7", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 2, jint(t, b["limit"]))
			}},
		}
	}

	bulk := func(path string, signal bool) []restCase {
		return []restCase{
			{name: "since required", path: path, status: 400, err: bulkMsg},
			{name: "since empty", path: restQuery(path, "since", ""), status: 400, err: bulkMsg},
			{name: "since unparseable", path: restQuery(path, "since", "last week"), status: 400, err: "since must be an ISO 8601 timestamp, for example 2026-11-19T12:00:00Z or 2026-11-19"},
			{name: "since older than 7 days", path: restQuery(path, "since", ts(-8*restDay)), status: 400, err: "since must be within the last 7 days"},
			{name: "defaults", path: restQuery(path, "since", ts(-6*restDay)), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "limit", "offset", "since", "next_cursor", "data")
				require.Equal(t, 25, jint(t, b["limit"]))
				require.Equal(t, 0, jint(t, b["offset"]))
				require.Equal(t, "2026-11-14T12:00:00.000Z", b["since"])
				if signal {
					require.Equal(t, 20, dataLen(t, b))
					require.Nil(t, b["next_cursor"])
				} else {
					require.Equal(t, 25, dataLen(t, b))
					require.IsType(t, "", b["next_cursor"])
				}
				var prev time.Time
				eachEvent(t, b, "data", func(ev map[string]any) {
					requireKeys(t, ev, fullEventKeys...)
					at := jtime(t, ev["latestEvidenceTimestamp"])
					require.False(t, at.Before(restNow.Add(-6*restDay)))
					require.False(t, at.Before(prev), "oldest first")
					prev = at
					if signal {
						require.True(t, isSignal(ev))
					}
				})
			}},
			{name: "date-only since", path: restQuery(path, "since", "2026-11-19"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, "2026-11-19T00:00:00.000Z", b["since"])
			}},
			{name: "last page has null cursor", path: restQuery(path, "since", ts(-2*restDay)), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Nil(t, b["next_cursor"])
			}},
			{name: "limit capped", path: restQuery(path, "since", ts(-6*restDay), "limit", "500"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 25, jint(t, b["limit"]))
			}},
			{name: "limit clamped", path: restQuery(path, "since", ts(-6*restDay), "limit", "-1"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 1, jint(t, b["limit"]))
				require.Equal(t, 1, dataLen(t, b))
			}},
			{name: "offset capped", path: restQuery(path, "since", ts(-6*restDay), "offset", "1000"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 250, jint(t, b["offset"]))
				require.Equal(t, 0, dataLen(t, b))
			}},
			{name: "offset skips", path: restQuery(path, "since", ts(-6*restDay), "offset", "3", "limit", "2"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 3, jint(t, b["offset"]))
				require.Equal(t, 2, dataLen(t, b))
			}},
			{name: "limit not a number", path: restQuery(path, "since", ts(-6*restDay), "limit", "ten"), status: 400, err: "limit must be an integer"},
		}
	}

	briefSince := ts(-restDay)
	manyIDs := make([]string, 26)
	for i := range manyIDs {
		manyIDs[i] = strconv.Itoa(101 + i)
	}

	return map[string][]restCase{
		"/v1/latest":        latest("/v1/latest", false),
		"/v1/signal/latest": latest("/v1/signal/latest", true),
		"/v1/search": {
			{name: "query required", path: "/v1/search", status: 400, err: "query parameter is required (use query or q)"},
			{name: "empty query", path: restQuery("/v1/search", "q", " "), status: 400, err: "query parameter is required (use query or q)"},
			{name: "too long", path: restQuery("/v1/search", "q", strings.Repeat("ethereum ", 40)), status: 400, err: search.MsgQueryTooLong},
			{name: "too many words", path: restQuery("/v1/search", "q", strings.Repeat("a ", 40)), status: 400, err: search.MsgQueryTooManyWords},
			{name: "operators only", path: restQuery("/v1/search", "q", "& | ! : * ( ) < >"), status: 400, err: search.MsgQueryNoWords},
			{name: "punctuation only", path: restQuery("/v1/search", "q", "... ?!"), status: 400, err: search.MsgQueryNoWords},
			{name: "stop words only", path: restQuery("/v1/search", "q", "the of and"), status: 400, err: search.MsgQueryOnlyStopWords},
			{name: "q alias", path: restQuery("/v1/search", "q", "Ethereum"), status: 200, check: func(t *testing.T, b map[string]any) {
				// next_cursor is always present, null on the last page, as on the feeds.
				requireKeys(t, b, "query", "sort", "unmatchedTerms", "report", "limit", "next_cursor", "data")
				require.Equal(t, "Ethereum", b["query"])
				require.Equal(t, "relevance", b["sort"])
				requireKeys(t, jobj(t, b["report"]), "searched", "dropped", "filters")
				require.Equal(t, 10, jint(t, b["limit"]))
				require.NotZero(t, dataLen(t, b))
				eachEvent(t, b, "data", func(ev map[string]any) {
					requireKeys(t, ev, append([]string{"matchedVia", "matchType", "matchRank", "matchedTerms", "alsoReportedAs"}, fullEventKeys...)...)
				})
			}},
			{name: "query wins over q", path: restQuery("/v1/search", "q", "Ethereum", "query", "Solana"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, "Solana", b["query"])
			}},
			{name: "limit capped", path: restQuery("/v1/search", "query", "Event", "limit", "99"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 20, jint(t, b["limit"]))
				require.LessOrEqual(t, dataLen(t, b), 20)
			}},
			{name: "limit clamped", path: restQuery("/v1/search", "query", "Event", "limit", "-2"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 1, jint(t, b["limit"]))
				require.Equal(t, 1, dataLen(t, b))
			}},
			{name: "since invalid", path: restQuery("/v1/search", "query", "Event", "since", "soon"), status: 400, err: "since must be an ISO 8601 timestamp, for example 2026-11-19T12:00:00Z or 2026-11-19"},
		},
		"/v1/signal/top": {
			{name: "defaults", path: "/v1/signal/top", status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "limit", "data")
				require.Equal(t, 10, jint(t, b["limit"]))
				require.Equal(t, []int{5006, 5004, 5002, 5000}, idsOf(t, b["data"]), "last 24 hours, most significant first")
			}},
			{name: "since", path: restQuery("/v1/signal/top", "since", ts(-6*restDay), "limit", "100"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 25, jint(t, b["limit"]))
				require.Equal(t, 20, dataLen(t, b))
				eachEvent(t, b, "data", func(ev map[string]any) { require.True(t, isSignal(ev)) })
			}},
			{name: "limit clamped", path: restQuery("/v1/signal/top", "limit", "0"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 1, jint(t, b["limit"]))
				require.Equal(t, []int{5006}, idsOf(t, b["data"]))
			}},
		},
		"/v1/signal/byOrganizationId": {
			{name: "id required", path: "/v1/signal/byOrganizationId", status: 400, err: "id parameter is required"},
			{name: "id not a number", path: restQuery("/v1/signal/byOrganizationId", "id", "eth"), status: 400, err: "id must be an integer"},
			{name: "unknown organization", path: restQuery("/v1/signal/byOrganizationId", "id", "999"), status: 404, err: "Organization not found"},
			{name: "defaults", path: restQuery("/v1/signal/byOrganizationId", "id", "101"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data")
				require.Equal(t, 10, dataLen(t, b))
				requireNewestFirst(t, b)
				eachEvent(t, b, "data", func(ev map[string]any) {
					require.True(t, isSignal(ev))
					require.True(t, involves(t, ev, 101))
				})
			}},
			{name: "limit capped", path: restQuery("/v1/signal/byOrganizationId", "id", "101", "limit", "100"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 10, dataLen(t, b), "101 has 7 recent and 3 old signals")
			}},
			{name: "since", path: restQuery("/v1/signal/byOrganizationId", "id", "101", "since", ts(-restDay)), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, []int{5000, 5006}, idsOf(t, b["data"]))
			}},
		},
		"/v1/signal/byCategory": {
			{name: "category required", path: "/v1/signal/byCategory", status: 400, err: "category parameter is required"},
			{name: "defaults", path: restQuery("/v1/signal/byCategory", "category", "partnership"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data")
				require.Equal(t, 5, dataLen(t, b))
				eachEvent(t, b, "data", func(ev map[string]any) {
					require.Equal(t, "partnership", ev["eventCategory"])
					require.True(t, isSignal(ev))
				})
			}},
			{name: "limit capped at 10", path: restQuery("/v1/signal/byCategory", "category", "partnership", "limit", "100"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 10, dataLen(t, b))
			}},
			{name: "no signals in category", path: restQuery("/v1/signal/byCategory", "category", "funding"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 0, dataLen(t, b))
			}},
		},
		"/v1/radar/byOrganizationId": {
			{name: "id required", path: "/v1/radar/byOrganizationId", status: 400, err: "id parameter is required"},
			{name: "unknown organization", path: restQuery("/v1/radar/byOrganizationId", "id", "999"), status: 404, err: "Organization not found"},
			{name: "defaults", path: restQuery("/v1/radar/byOrganizationId", "id", "103"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 10, dataLen(t, b))
				requireNewestFirst(t, b)
				eachEvent(t, b, "data", func(ev map[string]any) { require.True(t, involves(t, ev, 103)) })
			}},
			{name: "limit capped", path: restQuery("/v1/radar/byOrganizationId", "id", "103", "limit", "1000"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 13, dataLen(t, b), "every event of 103")
			}},
			{name: "category", path: restQuery("/v1/radar/byOrganizationId", "id", "103", "category", "listing", "limit", "25"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.NotZero(t, dataLen(t, b))
				eachEvent(t, b, "data", func(ev map[string]any) { require.Equal(t, "listing", ev["eventCategory"]) })
			}},
		},
		"/v1/radar/byCategory": {
			{name: "category required", path: "/v1/radar/byCategory", status: 400, err: "category parameter is required"},
			{name: "defaults", path: restQuery("/v1/radar/byCategory", "category", "funding"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 10, dataLen(t, b))
				requireNewestFirst(t, b)
				eachEvent(t, b, "data", func(ev map[string]any) { require.Equal(t, "funding", ev["eventCategory"]) })
			}},
			{name: "limit", path: restQuery("/v1/radar/byCategory", "category", "funding", "limit", "3"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 3, dataLen(t, b))
			}},
		},
		"/v1/timeline/byOrganizationId": {
			{name: "id required", path: "/v1/timeline/byOrganizationId", status: 400, err: "id parameter is required"},
			{name: "unknown organization", path: restQuery("/v1/timeline/byOrganizationId", "id", "999"), status: 404, err: "Organization not found"},
			{name: "defaults", path: restQuery("/v1/timeline/byOrganizationId", "id", "101"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "entity", "limit", "since", "next_cursor", "data")
				require.Equal(t, 101, jint(t, jobj(t, b["entity"])["id"]))
				require.Equal(t, 50, jint(t, b["limit"]))
				require.Nil(t, b["next_cursor"])
				require.Equal(t, 17, dataLen(t, b))
				requireNewestFirst(t, b)
			}},
			{name: "since", path: restQuery("/v1/timeline/byOrganizationId", "id", "101", "since", ts(-15*restDay)), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 15, dataLen(t, b))
			}},
		},
		"/v1/replay/global": {
			{name: "since required", path: "/v1/replay/global", status: 400, err: bulkMsg},
			{name: "since older than 30 days", path: restQuery("/v1/replay/global", "since", ts(-40*restDay)), status: 400, err: "since must be within the last 30 days"},
			{name: "defaults", path: restQuery("/v1/replay/global", "since", ts(-21*restDay)), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "limit", "offset", "since", "next_cursor", "data")
				require.Equal(t, 25, jint(t, b["limit"]))
				require.Equal(t, []int{5901, 5900}, idsOf(t, b["data"])[:2], "oldest first, 20 and 10 days back")
				require.IsType(t, "", b["next_cursor"])
			}},
			{name: "signal surface", path: restQuery("/v1/replay/global", "since", ts(-21*restDay), "surface", "signal"), status: 200, check: func(t *testing.T, b map[string]any) {
				eachEvent(t, b, "data", func(ev map[string]any) { require.True(t, isSignal(ev)) })
			}},
			{name: "surface invalid", path: restQuery("/v1/replay/global", "since", ts(-21*restDay), "surface", "both"), status: 400, err: "surface must be one of: radar, signal"},
			{name: "category", path: restQuery("/v1/replay/global", "since", ts(-21*restDay), "category", "analysis"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, []int{5901, 5900}, idsOf(t, b["data"]))
			}},
		},
		"/v1/radar/all":  bulk("/v1/radar/all", false),
		"/v1/signal/all": bulk("/v1/signal/all", true),
		"/v1/entities/byName": {
			{name: "name required", path: "/v1/entities/byName", status: 400, err: "name parameter is required"},
			{name: "defaults", path: restQuery("/v1/entities/byName", "name", "eth"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "limit", "offset", "data")
				require.Equal(t, 50, jint(t, b["limit"]))
				require.Equal(t, 0, jint(t, b["offset"]))
				first := jobj(t, jlist(t, b["data"])[0])
				require.Equal(t, 101, jint(t, first["id"]))
				requireKeys(t, first, "id", "canonicalName", "displayName", "entityType", "status", "aliases", "references",
					"matchedVia", "matchType", "matchRank", "matchedValue")
			}},
			{name: "entityName alias", path: restQuery("/v1/entities/byName", "entityName", "sol"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, []int{103}, idsOf(t, b["data"]))
			}},
			{name: "limit clamped", path: restQuery("/v1/entities/byName", "name", "eth", "limit", "-1", "offset", "-1"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 1, jint(t, b["limit"]))
				require.Equal(t, 0, jint(t, b["offset"]))
				require.Equal(t, 1, dataLen(t, b))
			}},
			{name: "limit capped", path: restQuery("/v1/entities/byName", "name", "eth", "limit", "1000", "offset", "1000"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 50, jint(t, b["limit"]))
				require.Equal(t, 500, jint(t, b["offset"]))
			}},
		},
		"/v1/entities/byTopName": {
			{name: "name required", path: "/v1/entities/byTopName", status: 400, err: "name parameter is required"},
			{name: "no match", path: restQuery("/v1/entities/byTopName", "name", "zzzzqqq"), status: 404, err: "Entity not found"},
			{name: "defaults", path: restQuery("/v1/entities/byTopName", "name", "eth"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data", "matches")
				require.Equal(t, 101, jint(t, jobj(t, b["data"])["id"]))
				require.NotContains(t, idsOf(t, b["matches"]), 101)
				require.LessOrEqual(t, len(jlist(t, b["matches"])), 5)
			}},
			{name: "limit clamped", path: restQuery("/v1/entities/byTopName", "name", "eth", "limit", "0"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Len(t, jlist(t, b["matches"]), 1)
			}},
		},
		"/v1/entities/byId": {
			{name: "id required", path: "/v1/entities/byId", status: 400, err: "id parameter is required"},
			{name: "id fractional", path: restQuery("/v1/entities/byId", "id", "1.5"), status: 400, err: "id must be an integer"},
			{name: "unknown entity", path: restQuery("/v1/entities/byId", "id", "999"), status: 404, err: "Entity not found"},
			{name: "found", path: restQuery("/v1/entities/byId", "id", "101"), status: 200, check: func(t *testing.T, b map[string]any) {
				e := jobj(t, b["data"])
				requireKeys(t, e, "id", "canonicalName", "displayName", "entityType", "status", "aliases", "references")
				require.Equal(t, "Ethereum", e["canonicalName"])
				require.Equal(t, []int{7002}, idsOf(t, e["references"]))
			}},
		},
		"/v1/entities/{id}/relationships": {
			{name: "id invalid", path: "/v1/entities/abc/relationships", status: 400, err: "id must be an integer"},
			{name: "unknown entity", path: "/v1/entities/999/relationships", status: 404, err: "Entity not found"},
			{name: "defaults", path: "/v1/entities/101/relationships", status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "entity", "limit", "offset", "data")
				require.Equal(t, 50, jint(t, b["limit"]))
				require.Equal(t, 0, jint(t, b["offset"]))
				rel := jobj(t, jlist(t, b["data"])[0])
				require.Equal(t, "FOUNDATION_OF", rel["relationshipType"])
				require.Equal(t, "inbound", rel["direction"])
				require.Equal(t, true, rel["searchExpand"])
				require.Equal(t, 102, jint(t, jobj(t, rel["relatedEntity"])["id"]))
			}},
			{name: "caps", path: "/v1/entities/101/relationships?limit=999&offset=999", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 50, jint(t, b["limit"]))
				require.Equal(t, 250, jint(t, b["offset"]))
				require.Equal(t, 0, dataLen(t, b))
			}},
			{name: "outbound", path: "/v1/entities/102/relationships", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, "outbound", jobj(t, jlist(t, b["data"])[0])["direction"])
			}},
			{name: "type filter", path: "/v1/entities/101/relationships?relationshipType=FOUNDATION_OF", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 1, dataLen(t, b))
			}},
			{name: "type filter matching none", path: "/v1/entities/101/relationships?relationshipType=REGULATES", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 0, dataLen(t, b))
			}},
			{name: "direction filter", path: "/v1/entities/101/relationships?direction=outbound", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 0, dataLen(t, b))
			}},
			{name: "type misspelt as a parameter", path: "/v1/entities/101/relationships?type=FOUNDATION_OF", status: 400,
				err: `unknown parameter "type": /v1/entities/{id}/relationships accepts limit, offset, relationshipType, direction`},
		},
		"/v1/categories/all": {
			{name: "categories in use", path: "/v1/categories/all", status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data")
				var names []string
				for _, it := range jlist(t, b["data"]) {
					c := jobj(t, it)
					requireKeys(t, c, "name", "subcategories")
					names = append(names, c["name"].(string))
					require.Equal(t, []any{"sub_" + c["name"].(string)}, c["subcategories"])
				}
				require.Equal(t, []string{"analysis", "funding", "listing", "partnership", "technology"}, names)
			}},
			{name: "unknown parameter", path: "/v1/categories/all?limit=5", status: 400, err: `unknown parameter "limit": /v1/categories/all accepts no query parameters`},
		},
		"/v1/entities/{id}/references": {
			{name: "unknown entity", path: "/v1/entities/999/references", status: 404, err: "Entity not found"},
			{name: "found", path: "/v1/entities/101/references", status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "entity", "data")
				require.Equal(t, []int{7002}, idsOf(t, b["data"]))
			}},
			{name: "empty", path: "/v1/entities/106/references", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 0, dataLen(t, b))
			}},
		},
		"/v1/entities/{id}/research": contentCases("research", 101, []int{5000, 5015, 5030}),
		"/v1/entities/{id}/media":    contentCases("media", 103, []int{5007, 5028}),
		"/v1/organizations/byOrganizationId": {
			{name: "id required", path: "/v1/organizations/byOrganizationId", status: 400, err: "id parameter is required"},
			{name: "unknown organization", path: restQuery("/v1/organizations/byOrganizationId", "id", "999"), status: 404, err: "Organization not found"},
			{name: "plain", path: restQuery("/v1/organizations/byOrganizationId", "id", "101"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data")
				requireKeys(t, jobj(t, b["data"]), "id", "label", "aliases")
			}},
			{name: "include both", path: restQuery("/v1/organizations/byOrganizationId", "id", "101", "include", "radar,signal"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data", "radar", "signal")
				require.Len(t, jlist(t, b["radar"]), 5)
				require.Len(t, jlist(t, b["signal"]), 5)
				eachEvent(t, b, "signal", func(ev map[string]any) {
					requireKeys(t, ev, "id", "title", "signal")
					require.NotNil(t, ev["signal"])
				})
			}},
			{name: "include one, limit capped", path: restQuery("/v1/organizations/byOrganizationId", "id", "101", "include", "signal", "includeLimit", "100"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data", "signal")
				require.Len(t, jlist(t, b["signal"]), 10)
			}},
			{name: "include invalid", path: restQuery("/v1/organizations/byOrganizationId", "id", "101", "include", "radar,news"), status: 400, err: "include must only contain: radar, signal"},
			{name: "includeLimit invalid", path: restQuery("/v1/organizations/byOrganizationId", "id", "101", "include", "radar", "includeLimit", "two"), status: 400, err: "includeLimit must be an integer"},
		},
		"/v1/organizations/byOrganizationName": {
			{name: "name required", path: "/v1/organizations/byOrganizationName", status: 400, err: "name parameter is required"},
			{name: "name", path: restQuery("/v1/organizations/byOrganizationName", "name", "ETHER"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data")
				first := jobj(t, jlist(t, b["data"])[0])
				requireKeys(t, first, "id", "label", "type", "aliases", "matchedVia", "matchType", "matchRank", "matchedValue")
				require.Equal(t, 101, jint(t, first["id"]))
			}},
			{name: "organizationName alias", path: restQuery("/v1/organizations/byOrganizationName", "organizationName", "solana"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 103, idsOf(t, b["data"])[0])
			}},
		},
		"/v1/organizations/all": {
			{name: "defaults", path: "/v1/organizations/all", status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "limit", "offset", "data")
				require.Equal(t, 25, jint(t, b["limit"]))
				require.Equal(t, []int{101, 102, 103, 104, 105, 106}, idsOf(t, b["data"]))
				requireKeys(t, jobj(t, jlist(t, b["data"])[0]), "id", "label")
			}},
			{name: "caps", path: "/v1/organizations/all?limit=100&offset=1000", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 25, jint(t, b["limit"]))
				require.Equal(t, 100, jint(t, b["offset"]))
			}},
			{name: "page", path: "/v1/organizations/all?limit=2&offset=1", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, []int{102, 103}, idsOf(t, b["data"]))
			}},
		},
		"/v1/organizations/{id}/signal-history": {
			{name: "id invalid", path: "/v1/organizations/x1/signal-history", status: 400, err: "id must be an integer"},
			{name: "unknown organization", path: "/v1/organizations/999/signal-history", status: 404, err: "Organization not found"},
			{name: "defaults", path: "/v1/organizations/101/signal-history", status: 200, check: func(t *testing.T, b map[string]any) {
				data := jobj(t, b["data"])
				requireKeys(t, data, "organizationId", "label", "history")
				require.Equal(t, 101, jint(t, data["organizationId"]))
				hist := jlist(t, data["history"])
				require.Len(t, hist, 30)
				require.Equal(t, "2026-11-20", jobj(t, hist[0])["date"], "newest first")
				for i := 1; i < len(hist); i++ {
					require.Less(t, jobj(t, hist[i])["date"], jobj(t, hist[i-1])["date"])
				}
			}},
			{name: "days capped at 90", path: "/v1/organizations/101/signal-history?days=1000", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Len(t, jlist(t, jobj(t, b["data"])["history"]), 90)
			}},
			{name: "days clamped", path: "/v1/organizations/101/signal-history?days=-4", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Len(t, jlist(t, jobj(t, b["data"])["history"]), 1)
			}},
		},
		"/v1/brief": {
			{name: "id required", path: restQuery("/v1/brief", "since", briefSince), status: 400, err: "id parameter is required"},
			{name: "since required", path: restQuery("/v1/brief", "id", "101"), status: 400, err: "since parameter is required"},
			{name: "since invalid", path: restQuery("/v1/brief", "id", "101", "since", "today"), status: 400, err: "since must be an ISO 8601 timestamp, for example 2026-11-19T12:00:00Z or 2026-11-19"},
			{name: "unknown organization", path: restQuery("/v1/brief", "id", "999", "since", briefSince), status: 404, err: "Organization not found"},
			{name: "full", path: restQuery("/v1/brief", "id", "101", "since", ts(-6*restDay)), status: 200, check: func(t *testing.T, b map[string]any) {
				data := jobj(t, b["data"])
				requireKeys(t, data, "organizationId", "label", "radar", "signal", "counts")
				require.Equal(t, "Ethereum", data["label"])
				counts := jobj(t, data["counts"])
				require.Len(t, jlist(t, data["radar"]), 5)
				require.Equal(t, 5, jint(t, counts["radar"]))
				require.Equal(t, len(jlist(t, data["signal"])), jint(t, counts["signal"]))
				eachEvent(t, data, "radar", func(ev map[string]any) { requireKeys(t, ev, fullEventKeys...) })
				eachEvent(t, data, "signal", func(ev map[string]any) { require.True(t, isSignal(ev)) })
			}},
			{name: "compact", path: restQuery("/v1/brief", "id", "101", "since", ts(-6*restDay), "compact", "true"), status: 200, check: func(t *testing.T, b map[string]any) {
				data := jobj(t, b["data"])
				eachEvent(t, data, "radar", func(ev map[string]any) { requireCompact(t, ev) })
				eachEvent(t, data, "signal", func(ev map[string]any) { requireCompact(t, ev) })
			}},
			{name: "compact invalid", path: restQuery("/v1/brief", "id", "101", "since", briefSince, "compact", "maybe"), status: 400, err: "compact must be a boolean (true or false)"},
			{name: "limit capped", path: restQuery("/v1/brief", "id", "101", "since", ts(-29*restDay), "limit", "100"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Len(t, jlist(t, jobj(t, b["data"])["radar"]), 16)
			}},
		},
		"/v1/brief/batch": {
			{name: "ids required", path: restQuery("/v1/brief/batch", "since", briefSince), status: 400, err: "ids parameter is required"},
			{name: "no valid ids", path: restQuery("/v1/brief/batch", "ids", "abc,,x", "since", briefSince), status: 400, err: "No valid organization IDs provided"},
			{name: "too many ids", path: restQuery("/v1/brief/batch", "ids", strings.Join(manyIDs, ","), "since", briefSince), status: 400, err: "Maximum 25 organization IDs per batch request"},
			{name: "since required", path: restQuery("/v1/brief/batch", "ids", "101"), status: 400, err: "since parameter is required"},
			{name: "inline error", path: restQuery("/v1/brief/batch", "ids", "101,999,bad", "since", ts(-6*restDay)), status: 200, check: func(t *testing.T, b map[string]any) {
				data := jobj(t, b["data"])
				requireKeys(t, data, "organizations")
				orgs := jlist(t, data["organizations"])
				require.Len(t, orgs, 2)
				ok, failed := jobj(t, orgs[0]), jobj(t, orgs[1])
				require.Equal(t, 101, jint(t, ok["organizationId"]))
				require.Nil(t, ok["error"])
				require.Len(t, jlist(t, ok["radar"]), 5)
				require.Equal(t, 999, jint(t, failed["organizationId"]))
				require.Nil(t, failed["label"])
				require.IsType(t, "", failed["error"])
				require.NotEmpty(t, failed["error"])
				require.Empty(t, jlist(t, failed["radar"]))
				require.Empty(t, jlist(t, failed["signal"]))
				counts := jobj(t, failed["counts"])
				require.Equal(t, 0, jint(t, counts["radar"]))
				require.Equal(t, 0, jint(t, counts["signal"]))
			}},
			{name: "compact, limit capped at 10", path: restQuery("/v1/brief/batch", "ids", "101,103", "since", ts(-29*restDay), "compact", "1", "limit", "50"), status: 200, check: func(t *testing.T, b map[string]any) {
				orgs := jlist(t, jobj(t, b["data"])["organizations"])
				require.Len(t, orgs, 2)
				for _, o := range orgs {
					radar := jlist(t, jobj(t, o)["radar"])
					require.Len(t, radar, 10)
					for _, ev := range radar {
						requireCompact(t, jobj(t, ev))
					}
				}
			}},
		},
		"/v1/pmarket/all": {
			{name: "defaults", path: "/v1/pmarket/all", status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "limit", "offset", "data")
				require.Equal(t, 25, jint(t, b["limit"]))
				view := jobj(t, jlist(t, b["data"])[0])
				requireKeys(t, view, "organization", "markets", "events")
				ev := jobj(t, jlist(t, view["events"])[0])
				requireKeys(t, ev, "subevent_id", "subevent_label", "subevent_type", "normalized_title", "injected_summary", "posts")
				requireKeys(t, jobj(t, jlist(t, ev["posts"])[0]), "id", "content", "date")
			}},
			{name: "caps and clamps", path: "/v1/pmarket/all?limit=1000&offset=-7", status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 50, jint(t, b["limit"]))
				require.Equal(t, 0, jint(t, b["offset"]))
			}},
		},
		"/v1/pmarket/byOrganizationId": {
			{name: "id required", path: "/v1/pmarket/byOrganizationId", status: 400, err: "id parameter is required"},
			{name: "found", path: restQuery("/v1/pmarket/byOrganizationId", "id", "101"), status: 200, check: func(t *testing.T, b map[string]any) {
				requireKeys(t, b, "data")
				view := jobj(t, jlist(t, b["data"])[0])
				requireKeys(t, view, "org_id", "organization", "markets", "events")
				require.Equal(t, 101, jint(t, view["org_id"]))
				require.Equal(t, "Ethereum", view["organization"])
			}},
			{name: "no markets", path: restQuery("/v1/pmarket/byOrganizationId", "id", "106"), status: 200, check: func(t *testing.T, b map[string]any) {
				require.Equal(t, 0, dataLen(t, b))
			}},
		},
	}
}

// contentCases are the cases of the research and media routes.
func contentCases(kind string, entity int, want []int) []restCase {
	path := fmt.Sprintf("/v1/entities/%d/%s", entity, kind)
	return []restCase{
		{name: "id invalid", path: "/v1/entities/one/" + kind, status: 400, err: "id must be an integer"},
		{name: "unknown entity", path: "/v1/entities/999/" + kind, status: 404, err: "Entity not found"},
		{name: "since older than 30 days", path: restQuery(path, "since", ts(-31*restDay)), status: 400, err: "since must be within the last 30 days"},
		{name: "defaults", path: path, status: 200, check: func(t *testing.T, b map[string]any) {
			requireKeys(t, b, "entity", "limit", "since", "next_cursor", "data")
			require.Equal(t, entity, jint(t, jobj(t, b["entity"])["id"]))
			require.Equal(t, 25, jint(t, b["limit"]))
			require.Equal(t, "2026-10-21T12:00:00.000Z", b["since"], "default the last 30 days")
			require.Nil(t, b["next_cursor"])
			require.Equal(t, want, idsOf(t, b["data"]))
			eachEvent(t, b, "data", func(ev map[string]any) {
				requireKeys(t, ev, append([]string{"sourceType", "contentType", "eventSurface"}, fullEventKeys...)...)
				require.Equal(t, "classified_event", ev["sourceType"])
				require.Equal(t, kind, ev["contentType"])
				want := "radar"
				if isSignal(ev) {
					want = "signal"
				}
				require.Equal(t, want, ev["eventSurface"])
			})
		}},
		{name: "limit clamped with cursor", path: restQuery(path, "limit", "-1"), status: 200, check: func(t *testing.T, b map[string]any) {
			require.Equal(t, 1, jint(t, b["limit"]))
			require.Equal(t, want[:1], idsOf(t, b["data"]))
			require.IsType(t, "", b["next_cursor"])
		}},
		{name: "limit capped", path: restQuery(path, "limit", "80"), status: 200, check: func(t *testing.T, b map[string]any) {
			require.Equal(t, 25, jint(t, b["limit"]))
		}},
	}
}

// requireNewestFirst checks data is ordered by latestEvidenceTimestamp,
// newest first.
func requireNewestFirst(t *testing.T, b map[string]any) {
	t.Helper()
	var prev time.Time
	eachEvent(t, b, "data", func(ev map[string]any) {
		at := jtime(t, ev["latestEvidenceTimestamp"])
		if !prev.IsZero() {
			require.False(t, at.After(prev), "newest first")
		}
		prev = at
	})
}

// requireCompact checks a compact brief item: exactly the full event
// without evidence, bullets, owners, participants and their legacy aliases.
func requireCompact(t *testing.T, ev map[string]any) {
	t.Helper()
	dropped := []string{"evidence", "bullets", "owners", "participants", "posts", "bulletSummary", "eventOwner", "eventParticipants"}
	var want []string
	for _, k := range fullEventKeys {
		if !slices.Contains(dropped, k) {
			want = append(want, k)
		}
	}
	requireKeys(t, ev, want...)
}

// TestRESTContract runs the contract table against a real server: every
// route's defaults, caps, clamps, exact error messages, envelopes, headers
// and legacy fields.
func TestRESTContract(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	cases := restContractCases()

	// Every GET route of the table has cases, and every case hits its route.
	for _, r := range rest.Routes() {
		require.NotEmpty(t, cases[r.Path], "no contract cases for %s", r.Path)
	}

	paths := keysOf(func() map[string]any {
		m := map[string]any{}
		for k := range cases {
			m[k] = nil
		}
		return m
	}())
	for _, routePath := range paths {
		t.Run(strings.TrimPrefix(routePath, "/v1/"), func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases[routePath] {
				t.Run(tc.name, func(t *testing.T) {
					route := routeFor(t, tc.path)
					require.Equal(t, routePath, route.Path, "case %q is filed under the wrong route", tc.name)
					r := s.get(t, tc.path)
					require.Equal(t, tc.status, r.Status, "GET %s: %s", tc.path, r.Body)
					require.Equal(t, "application/json; charset=utf-8", r.Header.Get("Content-Type"))
					requirePolicyHeaders(t, r, route)
					if tc.status != 200 {
						require.Equal(t, tc.err, r.Error(t), "GET %s", tc.path)
						return
					}
					body := r.JSON(t)
					checkLegacy(t, body)
					if tc.check != nil {
						tc.check(t, body)
					}
				})
			}
		})
	}
}

// TestRESTLegacyFieldsEverywhere proves the legacy fields are present and
// equal to the canonical ones on every route that returns events.
func TestRESTLegacyFieldsEverywhere(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	for _, path := range []string{
		"/v1/latest?window=30d&limit=25",
		"/v1/signal/latest?window=30d&limit=25",
		"/v1/search?q=Event&limit=20",
		"/v1/signal/top?since=" + url.QueryEscape(ts(-6*restDay)),
		"/v1/signal/byOrganizationId?id=101",
		"/v1/signal/byCategory?category=partnership",
		"/v1/radar/byOrganizationId?id=101",
		"/v1/radar/byCategory?category=funding",
		"/v1/timeline/byOrganizationId?id=101",
		"/v1/replay/global?since=" + url.QueryEscape(ts(-29*restDay)),
		"/v1/radar/all?since=" + url.QueryEscape(ts(-6*restDay)),
		"/v1/signal/all?since=" + url.QueryEscape(ts(-6*restDay)),
		"/v1/entities/101/research",
		"/v1/entities/103/media",
		"/v1/brief?id=101&since=" + url.QueryEscape(ts(-6*restDay)),
		"/v1/brief?id=101&compact=true&since=" + url.QueryEscape(ts(-6*restDay)),
		"/v1/brief/batch?ids=101,103&since=" + url.QueryEscape(ts(-6*restDay)),
	} {
		r := s.get(t, path)
		require.Equal(t, 200, r.Status, "%s: %s", path, r.Body)
		require.Positive(t, checkLegacy(t, r.JSON(t)), "%s returned no events", path)
	}
}
