package resolvers_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

const threeHop = `query($n: Int) {
  entity(id: 1) {
    id
    relationships(first: $n) {
      direction
      relationshipType
      relatedEntity {
        id
        label
        events(first: $n) {
          nodes { id title owners { id label aliases } participants { id } evidence { id timestamp } }
          nextCursor
        }
      }
    }
  }
}`

// The statements a 3-hop query issues must not grow with page size or
// fan-out: its levels are folded into one statement.
func TestThreeHopStatementCount(t *testing.T) {
	t.Parallel()
	b := setup(t, 25)
	counts := map[int]int64{}
	for _, n := range []int{5, 25} {
		ctx, counter := db.WithStatementCounter(context.Background())
		data, errs := b.run(t, ctx, threeHop, map[string]any{"n": n})
		require.Empty(t, errs)
		rels := dig(data, "entity", "relationships").([]any)
		require.Len(t, rels, n)
		for _, r := range rels {
			nodes := dig(r, "relatedEntity", "events", "nodes").([]any)
			require.Len(t, nodes, n)
			require.Len(t, dig(nodes[0], "owners").([]any), 1)
			require.Len(t, dig(nodes[0], "evidence").([]any), 2)
		}
		counts[n] = counter.Load()
	}
	// The entity, its relationships with the related entities, and their
	// events with their roles and evidence, folded into one statement
	// (db/fold_tree.go).
	t.Logf("statements: %v", counts)
	require.LessOrEqual(t, counts[25], int64(1))
	require.Equal(t, counts[5], counts[25])
}

// Relationship directions are relative to the entity asked about.
func TestRelationshipDirection(t *testing.T) {
	t.Parallel()
	b := setup(t, 4)
	data := b.mustRun(t, `{ entity(id: 1) { relationships { direction sourceEntityId targetEntityId relatedEntity { id } } }
	  other: entity(id: 102) { relationships { direction sourceEntityId targetEntityId relatedEntity { id } } } }`, nil)
	rels := dig(data, "entity", "relationships").([]any)
	require.Len(t, rels, 4)
	for _, r := range rels {
		rel := r.(map[string]any)
		if rel["direction"] == "outbound" {
			require.EqualValues(t, 1, rel["sourceEntityId"])
			require.Equal(t, rel["targetEntityId"], dig(rel, "relatedEntity", "id"))
		} else {
			require.Equal(t, "inbound", rel["direction"])
			require.EqualValues(t, 1, rel["targetEntityId"])
			require.Equal(t, rel["sourceEntityId"], dig(rel, "relatedEntity", "id"))
		}
	}
	other := dig(data, "other", "relationships").([]any)
	require.Len(t, other, 1)
	require.Equal(t, "outbound", dig(other, 0, "direction")) // 102 FOUNDATION_OF 1
	require.EqualValues(t, 1, dig(other, 0, "relatedEntity", "id"))
}

// Legacy event fields return the same values as their canonical ones.
func TestLegacyFieldsEqual(t *testing.T) {
	t.Parallel()
	b := setup(t, 4)
	data := b.mustRun(t, `{ entity(id: 101) { events(first: 4) { nodes {
	  summary globalSummary bullets bulletSummary owners { id } eventOwner { id }
	  participants { id } eventParticipants { id } evidence { id url } posts { id url }
	  latestEvidenceTimestamp latestPostTimestamp significance signal } } } }`, nil)
	nodes := dig(data, "entity", "events", "nodes").([]any)
	require.Len(t, nodes, 4)
	sawSignal := false
	for _, n := range nodes {
		ev := n.(map[string]any)
		require.Equal(t, ev["summary"], ev["globalSummary"])
		require.Equal(t, ev["bullets"], ev["bulletSummary"])
		require.Equal(t, ev["owners"], ev["eventOwner"])
		require.NotEmpty(t, ev["owners"])
		require.Equal(t, ev["participants"], ev["eventParticipants"])
		require.Equal(t, ev["evidence"], ev["posts"])
		require.Equal(t, ev["latestEvidenceTimestamp"], ev["latestPostTimestamp"])
		require.Equal(t, ev["significance"], ev["signal"])
		if ev["significance"] != nil {
			sawSignal = true
		}
		require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`, ev["latestEvidenceTimestamp"])
	}
	require.True(t, sawSignal)
}

// An entity that both owns and takes part in an event lists it once.
func TestEntityEventsDeduplicateRoles(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	ev := &cryptointel.Event{ID: 777, Title: "both", Category: "technology", Bullets: []string{}, LatestEvidenceAt: b.now.Add(time.Second),
		CreatedAt: b.now, UpdatedAt: b.now}
	insertEvents(t, b.store, []*cryptointel.Event{ev}, func(*cryptointel.Event) ([]int64, []int64) { return []int64{hubID}, []int64{hubID, 101} })
	data := b.mustRun(t, `{ entity(id: 1) { events(first: 25) { nodes { id owners { id } participants { id } } } timeline { nodes { id } } }
	  events(entityId: 1, sort: RECENCY) { nodes { id } } }`, nil)
	nodes := dig(data, "entity", "events", "nodes").([]any)
	require.Len(t, nodes, 5) // 4 fixture events + 777
	require.EqualValues(t, 777, dig(nodes, 0, "id"))
	require.Len(t, dig(nodes, 0, "participants"), 2)
	require.Len(t, dig(data, "entity", "timeline", "nodes"), 5)
	require.EqualValues(t, 777, dig(data, "events", "nodes", 0, "id"))
	require.Len(t, dig(data, "events", "nodes"), 5)
}

// The latest events with their owners, participants and evidence are one
// statement (the children folded into the page's), whatever the page
// size; without children the page is read alone.
func TestLatestStatementCount(t *testing.T) {
	t.Parallel()
	b := setup(t, 8)
	q := `query($n: Int) { events(first: $n, sort: RECENCY, window: "30d") { nodes {
	  id title owners { id label } participants { id } evidence { id url timestamp } } } }`
	for _, n := range []int{5, 25} {
		ctx, counter := db.WithStatementCounter(context.Background())
		data, errs := b.run(t, ctx, q, map[string]any{"n": n})
		require.Empty(t, errs)
		nodes := dig(data, "events", "nodes").([]any)
		require.Len(t, nodes, n)
		require.NotEmpty(t, dig(nodes[0], "owners"))
		require.NotEmpty(t, dig(nodes[0], "evidence"))
		require.EqualValues(t, 1, counter.Load(), "page size %d", n)
	}
	ctx, counter := db.WithStatementCounter(context.Background())
	_, errs := b.run(t, ctx, `{ events(first: 5) { nodes { id title } } }`, nil)
	require.Empty(t, errs)
	require.EqualValues(t, 1, counter.Load())
}

// The top signals, a category's events, a feed's page and an entity's own
// page (with the entity) read their owners, participants and evidence in
// their page's statement, as events does (a category is checked against
// the categories in use first). An entity that is not there is null, in
// one statement too.
func TestFeedsReadTheirChildrenInTheirPage(t *testing.T) {
	t.Parallel()
	b := setup(t, 8)
	since := b.now.Add(-24 * time.Hour).Format(time.RFC3339)
	sel := `{ id title owners { id label } participants { id } evidence { id url timestamp } }`
	for _, c := range []struct {
		name, query string
		path        []any
		statements  int64
	}{
		{"topSignals", `query($s: Time) { topSignals(since: $s, first: 5) ` + sel + ` }`, []any{"topSignals"}, 1},
		{"eventsByCategory", `query($s: Time) { eventsByCategory(category: "funding", surface: RADAR, since: $s, first: 5) ` + sel + ` }`,
			[]any{"eventsByCategory"}, 2},
		{"feed", `query($s: Time!) { feed(since: $s, first: 5) { nodes ` + sel + ` nextCursor } }`, []any{"feed", "nodes"}, 1},
		{"entity", `query($s: Time) { entity(id: ` + strconv.Itoa(hubID) + `) { id label events(surface: RADAR, since: $s, first: 5) { nodes ` + sel + ` nextCursor } } }`,
			[]any{"entity", "events", "nodes"}, 1},
		{"timeline", `query { entity(id: ` + strconv.Itoa(hubID) + `) { id label timeline(first: 5) { nodes ` + sel + ` nextCursor } } }`,
			[]any{"entity", "timeline", "nodes"}, 1},
		{"research", `query { entity(id: ` + strconv.Itoa(hubID) + `) { id research(first: 2) { nodes ` + sel + ` nextCursor since } } }`,
			[]any{"entity", "research", "nodes"}, 1},
		{"media", `query($s: Time) { entity(id: ` + strconv.Itoa(hubID) + `) { id media(since: $s, first: 2) { nodes ` + sel + ` } } }`,
			[]any{"entity", "media", "nodes"}, 1},
	} {
		ctx, counter := db.WithStatementCounter(context.Background())
		data, errs := b.run(t, ctx, c.query, map[string]any{"s": since})
		require.Empty(t, errs, c.name)
		nodes := dig(data, c.path...).([]any)
		require.NotEmpty(t, nodes, c.name)
		require.NotEmpty(t, dig(nodes[0], "owners"), c.name)
		require.NotEmpty(t, dig(nodes[0], "evidence"), c.name)
		require.EqualValues(t, c.statements, counter.Load(), c.name)
	}
	requireNullInOneStatement(t, b, `{ entity(id: 424242) { id events(first: 5) { nodes `+sel+` } } }`, "entity")

	// A window that ends now is read ahead and resolved at the same
	// request time, however the clock moves between the two.
	tick := b.now
	b.store.Now = func() time.Time { tick = tick.Add(time.Millisecond); return tick }
	ctx, counter := db.WithStatementCounter(context.Background())
	data, errs := b.run(t, ctx, `{ entity(id: `+strconv.Itoa(hubID)+`) { id research(first: 2) { nodes { id } since } } }`, nil)
	require.Empty(t, errs)
	require.NotEmpty(t, dig(data, "entity", "research", "nodes"))
	require.EqualValues(t, 1, counter.Load())
	// A since older than the lookback is the resolver's error, not read
	// ahead.
	ctx, counter = db.WithStatementCounter(context.Background())
	old := tick.Add(-2 * cryptointel.HistoryLookback).Format(time.RFC3339)
	_, errs = b.run(t, ctx, `query($s: Time) { entity(id: `+strconv.Itoa(hubID)+`) { id research(since: $s) { nodes { id } } } }`, map[string]any{"s": old})
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Message, "since")
}

// Other entry points also issue a constant number of statements whatever
// their page size.
func TestEntryPointStatementCounts(t *testing.T) {
	t.Parallel()
	b := setup(t, 25)
	since := b.now.Add(-24 * time.Hour).Format(time.RFC3339)
	queries := map[string]string{
		"feed":          `query($n: Int, $s: Time!) { feed(since: $s, first: $n) { nodes { id owners { id } participants { id } evidence { id } } nextCursor } }`,
		"events":        `query($n: Int) { events(first: $n, sort: RECENCY) { nodes { id eventOwner { id events(first: $n) { nodes { id } } } posts { id } } } }`,
		"organizations": `query($n: Int) { organizations(first: $n) { id radar(first: $n) { id } signal(first: $n) { id } signalHistory(days: $n) { date } entity { references { id } markets { id } } } }`,
		"briefs":        `query($n: Int, $s: Time!) { briefs(ids: [101, 102, 103, 104, 105, 106], since: $s, first: $n) { radar { id owners { id } } signal { id } } }`,
		"timeline":      `query($n: Int) { entities(ids: [101, 102, 103, 104, 105]) { timeline(first: $n) { nodes { id evidence { id } } } research(first: $n) { nodes { id } } } }`,
	}
	for name, q := range queries {
		var counts []int64
		for _, n := range []int{5, 10} {
			ctx, counter := db.WithStatementCounter(context.Background())
			_, errs := b.run(t, ctx, q, map[string]any{"n": n, "s": since})
			require.Empty(t, errs, name)
			counts = append(counts, counter.Load())
		}
		require.Equal(t, counts[0], counts[1], name)
		require.LessOrEqual(t, counts[1], int64(6), name)
	}
}

func TestEntitiesAndNameResolution(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	_, err := b.store.Bun.NewInsert().Model(&[]db.EntityName{
		{EntityID: hubID, Kind: "canonical_name", Value: "Ethereum", Norm: "ethereum"},
		{EntityID: hubID, Kind: "alias", Value: "ETH", Norm: "eth"},
	}).Exec(context.Background())
	require.NoError(t, err)
	data := b.mustRun(t, `{
	  entities(ids: [102, 424242, 1]) { id }
	  resolveEntities(name: "ETH") { entity { id canonicalName } matchedVia matchType matchRank matchedValue }
	  organizationsByName(name: "eth") { id label type aliases matchedVia }
	}`, nil)
	ents := dig(data, "entities").([]any)
	require.Len(t, ents, 3)
	require.EqualValues(t, 102, dig(ents, 0, "id"))
	require.Nil(t, ents[1])
	require.EqualValues(t, 1, dig(ents, 2, "id"))
	m := dig(data, "resolveEntities", 0).(map[string]any)
	require.EqualValues(t, 1, dig(m, "entity", "id"))
	require.Equal(t, "alias", m["matchedVia"])
	require.Equal(t, "exact", m["matchType"])
	org := dig(data, "organizationsByName", 0).(map[string]any)
	require.EqualValues(t, 1, org["id"])
	require.Equal(t, "Ethereum", org["label"])
	require.Equal(t, "project", org["type"])
	require.Len(t, org["aliases"], 5)

	_, errs := b.run(t, context.Background(), `{ entities(ids: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26]) { id } }`, nil)
	require.Len(t, errs, 1)
	require.Equal(t, "invalid", errs[0].Code)
}

// A name lookup that writes its matches' entities and their references is
// one statement (db.ResolveEntitiesFolded), and answers as the lookup
// followed by the entity and reference loads does.
func TestNameResolutionStatementCount(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	ctx := context.Background()
	_, err := b.store.Bun.NewInsert().Model(&[]db.EntityName{
		{EntityID: hubID, Kind: "canonical_name", Value: "Ethereum", Norm: "ethereum"},
		{EntityID: hubID, Kind: "alias", Value: "ETH", Norm: "eth"},
		{EntityID: 102, Kind: "canonical_name", Value: "Ethereum Classic", Norm: "ethereum classic"},
	}).Exec(ctx)
	require.NoError(t, err)
	_, err = b.store.Pool.Exec(ctx, `INSERT INTO entity_references (id, entity_id, reference_type, title, url)
		VALUES (9002, $1, 'website', 'b', 'https://b.example'), (9001, $1, 'docs', 'a', 'https://a.example')`, hubID)
	require.NoError(t, err)
	q := `{ resolveEntities(name: "ethereum") { entity { id canonicalName aliases references { id title } } matchRank } }`
	cctx, counter := db.WithStatementCounter(ctx)
	data, errs := b.run(t, cctx, q, nil)
	require.Empty(t, errs)
	require.EqualValues(t, 1, counter.Load())
	ms := dig(data, "resolveEntities").([]any)
	require.Len(t, ms, 2)
	require.EqualValues(t, hubID, dig(ms, 0, "entity", "id"))
	require.EqualValues(t, 102, dig(ms, 1, "entity", "id"))
	refs := dig(ms, 0, "entity", "references").([]any)
	require.Len(t, refs, 2)
	require.EqualValues(t, 9001, dig(refs, 0, "id"))
	require.Empty(t, dig(ms, 1, "entity", "references"))
}

// Pages of relationships and of significance-ordered entity events follow
// one another without overlap.
func TestPagingOrders(t *testing.T) {
	t.Parallel()
	b := setup(t, 8)
	data := b.mustRun(t, `{ entity(id: 1) {
	  all: relationships(first: 8) { direction relatedEntity { id } }
	  page: relationships(first: 2, offset: 2) { direction relatedEntity { id } }
	} }`, nil)
	all := dig(data, "entity", "all").([]any)
	page := dig(data, "entity", "page").([]any)
	require.Len(t, all, 8)
	require.Equal(t, all[2:4], page)
	// Outbound edges first, then inbound.
	require.Equal(t, "outbound", dig(all, 0, "direction"))
	require.Equal(t, "inbound", dig(all, 7, "direction"))

	q := `query($after: String) { entity(id: 101) { events(first: 3, sort: SIGNIFICANCE, after: $after) {
	  nodes { id significance } nextCursor sort offset } } }`
	var after any
	var scores []float64
	seen := map[float64]bool{}
	for i := 0; i < 10; i++ {
		conn := dig(b.mustRun(t, q, map[string]any{"after": after}), "entity", "events").(map[string]any)
		require.Equal(t, "SIGNIFICANCE", conn["sort"])
		for _, n := range conn["nodes"].([]any) {
			id := dig(n, "id").(float64)
			require.False(t, seen[id])
			seen[id] = true
			s, _ := dig(n, "significance").(float64)
			scores = append(scores, s)
		}
		if conn["nextCursor"] == nil {
			break
		}
		after = conn["nextCursor"]
	}
	require.Len(t, seen, 8)
	for i := 1; i < len(scores); i++ {
		require.GreaterOrEqual(t, scores[i-1], scores[i], "significance first, unscored last")
	}
}

// An entity asked for with its references is read with them in one
// statement (db.EntityWithReferences), and answers as the two loads did:
// its references by id, an entity without any with an empty list, an
// unknown one null.
func TestEntityReadsItsReferencesWithIt(t *testing.T) {
	t.Parallel()
	b := setup(t, 2)
	refs := []cryptointel.Reference{
		{ID: 3, EntityID: hubID, ReferenceType: "website", Title: "Home", URL: "https://example.org/"},
		{ID: 1, EntityID: hubID, ReferenceType: "docs", Title: "Docs", URL: "https://example.org/docs"},
	}
	_, err := b.store.Bun.NewInsert().Model(&refs).Exec(context.Background())
	require.NoError(t, err)
	for _, c := range []struct {
		id   int
		want any
	}{
		{hubID, []any{map[string]any{"id": float64(1), "title": "Docs"}, map[string]any{"id": float64(3), "title": "Home"}}},
		{101, []any{}},
	} {
		ctx, counter := db.WithStatementCounter(context.Background())
		data, errs := b.run(t, ctx, `query($id: Int!) { entity(id: $id) { id canonicalName references { id title } } }`, map[string]any{"id": c.id})
		require.Empty(t, errs)
		require.EqualValues(t, c.id, dig(data, "entity", "id"))
		require.Equal(t, c.want, dig(data, "entity", "references"))
		require.EqualValues(t, 1, counter.Load(), "entity %d", c.id)
	}
	requireNullInOneStatement(t, b, `{ entity(id: 424242) { id references { id } } }`, "entity")
}

// An organization asked for with its radar and signal events (or one of
// them) is read with those pages in one statement, and answers as the
// separate loads do; a page left out by @include is not read, and pages
// of two sizes, or one asked for twice, are loaded as usual.
func TestOrganizationReadsItsPagesWithIt(t *testing.T) {
	t.Parallel()
	b := setup(t, 6)
	org := strconv.Itoa(hubID)
	sel := `{ id title owners { id } evidence { id } }`
	unfolded := b.mustRun(t, `{ organization(id: `+org+`) { id r1: radar(first: 4) `+sel+` r2: radar(first: 4) { id }
		s1: signal(first: 4) `+sel+` s2: signal(first: 4) { id } } }`, nil)
	require.NotEmpty(t, dig(unfolded, "organization", "r1"))
	require.NotEmpty(t, dig(unfolded, "organization", "s1"))
	for _, c := range []struct {
		name, query string
		vars        map[string]any
		statements  int64
		radar       bool
		signal      bool
	}{
		{"both", `{ organization(id: ` + org + `) { id label radar(first: 4) ` + sel + ` signal(first: 4) ` + sel + ` } }`, nil, 1, true, true},
		{"radar", `{ organization(id: ` + org + `) { id radar(first: 4) ` + sel + ` } }`, nil, 1, true, false},
		{"signal", `query($r: Boolean!) { organization(id: ` + org + `) { id radar(first: 3) @include(if: $r) ` + sel + ` signal(first: 4) ` + sel + ` } }`,
			map[string]any{"r": false}, 1, false, true},
		{"two sizes", `{ organization(id: ` + org + `) { id radar(first: 4) ` + sel + ` signal(first: 3) { id } } }`, nil, 3, true, false},
	} {
		ctx, counter := db.WithStatementCounter(context.Background())
		data, errs := b.run(t, ctx, c.query, c.vars)
		require.Empty(t, errs, c.name)
		if c.radar {
			require.Equal(t, dig(unfolded, "organization", "r1"), dig(data, "organization", "radar"), c.name)
		}
		if c.signal {
			require.Equal(t, dig(unfolded, "organization", "s1"), dig(data, "organization", "signal"), c.name)
		}
		require.EqualValues(t, c.statements, counter.Load(), c.name)
	}
	requireNullInOneStatement(t, b, `{ organization(id: 424242) { id radar `+sel+` signal { id } } }`, "organization")
}

// An organization asked for with its signal history is read with it in
// one statement, and answers as the separate loads do (one history asked
// for twice is loaded as usual); organizations matched by name are read
// with their matches when their fields are asked for.
func TestOrganizationReadsItsHistoryWithIt(t *testing.T) {
	t.Parallel()
	b := setup(t, 6)
	_, err := b.store.Bun.NewInsert().Model(&[]db.EntityName{
		{EntityID: hubID, Kind: "canonical_name", Value: "Ethereum", Norm: "ethereum"},
	}).Exec(context.Background())
	require.NoError(t, err)
	org := strconv.Itoa(hubID)
	unfolded := b.mustRun(t, `{ organization(id: `+org+`) { id h1: signalHistory(days: 3) { date signalCount radarCount } h2: signalHistory(days: 3) { date } } }`, nil)
	days := dig(unfolded, "organization", "h1").([]any)
	require.Len(t, days, 3)
	// The fixture's events are of the last hour: today's, or also
	// yesterday's in the first hour of a day (UTC).
	counted := 0.0
	for i := range days {
		counted += dig(days, i, "radarCount").(float64)
	}
	require.NotZero(t, counted, "the history counts the fixture's events")
	for _, c := range []struct {
		name, query string
		path        []any
		want        any
	}{
		{"history", `{ organization(id: ` + org + `) { id label signalHistory(days: 3) { date signalCount radarCount } } }`,
			[]any{"organization", "signalHistory"}, days},
		{"by name", `{ organizationsByName(name: "ethereum") { id label type aliases matchedVia } }`,
			[]any{"organizationsByName", 0, "matchedVia"}, "canonical_name"},
	} {
		ctx, counter := db.WithStatementCounter(context.Background())
		data, errs := b.run(t, ctx, c.query, nil)
		require.Empty(t, errs, c.name)
		require.Equal(t, c.want, dig(data, c.path...), c.name)
		require.EqualValues(t, 1, counter.Load(), c.name)
	}
	requireNullInOneStatement(t, b, `{ organization(id: 424242) { id signalHistory(days: 2) { date } } }`, "organization")
}

// requireNullInOneStatement runs query, which asks for an unknown entity
// or organization (field): it answers null, read in one statement.
func requireNullInOneStatement(t *testing.T, b *testBundle, query, field string) {
	t.Helper()
	ctx, counter := db.WithStatementCounter(context.Background())
	data, errs := b.run(t, ctx, query, nil)
	require.Empty(t, errs)
	require.Nil(t, dig(data, field))
	require.EqualValues(t, 1, counter.Load())
}
