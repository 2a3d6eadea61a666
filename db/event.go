package db

import (
	"time"
)

// Keyset is a position in a walk ordered by (latest_evidence_at, id): the
// last row a page returned.
type Keyset struct {
	// At is the latest_evidence_at of the last row.
	At time.Time
	// ID is the id of the last row.
	ID int64
}

// readExcluded are the events columns the read paths never need:
// evidence_text (a copy of every post, kept only for the search vector).
var readExcluded = []string{"evidence_text"}

// Event orders.
const (
	// SortSignificance orders by significance (unscored last), then newest.
	SortSignificance = "significance"
	// SortRecency orders newest latest_evidence_at first.
	SortRecency = "recency"
)

// EventFilter selects events across the whole feed for ListEvents.
type EventFilter struct {
	// SignalOnly keeps scored events only.
	SignalOnly bool
	// Since is the start of the window (inclusive).
	Since time.Time
	// Category keeps events of this category; empty means any.
	Category string
	// EntityID keeps events the entity owns or takes part in; 0 means any.
	EntityID int64
	// Topic keeps events matching every term of it, read as a search query
	// is: each term by the word typed, its forms, its thesaurus synonyms or
	// another name of an entity it names (topicTSQuery); empty means any.
	// A topic too long, of too many words or of none is EINVALID.
	Topic string
	// Sort is SortSignificance or SortRecency. Defaults to SortSignificance.
	Sort string
	// Limit and Offset page the result.
	Limit, Offset int
}

// FeedFilter selects a page of a bulk feed for FeedEvents.
type FeedFilter struct {
	// SignalOnly keeps scored events only.
	SignalOnly bool
	// Since is the start of the feed (inclusive).
	Since time.Time
	// Category keeps events of this category; empty means any.
	Category string
	// Limit is the page size.
	Limit int
	// Offset skips rows; only used without After.
	Offset int
	// After continues strictly after this position.
	After *Keyset
}

// EntityEventFilter selects, per entity, the events it owns or takes part
// in for EventsByEntityIDs. Limit and Offset apply to each entity.
type EntityEventFilter struct {
	// SignalOnly keeps scored events only.
	SignalOnly bool
	// Since keeps events at or after it; zero means no lower bound.
	Since time.Time
	// Category keeps events of this category; empty means any.
	Category string
	// ContentTypes keeps classified items of these content types; empty
	// means any event.
	ContentTypes []string
	// Sort is SortRecency (default) or SortSignificance.
	Sort string
	// Limit and Offset page each entity's list.
	Limit, Offset int
	// Before continues strictly before this position (descending keyset
	// walk, recency order only).
	Before *Keyset
}
