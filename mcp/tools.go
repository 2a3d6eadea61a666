package mcp

import (
	"context"
	"strconv"
	"strings"
)

// The tools: composite, agent-oriented reads over the /v1 routes. Each
// call runs the route (or routes) named here in process, through the
// access layer, so it is parsed, bounded, gated, metered, priced, paid and
// cached exactly as the route is. An argument that feeds a route
// parameter takes its type, bounds, default and allowed values from that
// parameter; only the words an agent reads are written here.

// Detail levels of the tools that return events.
const (
	// DetailSummary returns each event in its compact form (the fields the
	// wire table marks Compact): id, title, category, subcategory, summary,
	// timestamp and significance. The default.
	DetailSummary = "summary"
	// DetailFull returns each event whole: bullets, owners, participants
	// and evidence too.
	DetailFull = "full"
)

// toolDef declares one tool.
type toolDef struct {
	// Name is the tool's name.
	Name string
	// Title is its human-readable name.
	Title string
	// Description tells an agent when to use it; the price and the
	// plan it needs are appended from the routes' policies.
	Description string
	// Routes are the routes the tool may call, as "METHOD /path". The
	// arguments' parameters are looked up in them in order.
	Routes []string
	// Args are the tool's arguments, in the order they are documented.
	Args []argDef
	// Detail adds the `detail` argument (summary or full) for tools that
	// return events.
	Detail bool
	// Plan turns the validated arguments into the route calls to make; nil
	// calls Routes[0] with every argument that names a parameter of it.
	Plan func(a args) []routeCall
	// Compose builds the structured result from the calls' lean bodies;
	// nil returns the single call's body. Output is its output schema,
	// built from the routes' success schemas (nil: the routes').
	Compose func(a args, bodies [][]byte) []byte
	Output  func(routes []map[string]any) map[string]any
	// Hint says what to call next for more, given the arguments and the
	// structured result; "" when nothing more exists.
	Hint func(a args, result leanResult) string
	// Read, for a tool that reads outside the route table (Routes
	// empty), makes its one read: the response and the body Compose
	// gets. Pricing then says what it costs.
	Read    func(s *Server, ctx context.Context, info *requestInfo, authorization string, a args, pay *payment) (*routeResponse, []byte)
	Pricing string
	// JSONText makes the text content the structured result's JSON, as
	// ChatGPT's deep research reads its search and fetch tools.
	JSONText bool
}

// argDef declares one argument of a tool.
type argDef struct {
	// Name is the argument's name.
	Name string
	// Param is the route parameter it feeds: the same name by default;
	// "-" for an argument of the tool's own (Schema then describes it).
	Param string
	// Route is the route whose parameter gives the schema, when it is not
	// the first of the tool's routes that has one of that name.
	Route string
	// Description is what an agent reads; the bounds, default and allowed
	// values are appended from the parameter's schema. It states no fact
	// the route parameter owns (a default, a window, a bound).
	Description string
	// WithParam puts the route parameter's own description before
	// Description (then only the agent's addition): the facts it states
	// (a default window, how far back a value may go, which parameter
	// wins, what a filter matches) are then read from their one owner,
	// the route table.
	WithParam bool
	// Schema is the JSON Schema of an argument of the tool's own.
	Schema map[string]any
	// Required marks a required argument of the tool's own; a parameter
	// argument is required when its parameter is.
	Required bool
}

// routeCall is one route call: its route and its parameters' raw values.
type routeCall struct {
	route  string
	params map[string]string
}

// Tool names.
const (
	toolSearch        = "search_events"
	toolResolve       = "resolve_entity"
	toolEntity        = "get_entity"
	toolRelationships = "list_relationships"
	toolTimeline      = "entity_timeline"
	toolLatest        = "latest_events"
	toolTopSignals    = "top_signals"
	toolBrief         = "organization_brief"
	toolSignalHistory = "signal_history"
	toolMarkets       = "prediction_markets"
	toolUsage         = "usage"
)

// Routes the tools call.
const (
	routeSearch        = "GET /v1/search"
	routeByName        = "GET /v1/entities/byName"
	routeByID          = "GET /v1/entities/byId"
	routeRelationships = "GET /v1/entities/{id}/relationships"
	routeTimeline      = "GET /v1/timeline/byOrganizationId"
	routeLatest        = "GET /v1/latest"
	routeSignalLatest  = "GET /v1/signal/latest"
	routeTopSignals    = "GET /v1/signal/top"
	routeBrief         = "GET /v1/brief"
	routeBriefBatch    = "GET /v1/brief/batch"
	routeSignalHistory = "GET /v1/organizations/{id}/signal-history"
	routeMarkets       = "GET /v1/pmarket/byOrganizationId"
	routeUsage         = "GET /v1/usage"
)

// Descriptions shared by several arguments.
const (
	descEntityID = "The entity id (an organization, token, person or protocol), as resolve_entity returns it."
	descOrgID    = "The organization's entity id, as resolve_entity returns it."
	descInstant  = "An ISO 8601 instant, e.g. 2026-11-20T00:00:00Z."
	descLimit    = "How many events to return."
	descCategory = "Only events of this category, e.g. partnership, funding, listing, security, regulation, technology, analysis."
)

// toolDefs is the tool table.
var toolDefs = []toolDef{
	{
		Name: toolSearch, Title: "Search events",
		Description: "Search radar and signal events (dated intelligence items about crypto organizations, tokens, people and protocols: " +
			"partnerships, funding, listings, launches, analyses) by words, names or tickers. Ranked by relevance, with linked entities " +
			"and related entities expanded; each result says how it matched (matchedVia, matchType). Use it for \"what happened with X\" " +
			"or \"news about Y\" questions; use latest_events for what is new across the feed.",
		Routes: []string{routeSearch},
		Args: []argDef{
			{Name: "query", Description: "What to search for: words, an entity name or a ticker, e.g. \"ETH staking\" or \"Uniswap\". " +
				"Time words (recently, today, next week, since March, in 2025) are read as a window or a preference, question words are dropped; " +
				"the result's report says how the query was read."},
			{Name: "limit", Description: descLimit},
			{Name: "since", Description: descInstant, WithParam: true},
			{Name: "from", Description: descInstant, WithParam: true},
			{Name: "to", Description: descInstant, WithParam: true},
			{Name: "sort", WithParam: true},
			{Name: "category", Description: descCategory},
			{Name: "entity", Description: "Ids come from resolve_entity.", WithParam: true},
			{Name: "surface", WithParam: true},
			{Name: "collapse", Description: "false lists every report of a story.", WithParam: true},
			{Name: "facets", WithParam: true},
			{Name: "cursor", Description: "next_cursor of a previous call with the same query and filters, for the next page."},
		},
		Detail: true,
		Hint:   func(a args, result leanResult) string { return moreByCursor(result) },
	},
	{
		Name: toolResolve, Title: "Resolve an entity",
		Description: "Find entities (organizations, tokens, people, protocols) by name, alias or ticker, case- and accent-insensitive, " +
			"strongest match first, with how each matched. Use it to turn a name the user gave into the entity id the other tools take.",
		Routes: []string{routeByName},
		Args: []argDef{
			{Name: "name", Description: "The name, alias or ticker to resolve, e.g. \"Ethereum\" or \"ETH\"."},
			{Name: "limit", Description: "How many matches to return."},
			{Name: "offset", Description: "Matches to skip, to page through a long list."},
		},
		Hint: func(a args, result leanResult) string { return moreByOffset(a, result) },
	},
	{
		Name: toolEntity, Title: "Get an entity",
		Description: "One entity by id: its names, type, status, aliases and external references, with its direct relationships " +
			"(outbound and inbound; direction is relative to this entity). Calls the entity route and the relationships route: " +
			"it costs what the two cost together.",
		Routes: []string{routeByID, routeRelationships},
		Args: []argDef{
			{Name: "id", Description: descEntityID},
			{Name: "relationships_limit", Param: "limit", Route: routeRelationships, Description: "How many relationships to include."},
		},
		Plan: func(a args) []routeCall {
			return []routeCall{
				{route: routeByID, params: map[string]string{"id": a.raw("id")}},
				{route: routeRelationships, params: map[string]string{"id": a.raw("id"), "limit": a.raw("relationships_limit")}},
			}
		},
		Compose: func(a args, bodies [][]byte) []byte {
			return composeObject(
				member{"entity", fieldOf(bodies[0], "data")},
				member{"relationships", fieldOf(bodies[1], "data")},
			)
		},
		Output: func(routes []map[string]any) map[string]any {
			return objectSchema(
				member{"entity", propertyOf(routes[0], "data")},
				member{"relationships", propertyOf(routes[1], "data")},
			)
		},
		Hint: func(a args, result leanResult) string {
			if result.count("relationships") == a.int("relationships_limit") {
				return "More relationships may exist: call list_relationships with id=" + a.raw("id") + " and offset=" + a.raw("relationships_limit") + "."
			}
			return ""
		},
	},
	{
		Name: toolRelationships, Title: "List relationships",
		Description: "An entity's direct relationships, outbound and inbound (direction is relative to this entity), each with the related " +
			"entity's names and type. Use it to page through relationships get_entity summarized.",
		Routes: []string{routeRelationships},
		Args: []argDef{
			{Name: "id", Description: descEntityID},
			{Name: "relationshipType", Description: "Only relationships of this type, matched exactly, for example FOUNDATION_OF."},
			{Name: "direction", Description: "outbound: from this entity; inbound: to it."},
			{Name: "limit", Description: "How many relationships to return."},
			{Name: "offset", Description: "Relationships to skip, to page through."},
		},
		Hint: func(a args, result leanResult) string { return moreByOffset(a, result) },
	},
	{
		Name: toolTimeline, Title: "An entity's timeline",
		Description: "An organization's events, newest first: its timeline. Walk older events with the returned next_cursor.",
		Routes:      []string{routeTimeline},
		Args: []argDef{
			{Name: "id", Description: descOrgID},
			{Name: "since", Description: descInstant, WithParam: true},
			{Name: "limit", Description: descLimit},
			{Name: "cursor", Description: "next_cursor of a previous call, to continue the walk (with the same since)."},
		},
		Detail: true,
		Hint:   func(a args, result leanResult) string { return moreByCursor(result) },
	},
	{
		Name: toolLatest, Title: "Latest events",
		Description: "The latest radar events (everything tracked) or signal events (scored as significant), across the feed or filtered " +
			"by category, entity or topic, most significant or most recent first.",
		Routes: []string{routeLatest, routeSignalLatest},
		Args: []argDef{
			{Name: "surface", Param: "-", Description: "radar: every event; signal: only events scored as significant.",
				Schema: map[string]any{"type": "string", "enum": []any{"radar", "signal"}, "default": "radar"}},
			{Name: "window", Description: "How far back to look when since is not given."},
			{Name: "since", Description: descInstant, WithParam: true},
			{Name: "limit", Description: descLimit},
			{Name: "offset", Description: "Events to skip, to page through."},
			{Name: "category", Description: descCategory},
			{Name: "entityId", Description: "Only events of this entity (its id, from resolve_entity)."},
			{Name: "topic", Description: "Only events about this topic, in words."},
			{Name: "sort", Description: "significance: strongest first; recency: newest first."},
		},
		Detail: true,
		Plan: func(a args) []routeCall {
			route := routeLatest
			if a.raw("surface") == "signal" {
				route = routeSignalLatest
			}
			return []routeCall{{route: route, params: a.params("window", "since", "limit", "offset", "category", "entityId", "topic", "sort")}}
		},
		Hint: func(a args, result leanResult) string { return moreByOffset(a, result) },
	},
	{
		Name: toolTopSignals, Title: "Top signals",
		Description: "The most significant signal events of a window (by default the last 24 hours), strongest first.",
		Routes:      []string{routeTopSignals},
		Args: []argDef{
			{Name: "limit", Description: descLimit},
			{Name: "since", Description: descInstant, WithParam: true},
		},
		Detail: true,
		Hint: func(a args, result leanResult) string {
			return moreByLimit(a, result, "data", "")
		},
	},
	{
		Name: toolBrief, Title: "Organization brief",
		Description: "A brief of one or several organizations since an instant: their latest radar and signal events and the counts of " +
			"each. One id calls the brief route, several the batch brief route (plans that include batch briefs; unknown ids " +
			"then get an entry with an error instead of failing the call).",
		Routes: []string{routeBrief, routeBriefBatch},
		Args: []argDef{
			{Name: "ids", Route: routeBriefBatch, Description: "The organizations' entity ids, from resolve_entity."},
			{Name: "since", Description: descInstant, WithParam: true},
			{Name: "limit", Route: routeBriefBatch, Description: "How many radar and how many signal events per organization."},
		},
		Detail: true,
		Plan: func(a args) []routeCall {
			compact := strconv.FormatBool(a.detail() == DetailSummary)
			ids := a.ints("ids")
			if len(ids) == 1 {
				return []routeCall{{route: routeBrief, params: map[string]string{
					"id": strconv.Itoa(ids[0]), "since": a.raw("since"), "limit": a.raw("limit"), "compact": compact}}}
			}
			p := a.params("ids", "since", "limit")
			p["compact"] = compact
			return []routeCall{{route: routeBriefBatch, params: p}}
		},
	},
	{
		Name: toolSignalHistory, Title: "Signal history",
		Description: "An organization's daily counts of signal and radar events, newest day first: how much attention it drew, and when.",
		Routes:      []string{routeSignalHistory},
		Args: []argDef{
			{Name: "id", Description: descOrgID},
			{Name: "days", Description: "How many days of history."},
		},
	},
	{
		Name: toolMarkets, Title: "Prediction markets",
		Description: "The prediction markets about an organization (question, outcomes, probability, volume, close) and the events " +
			"they relate to. An empty list when it has none.",
		Routes: []string{routeMarkets},
		Args: []argDef{
			{Name: "id", Description: descOrgID},
		},
	},
	{
		Name: toolUsage, Title: "Usage and budget",
		Description: "The calling key's request counts (today, this week, this month) and its monthly credit budget (limit, used, " +
			"remaining). Free; needs an API key.",
		Routes: []string{routeUsage},
	},
	researchSearchDef,
	researchFetchDef,
}

// moreByOffset is the hint of an offset-paged list: a full page may have
// more after it.
func moreByOffset(a args, result leanResult) string {
	n, limit := result.count("data"), a.int("limit")
	if n == 0 || n < limit {
		return ""
	}
	return "More may exist: call again with offset=" + strconv.Itoa(a.int("offset")+n) + "."
}

// moreByLimit is the hint of a list without paging: a full page below the
// maximum limit may have more.
func moreByLimit(a args, result leanResult, list, also string) string {
	n, limit := result.count(list), a.int("limit")
	max, ok := a.max("limit")
	if n == 0 || n < limit || !ok || limit >= max {
		return ""
	}
	hint := "More may exist: call again with a larger limit (up to " + strconv.Itoa(max) + ")"
	if also != "" {
		hint += " " + also
	}
	return hint + "."
}

// moreByCursor is the hint of a cursor-walked list.
func moreByCursor(result leanResult) string {
	c := result.field("next_cursor")
	if len(c) == 0 || string(c) == "null" {
		return ""
	}
	return "More exists: call again with cursor=" + string(c) + " (and the same since)."
}

// joinInts writes ids comma-separated, as a list parameter takes them.
func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}
