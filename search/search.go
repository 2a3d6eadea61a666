// Package search is event search and name resolution: their vocabulary —
// how a match matched (EntityMatch, EventMatch), the result and report of a
// search (SearchResult), its options, and the messages of a query that
// cannot be searched —, the query language (query.go, read.go), the name
// statement (names.go) and the search itself (events.go, probe.go,
// rank.go, memo.go), run on the Querier it is given. It sits below db:
// db's feeds filter by topic (TopicFilter) and its folded name lookup runs
// ResolveSQL, and db runs the searches on its connections with each
// statement counted (db.SearchEvents, db.ResolveEntities).
package search

import (
	"strconv"
	"time"

	"github.com/cryptointel/cryptointel"
)

// Name-resolution match kinds (EntityMatch.MatchedVia), the kinds of rows
// in entity_names.
const (
	MatchedViaCanonicalName = "canonical_name"
	MatchedViaDisplayName   = "display_name"
	MatchedViaAlias         = "alias"
)

// Name-resolution match types (EntityMatch.MatchType), strongest first.
const (
	MatchTypeExact  = "exact"
	MatchTypePrefix = "prefix"
	MatchTypeToken  = "token"
	// MatchTypeSubstring is the name inside a word of a stored name
	// ("swap" in "Uniswap"): the partial matching of the organization
	// lookups.
	MatchTypeSubstring = "substring"
	MatchTypeFuzzy     = "fuzzy"
)

// Event-search channels (EventMatch.MatchedVia).
const (
	// MatchedViaText is a full-text match over title, summary, bullets and
	// evidence.
	MatchedViaText = "text"
	// MatchedViaEntity is an event owned by or involving an entity the query
	// names.
	MatchedViaEntity = "entity"
	// MatchedViaRelatedEntity is an event of an entity related (through a
	// relationship with search_expand) to an entity the query names.
	MatchedViaRelatedEntity = "related_entity"
)

// Event-search match types (EventMatch.MatchType) beside the name-resolution
// ones (exact, prefix, fuzzy).
const (
	// MatchTypeFulltext is a full-text match.
	MatchTypeFulltext = "fulltext"
	// MatchTypeAlias is an entity link through an exact alias match.
	MatchTypeAlias = "alias"
	// MatchTypeExpansion is a relationship-expansion match.
	MatchTypeExpansion = "expansion"
	// MatchTypeSynonym is a full-text match through thesaurus synonyms
	// only (none of the words typed).
	MatchTypeSynonym = "synonym"
)

// Resolution ranks (EntityMatch.MatchRank). Lower is stronger; fuzzy matches
// take RankFuzzyBase and above, by decreasing trigram similarity.
const (
	RankExactCanonical = 0
	RankExactDisplay   = 1
	RankExactAlias     = 2
	RankPrefix         = 3
	RankToken          = 4
	RankSubstring      = 5
	RankFuzzyBase      = 6
)

// Messages of a lookup without a name and a search without a query.
const (
	MsgNameRequired  = "name parameter is required"
	MsgQueryRequired = "query parameter is required (use query or q)"
)

// Messages of a search query that cannot be searched.
var (
	// MsgQueryTooLong is the message of a query longer than
	// cryptointel.SearchQueryMaxRunes.
	MsgQueryTooLong = "query must be at most " + strconv.Itoa(cryptointel.SearchQueryMaxRunes) + " characters"
	// MsgQueryTooManyWords is the message of a query of more than
	// cryptointel.SearchQueryMaxWords words.
	MsgQueryTooManyWords = "query must have at most " + strconv.Itoa(cryptointel.SearchQueryMaxWords) + " words"
	// MsgQueryNoWords is the message of a query of punctuation or
	// operator characters only.
	MsgQueryNoWords = "query has no words to search for (only punctuation or operators)"
	// MsgQueryOnlyStopWords is the message of a query whose words are all
	// too common to search for (the, of, and…) and name no entity.
	MsgQueryOnlyStopWords = "query has no words to search for (only stop words such as the, of, and)"
)

// EntityMatch is an entity found by name with how it matched.
type EntityMatch struct {
	EntityID int64
	// MatchedVia is the kind of name that matched: canonical_name,
	// display_name or alias.
	MatchedVia string // canonical_name, display_name, alias
	// MatchType is exact, prefix, token, substring or fuzzy.
	MatchType string // exact, prefix, token, substring, fuzzy
	// MatchRank is 0 for an exact canonical-name match, 1 exact display
	// name, 2 exact alias, 3 prefix, 4 token (a whole word of the name), 5
	// substring (inside a word), 6 and above fuzzy (6 for trigram
	// similarity >= 0.6, 7 for >= 0.45, 8 below). Lower is stronger.
	MatchRank int // 0 strongest
	// MatchedValue is the name as stored (not normalized) that matched.
	MatchedValue string
	// Popularity is the entity's event count (entities.event_count), the
	// tie-breaker between matches of equal rank.
	Popularity int64
}

// EventMatch is an event found by search with how it matched.
type EventMatch struct {
	EventID int64
	// MatchedVia is text, entity or related_entity.
	MatchedVia string // text, entity, related_entity
	// MatchType is fulltext (text), exact, alias, prefix or fuzzy (entity:
	// how the query named the entity), or expansion (related_entity).
	MatchType string
	// MatchRank orders results; lower is stronger. Events linked to an
	// entity named by the whole query rank in [0, 1), full-text matches of
	// every word (and events of an entity named by part of the query that
	// also hold every word) in [1, 2), other events of an entity named by
	// part of the query in [2, 2.5), related-entity events in [2.5, 3.5),
	// events holding only some of the words in [3.5, 4). When the whole
	// query names an entity exactly, text-only matches rank from 3.5.
	MatchRank float64 // lower is stronger
	// EntityID is the linked entity for entity and related_entity matches,
	// 0 for text matches.
	EntityID int64
	// LatestEvidenceAt is the event's recency, the tie-breaker.
	LatestEvidenceAt time.Time
	// MatchedTerms are the query terms (SearchTerm.Text) the event
	// matched, by text, synonym or entity link, in query order.
	MatchedTerms []string
	// AlsoReportedAs are the other events that tell the same story (same
	// owner, overlapping time, near-duplicate title), collapsed into this
	// hit; empty when none or when collapsing is off.
	AlsoReportedAs []int64
}

// SearchResult is an event search: the matches, strongest first, and how
// the query was read.
type SearchResult struct {
	// Query is the query searched (trimmed).
	Query string
	// Matches are the events found, strongest first.
	Matches []EventMatch
	// Terms are the query's terms that were searched for, in query order
	// (stop words and punctuation dropped).
	Terms []SearchTerm
	// UnmatchedTerms are the texts of the Terms no match matched.
	UnmatchedTerms []string
	// Dropped are the query's words that were not searched, and why
	// (time words, question words, stop words).
	Dropped []SearchDropped
	// Filters are what became a filter or a preference, from the query's
	// words or from the request's parameters.
	Filters []SearchFilter
	// Sort is the order of Matches (SearchSortRelevance or
	// SearchSortRecency).
	Sort string
	// More is whether the ranking goes on after this page (a next page
	// may be asked from Offset+len(Matches), after the last match).
	More bool
	// Offset is the rows of the ranking before this page.
	Offset int
	// Facets are the facet counts, when asked.
	Facets *SearchFacets
	// NextCursor is the token of the next page, set by the API layer
	// (nil on the last page).
	NextCursor *string
}

// SearchTerm is a term of a search query: a word, or a thesaurus phrase
// ("went down"), with what it was searched as.
type SearchTerm struct {
	// Text is the term as typed.
	Text string
	// Expansions are the other words it searched for: its listed forms,
	// the other names of an entity it names (full weight) and its
	// thesaurus synonyms (lower weight).
	Expansions []string
	// DocumentFrequency estimates how many events hold the term (its words
	// together), from the corpus statistics ingest keeps; its rarity
	// weighs its matches.
	DocumentFrequency int64
	// Matched is whether any returned event matched it.
	Matched bool
}

// Sort orders of a search (SearchOptions.Sort).
const (
	// SearchSortRelevance orders by score, recency blended in: among
	// equally good matches the newer wins.
	SearchSortRelevance = "relevance"
	// SearchSortRecency orders the best matches newest first: the events
	// that match as much of the query as the best match does.
	SearchSortRecency = "recency"
)

// SearchSorts are the sort orders a search takes.
var SearchSorts = []string{SearchSortRelevance, SearchSortRecency}

// Surfaces a search may be narrowed to (SearchOptions.Surface).
const (
	SearchSurfaceRadar  = "radar"
	SearchSurfaceSignal = "signal"
)

// SearchOptions narrow and order a search (Query.searchEvents, /v1/search,
// the MCP search tool). The zero value is the plain search: relevance,
// collapsed, every surface, no facets, the data's clock.
type SearchOptions struct {
	// Since is the start of the window (since or from); Until, when set,
	// its end (exclusive). SinceDefault tells that Since is the default
	// window's start, which a window the query's time words name
	// replaces.
	Since, Until time.Time
	SinceDefault bool
	// Limit is the page size; Offset the rows of the ranking before the
	// page (a cursor's depth); AfterID, when set, the last event of the
	// previous page, after which the page starts when it is still ranked.
	Limit, Offset int
	AfterID       int64
	// Sort is SearchSortRelevance (default) or SearchSortRecency.
	Sort string
	// Category keeps the events of this category only.
	Category string
	// EntityIDs keep the events these entities own or take part in.
	EntityIDs []int64
	// Surface keeps signal events only when SearchSurfaceSignal (radar is
	// every event).
	Surface string
	// NoCollapse lists every report of a story instead of one hit per
	// story (EventMatch.AlsoReportedAs).
	NoCollapse bool
	// Facets asks for the facet counts (SearchResult.Facets).
	Facets bool
	// Now is the clock time words are read against ("recently", "next
	// week"); zero: the newest event's time.
	Now time.Time
	// Filters name the options that came from request parameters, as the
	// report lists them (the caller's spelling: "category", "entity"…).
	Filters []SearchFilter
}

// Reasons a query word was not searched (SearchDropped.Reason).
const (
	// DroppedQuestion is a question or filler word (which, who, show…).
	DroppedQuestion = "question"
	// DroppedStopWord is a word too common to search (the, of, and).
	DroppedStopWord = "stop_word"
	// DroppedTime is a time word, read as a filter or a preference.
	DroppedTime = "time"
)

// SearchDropped is a word (or phrase) of the query that was not searched,
// and why.
type SearchDropped struct {
	Text   string
	Reason string
}

// Search filter names (SearchFilter.Name).
const (
	SearchFilterFrom               = "from"
	SearchFilterTo                 = "to"
	SearchFilterRecency            = "recency"
	SearchFilterCategory           = "category"
	SearchFilterCategoryPreference = "category_preference"
	SearchFilterEntity             = "entity"
	SearchFilterSurface            = "surface"
)

// Where a filter came from (SearchFilter.Source).
const (
	SearchSourceQuery     = "query"
	SearchSourceParameter = "parameter"
)

// SearchFilter is what became a filter or a preference: a window bound
// (from, to), a recency preference, a category or its preference, an
// entity, a surface.
type SearchFilter struct {
	// Name is one of the SearchFilter* names.
	Name string
	// Value is the filter's value: an RFC 3339 instant, a category, an
	// entity id, a surface, "prefer newer".
	Value string
	// Source is query (read from the query's words) or parameter.
	Source string
	// Text is the words of the query that made it ("next week"), empty for
	// a parameter.
	Text string
}

// SearchFacets count the matches a search ranked (before paging) by
// category, by entity (owner or participant) and by day.
type SearchFacets struct {
	Categories, Entities, Days []SearchFacet
}

// SearchFacet is one value of a facet and how many matches have it.
type SearchFacet struct {
	// Value is the category, the entity id, or the day (YYYY-MM-DD, UTC).
	Value string
	Count int
}

// Messages of the search options.
var (
	// MsgQueryOnlyTimeWords is the message of a query whose words are
	// all time words (recently, next week) or question words.
	MsgQueryOnlyTimeWords = "query has no words to search for (only time or question words such as recently, last week, which: use from and to for a window alone, or add what to search for)"
	// MsgSearchSort is the message of an unknown sort.
	MsgSearchSort = "sort must be relevance or recency"
	// MsgSearchSurface is the message of an unknown surface.
	MsgSearchSurface = "surface must be radar or signal"
	// MsgSearchRange is the message of a window that ends before it
	// starts.
	MsgSearchRange = "from must be before to (the window is empty)"
	// MsgSearchQueryRange is the message of a query whose time words
	// leave no time in the window given.
	MsgSearchQueryRange = "the query's time words and the window given do not overlap (the window is empty)"
	// MsgSearchEntity is the message (a format of the value) of an entity
	// filter that names no entity.
	MsgSearchEntity = "entity %q names no entity: use an entity id, or a name, alias or ticker"
)
