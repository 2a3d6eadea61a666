package resolvers_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/graph/scalar"
	"github.com/cryptointel/cryptointel/graph/validation/validationtest"
	"github.com/cryptointel/cryptointel/resolvers"
)

// Values above a cap are silently capped; negative values are clamped.
func TestCapsAndClamps(t *testing.T) {
	t.Parallel()
	b := setup(t, 25)
	data := b.mustRun(t, `{
	  big: events(first: 1000, offset: 100000, window: "30d") { limit offset window sort }
	  neg: events(first: -5, offset: -3) { limit offset nodes { id } }
	  def: events { limit offset window sort }
	  entity(id: 1) {
	    relationships(first: 1000) { direction }
	    few: relationships(first: -1, offset: -7) { direction }
	    events(first: 1000) { limit nodes { id } }
	    timeline(first: 1000) { limit nodes { id } }
	    research(first: 1000, offset: -2) { limit offset }
	  }
	  org: organization(id: 1) { signalHistory(days: 1000) { date } radar(first: 1000) { id } aliases }
	  top: topSignals(first: 1000) { id }
	  cat: eventsByCategory(category: "funding", first: 1000) { id }
	  catDef: eventsByCategory(category: "funding") { id }
	  radarCat: eventsByCategory(category: "funding", surface: RADAR, first: 1000) { id }
	  radarDef: eventsByCategory(category: "funding", surface: RADAR) { id }
	}`, nil)
	require.EqualValues(t, 25, dig(data, "big", "limit"))
	require.EqualValues(t, 250, dig(data, "big", "offset"))
	require.Equal(t, "30d", dig(data, "big", "window"))
	require.EqualValues(t, 1, dig(data, "neg", "limit"))
	require.EqualValues(t, 0, dig(data, "neg", "offset"))
	require.Len(t, dig(data, "neg", "nodes"), 1)
	require.EqualValues(t, 10, dig(data, "def", "limit"))
	require.Equal(t, "24h", dig(data, "def", "window"))
	require.Equal(t, "SIGNIFICANCE", dig(data, "def", "sort"))
	require.Len(t, dig(data, "entity", "relationships"), 25) // all 25 (cap 50)
	require.Len(t, dig(data, "entity", "few"), 1)
	require.EqualValues(t, 25, dig(data, "entity", "events", "limit"))
	require.Len(t, dig(data, "entity", "events", "nodes"), 25)
	require.EqualValues(t, 50, dig(data, "entity", "timeline", "limit"))
	require.Len(t, dig(data, "entity", "timeline", "nodes"), 50)
	require.EqualValues(t, 25, dig(data, "entity", "research", "limit"))
	require.EqualValues(t, 0, dig(data, "entity", "research", "offset"))
	require.Len(t, dig(data, "org", "signalHistory"), 90)
	require.Len(t, dig(data, "org", "radar"), 20)
	require.Len(t, dig(data, "org", "aliases"), 5)
	require.Len(t, dig(data, "top"), 25)
	require.Len(t, dig(data, "cat"), 10) // signal surface: 1–10, default 5
	require.Len(t, dig(data, "catDef"), 5)
	require.Len(t, dig(data, "radarCat"), 25) // radar surface: 1–25, default 10
	require.Len(t, dig(data, "radarDef"), 10)
}

func TestDepthAndComplexityLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	deep := "{ entity(id: 1) { " + strings.Repeat("relationships { relatedEntity { ", 8) + "id" + strings.Repeat(" } }", 8) + " } }"
	_, errs := b.run(t, context.Background(), deep, nil)
	require.Len(t, errs, 1)
	require.Equal(t, "operation has depth 18, which exceeds the limit of 15", errs[0].Message)
	require.Equal(t, "DEPTH_LIMIT_EXCEEDED", errs[0].Code)

	wide := `{ entity(id: 1) { relationships(first: 50) { relatedEntity { relationships(first: 50) { relatedEntity {
	  events(first: 25) { nodes { id } } } } } } } }`
	_, errs = b.run(t, context.Background(), wide, nil)
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Message, "which exceeds the limit of 50000")
	require.Equal(t, "COMPLEXITY_LIMIT_EXCEEDED", errs[0].Code)

	// The 3-hop query with 25 items per level fits both limits.
	_, errs = b.run(t, context.Background(), threeHop, map[string]any{"n": 25})
	require.Empty(t, errs)
}

func TestBriefs(t *testing.T) {
	t.Parallel()
	b := setup(t, 6)
	since := scalar.FormatTime(b.now.Add(-7 * 24 * time.Hour))
	data := b.mustRun(t, `query($s: Time!) {
	  briefs(ids: [101, 999999], since: $s, first: 3) { organizationId label error radar { id } signal { id significance signal } counts { radar signal } }
	  missing: brief(id: 999999, since: $s) { label }
	  one: brief(id: 102, since: $s, first: 100) { counts { radar signal } }
	}`, map[string]any{"s": since})
	ok := dig(data, "briefs", 0).(map[string]any)
	require.EqualValues(t, 101, ok["organizationId"])
	require.Equal(t, "Related 1", ok["label"])
	require.Nil(t, ok["error"])
	require.Len(t, ok["radar"], 3)
	require.Len(t, ok["signal"], 3)
	require.EqualValues(t, 3, dig(ok, "counts", "radar"))
	for _, s := range ok["signal"].([]any) {
		require.NotNil(t, dig(s, "significance"))
		require.Equal(t, dig(s, "significance"), dig(s, "signal"))
	}
	bad := dig(data, "briefs", 1).(map[string]any)
	require.Equal(t, "Organization not found", bad["error"])
	require.Nil(t, bad["label"])
	require.Empty(t, bad["radar"])
	require.Empty(t, bad["signal"])
	require.EqualValues(t, 0, dig(bad, "counts", "radar"))
	require.EqualValues(t, 0, dig(bad, "counts", "signal"))
	require.Nil(t, data["missing"])
	require.EqualValues(t, 6, dig(data, "one", "counts", "radar"))
	require.EqualValues(t, 3, dig(data, "one", "counts", "signal"))

	ids := make([]any, 26)
	for i := range ids {
		ids[i] = 101
	}
	_, errs := b.run(t, context.Background(), `query($ids: [Int!]!, $s: Time!) { briefs(ids: $ids, since: $s) { label } }`, map[string]any{"ids": ids, "s": since})
	require.Len(t, errs, 1)
	require.Equal(t, "Maximum 25 organization IDs per batch request", errs[0].Message)
}

func TestOrganizationsAndMarkets(t *testing.T) {
	t.Parallel()
	b := setup(t, 4)
	ctx := context.Background()
	_, err := b.store.Bun.NewInsert().Model(&cryptointel.Market{ID: 1, EntityID: 101, Question: "Will it ship?", URL: "https://m.example/1",
		Outcomes: []string{"Yes", "No"}, Probability: ptr(0.6), CreatedAt: b.now}).Exec(ctx)
	require.NoError(t, err)
	_, err = b.store.Bun.NewInsert().Model(&cryptointel.MarketSubevent{ID: 7, MarketID: 1, Label: "Mainnet", SubeventType: "launch",
		NormalizedTitle: "mainnet launch", InjectedSummary: "summary"}).Exec(ctx)
	require.NoError(t, err)
	_, err = b.store.Bun.NewInsert().Model(&[]cryptointel.MarketPost{{ID: 70, SubeventID: 7, Content: "old", PostedAt: b.now.Add(-time.Hour)},
		{ID: 71, SubeventID: 7, Content: "new", PostedAt: b.now}}).Exec(ctx)
	require.NoError(t, err)

	data := b.mustRun(t, `{
	  marketViews { orgId organization markets { id question outcomes probability entity { id } } events { subeventId subeventLabel posts { id content date } } }
	  none: marketViewsByOrganization(id: 102) { orgId }
	  organizations(first: 2) { id label }
	  org: organization(id: 101) { id label entity { canonicalName markets { id } } signalHistory(days: 2) { date signalCount radarCount } }
	}`, nil)
	views := dig(data, "marketViews").([]any)
	require.Len(t, views, 1)
	require.EqualValues(t, 101, dig(views, 0, "orgId"))
	require.Equal(t, "Related 1", dig(views, 0, "organization"))
	require.EqualValues(t, 101, dig(views, 0, "markets", 0, "entity", "id"))
	require.EqualValues(t, 71, dig(views, 0, "events", 0, "posts", 0, "id"))
	require.Empty(t, dig(data, "none"))
	require.Len(t, dig(data, "organizations"), 2)
	require.EqualValues(t, 1, dig(data, "organizations", 0, "id"))
	hist := dig(data, "org", "signalHistory").([]any)
	require.Len(t, hist, 2)
	require.Equal(t, b.now.Format(time.DateOnly), dig(hist, 0, "date"))
	var radar, signal float64
	for _, h := range hist {
		radar += dig(h, "radarCount").(float64)
		signal += dig(h, "signalCount").(float64)
	}
	// Events of entity 101 are 5–8 minutes old: all today or just before
	// midnight; 4 radar, 2 of them signals.
	require.EqualValues(t, 4, radar)
	require.EqualValues(t, 2, signal)

	// A page of market views, or one organization's, is one statement:
	// organizations, markets, sub-events and posts folded, however many
	// views and sub-events the page holds.
	_, err = b.store.Bun.NewInsert().Model(&cryptointel.Market{ID: 2, EntityID: 102, Question: "Will it fork?", URL: "https://m.example/2",
		Outcomes: []string{"Yes", "No"}, CreatedAt: b.now}).Exec(ctx)
	require.NoError(t, err)
	_, err = b.store.Bun.NewInsert().Model(&[]cryptointel.MarketSubevent{{ID: 8, MarketID: 2, Label: "Vote", SubeventType: "governance",
		NormalizedTitle: "vote", InjectedSummary: "s"}, {ID: 9, MarketID: 2, Label: "Fork", SubeventType: "upgrade", NormalizedTitle: "fork",
		InjectedSummary: "s"}}).Exec(ctx)
	require.NoError(t, err)
	_, err = b.store.Bun.NewInsert().Model(&[]cryptointel.MarketPost{{ID: 80, SubeventID: 8, Content: "a", PostedAt: b.now},
		{ID: 90, SubeventID: 9, Content: "b", PostedAt: b.now}}).Exec(ctx)
	require.NoError(t, err)
	views = dig(b.mustRun(t, `{ marketViews { orgId events { subeventId posts { id } } } }`, nil), "marketViews").([]any)
	require.Len(t, views, 2)
	require.EqualValues(t, 90, dig(views, 1, "events", 1, "posts", 0, "id"))
	for _, q := range []string{
		`{ marketViews { orgId organization markets { id entity { id } } events { subeventId posts { id content } } } }`,
		`{ marketViewsByOrganization(id: 101) { orgId organization markets { id entity { id } } events { subeventId posts { id } } } }`,
	} {
		sctx, counter := db.WithStatementCounter(ctx)
		data, errs := b.run(t, sctx, q, nil)
		require.Empty(t, errs)
		require.NotNil(t, data)
		require.EqualValues(t, 1, counter.Load(), q)
	}
}

// @access refuses plans that lack the layer or feature; no caller means the
// access middleware did not run and everything is allowed.
func TestAccessDirective(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	since := scalar.FormatTime(b.now.Add(-time.Hour))
	q := `query($s: Time!) { feed(since: $s) { limit } }`
	free := access.WithCaller(context.Background(), &access.Caller{AccountID: 1, Plan: cryptointel.Plan{Name: "free", Layers: []string{"evaluation"}}})
	_, errs := b.run(t, free, q, map[string]any{"s": since})
	require.Len(t, errs, 1)
	require.Equal(t, "forbidden", errs[0].Code)
	require.NotEmpty(t, errs[0].Message)

	business := access.WithCaller(context.Background(), &access.Caller{AccountID: 2, Plan: cryptointel.Plan{Name: "business",
		Layers: []string{"evaluation", "operational", "premium"}, Briefs: true, BatchBriefs: true, PremiumFeeds: true}})
	_, errs = b.run(t, business, q, map[string]any{"s": since})
	require.Empty(t, errs)
	_, errs = b.run(t, context.Background(), q, map[string]any{"s": since})
	require.Empty(t, errs)
}

func TestHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	srv := httptest.NewServer(b.exec)
	t.Cleanup(srv.Close)

	post := func(accept string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"query":"{ entity(id: 1) { id label } }"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, body := post("application/graphql-response+json")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/graphql-response+json", resp.Header.Get("Content-Type"))
	require.JSONEq(t, `{"data":{"entity":{"id":1,"label":"Ethereum"}}}`, body)
	resp, _ = post("")
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	resp, _ = post("application/json")
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	get, err := http.Get(srv.URL + "?query=" + url.QueryEscape(`{ entity(id: 101) { id } }`))
	require.NoError(t, err)
	defer get.Body.Close()
	gbody, _ := io.ReadAll(get.Body)
	require.Equal(t, http.StatusOK, get.StatusCode)
	require.JSONEq(t, `{"data":{"entity":{"id":101}}}`, string(gbody))
}

// Errors that are not domain errors are shown as a generic internal error.
func TestInternalErrorIsGeneric(t *testing.T) {
	t.Parallel()
	store, err := db.Open(context.Background(), dbtest.NewURL(t), db.Options{MaxConns: 1})
	require.NoError(t, err)
	_, err = store.Bun.Exec("DROP TABLE evidence")
	require.NoError(t, err)
	_, err = store.Bun.NewInsert().Model(&cryptointel.Event{ID: 1, Title: "t", Category: "c", Bullets: []string{}, LatestEvidenceAt: time.Now()}).Exec(context.Background())
	require.NoError(t, err)
	exec := resolvers.NewExecutor(resolvers.Config{Store: store, CursorSecret: "s", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { store.Close() })
	resp := exec.Execute(context.Background(), `{ event(id: 1) { id evidence { id } } }`, "", nil)
	require.Len(t, resp.Errors, 1)
	require.Equal(t, "Internal server error.", resp.Errors[0].Message)
	require.Equal(t, "internal", resp.Errors[0].Extensions["code"])
}

// Introspection (as GraphiQL sends it) is not refused by the depth limit.
func TestIntrospectionAllowed(t *testing.T) {
	t.Parallel()
	b := setup(t, 1)
	typeRef := "kind name"
	for i := 0; i < 10; i++ {
		typeRef = "kind name ofType { " + typeRef + " }"
	}
	q := `{ __schema { queryType { name } types { name fields(includeDeprecated: true) { name args { name type { ` + typeRef + ` } } type { ` + typeRef + ` } } } } }`
	data := b.mustRun(t, q, nil)
	require.Equal(t, "Query", dig(data, "__schema", "queryType", "name"))
}

// TestTimeBudgetCoversValidation: an operation whose request is out of its
// time budget is refused before it is parsed or validated (a syntax error
// is not even reported); one whose budget runs out while it executes gets
// the timeout error from its statements, never an internal one.
func TestTimeBudgetCoversValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	spent, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, q := range []string{`{ entity(id: 1) { id } }`, `{ not a document`, validationtest.FragmentBomb("{ entity(id: 1) { ...F0 } }", "Entity", "id", 30)} {
		_, errs := b.run(t, spent, q, nil)
		require.Len(t, errs, 1, q)
		require.Equal(t, cryptointel.ETIMEOUT, errs[0].Code, q)
		require.Equal(t, cryptointel.MsgTimeout, errs[0].Message)
	}
}

// A body over the 1 MB bound is refused 413 whether its length is declared
// up front or only found while reading it.
func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	exec := resolvers.NewExecutor(resolvers.Config{CursorSecret: "test-secret"})
	big := `{"query":"{ __typename }","x":"` + strings.Repeat("a", 1<<20) + `"}`
	for _, declared := range []bool{true, false} {
		var body io.Reader = strings.NewReader(big)
		if !declared {
			body = io.MultiReader(body) // no Content-Length: read until the bound
		}
		req := httptest.NewRequest(http.MethodPost, "/graphql", body)
		if !declared {
			req.ContentLength = -1
		}
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		exec.ServeHTTP(rec, req)
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "declared=%v", declared)
		require.JSONEq(t, `{"errors":[{"message":"request body too large (max 1 MB)","extensions":{"code":"too_large"}}]}`, rec.Body.String(), "declared=%v", declared)
	}
}
