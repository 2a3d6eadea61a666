package rest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/search"
	"github.com/cryptointel/cryptointel/wire"
)

// Exact messages of the contract (section 7) and of this facade.
const (
	msgBulkSinceRequired = "since parameter is required. Use an ISO 8601 timestamp (e.g. 2026-11-20T00:00:00Z)."
	msgNotFound          = "Not found"
	msgMethodNotAllowed  = "Method not allowed"
)

// Descriptions shared by several routes' params.
const (
	descSince    = "Only events at or after this instant."
	descCategory = "Event category filter."
)

// Policy surfaces (X-Api-Surface).
const (
	surfaceLookup   = "lookup"
	surfaceQuery    = "query"
	surfaceFeed     = "feed"
	surfaceTimeline = "timeline"
	surfaceReplay   = "replay"
	surfaceBrief    = "brief"
)

// Pricing of the routes that declare a pay-per-request option (section 5).
var (
	priceFeed        = &access.Pricing{Mode: "range", Min: 0.005, Max: 0.125}
	priceByCategory  = &access.Pricing{Mode: "range", Min: 0.005, Max: 0.05}
	priceRadarByOrg  = &access.Pricing{Mode: "range", Min: 0.002, Max: 0.05}
	priceSearch      = &access.Pricing{Mode: "fixed", Min: 0.05, Max: 0.05}
	priceEntityByTop = &access.Pricing{Mode: "fixed", Min: 0.005, Max: 0.005}
)

// policy builds a route policy.
func policy(surface, layer, name string, cost int, feature string, pricing *access.Pricing) access.Policy {
	return access.Policy{Surface: surface, Layer: layer, Name: name, CreditCost: cost, Feature: feature, Pricing: pricing}
}

// orList writes items as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// hours writes a duration of whole hours as "24 hours".
func hours(d time.Duration) string { return strconv.Itoa(int(d/time.Hour)) + " hours" }

// Parameter builders.

// boundedParam is an integer query parameter with the bounds b (one of
// cryptointel's limits), passed to the operation as variable v ("" for
// none).
func boundedParam(name, v string, b cryptointel.Bounds, desc string) Param {
	return Param{Name: name, In: "query", Type: TypeInteger, Default: b.Default, Min: intp(b.Min), Max: intp(b.Max), Var: v, Description: desc}
}

// limitParam is `limit`, the page size, passed as `first`.
func limitParam(b cryptointel.Bounds) Param {
	return boundedParam("limit", "first", b, fmt.Sprintf("Page size, %d to %d, default %d. Larger values are capped; values below %d are clamped to %d.",
		b.Min, b.Max, b.Default, b.Min, b.Min))
}

// offsetParam is `offset`, the rows to skip.
func offsetParam(b cryptointel.Bounds) Param {
	return boundedParam("offset", "offset", b, fmt.Sprintf("Rows to skip, %d to %d, default %d. Larger values are capped; negative values are clamped to %d.",
		b.Min, b.Max, b.Default, b.Min))
}

func idQueryParam(what string) Param {
	return Param{Name: "id", In: "query", Type: TypeInteger, Required: true, Var: "id", Description: "The " + what + " id."}
}

func idPathParam(what string) Param {
	return Param{Name: "id", In: "path", Type: TypeInteger, Required: true, Var: "id", Description: "The " + what + " id."}
}

func sinceParam(desc string, maxAge time.Duration) Param {
	ps := Param{Name: "since", In: "query", Type: TypeDateTime, MaxAge: maxAge, Var: "since", Description: desc}
	if maxAge > 0 {
		ps.TooOld = cryptointel.SinceTooOld(ps.Name, maxAge)
	}
	return ps
}

func requiredSince(desc string, maxAge time.Duration, msg string) Param {
	ps := sinceParam(desc, maxAge)
	ps.Required = true
	ps.RequiredMessage = msg
	return ps
}

func cursorParam() Param {
	return Param{Name: "cursor", In: "query", Type: TypeString, Var: "after",
		Description: "Opaque token from a previous response's next_cursor. Use it with the same `since` (and filters); `offset` is ignored when it is present. A changed or foreign cursor is a 400."}
}

func compactParam() Param {
	canonical, legacy := compactDropped()
	return Param{Name: "compact", In: "query", Type: TypeBoolean, Default: false,
		Description: "Omit " + canonical + " and their legacy aliases (" + legacy + "). A bare `compact` means true."}
}

// legacyParam is `legacy`, the lean event shape: false drops the legacy
// aliases from every event of the response. It feeds $legacy, which the
// event fragments' aliases are conditioned on (rest/ops/fragments).
func legacyParam() Param {
	var names []string
	for _, f := range wire.EventFields {
		if f.Legacy != "" {
			names = append(names, f.Legacy)
		}
	}
	return Param{Name: legacyVar, In: "query", Type: TypeBoolean, Default: true, Var: legacyVar,
		Description: "false omits the legacy aliases of the event fields (" + strings.Join(names, ", ") +
			") from every event: the lean shape for new clients, about half the bytes of a page of full events. " +
			"Default true: the contract's shape, canonical and legacy names together."}
}

// legacyVar is the variable (and parameter) the lean event shape is asked
// with.
const legacyVar = "legacy"

// withLegacyParam declares legacyParam on r when its operation (or any it
// may switch to, as compact briefs do) can leave the legacy aliases out:
// exactly the routes whose events carry them.
func withLegacyParam(r *Route) {
	for _, name := range []string{r.Operation, r.Operation + "_compact"} {
		op, ok := fixedOperations()[name]
		if ok && op.Doc.Operations[0].VariableDefinitions.ForName(legacyVar) != nil {
			r.Params = append(r.Params, legacyParam())
			return
		}
	}
}

// Envelope builders (see also dataList and pick in envelope.go).

var entitySummaryKeys = []string{"id", "canonicalName", "displayName", "entityType", "status"}

// entityEvents is the envelope of the per-organization event routes.
func entityEvents(_ *Call, d *Data) (any, error) {
	if d.Get("entity").isNull() {
		return nil, notFound(cryptointel.MsgOrganizationNotFound)
	}
	return object{{"data", d.Get("entity.events.nodes").orEmptyList()}}, nil
}

// feedEnvelope is the envelope of the bulk feeds and replay.
func feedEnvelope(_ *Call, d *Data) (any, error) {
	return object{
		{"limit", d.Get("feed.limit")},
		{"offset", d.Get("feed.offset")},
		{"since", d.Get("feed.since")},
		{"next_cursor", d.Get("feed.nextCursor")},
		{"data", d.Get("feed.nodes").orEmptyList()},
	}, nil
}

// entityConnection is the envelope of the entity-scoped cursor routes
// (research, media, timeline): entity, limit, since, next_cursor, data.
func entityConnection(connKey, notFoundMsg string) func(*Call, *Data) (any, error) {
	conn := "entity." + connKey + "."
	return func(_ *Call, d *Data) (any, error) {
		if d.Get("entity").isNull() {
			return nil, notFound(notFoundMsg)
		}
		return object{
			{"entity", pick(d, "entity", entitySummaryKeys...)},
			{"limit", d.Get(conn + "limit")},
			{"since", d.Get(conn + "since")},
			{"next_cursor", d.Get(conn + "nextCursor")},
			{"data", d.Get(conn + "nodes").orEmptyList()},
		}, nil
	}
}

// Prepare helpers.

// withCursor drops the offset when a cursor continues a walk.
func withCursor(c *Call) {
	if c.Given["cursor"] {
		c.Vars["offset"] = 0
		c.Values["offset"] = 0
	}
}

// setSurface returns a Prepare that sets the surface variable.
func setSurface(surface string) func(*Call) error {
	return func(c *Call) error {
		c.Vars["surface"] = surface
		return nil
	}
}

// resolveSort applies the sort/mode rule of /v1/latest: `sort` wins when
// both are given; `mode` (largest = significance, new = recency) applies
// otherwise; the default is significance. The response reports both,
// consistent with the effective order.
func resolveSort(c *Call) {
	sort := "significance"
	if c.Given["sort"] {
		sort = c.String("sort")
	} else if c.Given["mode"] && c.String("mode") == "new" {
		sort = "recency"
	}
	mode := "largest"
	if sort == "recency" {
		mode = "new"
	}
	c.Values["sort"] = sort
	c.Values["mode"] = mode
	c.Vars["sort"] = strings.ToUpper(sort)
}

// parseBatchIDs parses the ids of /v1/brief/batch: comma-separated
// integers; tokens that are not positive integers are ignored, duplicates
// collapse, and there must be between 1 and 25 valid ids.
func parseBatchIDs(raw string) (any, error) {
	var ids []int
	for _, tok := range strings.Split(raw, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(tok))
		if err != nil || n <= 0 || n > maxInt {
			continue
		}
		if !slices.Contains(ids, n) {
			ids = append(ids, n)
		}
	}
	if len(ids) == 0 {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgNoValidIDs}
	}
	if len(ids) > cryptointel.MaxIDsPerRequest {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgTooManyBatchIDs}
	}
	return ids, nil
}

// Response schema builders.

func envelope(props ...prop) schema { return obj(props...) }

func listOf(item string) schema { return arr(ref(item)) }

func pageSchema(item string, withOffset, withSince bool) schema {
	props := []prop{p("limit", integer())}
	if withOffset {
		props = append(props, p("offset", integer()))
	}
	if withSince {
		props = append(props, p("since", dateTime()))
	}
	props = append(props,
		p("next_cursor", describe(nullStr(), "Pass as `cursor` for the next page; null on the last page.")),
		p("data", listOf(item)))
	return envelope(props...)
}

// Routes returns the /v1 route table: every graph-read route of the
// contract (sections 4.1–4.4 and 4.7). Account-owned routes (usage,
// webhooks, export jobs) are added by their packages through Config.Routes.
//
// A priced route's Pricing gets its MaxLimit and DefaultLimit from the
// route's `limit` parameter, so a range price follows the route's own caps.
// A route whose events carry legacy aliases gets the `legacy` parameter
// (withLegacyParam).
func Routes() []Route {
	routes := graphRoutes()
	for i := range routes {
		r := &routes[i]
		withLegacyParam(r)
		if r.Policy.Pricing == nil {
			continue
		}
		pr := *r.Policy.Pricing
		for _, prm := range r.Params {
			if prm.Name == "limit" && prm.Max != nil {
				pr.MaxLimit = *prm.Max
				if d, ok := prm.Default.(int); ok {
					pr.DefaultLimit = d
				}
			}
		}
		r.Policy.Pricing = &pr
	}
	return routes
}

// graphRoutes is the table before pricing is completed.
func graphRoutes() []Route {
	latestParams := func() []Param {
		return []Param{
			{Name: "window", In: "query", Type: TypeString, Default: cryptointel.DefaultEventWindow, Enum: cryptointel.EventWindowNames(), Var: "window",
				Description: "Window when `since` is absent: " + orList(cryptointel.EventWindowNames()) + ". Default " + cryptointel.DefaultEventWindow + ". Ignored when `since` is given."},
			sinceParam("Explicit start of the window, within the last "+cryptointel.Days(cryptointel.HistoryLookback)+". Takes precedence over `window`.", cryptointel.HistoryLookback),
			limitParam(cryptointel.EventsFirst),
			offsetParam(cryptointel.EventsOffset),
			{Name: "category", In: "query", Type: TypeString, Var: "category", Description: descCategory},
			{Name: "entityId", In: "query", Type: TypeInteger, Var: "entityId", Description: "Canonical entity id filter."},
			{Name: "topic", In: "query", Type: TypeString, Var: "topic", Description: "Topic or natural-language filter."},
			{Name: "sort", In: "query", Type: TypeString, Enum: []string{"significance", "recency"},
				Description: "significance or recency; default significance. Wins over `mode` when both are given."},
			{Name: "mode", In: "query", Type: TypeString, Enum: []string{"largest", "new"},
				Description: "Convenience alias: largest = significance, new = recency; default largest. Ignored when `sort` is given."},
		}
	}
	latestPrepare := func(surface string) func(*Call) error {
		return func(c *Call) error {
			c.Vars["surface"] = surface
			resolveSort(c)
			return nil
		}
	}
	latestEnvelope := func(withSurface bool) func(*Call, *Data) (any, error) {
		return func(c *Call, d *Data) (any, error) {
			var window any = c.String("window")
			if w := d.Get("events.window"); !w.isNull() {
				window = w
			}
			o := object{
				{"window", window},
				{"sort", c.String("sort")},
				{"mode", c.String("mode")},
				{"limit", d.Get("events.limit")},
				{"offset", d.Get("events.offset")},
				{"since", d.Get("events.since")},
			}
			if withSurface {
				o = append(o, field{"surface", cryptointel.SurfaceSignal})
			}
			return append(o, field{"data", d.Get("events.nodes").orEmptyList()}), nil
		}
	}
	latestSchema := func(withSurface bool) schema {
		props := []prop{
			p("window", strEnum(cryptointel.EventWindowNames()...)),
			p("sort", strEnum("significance", "recency")),
			p("mode", strEnum("largest", "new")),
			p("limit", integer()),
			p("offset", integer()),
			p("since", dateTime()),
		}
		if withSurface {
			props = append(props, p("surface", str()))
		}
		return envelope(append(props, p("data", listOf("Event")))...)
	}
	latestDesc := "Events across the feed. `since` takes precedence over `window`. `sort` (significance, recency) wins over `mode` (largest, new) when both are given; the response reports the effective sort and the matching mode."

	bulkFeed := func(path, name, surface, summary string) Route {
		return Route{
			Method: http.MethodGet, Path: path, Summary: summary,
			Description: "Bulk feed, oldest first from `since`, walked with keyset cursors. `since` is required and must be within the last " + cryptointel.Days(cryptointel.FeedLookback) + "; pass `next_cursor` as `cursor` with the same `since` until it is null. `offset` applies to the first page only.",
			Policy:      policy(surfaceFeed, access.LayerPremium, name, 5, access.FeaturePremiumFeeds, nil),
			Params: []Param{
				requiredSince("Events at or after this instant; within the last "+cryptointel.Days(cryptointel.FeedLookback)+". Required.", cryptointel.FeedLookback, msgBulkSinceRequired),
				limitParam(cryptointel.FeedFirst),
				offsetParam(cryptointel.FeedOffset),
				cursorParam(),
			},
			Operation: "feed",
			Prepare: func(c *Call) error {
				c.Vars["surface"] = surface
				c.Vars["feed"] = "all"
				withCursor(c)
				return nil
			},
			Envelope: feedEnvelope,
			Response: pageSchema("Event", true, true),
		}
	}

	contentRoute := func(kind string) Route {
		return Route{
			Method: http.MethodGet, Path: "/v1/entities/{id}/" + kind,
			Summary:     "The entity's recent " + kind + " items",
			Description: "Entity-linked " + kind + " items, newest first, walked with keyset cursors. `since` defaults to and must be within the last " + cryptointel.Days(cryptointel.HistoryLookback) + "; `offset` applies to the first page only.",
			Policy:      policy(surfaceTimeline, access.LayerEvaluation, "entities."+kind, 1, "", nil),
			Params: []Param{
				idPathParam("entity"),
				sinceParam("Start of the window; default and limit the last "+cryptointel.Days(cryptointel.HistoryLookback)+".", cryptointel.HistoryLookback),
				limitParam(cryptointel.ContentFirst),
				offsetParam(cryptointel.ContentOffset),
				cursorParam(),
			},
			Operation: "entity_" + kind,
			Prepare:   func(c *Call) error { withCursor(c); return nil },
			Envelope:  entityConnection("content", cryptointel.MsgEntityNotFound),
			Response: envelope(
				p("entity", ref("EntitySummary")),
				p("limit", integer()),
				p("since", dateTime()),
				p("next_cursor", nullStr()),
				p("data", listOf("ContentEvent"))),
			ErrorStatuses: []int{http.StatusNotFound},
		}
	}

	briefEnvelope := func(_ *Call, d *Data) (any, error) {
		b := d.Get("brief")
		if b.isNull() {
			return nil, notFound(cryptointel.MsgOrganizationNotFound)
		}
		return object{{"data", b}}, nil
	}

	return []Route{
		// 4.1 Latest and feeds.
		{
			Method: http.MethodGet, Path: "/v1/latest", Summary: "Latest radar events",
			Description: latestDesc,
			Policy:      policy(surfaceFeed, access.LayerEvaluation, "latest", 1, "", priceFeed),
			Params:      latestParams(),
			Operation:   "latest",
			Prepare:     latestPrepare("RADAR"),
			Envelope:    latestEnvelope(false),
			Response:    latestSchema(false),
		},
		{
			Method: http.MethodGet, Path: "/v1/signal/latest", Summary: "Latest signal events",
			Description: latestDesc,
			Policy:      policy(surfaceFeed, access.LayerEvaluation, "signal.latest", 1, "", priceFeed),
			Params:      latestParams(),
			Operation:   "latest",
			Prepare:     latestPrepare("SIGNAL"),
			Envelope:    latestEnvelope(true),
			Response:    latestSchema(true),
		},
		{
			Method: http.MethodGet, Path: "/v1/search", Summary: "Semantic search over radar and signal history",
			Description: "Ranked like a search engine: BM25 relevance (rarer words weigh more; title > summary > bullets > evidence), " +
				"entity linking by name, alias or ticker, expansion along relationships marked searchExpand, and a crypto thesaurus " +
				"(`hack` also finds exploits, at a lower weight than the word typed; the thesaurus is data, extended by adding a line), " +
				"with recency and significance as boosts. The query is read before it is searched: time words (recently, today, " +
				"this week, next week, since March, in 2025) become a window or a recency preference, question words (which, who, did) " +
				"are dropped, and `report` says what became a filter, what was searched and what was dropped. Each event says how it " +
				"matched (`matchedVia`, `matchType`, `matchRank`, `matchedTerms`) and which other reports of the same story were folded " +
				"into it (`alsoReportedAs`; `collapse=false` lists them all); `unmatchedTerms` lists the searched terms no returned event " +
				"matched. Pages follow `next_cursor` up to " + strconv.Itoa(cryptointel.SearchMaxDepth) + " events deep. Prediction markets are not searched. " +
				"A query needs a word to search for and at most " + strconv.Itoa(cryptointel.SearchQueryMaxWords) + " words and " +
				strconv.Itoa(cryptointel.SearchQueryMaxRunes) + " characters (400 otherwise). `query` wins over `q` when both are given. " +
				"How a query is read, how ranking works and how to extend the thesaurus: docs/api/search.md.",
			Policy: policy(surfaceQuery, access.LayerEvaluation, "search", 1, "", priceSearch),
			Params: []Param{
				{Name: "query", Aliases: []string{"q"}, In: "query", Type: TypeString, Required: true, Var: "query",
					RequiredMessage: search.MsgQueryRequired, Description: "What to search for (min length 1). `q` is an alias."},
				limitParam(cryptointel.SearchEventsFirst),
				sinceParam("Start of the window; default the last "+cryptointel.Days(cryptointel.HistoryLookback)+
					", or the "+cryptointel.Days(cryptointel.HistoryLookback)+" before a past `to` (a window the query's time words name replaces the default).", 0),
				{Name: "from", In: "query", Type: TypeDateTime, Var: "from", Description: "Start of the window, like `since` (the later of the two wins)."},
				{Name: "to", In: "query", Type: TypeDateTime, Var: "to", Description: "End of the window (exclusive); must be after `since`/`from` when either is given (400 otherwise). Given alone, it ends the default window."},
				{Name: "sort", In: "query", Type: TypeString, Default: search.SearchSortRelevance, Enum: search.SearchSorts,
					Description: "relevance (recency blended in: among equally good matches the newer wins) or recency (the events that match as much of the query as the best match does, newest first)."},
				{Name: "category", In: "query", Type: TypeString, Var: "category", Description: descCategory},
				{Name: "entity", In: "query", Type: TypeString, Var: "entity",
					Description: "Only events this entity owns or takes part in: an entity id, or a name, alias or ticker (every entity of the strongest match). 400 when it names none."},
				{Name: "surface", In: "query", Type: TypeString, Enum: []string{search.SearchSurfaceRadar, search.SearchSurfaceSignal},
					Description: "signal: scored events only; radar (default): every event."},
				{Name: "collapse", In: "query", Type: TypeBoolean, Default: true, Var: "collapse",
					Description: "Fold the reports of one story (same owners, within two days, titles telling it in the same or synonymous words) into one hit listing the others in `alsoReportedAs`."},
				{Name: "facets", In: "query", Type: TypeBoolean, Default: false, Var: "facets",
					Description: "Add `facets`: counts of the ranked hits (before paging) by category, entity and day."},
				{Name: "cursor", In: "query", Type: TypeString, Var: "after",
					Description: "Opaque token from a previous response's next_cursor, with the same query and filters (a cursor of another search is a 400)."},
			},
			Operation: "search",
			Prepare: func(c *Call) error {
				c.Vars["sort"] = strings.ToUpper(c.String("sort"))
				if c.Given["surface"] {
					c.Vars["surface"] = strings.ToUpper(c.String("surface"))
				}
				return nil
			},
			Envelope: func(c *Call, d *Data) (any, error) {
				items := flattenMatches(d, "searchEvents", "event", "matchedVia", "matchType", "matchRank", "matchedTerms", "alsoReportedAs")
				o := object{{"query", c.String("query")}, {"sort", d.Get("searchReport.sort")},
					{"unmatchedTerms", d.Get("searchReport.unmatchedTerms")},
					{"report", object{{"searched", d.Get("searchReport.terms")}, {"dropped", d.Get("searchReport.dropped")},
						{"filters", d.Get("searchReport.filters")}}},
					{"limit", c.Int("limit")}, {"next_cursor", d.Get("searchReport.nextCursor")}}
				if c.Bool("facets") {
					o = append(o, field{"facets", d.Get("searchReport.facets")})
				}
				return append(o, field{"data", items}), nil
			},
			Response: envelope(p("query", str()),
				p("sort", describe(str(), "The order: relevance or recency.")),
				p("unmatchedTerms", describe(arr(str()), "The searched terms no returned event matched (stop words, question and time words are not terms).")),
				p("report", describe(obj(
					p("searched", describe(arr(obj(p("text", str()))), "The terms searched, in query order.")),
					p("dropped", describe(arr(obj(p("text", str()), p("reason", str()))), "Words not searched: time (read as a window or a preference), question, stop_word.")),
					p("filters", describe(arr(obj(p("name", str()), p("value", str()), p("source", str()), p("text", str()))),
						"What became a filter or a preference: from, to, recency, scheduled, category, category_preference, entity, surface; source query or parameter."))),
					"How the query was read.")),
				p("limit", integer()),
				p("next_cursor", describe(nullable(str()), "Cursor of the next page; null on the last.")),
				optional("facets", describe(obj(
					p("categories", arr(obj(p("value", str()), p("count", integer())))),
					p("entities", arr(obj(p("value", str()), p("count", integer())))),
					p("days", arr(obj(p("value", str()), p("count", integer()))))),
					"With facets=true: counts of the ranked hits by category, entity id and day.")),
				p("data", listOf("SearchEvent"))),
		},
		{
			Method: http.MethodGet, Path: "/v1/signal/top", Summary: "Most significant signal events",
			Policy: policy(surfaceFeed, access.LayerEvaluation, "signal.top", 1, "", priceFeed),
			Params: []Param{
				limitParam(cryptointel.TopSignalsFirst),
				sinceParam("Start of the window; default the last "+hours(cryptointel.TopSignalsLookback)+".", 0),
			},
			Operation: "signal_top",
			Envelope: func(c *Call, d *Data) (any, error) {
				return object{{"limit", c.Int("limit")}, {"data", d.Get("topSignals").orEmptyList()}}, nil
			},
			Response: envelope(p("limit", integer()), p("data", listOf("Event"))),
		},
		{
			Method: http.MethodGet, Path: "/v1/signal/byOrganizationId", Summary: "Signal events of one organization, newest first",
			Policy: policy(surfaceFeed, access.LayerEvaluation, "signal.byOrganizationId", 1, "", priceFeed),
			Params: []Param{
				idQueryParam("organization (entity)"),
				limitParam(cryptointel.EntityEventsFirst),
				sinceParam(descSince, 0),
			},
			Operation:     "entity_events",
			Prepare:       setSurface("SIGNAL"),
			Envelope:      entityEvents,
			Response:      envelope(p("data", listOf("Event"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/signal/byCategory", Summary: "Signal events of one category, newest first",
			Policy: policy(surfaceFeed, access.LayerEvaluation, "signal.byCategory", 1, "", priceByCategory),
			Params: []Param{
				{Name: "category", In: "query", Type: TypeString, Required: true, Var: "category", Description: "Event category."},
				limitParam(cryptointel.SignalsByCategoryFirst),
				sinceParam(descSince, 0),
			},
			Operation: "events_by_category",
			Prepare:   setSurface("SIGNAL"),
			Envelope:  dataList("eventsByCategory"),
			Response:  envelope(p("data", listOf("Event"))),
		},
		{
			Method: http.MethodGet, Path: "/v1/radar/byOrganizationId", Summary: "Radar events of one organization, newest first",
			Policy: policy(surfaceFeed, access.LayerEvaluation, "radar.byOrganizationId", 1, "", priceRadarByOrg),
			Params: []Param{
				idQueryParam("organization (entity)"),
				limitParam(cryptointel.EntityEventsFirst),
				sinceParam(descSince, 0),
				{Name: "category", In: "query", Type: TypeString, Var: "category", Description: descCategory},
			},
			Operation:     "entity_events",
			Prepare:       setSurface("RADAR"),
			Envelope:      entityEvents,
			Response:      envelope(p("data", listOf("Event"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/radar/byCategory", Summary: "Radar events of one category, newest first",
			Description: "Designed after /v1/signal/byCategory (the contract names the route without a shape): every radar event of the category.",
			Policy:      policy(surfaceFeed, access.LayerEvaluation, "radar.byCategory", 1, "", nil),
			Params: []Param{
				{Name: "category", In: "query", Type: TypeString, Required: true, Var: "category", Description: "Event category."},
				limitParam(cryptointel.RadarByCategoryFirst),
				sinceParam(descSince, 0),
			},
			Operation: "events_by_category",
			Prepare:   setSurface("RADAR"),
			Envelope:  dataList("eventsByCategory"),
			Response:  envelope(p("data", listOf("Event"))),
		},
		{
			Method: http.MethodGet, Path: "/v1/timeline/byOrganizationId", Summary: "An organization's timeline, newest first",
			Description: "Designed after the entity research route (the contract names the route with `id` and `since` only): the organization's events newest first, walked with keyset cursors.",
			Policy:      policy(surfaceTimeline, access.LayerEvaluation, "timeline.byOrganizationId", 1, "", nil),
			Params: []Param{
				idQueryParam("organization (entity)"),
				sinceParam(descSince, 0),
				limitParam(cryptointel.TimelineFirst),
				cursorParam(),
			},
			Operation: "timeline",
			Envelope:  entityConnection("timeline", cryptointel.MsgOrganizationNotFound),
			Response: envelope(
				p("entity", ref("EntitySummary")),
				p("limit", integer()),
				p("since", nullDateTime()),
				p("next_cursor", nullStr()),
				p("data", listOf("Event"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/replay/global", Summary: "Replay of the global feed over the last " + cryptointel.Days(cryptointel.HistoryLookback),
			Description: "Designed after the bulk feeds (the contract names the route without a shape): every event (or every signal with surface=signal) since `since`, oldest first, walked with keyset cursors. `since` is required and must be within the last " + cryptointel.Days(cryptointel.HistoryLookback) + ".",
			Policy:      policy(surfaceReplay, access.LayerPremium, "replay.global", 5, access.FeaturePremiumFeeds, nil),
			Params: []Param{
				requiredSince("Events at or after this instant; within the last "+cryptointel.Days(cryptointel.HistoryLookback)+". Required.", cryptointel.HistoryLookback, msgBulkSinceRequired),
				limitParam(cryptointel.FeedFirst),
				offsetParam(cryptointel.FeedOffset),
				cursorParam(),
				{Name: "surface", In: "query", Type: TypeString, Default: "radar", Enum: []string{"radar", "signal"},
					Description: "radar (every event) or signal (scored events only); default radar."},
				{Name: "category", In: "query", Type: TypeString, Var: "category", Description: descCategory},
			},
			Operation: "feed",
			Prepare: func(c *Call) error {
				c.Vars["surface"] = strings.ToUpper(c.String("surface"))
				c.Vars["feed"] = "replay"
				withCursor(c)
				return nil
			},
			Envelope: feedEnvelope,
			Response: pageSchema("Event", true, true),
		},
		bulkFeed("/v1/radar/all", "radar.all", "RADAR", "Bulk radar feed"),
		bulkFeed("/v1/signal/all", "signal.all", "SIGNAL", "Bulk signal feed"),

		// 4.2 Entities.
		{
			Method: http.MethodGet, Path: "/v1/entities/byName", Summary: "Resolve a name to entities",
			Description: "Case- and accent-insensitive over canonical names, display names and aliases, strongest match first. `name` wins over `entityName` when both are given.",
			Policy:      policy(surfaceLookup, access.LayerEvaluation, "entities.byName", 1, "", nil),
			Params: []Param{
				{Name: "name", Aliases: []string{"entityName"}, In: "query", Type: TypeString, Required: true, Var: "name",
					Description: "The name to resolve. `entityName` is an alias."},
				limitParam(cryptointel.ResolveEntitiesFirst),
				offsetParam(cryptointel.ResolveEntitiesOffset),
			},
			Operation: "entities_by_name",
			Envelope: func(c *Call, d *Data) (any, error) {
				items := flattenMatches(d, "resolveEntities", "entity", "matchedVia", "matchType", "matchRank", "matchedValue")
				return object{{"limit", c.Int("limit")}, {"offset", c.Int("offset")}, {"data", items}}, nil
			},
			Response: envelope(p("limit", integer()), p("offset", integer()), p("data", listOf("EntityMatch"))),
		},
		{
			Method: http.MethodGet, Path: "/v1/entities/byTopName", Summary: "The top entity for a name, with other candidates",
			Policy: policy(surfaceLookup, access.LayerEvaluation, "entities.byTopName", 1, "", priceEntityByTop),
			Params: []Param{
				{Name: "name", Aliases: []string{"entityName"}, In: "query", Type: TypeString, Required: true, Var: "name",
					Description: "The name to resolve (min length 1). `entityName` is an alias."},
				boundedParam("limit", "", cryptointel.TopNameCandidates, fmt.Sprintf("Number of candidates beside the top match, %d to %d, default %d.",
					cryptointel.TopNameCandidates.Min, cryptointel.TopNameCandidates.Max, cryptointel.TopNameCandidates.Default)),
			},
			Operation: "entities_by_name",
			Prepare: func(c *Call) error {
				c.Vars["first"] = c.Int("limit") + 1
				c.Vars["offset"] = 0
				return nil
			},
			Envelope: func(c *Call, d *Data) (any, error) {
				items := flattenMatches(d, "resolveEntities", "entity", "matchedVia", "matchType", "matchRank", "matchedValue")
				if len(items) == 0 {
					return nil, notFound(cryptointel.MsgEntityNotFound)
				}
				return object{{"data", items[0]}, {"matches", items[1:]}}, nil
			},
			Response:      envelope(p("data", ref("EntityMatch")), p("matches", listOf("EntityMatch"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/entities/byId", Summary: "One entity by id",
			Policy:    policy(surfaceLookup, access.LayerEvaluation, "entities.byId", 1, "", nil),
			Params:    []Param{idQueryParam("entity")},
			Operation: "entity",
			Envelope: func(_ *Call, d *Data) (any, error) {
				e := d.Get("entity")
				if e.isNull() {
					return nil, notFound(cryptointel.MsgEntityNotFound)
				}
				return object{{"data", e}}, nil
			},
			Response:      envelope(p("data", ref("Entity"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/entities/{id}/relationships", Summary: "Direct relationships of an entity",
			Description: "Direct relationships only, outbound and inbound (outbound first, then by type and related entity id); `direction` is relative to the requested entity. " +
				"`relationshipType` and `direction` keep one type and one end.",
			Policy: policy(surfaceLookup, access.LayerEvaluation, "entities.relationships", 1, "", nil),
			Params: []Param{idPathParam("entity"), limitParam(cryptointel.RelationshipsFirst), offsetParam(cryptointel.RelationshipsOffset),
				{Name: "relationshipType", In: "query", Type: TypeString, Var: "relationshipType",
					Description: "Only relationships of this type, matched exactly, for example FOUNDATION_OF."},
				{Name: "direction", In: "query", Type: TypeString, Enum: []string{"outbound", "inbound"},
					Description: "Only the relationships where the entity is the source (outbound) or the target (inbound)."}},
			Operation: "entity_relationships",
			Prepare: func(c *Call) error {
				if c.Given["direction"] {
					c.Vars["direction"] = strings.ToUpper(c.String("direction"))
				}
				return nil
			},
			Envelope: func(c *Call, d *Data) (any, error) {
				if d.Get("entity").isNull() {
					return nil, notFound(cryptointel.MsgEntityNotFound)
				}
				return object{
					{"entity", pick(d, "entity", entitySummaryKeys...)},
					{"limit", c.Int("limit")},
					{"offset", c.Int("offset")},
					{"data", d.Get("entity.relationships").orEmptyList()},
				}, nil
			},
			Response: envelope(p("entity", ref("EntitySummary")), p("limit", integer()), p("offset", integer()),
				p("data", listOf("Relationship"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/entities/{id}/references", Summary: "External references of an entity",
			Policy:    policy(surfaceLookup, access.LayerEvaluation, "entities.references", 1, "", nil),
			Params:    []Param{idPathParam("entity")},
			Operation: "entity_references",
			Envelope: func(_ *Call, d *Data) (any, error) {
				if d.Get("entity").isNull() {
					return nil, notFound(cryptointel.MsgEntityNotFound)
				}
				return object{
					{"entity", pick(d, "entity", entitySummaryKeys...)},
					{"data", d.Get("entity.references").orEmptyList()},
				}, nil
			},
			Response:      envelope(p("entity", ref("EntitySummary")), p("data", listOf("Reference"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		contentRoute("research"),
		contentRoute("media"),

		{
			Method: http.MethodGet, Path: cryptointel.CategoriesPath, Summary: "The event categories in use, with their subcategories",
			Description: "Every eventCategory in use, sorted, with the non-empty eventSubcategory values of its events, sorted. " +
				"A `category` filter naming none of them is a 400 that lists them. Announced by the contract as coming soon; designed here.",
			Policy:    policy(surfaceLookup, access.LayerEvaluation, "categories.all", 1, "", nil),
			Operation: "categories",
			Envelope:  dataList("categories"),
			Response:  envelope(p("data", listOf("Category"))),
		},

		// 4.3 Organizations (compatibility).
		{
			Method: http.MethodGet, Path: "/v1/organizations/byOrganizationId", Summary: "One organization by id, optionally with its latest events",
			Policy: policy(surfaceLookup, access.LayerEvaluation, "organizations.byOrganizationId", 1, "", nil),
			Params: []Param{
				idQueryParam("organization"),
				{Name: "include", In: "query", Type: TypeStringList, Enum: []string{"radar", "signal"},
					Description: "Comma-separated: radar, signal. Adds `radar` and/or `signal` lists of {id, title, signal}."},
				boundedParam("includeLimit", "includeLimit", cryptointel.OrganizationEventsFirst, fmt.Sprintf("Events per included type, %d to %d, default %d.",
					cryptointel.OrganizationEventsFirst.Min, cryptointel.OrganizationEventsFirst.Max, cryptointel.OrganizationEventsFirst.Default)),
			},
			Operation: "organization",
			Prepare: func(c *Call) error {
				include, _ := c.Values["include"].([]string)
				c.Vars["radar"] = slices.Contains(include, "radar")
				c.Vars["signal"] = slices.Contains(include, "signal")
				return nil
			},
			Envelope: func(c *Call, d *Data) (any, error) {
				if d.Get("organization").isNull() {
					return nil, notFound(cryptointel.MsgOrganizationNotFound)
				}
				o := object{{"data", pick(d, "organization", "id", "label", "aliases")}}
				if c.Vars["radar"] == true {
					o = append(o, field{"radar", d.Get("organization.radar").orEmptyList()})
				}
				if c.Vars["signal"] == true {
					o = append(o, field{"signal", d.Get("organization.signal").orEmptyList()})
				}
				return o, nil
			},
			Response: envelope(p("data", ref("Organization")),
				optional("radar", listOf("OrganizationEvent")),
				optional("signal", listOf("OrganizationEvent"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/organizations/byOrganizationName", Summary: "Organizations matching a name",
			Description: "Case-insensitive partial matching, strongest first. `name` wins over `organizationName` when both are given.",
			Policy:      policy(surfaceLookup, access.LayerEvaluation, "organizations.byOrganizationName", 1, "", nil),
			Params: []Param{
				{Name: "name", Aliases: []string{"organizationName"}, In: "query", Type: TypeString, Required: true, Var: "name",
					Description: "The name to match. `organizationName` is an alias."},
				limitParam(cryptointel.OrganizationsByNameFirst),
			},
			Operation: "organizations_by_name",
			Envelope:  dataList("organizationsByName"),
			Response:  envelope(p("data", listOf("OrganizationMatch"))),
		},
		{
			Method: http.MethodGet, Path: "/v1/organizations/all", Summary: "The organization directory",
			Policy:    policy(surfaceLookup, access.LayerPremium, "organizations.all", 5, access.FeaturePremiumFeeds, nil),
			Params:    []Param{limitParam(cryptointel.OrganizationsFirst), offsetParam(cryptointel.OrganizationsOffset)},
			Operation: "organizations",
			Envelope: func(c *Call, d *Data) (any, error) {
				return object{{"limit", c.Int("limit")}, {"offset", c.Int("offset")},
					{"data", d.Get("organizations").orEmptyList()}}, nil
			},
			Response: envelope(p("limit", integer()), p("offset", integer()), p("data", listOf("DirectoryEntry"))),
		},
		{
			Method: http.MethodGet, Path: "/v1/organizations/{id}/signal-history", Summary: "Daily signal and radar counts, newest first",
			Policy: policy(surfaceTimeline, access.LayerEvaluation, "organizations.signalHistory", 1, "", nil),
			Params: []Param{
				idPathParam("organization"),
				boundedParam("days", "days", cryptointel.SignalHistoryDays, fmt.Sprintf("Days of history, %d to %d, default %d.",
					cryptointel.SignalHistoryDays.Min, cryptointel.SignalHistoryDays.Max, cryptointel.SignalHistoryDays.Default)),
			},
			Operation: "signal_history",
			Envelope: func(_ *Call, d *Data) (any, error) {
				if d.Get("organization").isNull() {
					return nil, notFound(cryptointel.MsgOrganizationNotFound)
				}
				return object{{"data", object{
					{"organizationId", d.Get("organization.id")},
					{"label", d.Get("organization.label")},
					{"history", d.Get("organization.signalHistory").orEmptyList()},
				}}}, nil
			},
			Response:      envelope(p("data", ref("SignalHistory"))),
			ErrorStatuses: []int{http.StatusNotFound},
		},

		// 4.4 Briefs.
		{
			Method: http.MethodGet, Path: "/v1/brief", Summary: "A combined brief for one organization",
			Policy: policy(surfaceBrief, access.LayerOperational, "brief", 2, access.FeatureBriefs, nil),
			Params: []Param{
				idQueryParam("organization"),
				requiredSince("Start of the brief. Required.", 0, ""),
				limitParam(cryptointel.BriefFirst),
				compactParam(),
			},
			Operation: "brief",
			Prepare: func(c *Call) error {
				if c.Bool("compact") {
					c.Operation = "brief_compact"
				}
				return nil
			},
			Envelope:      briefEnvelope,
			Response:      envelope(p("data", anyOf(ref("Brief"), ref("BriefCompact")))),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/brief/batch", Summary: fmt.Sprintf("Briefs for up to %d organizations", cryptointel.MaxIDsPerRequest),
			Description: "Unknown ids yield an inline entry (label null, error set, empty lists, zero counts) rather than a 404. Tokens of `ids` that are not positive integers are ignored; duplicates collapse.",
			Policy:      policy(surfaceBrief, access.LayerOperational, "brief.batch", 5, access.FeatureBatchBriefs, nil),
			Params: []Param{
				{Name: "ids", In: "query", Type: TypeIntegerList, Required: true, MaxItems: cryptointel.MaxIDsPerRequest, Var: "ids", Parse: parseBatchIDs,
					Description: fmt.Sprintf("Comma-separated organization ids, at most %d.", cryptointel.MaxIDsPerRequest)},
				requiredSince("Start of the briefs. Required.", 0, ""),
				limitParam(cryptointel.BriefsFirst),
				compactParam(),
			},
			Operation: "briefs",
			Prepare: func(c *Call) error {
				if c.Bool("compact") {
					c.Operation = "briefs_compact"
				}
				return nil
			},
			Envelope: func(_ *Call, d *Data) (any, error) {
				return object{{"data", object{{"organizations", d.Get("briefs").orEmptyList()}}}}, nil
			},
			Response: envelope(p("data", obj(p("organizations", anyOf(
				listOf("BatchBrief"), listOf("BatchBriefCompact")))))),
		},

		// 4.7 Prediction-market views.
		{
			Method: http.MethodGet, Path: "/v1/pmarket/all", Summary: "Prediction-market views, one per organization",
			Policy:    policy(surfaceLookup, access.LayerEvaluation, "pmarket.all", 1, "", nil),
			Params:    []Param{limitParam(cryptointel.MarketViewsFirst), offsetParam(cryptointel.MarketViewsOffset)},
			Operation: "market_views",
			Envelope: func(c *Call, d *Data) (any, error) {
				return object{{"limit", c.Int("limit")}, {"offset", c.Int("offset")},
					{"data", d.Get("marketViews").orEmptyList()}}, nil
			},
			Response: envelope(p("limit", integer()), p("offset", integer()), p("data", listOf("MarketView"))),
		},
		{
			Method: http.MethodGet, Path: "/v1/pmarket/byOrganizationId", Summary: "The prediction-market view of one organization",
			Description: "An empty list when the organization has no markets.",
			Policy:      policy(surfaceLookup, access.LayerEvaluation, "pmarket.byOrganizationId", 1, "", nil),
			Params:      []Param{idQueryParam("organization")},
			Operation:   "market_views_by_organization",
			Envelope:    dataList("marketViewsByOrganization"),
			Response:    envelope(p("data", listOf("MarketViewByOrganization"))),
		},
	}
}
