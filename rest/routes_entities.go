package rest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
)

// entityRoutes are the entity and organization lookups of the contract
// (sections 4.2, 4.3) and the prediction-market views of organizations
// (section 4.7).
func entityRoutes() []Route {
	contentRoute := func(kind string) Route {
		return Route{
			Method: http.MethodGet, Path: "/v1/entities/{id}/" + kind,
			Summary:     "The entity's recent " + kind + " items",
			Description: "Entity-linked " + kind + " items, newest first, walked with keyset cursors. `since` defaults to and must be within the last " + cryptointel.Days(cryptointel.HistoryLookback) + "; `offset` applies to the first page only.",
			Policy:      policy(surfaceTimeline, access.LayerEvaluation, "entities."+kind, 1, "", nil),
			Params: []Param{
				idPathParam("entity"),
				sinceParam("Start of the window; default and limit the last "+cryptointel.Days(cryptointel.HistoryLookback)+".", cryptointel.HistoryLookback),
				limitParam(&cryptointel.ContentFirst),
				offsetParam(&cryptointel.ContentOffset),
				cursorParam(),
			},
			Operation:     "entity_" + kind,
			Prepare:       func(c *Call) error { withCursor(c); return nil },
			ErrorStatuses: []int{http.StatusNotFound},
		}
	}

	return []Route{
		{
			Method: http.MethodGet, Path: "/v1/entities/byName", Summary: "Resolve a name to entities",
			Description: "Case- and accent-insensitive over canonical names, display names and aliases, strongest match first. `name` wins over `entityName` when both are given.",
			Policy:      policy(surfaceLookup, access.LayerEvaluation, "entities.byName", 1, "", nil),
			Params: []Param{
				{Name: "name", Aliases: []string{"entityName"}, In: "query", Type: TypeString, Required: true, Var: "name",
					Description: "The name to resolve. `entityName` is an alias."},
				limitParam(&cryptointel.ResolveEntitiesFirst),
				offsetParam(&cryptointel.ResolveEntitiesOffset),
			},
			Operation: "entities_by_name",
		},
		{
			Method: http.MethodGet, Path: "/v1/entities/byTopName", Summary: "The top entity for a name, with other candidates",
			Policy: policy(surfaceLookup, access.LayerEvaluation, "entities.byTopName", 1, "", priceEntityByTop),
			Params: []Param{
				{Name: "name", Aliases: []string{"entityName"}, In: "query", Type: TypeString, Required: true, Var: "name",
					Description: "The name to resolve (min length 1). `entityName` is an alias."},
				boundedParam("limit", "", &cryptointel.TopNameCandidates, fmt.Sprintf("Number of candidates beside the top match, %d to %d, default %d.",
					cryptointel.TopNameCandidates.Min, cryptointel.TopNameCandidates.Max, cryptointel.TopNameCandidates.Default)),
			},
			Operation: "entities_by_top_name",
			Prepare: func(c *Call) error {
				c.Vars["first"] = c.Int("limit") + 1
				c.Vars["offset"] = 0
				return nil
			},
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/entities/byId", Summary: "One entity by id",
			Policy:        policy(surfaceLookup, access.LayerEvaluation, "entities.byId", 1, "", nil),
			Params:        []Param{idQueryParam("entity")},
			Operation:     "entity",
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/entities/{id}/relationships", Summary: "Direct relationships of an entity",
			Description: "Direct relationships only, outbound and inbound (outbound first, then by type and related entity id); `direction` is relative to the requested entity. " +
				"`relationshipType` and `direction` keep one type and one end.",
			Policy: policy(surfaceLookup, access.LayerEvaluation, "entities.relationships", 1, "", nil),
			Params: []Param{idPathParam("entity"), limitParam(&cryptointel.RelationshipsFirst), offsetParam(&cryptointel.RelationshipsOffset),
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
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/entities/{id}/references", Summary: "External references of an entity",
			Policy:        policy(surfaceLookup, access.LayerEvaluation, "entities.references", 1, "", nil),
			Params:        []Param{idPathParam("entity")},
			Operation:     "entity_references",
			ErrorStatuses: []int{http.StatusNotFound},
		},
		contentRoute("research"),
		contentRoute("media"),

		// 4.3 Organizations (compatibility).
		{
			Method: http.MethodGet, Path: "/v1/organizations/byOrganizationId", Summary: "One organization by id, optionally with its latest events",
			Policy: policy(surfaceLookup, access.LayerEvaluation, "organizations.byOrganizationId", 1, "", nil),
			Params: []Param{
				idQueryParam("organization"),
				{Name: "include", In: "query", Type: TypeStringList, Enum: []string{"radar", "signal"},
					Description: "Comma-separated: radar, signal. Adds `radar` and/or `signal` lists of {id, title, signal}."},
				boundedParam("includeLimit", "includeLimit", &cryptointel.OrganizationEventsFirst, fmt.Sprintf("Events per included type, %d to %d, default %d.",
					cryptointel.OrganizationEventsFirst.Min, cryptointel.OrganizationEventsFirst.Max, cryptointel.OrganizationEventsFirst.Default)),
			},
			Operation: "organization",
			Prepare: func(c *Call) error {
				include, _ := c.Values["include"].([]string)
				c.Vars["radar"] = slices.Contains(include, "radar")
				c.Vars["signal"] = slices.Contains(include, "signal")
				return nil
			},
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/organizations/byOrganizationName", Summary: "Organizations matching a name",
			Description: "Case-insensitive partial matching, strongest first. `name` wins over `organizationName` when both are given.",
			Policy:      policy(surfaceLookup, access.LayerEvaluation, "organizations.byOrganizationName", 1, "", nil),
			Params: []Param{
				{Name: "name", Aliases: []string{"organizationName"}, In: "query", Type: TypeString, Required: true, Var: "name",
					Description: "The name to match. `organizationName` is an alias."},
				limitParam(&cryptointel.OrganizationsByNameFirst),
			},
			Operation: "organizations_by_name",
		},
		{
			Method: http.MethodGet, Path: "/v1/organizations/all", Summary: "The organization directory",
			Policy:    policy(surfaceLookup, access.LayerPremium, "organizations.all", 5, access.FeaturePremiumFeeds, nil),
			Params:    []Param{limitParam(&cryptointel.OrganizationsFirst), offsetParam(&cryptointel.OrganizationsOffset)},
			Operation: "organizations",
		},
		{
			Method: http.MethodGet, Path: "/v1/organizations/{id}/signal-history", Summary: "Daily signal and radar counts, newest first",
			Policy: policy(surfaceTimeline, access.LayerEvaluation, "organizations.signalHistory", 1, "", nil),
			Params: []Param{
				idPathParam("organization"),
				boundedParam("days", "days", &cryptointel.SignalHistoryDays, fmt.Sprintf("Days of history, %d to %d, default %d.",
					cryptointel.SignalHistoryDays.Min, cryptointel.SignalHistoryDays.Max, cryptointel.SignalHistoryDays.Default)),
			},
			Operation:     "signal_history",
			ErrorStatuses: []int{http.StatusNotFound},
		},

		// 4.7 Prediction-market views.
		{
			Method: http.MethodGet, Path: "/v1/pmarket/all", Summary: "Prediction-market views, one per organization",
			Policy:    policy(surfaceLookup, access.LayerEvaluation, "pmarket.all", 1, "", nil),
			Params:    []Param{limitParam(&cryptointel.MarketViewsFirst), offsetParam(&cryptointel.MarketViewsOffset)},
			Operation: "market_views",
		},
		{
			Method: http.MethodGet, Path: "/v1/pmarket/byOrganizationId", Summary: "The prediction-market view of one organization",
			Description: "An empty list when the organization has no markets.",
			Policy:      policy(surfaceLookup, access.LayerEvaluation, "pmarket.byOrganizationId", 1, "", nil),
			Params:      []Param{idQueryParam("organization")},
			Operation:   "market_views_by_organization",
		},
	}
}
