package rest

import (
	"net/http"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
)

// feedRoutes are the event feeds of the contract (section 4.1): the latest
// events, top signals, an organization's or a category's events, the
// timeline, the bulk feeds and replay, and the categories in use.
func feedRoutes() []Route {
	latestParams := func() []Param {
		return []Param{
			{Name: "window", In: "query", Type: TypeString, Default: cryptointel.DefaultEventWindow, Enum: cryptointel.EventWindowNames(), Var: "window",
				Description: "Window when `since` is absent: " + orList(cryptointel.EventWindowNames()) + ". Default " + cryptointel.DefaultEventWindow + ". Ignored when `since` is given."},
			sinceParam("Explicit start of the window, within the last "+cryptointel.Days(cryptointel.HistoryLookback)+". Takes precedence over `window`.", cryptointel.HistoryLookback),
			limitParam(&cryptointel.EventsFirst),
			offsetParam(&cryptointel.EventsOffset),
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
	// byCategory is the category of the byCategory feeds.
	byCategory := Param{Name: "category", In: "query", Type: TypeString, Required: true, Var: "category", Description: "Event category."}
	latestDesc := "Events across the feed. `since` takes precedence over `window`. `sort` (significance, recency) wins over `mode` (largest, new) when both are given; the response reports the effective sort and the matching mode."

	bulkFeed := func(path, name, surface, summary string) Route {
		return Route{
			Method: http.MethodGet, Path: path, Summary: summary,
			Description: "Bulk feed, oldest first from `since`, walked with keyset cursors. `since` is required and must be within the last " + cryptointel.Days(cryptointel.FeedLookback) + "; pass `next_cursor` as `cursor` with the same `since` until it is null. `offset` applies to the first page only.",
			Policy:      policy(surfaceFeed, access.LayerPremium, name, 5, access.FeaturePremiumFeeds, nil),
			Params: []Param{
				requiredSince("Events at or after this instant; within the last "+cryptointel.Days(cryptointel.FeedLookback)+". Required.", cryptointel.FeedLookback, msgBulkSinceRequired),
				limitParam(&cryptointel.FeedFirst),
				offsetParam(&cryptointel.FeedOffset),
				cursorParam(),
			},
			Operation: "feed",
			Prepare: func(c *Call) error {
				c.Vars["surface"] = surface
				c.Vars["feed"] = "all"
				withCursor(c)
				return nil
			},
		}
	}

	return []Route{
		{
			Method: http.MethodGet, Path: "/v1/latest", Summary: "Latest radar events",
			Description: latestDesc,
			Policy:      policy(surfaceFeed, access.LayerEvaluation, "latest", 1, "", priceFeed),
			Params:      latestParams(),
			Operation:   "latest",
			Prepare:     latestPrepare("RADAR"),
		},
		{
			Method: http.MethodGet, Path: "/v1/signal/latest", Summary: "Latest signal events",
			Description: latestDesc,
			Policy:      policy(surfaceFeed, access.LayerEvaluation, "signal.latest", 1, "", priceFeed),
			Params:      latestParams(),
			Operation:   "latest",
			Echo:        map[string]any{"surface": cryptointel.SurfaceSignal},
			Prepare:     latestPrepare("SIGNAL"),
		},
		{
			Method: http.MethodGet, Path: "/v1/signal/top", Summary: "Most significant signal events",
			Policy: policy(surfaceFeed, access.LayerEvaluation, "signal.top", 1, "", priceFeed),
			Params: []Param{
				limitParam(&cryptointel.TopSignalsFirst),
				sinceParam("Start of the window; default the last "+hours(cryptointel.TopSignalsLookback)+".", 0),
			},
			Operation: "signal_top",
		},
		{
			Method: http.MethodGet, Path: "/v1/signal/byOrganizationId", Summary: "Signal events of one organization, newest first",
			Policy: policy(surfaceFeed, access.LayerEvaluation, "signal.byOrganizationId", 1, "", priceFeed),
			Params: []Param{
				idQueryParam("organization (entity)"),
				limitParam(&cryptointel.EntityEventsFirst),
				sinceParam(descSince, 0),
			},
			Operation:     "entity_events",
			Prepare:       setSurface("SIGNAL"),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/signal/byCategory", Summary: "Signal events of one category, newest first",
			Policy: policy(surfaceFeed, access.LayerEvaluation, "signal.byCategory", 1, "", priceByCategory),
			Params: []Param{
				byCategory,
				limitParam(&cryptointel.SignalsByCategoryFirst),
				sinceParam(descSince, 0),
			},
			Operation: "events_by_category",
			Prepare:   setSurface("SIGNAL"),
		},
		{
			Method: http.MethodGet, Path: "/v1/radar/byOrganizationId", Summary: "Radar events of one organization, newest first",
			Policy: policy(surfaceFeed, access.LayerEvaluation, "radar.byOrganizationId", 1, "", priceRadarByOrg),
			Params: []Param{
				idQueryParam("organization (entity)"),
				limitParam(&cryptointel.EntityEventsFirst),
				sinceParam(descSince, 0),
				{Name: "category", In: "query", Type: TypeString, Var: "category", Description: descCategory},
			},
			Operation:     "entity_events",
			Prepare:       setSurface("RADAR"),
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/radar/byCategory", Summary: "Radar events of one category, newest first",
			Description: "Designed after /v1/signal/byCategory (the contract names the route without a shape): every radar event of the category.",
			Policy:      policy(surfaceFeed, access.LayerEvaluation, "radar.byCategory", 1, "", nil),
			Params: []Param{
				byCategory,
				limitParam(&cryptointel.RadarByCategoryFirst),
				sinceParam(descSince, 0),
			},
			Operation: "events_by_category",
			Prepare:   setSurface("RADAR"),
		},
		{
			Method: http.MethodGet, Path: "/v1/timeline/byOrganizationId", Summary: "An organization's timeline, newest first",
			Description: "Designed after the entity research route (the contract names the route with `id` and `since` only): the organization's events newest first, walked with keyset cursors.",
			Policy:      policy(surfaceTimeline, access.LayerEvaluation, "timeline.byOrganizationId", 1, "", nil),
			Params: []Param{
				idQueryParam("organization (entity)"),
				sinceParam(descSince, 0),
				limitParam(&cryptointel.TimelineFirst),
				cursorParam(),
			},
			Operation:     "timeline",
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/replay/global", Summary: "Replay of the global feed over the last " + cryptointel.Days(cryptointel.HistoryLookback),
			Description: "Designed after the bulk feeds (the contract names the route without a shape): every event (or every signal with surface=signal) since `since`, oldest first, walked with keyset cursors. `since` is required and must be within the last " + cryptointel.Days(cryptointel.HistoryLookback) + ".",
			Policy:      policy(surfaceReplay, access.LayerPremium, "replay.global", 5, access.FeaturePremiumFeeds, nil),
			Params: []Param{
				requiredSince("Events at or after this instant; within the last "+cryptointel.Days(cryptointel.HistoryLookback)+". Required.", cryptointel.HistoryLookback, msgBulkSinceRequired),
				limitParam(&cryptointel.FeedFirst),
				offsetParam(&cryptointel.FeedOffset),
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
		},
		bulkFeed("/v1/radar/all", "radar.all", "RADAR", "Bulk radar feed"),
		bulkFeed("/v1/signal/all", "signal.all", "SIGNAL", "Bulk signal feed"),
		{
			Method: http.MethodGet, Path: cryptointel.CategoriesPath, Summary: "The event categories in use, with their subcategories",
			Description: "Every eventCategory in use, sorted, with the non-empty eventSubcategory values of its events, sorted. " +
				"A `category` filter naming none of them is a 400 that lists them. Announced by the contract as coming soon; designed here.",
			Policy:    policy(surfaceLookup, access.LayerEvaluation, "categories.all", 1, "", nil),
			Operation: "categories",
		},
	}
}
