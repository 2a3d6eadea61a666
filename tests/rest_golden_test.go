package tests

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/rest"
	"github.com/cryptointel/cryptointel/wire"
)

func init() {
	// -update rewrites golden files. Defined here unless another test file
	// of the package already did.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files in tests/testdata")
	}
}

// updateGolden reports whether -update was given.
func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// cursorPattern matches next_cursor tokens, which are signed with the
// server secret and so are normalized in golden files.
var cursorPattern = regexp.MustCompile(`"next_cursor": "[A-Za-z0-9_-]+"`)

// requestIDPattern matches the request id of an error body, new on every
// request.
var requestIDPattern = regexp.MustCompile(`"requestId": "[A-Za-z0-9._-]+"`)

// restGoldenRequests are the responses pinned in tests/testdata/rest: one
// or more per route, against the fixture and the pinned clock.
var restGoldenRequests = map[string]string{
	"latest":                        "/v1/latest?limit=3",
	"signal_latest":                 "/v1/signal/latest?limit=2&mode=new",
	"search":                        "/v1/search?q=Solana&limit=2",
	"signal_top":                    "/v1/signal/top?limit=2",
	"signal_by_organization_id":     "/v1/signal/byOrganizationId?id=101&limit=2",
	"signal_by_category":            "/v1/signal/byCategory?category=partnership&limit=2",
	"radar_by_organization_id":      "/v1/radar/byOrganizationId?id=103&limit=2",
	"radar_by_category":             "/v1/radar/byCategory?category=funding&limit=2",
	"timeline_by_organization_id":   "/v1/timeline/byOrganizationId?id=101&limit=2",
	"replay_global":                 "/v1/replay/global?limit=2&since=" + url.QueryEscape(ts(-21*restDay)),
	"radar_all":                     "/v1/radar/all?limit=2&since=" + url.QueryEscape(ts(-6*restDay)),
	"signal_all":                    "/v1/signal/all?limit=2&since=" + url.QueryEscape(ts(-6*restDay)),
	"entities_by_name":              "/v1/entities/byName?name=eth",
	"entities_by_top_name":          "/v1/entities/byTopName?name=ethereum",
	"entities_by_id":                "/v1/entities/byId?id=101",
	"entity_relationships":          "/v1/entities/101/relationships",
	"entity_references":             "/v1/entities/101/references",
	"entity_research":               "/v1/entities/101/research?limit=1",
	"entity_media":                  "/v1/entities/103/media?limit=1",
	"organization":                  "/v1/organizations/byOrganizationId?id=101&include=radar,signal&includeLimit=2",
	"organizations_by_name":         "/v1/organizations/byOrganizationName?name=sol",
	"organizations_all":             "/v1/organizations/all?limit=3",
	"organization_signal_history":   "/v1/organizations/101/signal-history?days=3",
	"brief":                         "/v1/brief?id=103&limit=1&since=" + url.QueryEscape(ts(-restDay)),
	"brief_compact":                 "/v1/brief?id=103&limit=1&compact=true&since=" + url.QueryEscape(ts(-restDay)),
	"brief_batch":                   "/v1/brief/batch?ids=104,999&limit=1&since=" + url.QueryEscape(ts(-restDay)),
	"brief_batch_compact":           "/v1/brief/batch?ids=104,999&limit=1&compact=true&since=" + url.QueryEscape(ts(-restDay)),
	"pmarket_all":                   "/v1/pmarket/all",
	"latest_lean":                   "/v1/latest?limit=3&legacy=false",
	"search_lean":                   "/v1/search?q=Solana&limit=2&legacy=false",
	"brief_compact_lean":            "/v1/brief?id=103&limit=1&compact=true&legacy=false&since=" + url.QueryEscape(ts(-restDay)),
	"pmarket_by_organization_id":    "/v1/pmarket/byOrganizationId?id=101",
	"error_bulk_since_required":     "/v1/radar/all",
	"error_batch_too_many":          "/v1/brief/batch?since=2026-11-20T00:00:00Z&ids=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26",
	"error_organization_not_found":  "/v1/brief?id=999&since=2026-11-20T00:00:00Z",
	"error_limit_not_integer":       "/v1/latest?limit=ten",
	"error_search_query_required":   "/v1/search",
	"error_entity_not_found":        "/v1/entities/byId?id=999",
	"error_unknown_route":           "/v1/unknown",
	"error_research_since_too_old":  "/v1/entities/101/research?since=2026-10-01T00:00:00Z",
	"error_signal_history_id_bad":   "/v1/organizations/abc/signal-history",
	"error_include_invalid":         "/v1/organizations/byOrganizationId?id=101&include=news",
	"error_since_not_a_timestamp":   "/v1/brief?id=101&since=yesterday",
	"error_batch_no_valid_ids":      "/v1/brief/batch?ids=a,b&since=2026-11-20T00:00:00Z",
	"error_window_invalid":          "/v1/latest?window=1y",
	"error_name_required":           "/v1/entities/byName",
	"error_relationships_not_found": "/v1/entities/999/relationships",
}

// TestRESTGolden compares every pinned /v1 response with its golden file
// (tests/testdata/rest/<name>.json, refreshed with -update), so a change to
// the GraphQL schema or an operation cannot change the REST contract
// silently.
func TestRESTGolden(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	dir := filepath.Join("testdata", "rest")
	if updateGolden() {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	for name, path := range restGoldenRequests {
		r := s.get(t, path)
		var req bytes.Buffer
		enc := json.NewEncoder(&req)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(path))
		doc := fmt.Sprintf(`{"request": %s, "status": %d, "body": %s}`, bytes.TrimSpace(req.Bytes()), r.Status, r.Body)
		var pretty bytes.Buffer
		require.NoError(t, json.Indent(&pretty, []byte(doc), "", "  "), "%s: %s", path, r.Body)
		pretty.WriteByte('\n')
		got := cursorPattern.ReplaceAll(pretty.Bytes(), []byte(`"next_cursor": "<cursor>"`))
		got = requestIDPattern.ReplaceAll(got, []byte(`"requestId": "<request id>"`))
		file := filepath.Join(dir, name+".json")
		if updateGolden() {
			require.NoError(t, os.WriteFile(file, got, 0o644))
			continue
		}
		want, err := os.ReadFile(file)
		require.NoError(t, err, "missing golden file; run go test ./tests -run TestRESTGolden -update")
		require.Equal(t, string(want), string(got), "%s differs from %s (run with -update if the change is intended)", path, file)
	}
}

// TestRESTLeanShape: legacy=false answers every event route with the
// default response less the legacy aliases of each event — nothing else
// changes — and in fewer bytes; any other value of legacy, or none, is the
// default shape.
func TestRESTLeanShape(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	legacyNames := map[string]bool{}
	for _, f := range wire.EventFields {
		if f.Legacy != "" {
			legacyNames[f.Legacy] = true
		}
	}
	// strip removes the legacy aliases from every event (an object with
	// latestEvidenceTimestamp) in v.
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			_, event := x["latestEvidenceTimestamp"]
			for k, c := range x {
				if event && legacyNames[k] {
					delete(x, k)
					continue
				}
				x[k] = strip(c)
			}
		case []any:
			for i := range x {
				x[i] = strip(x[i])
			}
		}
		return v
	}
	n := 0
	for _, r := range rest.Routes() {
		if !slices.ContainsFunc(r.Params, func(p rest.Param) bool { return p.Name == "legacy" }) {
			continue
		}
		path := restRouteExample(t, r)
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		full, lean := s.get(t, path), s.get(t, path+sep+"legacy=false")
		require.Equal(t, http.StatusOK, full.Status, "%s: %s", path, full.Body)
		require.Equal(t, http.StatusOK, lean.Status, "%s: %s", path, lean.Body)
		require.Equal(t, full.Body, s.get(t, path+sep+"legacy=true").Body, path)
		var fullV, leanV any
		require.NoError(t, json.Unmarshal(full.Body, &fullV))
		require.NoError(t, json.Unmarshal(lean.Body, &leanV))
		require.Equal(t, strip(fullV), leanV, path)
		if bytes.Contains(full.Body, []byte(`"latestEvidenceTimestamp"`)) {
			require.Less(t, len(lean.Body), len(full.Body), path)
			n++
		}
	}
	require.GreaterOrEqual(t, n, 10, "event routes with events in their example")
}

// restRouteExample is a request of route r against the REST fixture that
// answers 200: its required parameters set to fixture values.
func restRouteExample(t *testing.T, r rest.Route) string {
	t.Helper()
	path := strings.ReplaceAll(r.Path, "{id}", strconv.Itoa(entEthereum))
	q := url.Values{}
	for _, p := range r.Params {
		if !p.Required || p.In != "query" {
			continue
		}
		switch {
		case p.Name == "ids":
			q.Set(p.Name, fmt.Sprintf("%d,%d", entEthereum, entSolana))
		case p.Type == rest.TypeInteger:
			q.Set(p.Name, strconv.Itoa(entEthereum))
		case p.Type == rest.TypeDateTime:
			q.Set(p.Name, ts(-6*restDay))
		case p.Name == "category":
			q.Set(p.Name, "partnership")
		default:
			q.Set(p.Name, "Solana")
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
