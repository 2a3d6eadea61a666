package cryptointel

import (
	"strconv"
	"time"
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
	// SearchQueryMaxRunes.
	MsgQueryTooLong = "query must be at most " + strconv.Itoa(SearchQueryMaxRunes) + " characters"
	// MsgQueryTooManyWords is the message of a query of more than
	// SearchQueryMaxWords words.
	MsgQueryTooManyWords = "query must have at most " + strconv.Itoa(SearchQueryMaxWords) + " words"
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
