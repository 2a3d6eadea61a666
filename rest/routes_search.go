package rest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/search"
)

// searchRoutes are the search routes (contract section 4.1).
func searchRoutes() []Route {
	return []Route{
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
				limitParam(&cryptointel.SearchEventsFirst),
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
		},
	}
}
