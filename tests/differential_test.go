package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/resolvers"
	"github.com/cryptointel/cryptointel/rest"
	"github.com/cryptointel/cryptointel/rest/ops"
)

// The differential test: every /v1 route (each parameter, valid and
// invalid) and a set of /graphql documents run through the service's one
// executor — each document planned once, the plan cached and run by the
// generated per-type code (graph/plan.go, graph/gen) — and through gqlgen's
// own executor over the same data, and their responses must be the same
// bytes, errors included. FuzzDifferential feeds it parameters.

// diffNow is the differential test's clock; the demo data is anchored
// to it.
var diffNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// diffDenyHeader makes the test's access function refuse premium fields,
// so the @access directive's refusal is compared too.
const diffDenyHeader = "X-Diff-Deny-Premium"

type denyKey struct{}

// diffPair is the same service twice: fast (the plan executor) and
// reference (gqlgen's executor).
type diffPair struct {
	fast, ref         http.Handler
	fastExec, refExec *resolvers.Executor
	routes            []rest.Route
}

// diffSeed is the demo data both sides read.
var diffSeed = demo.Options{Events: 1500}

// newDiffPair builds the pair over a fresh database seeded with the demo
// data, dropped when t ends. When fuzzing, the coordinator stops its
// worker processes without running their cleanups, so they share one
// seeded database that outlives the run instead (diffFuzzStore).
func newDiffPair(t testing.TB) *diffPair {
	t.Helper()
	var store *db.DB
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		store = diffFuzzStore(t)
	} else {
		store = dbtest.New(t)
		store.Now = func() time.Time { return diffNow }
		_, err := demo.Seed(context.Background(), store, diffSeed)
		require.NoError(t, err)
	}
	access := func(ctx context.Context, layer, feature string) error {
		if ctx.Value(denyKey{}) != nil && layer == "premium" {
			return &cryptointel.Error{Code: cryptointel.EFORBIDDEN, Message: "This endpoint requires the premium layer."}
		}
		return nil
	}
	p := &diffPair{}
	build := func(fast bool) http.Handler {
		exec := resolvers.NewExecutor(resolvers.Config{Store: store, CursorSecret: "differential", Access: access})
		exec.SetFast(fast)
		if fast {
			p.fastExec = exec
		} else {
			p.refExec = exec
		}
		router, err := rest.New(rest.Config{
			Executor: exec,
			Schema:   graph.NewExecutableSchema(graph.Config{}).Schema(),
			Now:      store.Now,
		})
		require.NoError(t, err)
		mux := http.NewServeMux()
		mux.Handle("/v1/", router)
		mux.Handle("/graphql", exec)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(diffDenyHeader) != "" {
				r = r.WithContext(context.WithValue(r.Context(), denyKey{}, true))
			}
			mux.ServeHTTP(w, r)
		})
	}
	p.fast, p.ref = build(true), build(false)
	for _, r := range rest.Routes() {
		if r.Method == http.MethodGet && r.Handler == nil {
			p.routes = append(p.routes, r)
		}
	}
	return p
}

// diffFuzzStore opens the fuzzing workers' shared database,
// cryptointel_fuzz_differential, migrated and seeded by the first worker
// that finds it missing (under an advisory lock). The workers only read it.
func diffFuzzStore(t testing.TB) *db.DB {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dbtest.AdminURL())
	require.NoError(t, err)
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, "SELECT pg_advisory_lock(72621)")
	require.NoError(t, err)
	defer admin.Exec(ctx, "SELECT pg_advisory_unlock(72621)") //nolint:errcheck
	const name = "cryptointel_fuzz_differential"
	var exists bool
	require.NoError(t, admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists))
	u, err := url.Parse(dbtest.AdminURL())
	require.NoError(t, err)
	u.Path = "/" + name
	if !exists {
		_, err = admin.Exec(ctx, "CREATE DATABASE "+name)
		require.NoError(t, err)
	}
	store, err := db.Open(ctx, u.String(), db.Options{MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	store.Now = func() time.Time { return diffNow }
	require.NoError(t, store.Migrate(ctx))
	_, err = demo.Seed(ctx, store, diffSeed) // does nothing when seeded
	require.NoError(t, err)
	return store
}

// diffResult is what is compared of a response.
type diffResult struct {
	status      int
	contentType string
	body        []byte
}

func serve(h http.Handler, method, target, body string, header http.Header) diffResult {
	// The query is set raw, as a client may send it (the fuzz target's
	// bytes are not all a valid request line).
	path, rawQuery, _ := strings.Cut(target, "?")
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	req.URL.RawQuery = rawQuery
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return diffResult{status: rec.Code, contentType: rec.Header().Get("Content-Type"), body: rec.Body.Bytes()}
}

// compare serves one request on both sides and fails on any difference.
func (p *diffPair) compare(t testing.TB, method, target, body string, header http.Header) diffResult {
	t.Helper()
	fast := serve(p.fast, method, target, body, header)
	ref := serve(p.ref, method, target, body, header)
	if fast.status == http.StatusInternalServerError || ref.status == http.StatusInternalServerError {
		t.Fatalf("%s %s %s: a 500 (fast %s / reference %s)", method, target, body, fast.body, ref.body)
	}
	fb, rb := normalizeErrors(fast.body), normalizeErrors(ref.body)
	// Each request has its own id; error bodies quote it.
	fb = diffRequestID.ReplaceAll(fb, []byte(`"requestId":"<id>"`))
	rb = diffRequestID.ReplaceAll(rb, []byte(`"requestId":"<id>"`))
	if fast.status != ref.status || fast.contentType != ref.contentType || !bytes.Equal(fb, rb) {
		t.Fatalf("%s %s %s: responses differ\nfast (%d %s):\n%s\nreference (%d %s):\n%s",
			method, target, body, fast.status, fast.contentType, fast.body, ref.status, ref.contentType, ref.body)
	}
	return fast
}

// diffRequestID matches the request id an error body quotes.
var diffRequestID = regexp.MustCompile(`"requestId":"[^"]*"`)

// normalizeErrors sorts a GraphQL response's errors when it has several:
// gqlgen resolves sibling fields concurrently, so the order in which it
// records their errors varies from run to run. Everything else, each
// error's bytes included, is compared as sent.
func normalizeErrors(body []byte) []byte {
	if !bytes.HasPrefix(body, []byte(`{"errors":[`)) {
		return body
	}
	var resp struct {
		Errors []json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &resp) != nil || len(resp.Errors) < 2 {
		return body
	}
	sorted := make([]string, len(resp.Errors))
	for i, e := range resp.Errors {
		sorted[i] = string(e)
	}
	sort.Strings(sorted)
	end := bytes.Index(body, []byte(`],"data"`))
	if end < 0 {
		return body
	}
	return append([]byte(`{"errors":[`+strings.Join(sorted, ",")), body[end:]...)
}

// diffValues are the values tried for a parameter of each type: valid,
// boundary and invalid.
func diffValues(p rest.Param) []string {
	vals := []string{""}
	switch p.Type {
	case rest.TypeInteger:
		vals = append(vals, "0", "1", "2", "5", "-3", "abc", "1.5", "99999999999999999999", "2147483648", " 7 ")
		if p.Min != nil {
			vals = append(vals, strconv.Itoa(*p.Min-1), strconv.Itoa(*p.Min))
		}
		if p.Max != nil {
			vals = append(vals, strconv.Itoa(*p.Max), strconv.Itoa(*p.Max+1))
		}
		if p.Name == "id" || p.Name == "entityId" {
			vals = append(vals, "101", "102", "110", "150", "999999")
		}
	case rest.TypeString:
		vals = append(vals, "Ethereum", "eth", "solana foundation", "défi", "x", strings.Repeat("a", 3000), "a\x00b", "<b>&amp;</b>")
		vals = append(vals, p.Enum...)
		if len(p.Enum) > 0 {
			vals = append(vals, "bogus", strings.ToUpper(p.Enum[0]))
		}
		if p.Name == "category" {
			vals = append(vals, "partnership", "funding", "listing")
		}
		if p.Name == "relationshipType" {
			vals = append(vals, "FOUNDATION_OF", "PARTNER_OF", "LISTED_ON", "foundation_of")
		}
	case rest.TypeBoolean:
		vals = append(vals, "true", "false", "1", "0", "yes", "TRUE")
	case rest.TypeDateTime:
		for _, d := range []time.Duration{time.Hour, 36 * time.Hour, 6 * 24 * time.Hour, 8 * 24 * time.Hour, 29 * 24 * time.Hour, 31 * 24 * time.Hour, -time.Hour} {
			vals = append(vals, diffNow.Add(-d).Format(time.RFC3339))
		}
		vals = append(vals, "2026-11-19", "garbage", "2026-11-19T10:00:00.123+02:00")
	case rest.TypeIntegerList:
		vals = append(vals, "101,102,103", "101", "a,b", "101,101,102", "0,-1", diffIDs(26), diffIDs(25))
	case rest.TypeStringList:
		vals = append(vals, p.Enum...)
		vals = append(vals, "radar,signal", "bogus", "radar,bogus")
	}
	return vals
}

func diffIDs(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(100 + i)
	}
	return strings.Join(ids, ",")
}

// baseQuery is a valid request of route: its required parameters set.
func baseQuery(r rest.Route) (path string, q url.Values) {
	path = r.Path
	q = url.Values{}
	for _, p := range r.Params {
		if !p.Required {
			continue
		}
		var v string
		switch p.Type {
		case rest.TypeInteger:
			v = "101"
		case rest.TypeString:
			v = "Ethereum"
		case rest.TypeDateTime:
			v = diffNow.Add(-72 * time.Hour).Format(time.RFC3339)
		case rest.TypeIntegerList:
			v = "101,102,103"
		default:
			v = "x"
		}
		if p.In == "path" {
			path = strings.ReplaceAll(path, "{"+p.Name+"}", v)
		} else {
			q.Set(p.Name, v)
		}
	}
	return path, q
}

func target(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// TestDifferentialREST runs every /v1 graph route with each parameter
// varied alone from a valid request, then walks the cursor routes a few
// pages, and compares the two executors.
func TestDifferentialREST(t *testing.T) {
	t.Parallel()
	p := newDiffPair(t)
	n := 0
	for _, r := range p.routes {
		path, base := baseQuery(r)
		p.compare(t, http.MethodGet, target(path, base), "", nil)
		p.compare(t, http.MethodGet, target(path, base), "", http.Header{diffDenyHeader: {"1"}})
		n += 2
		for _, prm := range r.Params {
			for _, v := range diffValues(prm) {
				q := url.Values{}
				for k, vs := range base {
					q[k] = vs
				}
				pth := path
				if prm.In == "path" {
					if v == "" || strings.ContainsAny(v, "/?#%") {
						continue
					}
					pth = strings.ReplaceAll(r.Path, "{"+prm.Name+"}", url.PathEscape(v))
				} else if v == "" {
					q.Del(prm.Name)
				} else {
					q.Set(prm.Name, v)
				}
				p.compare(t, http.MethodGet, target(pth, q), "", nil)
				n++
			}
		}
		// Pages after the first, through each side's own cursor.
		if hasParam(r, "cursor") {
			q := url.Values{}
			for k, vs := range base {
				q[k] = vs
			}
			q.Set("limit", "3")
			for page := 0; page < 3; page++ {
				res := p.compare(t, http.MethodGet, target(path, q), "", nil)
				cur := nextCursorOf(res.body)
				if cur == "" {
					break
				}
				q.Set("cursor", cur)
				n++
			}
		}
	}
	t.Logf("%d /v1 requests compared", n)
}

func hasParam(r rest.Route, name string) bool {
	for _, p := range r.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

func nextCursorOf(body []byte) string {
	var env struct {
		NextCursor *string `json:"next_cursor"`
	}
	if json.Unmarshal(body, &env) != nil || env.NextCursor == nil {
		return ""
	}
	return *env.NextCursor
}

// diffDocuments are the /graphql documents compared: every entry point,
// nesting, aliases, fragments, directives, variables, nulls and errors.
var diffDocuments = []struct{ query, vars string }{
	{threeHopQuery, `{"id":101,"n":5}`},
	{threeHopQuery, `{"id":999999,"n":5}`},
	{threeHopQuery, `{"id":102,"n":25}`},
	{`{ events(first: 25) { window sort limit offset since nextCursor nodes { id title eventCategory eventSubcategory summary bullets owners { id label type aliases canonicalName displayName entityType status eventCount } participants { id label } evidence { id content url timestamp } latestEvidenceTimestamp significance contentType sourceType eventSurface globalSummary bulletSummary eventOwner { id } eventParticipants { id } posts { id } latestPostTimestamp signal __typename } } }`, ``},
	{`{ events(surface: SIGNAL, sort: RECENCY, window: "7d", first: 10, offset: 3) { nodes { id significance } } }`, ``},
	{`{ events(window: "1y") { nodes { id } } }`, ``},
	{`{ events(since: "2026-10-01T00:00:00Z") { nodes { id } } }`, ``},
	{`query($s: Time) { events(since: $s) { since nodes { id } } }`, `{"s":"not a time"}`},
	{`{ events(topic: "ethereum staking", first: 5) { nodes { id title } } }`, ``},
	{`{ events(entityId: 101, category: "partnership") { nodes { id } } }`, ``},
	{`{ topSignals(first: 3) { id title significance } a: topSignals(first: 1) { id } }`, ``},
	{`{ eventsByCategory(category: "funding", surface: RADAR, first: 4) { id eventCategory } }`, ``},
	{`{ feed(since: "2026-11-15T00:00:00Z", first: 3) { limit offset since nextCursor nodes { id latestEvidenceTimestamp } } }`, ``},
	{`{ feed(since: "2026-11-15T00:00:00Z", after: "bogus") { nodes { id } } }`, ``},
	{`{ feed(since: "2026-11-01T00:00:00Z") { nodes { id } } }`, ``},
	{`{ feed(since: "2026-11-15T00:00:00Z", feed: "nope") { nodes { id } } }`, ``},
	{`{ event(id: 1) { id title owners { id } } missing: event(id: 999999) { id } }`, ``},
	{`{ entity(id: 101) { ...E references { id referenceType title url } markets { id question url outcomes probability volume closesAt entity { id } } } } fragment E on Entity { id canonicalName displayName label entityType type status aliases eventCount }`, ``},
	{`{ entities(ids: [101, 999999, 102]) { id label } }`, ``},
	// Folded reads (db/fold.go, db/fold_tree.go): the plan executor reads
	// these in one statement, the reference level by level.
	{threeHopQuery, `{"id":101,"n":3}`},
	{threeHopQuery, `{"id":999999,"n":3}`},
	{`{ entity(id: 102) { relationships(first: 4, direction: INBOUND) { relatedEntity { id events(sort: SIGNIFICANCE, first: 2, surface: SIGNAL) { nodes { id eventOwner { id aliases } posts { id url } } nextCursor } } } } }`, ``},
	{`{ entity(id: 101) { relationships(first: 3) { relatedEntity { events(first: 2, category: "partnership") { nodes { id owners { id } } } } } } }`, ``},
	{`{ entity(id: 101) { relationships(first: 3) { relatedEntity { events(first: 2, after: "bogus") { nodes { id } } } } } }`, ``},
	{latest25Doc, ``},
	// A folded read leaves out the events' text and the evidence's
	// content only when no field of the document writes them: here a
	// second field over the same events (their loaders are shared) does.
	{`{ a: events(first: 3, sort: RECENCY) { nodes { id evidence { id url } owners { id } } } b: events(first: 3, sort: RECENCY) { nodes { id summary bullets evidence { id content } } } }`, ``},
	{`{ t: entity(id: 101) { relationships(first: 2) { relatedEntity { id events(first: 2) { nodes { id title evidence { id } } } } } } u: entity(id: 101) { relationships(first: 2) { relatedEntity { events(first: 2) { nodes { id summary bullets evidence { id content } } } } } } }`, ``},
	{`{ events(first: 5, sort: SIGNIFICANCE) { nodes { id participants { id label } evidence { id timestamp } } } }`, ``},
	{`{ entities(ids: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26]) { id } }`, ``},
	{`{ resolveEntities(name: "eth", first: 5) { entity { id label } matchedVia matchType matchRank matchedValue } }`, ``},
	{`{ resolveEntities(name: "") { matchRank } }`, ``},
	{`{ searchEvents(query: "ethereum upgrade", first: 5) { event { id title } matchedVia matchType matchRank } }`, ``},
	{`{ searchEvents(query: "ethereum hack", first: 5) { event { id } matchedTerms } searchReport(query: "ethereum hack", first: 5) { query terms { text expansions documentFrequency matched __typename } unmatchedTerms } }`, ``},
	{`query($q: String!) { r: searchReport(query: $q, since: "2026-11-01T00:00:00Z", first: 3) { query unmatchedTerms } }`, `{"q":"solana outage zzzunknownword"}`},
	{`{ searchReport(query: "the of and") { query } }`, ``},
	{`{ categories { name subcategories __typename } c: categories { name } }`, ``},
	{`{ eventsByCategory(category: "partnerships", first: 2) { id } }`, ``},
	{`{ entity(id: 101) { all: relationships(first: 5) { relationshipType direction } inbound: relationships(relationshipType: "FOUNDATION_OF", direction: INBOUND) { sourceEntityId relationshipType direction relatedEntity { id label } } outbound: relationships(direction: OUTBOUND, first: 2, offset: 1) { targetEntityId direction } none: relationships(relationshipType: "NO_SUCH_TYPE") { relationshipType } } }`, ``},
	{`query($d: RelationshipDirection) { entity(id: 102) { relationships(direction: $d) { relationshipType direction relatedEntity { id } } } }`, `{"d":"OUTBOUND"}`},
	{`{ entity(id: 101) { relationships(direction: SIDEWAYS) { direction } } }`, ``},
	{`{ organization(id: 101) { id label aliases entity { id } radar(first: 2) { id signal } signal(first: 2) { id } signalHistory(days: 5) { date signalCount radarCount } } }`, ``},
	{`{ organizationsByName(name: "foundation", first: 3) { id label type aliases matchedVia matchType matchRank matchedValue } }`, ``},
	{`{ organizations(first: 3, offset: 2) { id label } }`, ``},
	{`{ brief(id: 101, since: "2026-11-13T00:00:00Z", first: 2) { organizationId label radar { id } signal { id } counts { radar signal } error } }`, ``},
	{`{ brief(id: 999999, since: "2026-11-13T00:00:00Z") { organizationId } }`, ``},
	{`{ briefs(ids: [101, 999999, 103], since: "2026-11-13T00:00:00Z", first: 2) { organizationId label radar { id title } counts { radar signal } error } }`, ``},
	{`{ briefs(ids: [], since: "2026-11-13T00:00:00Z") { organizationId } }`, ``},
	{`{ marketViews(first: 3) { orgId organization markets { id question } events { subeventId subeventLabel subeventType normalizedTitle injectedSummary posts { id content date } } } }`, ``},
	{`{ marketViewsByOrganization(id: 101) { orgId markets { id entity { id } } } }`, ``},
	{`{ entity(id: 101) { timeline(first: 3) { nextCursor limit nodes { id } } research(first: 2) { nextCursor nodes { id contentType sourceType } } media(first: 2) { nodes { id } } events(surface: SIGNAL, sort: SIGNIFICANCE, first: 3, offset: 1) { sort nodes { id significance } } } }`, ``},
	{`{ entity(id: 101) { timeline(after: "bogus") { nodes { id } } research(since: "2020-01-01T00:00:00Z") { nodes { id } } } }`, ``},
	{`query($skip: Boolean!, $inc: Boolean!) { entity(id: 101) { id label @skip(if: $skip) aliases @include(if: $inc) ... on Entity { status } ... @include(if: $inc) { entityType } } }`, `{"skip":true,"inc":false}`},
	{`query($skip: Boolean!, $inc: Boolean!) { entity(id: 101) { id label @skip(if: $skip) aliases @include(if: $inc) ... on Entity { status } ... @include(if: $inc) { entityType } } }`, `{"skip":false,"inc":true}`},
	{`{ entity(id: 101) { id id label x: label relationships(first: 2) { relatedEntity { id } } relationships(first: 2) { direction } } }`, ``},
	{`{ __typename entity(id: 101) { __typename relationships(first: 1) { __typename } } }`, ``},
	{`{ __schema { queryType { name } } }`, ``},
	{`{ organizations { id } feed(since: "2026-11-15T00:00:00Z") { limit } entity(id: 101) { id } }`, ``},
	{`{ entity(id: "x") { id } }`, ``},
	{`{ nope }`, ``},
	{`query Q($id: Int!) { entity(id: $id) { id } }`, `{"id":"abc"}`},
	{`query Q($id: Int!) { entity(id: $id) { id } }`, `{}`},
}

// TestDifferentialGraphQL compares the executors on diffDocuments.
func TestDifferentialGraphQL(t *testing.T) {
	t.Parallel()
	p := newDiffPair(t)
	for _, d := range diffDocuments {
		body := map[string]any{"query": d.query}
		if d.vars != "" {
			body["variables"] = json.RawMessage(d.vars)
		}
		b, err := json.Marshal(body)
		require.NoError(t, err)
		p.compare(t, http.MethodPost, "/graphql", string(b), nil)
		p.compare(t, http.MethodPost, "/graphql", string(b), http.Header{diffDenyHeader: {"1"}})
	}
}

// TestDifferentialFixedOperationsOverGraphQL sends each fixed /v1
// operation's exact text to /graphql, with and without its legacy aliases:
// the service runs the plan the facade runs (in plain GraphQL form, not the
// facade's), the reference runs it through gqlgen.
func TestDifferentialFixedOperationsOverGraphQL(t *testing.T) {
	t.Parallel()
	p := newDiffPair(t)
	n := 0
	for _, op := range fixedQueries(t) {
		vars := fixedOperationVars(op)
		for _, legacy := range []bool{true, false} {
			if _, ok := vars["legacy"]; ok {
				vars["legacy"] = legacy
			} else if !legacy {
				continue
			}
			b, err := json.Marshal(map[string]any{"query": op.Query, "operationName": op.Name, "variables": vars})
			require.NoError(t, err)
			res := p.compare(t, http.MethodPost, "/graphql", string(b), nil)
			require.Equal(t, http.StatusOK, res.status, "%s: %s", op.Name, res.body)
			n++
		}
	}
	require.Greater(t, n, 15)
}

// fixedQueries are the fixed /v1 operations that are queries.
func fixedQueries(t *testing.T) []*ops.Operation {
	t.Helper()
	all, err := ops.Load()
	require.NoError(t, err)
	var out []*ops.Operation
	for _, op := range all {
		if op.Doc.Operations[0].Operation == ast.Query {
			out = append(out, op)
		}
	}
	return out
}

// fixedOperationVars are valid variables for a fixed /v1 operation, as a
// JSON request would carry them.
func fixedOperationVars(op *ops.Operation) map[string]any {
	vars := map[string]any{}
	for _, v := range op.Doc.Operations[0].VariableDefinitions {
		switch v.Type.Name() {
		case "Int":
			if v.Type.Elem != nil {
				vars[v.Variable] = []int{101, 102, 999999}
			} else if strings.Contains(strings.ToLower(v.Variable), "id") {
				vars[v.Variable] = 101
			} else {
				vars[v.Variable] = 3
			}
		case "Time":
			vars[v.Variable] = diffNow.Add(-72 * time.Hour).Format(time.RFC3339)
			if v.Variable == "to" {
				// The end of a window is after its start.
				vars[v.Variable] = diffNow.Add(time.Hour).Format(time.RFC3339)
			}
		case "String":
			switch v.Variable {
			case "window":
				vars[v.Variable] = "7d"
			case "feed":
				vars[v.Variable] = "all"
			case "category":
				vars[v.Variable] = "funding"
			case "after":
				continue
			case "relationshipType":
				vars[v.Variable] = "FOUNDATION_OF"
			default:
				vars[v.Variable] = "Ethereum"
			}
		case "Surface":
			vars[v.Variable] = "RADAR"
		case "EventSort":
			vars[v.Variable] = "RECENCY"
		case "RelationshipDirection":
			vars[v.Variable] = "INBOUND"
		case "Boolean":
			vars[v.Variable] = true
		}
	}
	return vars
}

// TestDifferentialMarks runs each fixed /v1 operation in process as the
// facade does (HTML-safe, marked) on both executors: the data and the
// marks the plan executor records as it writes must be what
// jsonw.MarkData finds in gqlgen's data, mark for mark.
func TestDifferentialMarks(t *testing.T) {
	t.Parallel()
	p := newDiffPair(t)
	n := 0
	for _, op := range fixedQueries(t) {
		vars := fixedOperationVars(op)
		run := func(e *resolvers.Executor) jsonw.Writer {
			w := jsonw.Writer{HTML: true, Marking: true}
			errs := e.Run(context.Background(), op.Query, op.Name, vars, &w)
			require.Empty(t, errs, op.Name)
			return w
		}
		fast, ref := run(p.fastExec), run(p.refExec)
		require.Equal(t, string(ref.B), string(fast.B), op.Name)
		require.Equal(t, ref.Marks, fast.Marks, op.Name)
		require.NotEmpty(t, fast.Marks, op.Name)
		n++
	}
	require.Greater(t, n, 15)
}

// FuzzDifferential feeds the /v1 routes arbitrary query strings (and
// /graphql arbitrary variables for the 3-hop document) and compares the
// executors.
func FuzzDifferential(f *testing.F) {
	f.Add(uint8(0), "limit=25")
	f.Add(uint8(1), "limit=3&sort=recency&window=7d")
	f.Add(uint8(3), "q=ethereum&limit=2")
	f.Add(uint8(7), "ids=101,102&since=2026-11-15T00:00:00Z&compact")
	f.Add(uint8(9), "id=101&include=radar,signal&includeLimit=2")
	f.Add(uint8(12), "since=2026-11-16T00:00:00Z&limit=2&offset=1")
	f.Add(uint8(255), `{"id":101,"n":3}`)
	f.Add(diffRouteIndex(f, "/v1/latest"), "legacy=false&limit=3")
	f.Add(diffRouteIndex(f, "/v1/search"), "q=ethereum+hack&legacy=false&limit=3")
	f.Add(diffRouteIndex(f, "/v1/entities/{id}/relationships"), "relationshipType=FOUNDATION_OF&direction=inbound&limit=2")
	f.Add(diffRouteIndex(f, cryptointel.CategoriesPath), "_=1")
	p := newDiffPair(f) // once per process: each fuzzing worker has its own
	f.Fuzz(func(t *testing.T, route uint8, raw string) {
		if int(route) >= len(p.routes) {
			body := `{"query":` + jsonString(threeHopQuery) + `,"variables":` + raw + `}`
			if !json.Valid([]byte(body)) {
				return
			}
			p.compare(t, http.MethodPost, "/graphql", body, nil)
			return
		}
		r := p.routes[route]
		path, _ := baseQuery(r)
		if _, err := url.ParseQuery(raw); err != nil || strings.ContainsAny(raw, "#") {
			return
		}
		p.compare(t, http.MethodGet, path+"?"+raw, "", nil)
	})
}

// diffRouteIndex is the index of the graph route at path among the routes
// the differential test compares (diffPair.routes), for FuzzDifferential's
// seeds.
func diffRouteIndex(t testing.TB, path string) uint8 {
	t.Helper()
	i := 0
	for _, r := range rest.Routes() {
		if r.Method != http.MethodGet || r.Handler != nil {
			continue
		}
		if r.Path == path {
			return uint8(i)
		}
		i++
	}
	t.Fatalf("no graph route %s", path)
	return 0
}

// TestDifferentialDetectsADifference proves the comparison can fail: a
// body changed by one byte is reported.
func TestDifferentialDetectsADifference(t *testing.T) {
	t.Parallel()
	a := []byte(`{"errors":[{"message":"b"},{"message":"a"}],"data":null}`)
	b := []byte(`{"errors":[{"message":"a"},{"message":"b"}],"data":null}`)
	require.Equal(t, normalizeErrors(a), normalizeErrors(b))
	require.NotEqual(t, normalizeErrors(a), normalizeErrors([]byte(`{"errors":[{"message":"a"},{"message":"c"}],"data":null}`)))
	ft := &fakeTB{TB: t}
	p := &diffPair{
		fast: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"data":1}`)) }), //nolint:errcheck
		ref:  http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"data":2}`)) }), //nolint:errcheck
	}
	func() {
		defer func() { recover() }() //nolint:errcheck // fakeTB.Fatalf panics to stop the comparison
		p.compare(ft, http.MethodGet, "/", "", nil)
	}()
	require.True(t, ft.failed, "a difference must fail the comparison")
}

type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	panic(errors.New(fmt.Sprintf(format, args...)))
}
