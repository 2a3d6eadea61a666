package cryptointel

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bounds are the default, minimum and maximum of an integer argument (a
// page size, an offset, a number of days): an absent value is Default, one
// above Max is silently capped to it and one below Min clamped to it.
type Bounds struct {
	Default, Min, Max int
}

// Clamp returns v, or Default when v is nil, bounded to [Min, Max].
func (b Bounds) Clamp(v *int) int {
	n := b.Default
	if v != nil {
		n = *v
	}
	return b.ClampInt(n)
}

// ClampInt returns n bounded to [Min, Max].
func (b Bounds) ClampInt(n int) int { return min(max(n, b.Min), b.Max) }

// Range is "Min–Max", the way the docs write a range.
func (b Bounds) Range() string { return strconv.Itoa(b.Min) + "–" + strconv.Itoa(b.Max) }

// The bounds of every integer argument of the API: the one place their
// numbers are written. Each is named after the GraphQL field argument it
// bounds; Limits gives its schema coordinate, the /v1 route table names
// the routes that take it. The resolvers clamp with them, the complexity
// estimates multiply by them, the schema's defaults and docs, the route
// table's params, OpenAPI and the pricing of `limit` are rendered from them.
var (
	EventsFirst              = Bounds{Default: 10, Min: 1, Max: 25}
	EventsOffset             = Bounds{Default: 0, Min: 0, Max: 250}
	TopSignalsFirst          = Bounds{Default: 10, Min: 1, Max: 25}
	SignalsByCategoryFirst   = Bounds{Default: 5, Min: 1, Max: 10}
	RadarByCategoryFirst     = Bounds{Default: 10, Min: 1, Max: 25}
	FeedFirst                = Bounds{Default: 25, Min: 1, Max: 25}
	FeedOffset               = Bounds{Default: 0, Min: 0, Max: 250}
	ResolveEntitiesFirst     = Bounds{Default: 50, Min: 1, Max: 50}
	ResolveEntitiesOffset    = Bounds{Default: 0, Min: 0, Max: 500}
	SearchEventsFirst        = Bounds{Default: 10, Min: 1, Max: 20}
	OrganizationsByNameFirst = Bounds{Default: 50, Min: 1, Max: 50}
	OrganizationsFirst       = Bounds{Default: 25, Min: 1, Max: 25}
	OrganizationsOffset      = Bounds{Default: 0, Min: 0, Max: 100}
	BriefFirst               = Bounds{Default: 5, Min: 1, Max: 20}
	BriefsFirst              = Bounds{Default: 5, Min: 1, Max: 10}
	MarketViewsFirst         = Bounds{Default: 25, Min: 1, Max: 50}
	MarketViewsOffset        = Bounds{Default: 0, Min: 0, Max: 500}
	RelationshipsFirst       = Bounds{Default: 50, Min: 1, Max: 50}
	RelationshipsOffset      = Bounds{Default: 0, Min: 0, Max: 250}
	EntityEventsFirst        = Bounds{Default: 10, Min: 1, Max: 25}
	EntityEventsOffset       = Bounds{Default: 0, Min: 0, Max: 250}
	TimelineFirst            = Bounds{Default: 50, Min: 1, Max: 50}
	ContentFirst             = Bounds{Default: 25, Min: 1, Max: 25}
	ContentOffset            = Bounds{Default: 0, Min: 0, Max: 250}
	OrganizationEventsFirst  = Bounds{Default: 5, Min: 1, Max: 20}
	SignalHistoryDays        = Bounds{Default: 30, Min: 1, Max: 90}

	// The REST-only bounds: the candidates /v1/entities/byTopName lists
	// beside its top entity, and the account routes' lists.
	TopNameCandidates      = Bounds{Default: 5, Min: 1, Max: 10}
	WebhookDeliveriesLimit = Bounds{Default: 50, Min: 1, Max: 50}
	ExportJobsLimit        = Bounds{Default: 20, Min: 1, Max: 50}
	ExportJobsOffset       = Bounds{Default: 0, Min: 0, Max: 500}
	KeysLimit              = Bounds{Default: 50, Min: 1, Max: 100}
	KeysOffset             = Bounds{Default: 0, Min: 0, Max: 1000}
	KeyAuditLimit          = Bounds{Default: 50, Min: 1, Max: 200}
	// KeyRotationGraceSeconds bounds the grace of POST
	// /v1/keys/{id}/rotate: 7 days at most (db.MaxRotationGrace).
	KeyRotationGraceSeconds = Bounds{Default: 0, Min: 0, Max: 7 * 24 * 3600}
)

// Bounds of ingested values beyond their types.
const (
	// MaxSignificance bounds an event's significance, which lies in
	// [0, MaxSignificance].
	MaxSignificance = 100
	// MaxPublishedAhead bounds how far after the server's clock an evidence
	// timestamp or a market post's date may lie (clock skew between
	// sources): a post dated in the future would pin its event first in
	// every newest-first feed until then.
	MaxPublishedAhead = time.Hour
)

// MaxIDsPerRequest bounds the ids of one request: Query.entities(ids:),
// Query.briefs(ids:) and /v1/brief/batch. More is refused, not capped.
const MaxIDsPerRequest = 25

// MaxBodyBytes bounds every request body the API reads: a /graphql POST,
// an /mcp message and the JSON body of a /v1 route (webhook management,
// export jobs). /admin/ingest, an operator's bulk load, has its own bound.
const MaxBodyBytes = 1 << 20

// MaxBodyText is MaxBodyBytes as the 413 messages write it ("1 MB");
// MsgBodyTooLarge the 413 message of a /graphql or /mcp body over it (the
// /v1 routes' messages are the contract's, rest/body.go).
var (
	MaxBodyText     = strconv.Itoa(MaxBodyBytes>>20) + " MB"
	MsgBodyTooLarge = "request body too large (max " + MaxBodyText + ")"
)

// Bounds of a search query (Query.searchEvents, /v1/search, the feeds'
// topic): a longer query, or one of more words, is refused with EINVALID,
// so no query costs more than these many words' worth of index probes.
const (
	// SearchQueryMaxRunes is the longest query, in characters.
	SearchQueryMaxRunes = 256
	// SearchQueryMaxWords is the most words a query may have.
	SearchQueryMaxWords = 32
	// SearchMaxDepth is how deep a search's ranking may be paged (the
	// cursor walks up to this many events; each page's candidates are
	// fetched for its depth).
	SearchMaxDepth = 200
)

// MaxAliasHint is how many aliases the compatibility views (Organization,
// OrganizationMatch) show: a public hint set, not an inventory.
const MaxAliasHint = 5

// The refusals of Query.entities(ids:) over MaxIDsPerRequest, of a batch
// without one usable id, and of Query.briefs(ids:) and /v1/brief/batch
// over MaxIDsPerRequest.
var (
	MsgTooManyIDs      = fmt.Sprintf("Maximum %d ids per request", MaxIDsPerRequest)
	MsgNoValidIDs      = "No valid organization IDs provided"
	MsgTooManyBatchIDs = fmt.Sprintf("Maximum %d organization IDs per batch request", MaxIDsPerRequest)
)

// Limits maps the schema coordinate of every bounded argument (for
// example "Query.events.first") to its bounds; the REST-only ones are
// keyed by route and parameter. The schema template and the tests read it.
var Limits = map[string]*Bounds{
	"Query.events.first":                   &EventsFirst,
	"Query.events.offset":                  &EventsOffset,
	"Query.topSignals.first":               &TopSignalsFirst,
	"Query.eventsByCategory.first(SIGNAL)": &SignalsByCategoryFirst,
	"Query.eventsByCategory.first(RADAR)":  &RadarByCategoryFirst,
	"Query.feed.first":                     &FeedFirst,
	"Query.feed.offset":                    &FeedOffset,
	"Query.resolveEntities.first":          &ResolveEntitiesFirst,
	"Query.resolveEntities.offset":         &ResolveEntitiesOffset,
	"Query.searchEvents.first":             &SearchEventsFirst,
	"Query.searchReport.first":             &SearchEventsFirst,
	"Query.organizationsByName.first":      &OrganizationsByNameFirst,
	"Query.organizations.first":            &OrganizationsFirst,
	"Query.organizations.offset":           &OrganizationsOffset,
	"Query.brief.first":                    &BriefFirst,
	"Query.briefs.first":                   &BriefsFirst,
	"Query.marketViews.first":              &MarketViewsFirst,
	"Query.marketViews.offset":             &MarketViewsOffset,
	"Entity.relationships.first":           &RelationshipsFirst,
	"Entity.relationships.offset":          &RelationshipsOffset,
	"Entity.events.first":                  &EntityEventsFirst,
	"Entity.events.offset":                 &EntityEventsOffset,
	"Entity.timeline.first":                &TimelineFirst,
	"Entity.research.first":                &ContentFirst,
	"Entity.research.offset":               &ContentOffset,
	"Entity.media.first":                   &ContentFirst,
	"Entity.media.offset":                  &ContentOffset,
	"Organization.radar.first":             &OrganizationEventsFirst,
	"Organization.signal.first":            &OrganizationEventsFirst,
	"Organization.signalHistory.days":      &SignalHistoryDays,
	"GET /v1/entities/byTopName limit":     &TopNameCandidates,
	"GET /v1/export/jobs limit":            &ExportJobsLimit,
	"GET /v1/export/jobs offset":           &ExportJobsOffset,
}

// LimitOf returns the bounds of a coordinate of Limits; it panics on an
// unknown one, a programming error caught at start or generate time.
func LimitOf(coordinate string) Bounds {
	b, ok := Limits[coordinate]
	if !ok {
		panic("cryptointel: no limit " + strconv.Quote(coordinate) + " in Limits")
	}
	return *b
}

// Day is 24 hours: the unit of the windows below.
const Day = 24 * time.Hour

// How far back `since` may reach, and the default windows. Like the
// bounds above, the resolvers, the /v1 route table (params, descriptions,
// messages) and the schema template read them; nothing else writes them.
const (
	// FeedLookback bounds `since` on the bulk feed: Query.feed(feed:
	// "all"), /v1/radar/all and /v1/signal/all.
	FeedLookback = 7 * Day
	// HistoryLookback bounds `since` everywhere else it is bounded
	// (Query.events, Query.feed(feed: "replay"), Entity.research and
	// Entity.media), and is the default window of Query.eventsByCategory,
	// Query.searchEvents, Entity.research and Entity.media.
	HistoryLookback = 30 * Day
	// TopSignalsLookback is the default window of Query.topSignals
	// (/v1/signal/top).
	TopSignalsLookback = Day
	// SinceGrace forgives the time a GraphQL client's "exactly N days ago"
	// spends in flight.
	SinceGrace = time.Minute
	// StreamResumeLookback is how old a stream cursor may be to resume from
	// (Subscription.events(after:), /v1/stream): as far back as the bulk
	// feed can backfill what a stream missed.
	StreamResumeLookback = FeedLookback
)

// EventWindow is a named window of Query.events and /v1/latest
// (`window`): how far back from now it reaches.
type EventWindow struct {
	Name   string
	Length time.Duration
}

// EventWindows are the named windows, shortest first; the first is the
// default, when neither `since` nor `window` is given.
var (
	EventWindows       = []EventWindow{{Name: "24h", Length: Day}, {Name: "7d", Length: 7 * Day}, {Name: "30d", Length: HistoryLookback}}
	DefaultEventWindow = EventWindows[0].Name
)

// EventWindowNames lists the names of EventWindows in order.
func EventWindowNames() []string {
	names := make([]string, len(EventWindows))
	for i, w := range EventWindows {
		names[i] = w.Name
	}
	return names
}

// EventWindowOf returns the length of the named window, or EINVALID.
func EventWindowOf(name string) (time.Duration, error) {
	for _, w := range EventWindows {
		if w.Name == name {
			return w.Length, nil
		}
	}
	return 0, Errorf(EINVALID, "window must be one of %s", strings.Join(EventWindowNames(), ", "))
}

// Days writes a duration of whole days as "7 days" ("1 day").
func Days(d time.Duration) string {
	n := int(d / Day)
	if n == 1 {
		return "1 day"
	}
	return strconv.Itoa(n) + " days"
}

// SinceTooOld is the EINVALID error of a date-time argument or parameter
// called name that reaches further back than lookback.
func SinceTooOld(name string, lookback time.Duration) *Error {
	return Errorf(EINVALID, "%s must be within the last %s", name, Days(lookback))
}
