package cryptointel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds are the default, minimum and maximum of an integer argument (a
// page size, an offset, a number of days). The contract's rule: an absent
// value is Default, a value above Max is silently capped to it and one
// below Min is clamped to it.
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
// bounds (its schema coordinate is in Limits). The resolvers clamp with
// them, the complexity estimates multiply by them, the GraphQL schema's
// defaults and docs are rendered from them (schema.graphqls.tmpl), the
// /v1 route table's params (and so OpenAPI and the pricing of `limit`)
// take them, and the account routes' lists use them.
var (
	// EventsFirst and EventsOffset page Query.events (/v1/latest,
	// /v1/signal/latest).
	EventsFirst  = Bounds{Default: 10, Min: 1, Max: 25}
	EventsOffset = Bounds{Default: 0, Min: 0, Max: 250}
	// TopSignalsFirst pages Query.topSignals (/v1/signal/top).
	TopSignalsFirst = Bounds{Default: 10, Min: 1, Max: 25}
	// SignalsByCategoryFirst and RadarByCategoryFirst page
	// Query.eventsByCategory for the signal and the radar surface
	// (/v1/signal/byCategory, /v1/radar/byCategory).
	SignalsByCategoryFirst = Bounds{Default: 5, Min: 1, Max: 10}
	RadarByCategoryFirst   = Bounds{Default: 10, Min: 1, Max: 25}
	// FeedFirst and FeedOffset page Query.feed (/v1/radar/all,
	// /v1/signal/all, /v1/replay/global).
	FeedFirst  = Bounds{Default: 25, Min: 1, Max: 25}
	FeedOffset = Bounds{Default: 0, Min: 0, Max: 250}
	// ResolveEntitiesFirst and ResolveEntitiesOffset page
	// Query.resolveEntities (/v1/entities/byName).
	ResolveEntitiesFirst  = Bounds{Default: 50, Min: 1, Max: 50}
	ResolveEntitiesOffset = Bounds{Default: 0, Min: 0, Max: 500}
	// TopNameCandidates bounds the candidates /v1/entities/byTopName lists
	// beside its top entity (a REST-only narrowing of
	// ResolveEntitiesFirst).
	TopNameCandidates = Bounds{Default: 5, Min: 1, Max: 10}
	// SearchEventsFirst pages Query.searchEvents (/v1/search).
	SearchEventsFirst = Bounds{Default: 10, Min: 1, Max: 20}
	// OrganizationsByNameFirst pages Query.organizationsByName
	// (/v1/organizations/byOrganizationName).
	OrganizationsByNameFirst = Bounds{Default: 50, Min: 1, Max: 50}
	// OrganizationsFirst and OrganizationsOffset page Query.organizations
	// (/v1/organizations/all).
	OrganizationsFirst  = Bounds{Default: 25, Min: 1, Max: 25}
	OrganizationsOffset = Bounds{Default: 0, Min: 0, Max: 100}
	// BriefFirst bounds each list of Query.brief (/v1/brief).
	BriefFirst = Bounds{Default: 5, Min: 1, Max: 20}
	// BriefsFirst bounds each list of each brief of Query.briefs
	// (/v1/brief/batch).
	BriefsFirst = Bounds{Default: 5, Min: 1, Max: 10}
	// MarketViewsFirst and MarketViewsOffset page Query.marketViews
	// (/v1/pmarket/all).
	MarketViewsFirst  = Bounds{Default: 25, Min: 1, Max: 50}
	MarketViewsOffset = Bounds{Default: 0, Min: 0, Max: 500}
	// RelationshipsFirst and RelationshipsOffset page Entity.relationships
	// (/v1/entities/{id}/relationships).
	RelationshipsFirst  = Bounds{Default: 50, Min: 1, Max: 50}
	RelationshipsOffset = Bounds{Default: 0, Min: 0, Max: 250}
	// EntityEventsFirst and EntityEventsOffset page Entity.events
	// (/v1/radar/byOrganizationId, /v1/signal/byOrganizationId).
	EntityEventsFirst  = Bounds{Default: 10, Min: 1, Max: 25}
	EntityEventsOffset = Bounds{Default: 0, Min: 0, Max: 250}
	// TimelineFirst pages Entity.timeline (/v1/timeline/byOrganizationId).
	TimelineFirst = Bounds{Default: 50, Min: 1, Max: 50}
	// ContentFirst and ContentOffset page Entity.research and Entity.media
	// (/v1/entities/{id}/research, /v1/entities/{id}/media).
	ContentFirst  = Bounds{Default: 25, Min: 1, Max: 25}
	ContentOffset = Bounds{Default: 0, Min: 0, Max: 250}
	// OrganizationEventsFirst bounds Organization.radar and
	// Organization.signal (includeLimit of
	// /v1/organizations/byOrganizationId).
	OrganizationEventsFirst = Bounds{Default: 5, Min: 1, Max: 20}
	// SignalHistoryDays bounds Organization.signalHistory(days)
	// (/v1/organizations/{id}/signal-history).
	SignalHistoryDays = Bounds{Default: 30, Min: 1, Max: 90}
	// WebhookDeliveriesLimit bounds the deliveries GET /v1/webhooks/{id}
	// lists.
	WebhookDeliveriesLimit = Bounds{Default: 50, Min: 1, Max: 50}
	// ExportJobsLimit and ExportJobsOffset page GET /v1/export/jobs.
	ExportJobsLimit  = Bounds{Default: 20, Min: 1, Max: 50}
	ExportJobsOffset = Bounds{Default: 0, Min: 0, Max: 500}
	// KeysLimit and KeysOffset page GET /v1/keys.
	KeysLimit  = Bounds{Default: 50, Min: 1, Max: 100}
	KeysOffset = Bounds{Default: 0, Min: 0, Max: 1000}
	// KeyAuditLimit bounds the entries GET /v1/keys/audit returns.
	KeyAuditLimit = Bounds{Default: 50, Min: 1, Max: 200}
	// KeyRotationGraceSeconds bounds the grace of POST
	// /v1/keys/{id}/rotate: how long the old key keeps working (7 days at
	// most, db.MaxRotationGrace).
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

// MaxBodyText is MaxBodyBytes as the 413 messages write it: "1 MB".
var MaxBodyText = strconv.Itoa(MaxBodyBytes>>20) + " MB"

// MsgBodyTooLarge is the 413 message of a /graphql or /mcp body over
// MaxBodyBytes (the /v1 routes' messages are the contract's, rest/body.go).
var MsgBodyTooLarge = "request body too large (max " + MaxBodyText + ")"

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

// Messages of a request over MaxIDsPerRequest.
var (
	// MsgTooManyIDs refuses Query.entities(ids:).
	MsgTooManyIDs = fmt.Sprintf("Maximum %d ids per request", MaxIDsPerRequest)
	// MsgNoValidIDs refuses a batch without one usable id.
	MsgNoValidIDs = "No valid organization IDs provided"
	// MsgTooManyBatchIDs refuses Query.briefs(ids:) and /v1/brief/batch.
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
// unknown one, which is a programming error caught at start or generate
// time.
func LimitOf(coordinate string) Bounds {
	b, ok := Limits[coordinate]
	if !ok {
		keys := make([]string, 0, len(Limits))
		for k := range Limits {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		panic(fmt.Sprintf("cryptointel: no limit %q (known: %v)", coordinate, keys))
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
	// Entity.media; /v1/latest, /v1/signal/latest, /v1/replay/global,
	// /v1/entities/{id}/research and media), and is the default window of
	// Query.eventsByCategory, Query.searchEvents, Entity.research and
	// Entity.media.
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

// EventWindow is a named window of Query.events and /v1/latest (`window`).
type EventWindow struct {
	// Name is how the client names it.
	Name string
	// Length is how far back from now it reaches.
	Length time.Duration
}

// EventWindows are the named windows, shortest first; the first is the
// default.
var EventWindows = []EventWindow{{Name: "24h", Length: Day}, {Name: "7d", Length: 7 * Day}, {Name: "30d", Length: HistoryLookback}}

// DefaultEventWindow is the window of Query.events and /v1/latest when
// neither `since` nor `window` is given.
var DefaultEventWindow = EventWindows[0].Name

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
