// Package ingest parses the JSON Lines of an ingest (POST /admin/ingest,
// cryptointel ingest): each line is read into its record, validated and
// normalized, and mapped to the domain's stored types; Write (write.go)
// checks the records' entity references and writes them on db's pool.
package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
)

// Ingest record kinds: the "kind" of each JSON Lines object.
const (
	KindEntity       = "entity"
	KindRelationship = "relationship"
	KindEvent        = "event"
	KindReference    = "reference"
	KindMarket       = "market"
)

// Kinds lists every ingest record kind in the order a batch applies
// them.
var Kinds = []string{KindEntity, KindRelationship, KindReference, KindMarket, KindEvent}

// Entity is an "entity" line: a canonical profile, upserted by id.
// Each field is the JSON key in its tag; docs/operations/ingest.md documents
// which are required and their defaults.
type Entity struct {
	Kind          string   `json:"kind"`
	ID            int64    `json:"id"`
	CanonicalName string   `json:"canonicalName"`
	DisplayName   string   `json:"displayName"` // defaults to canonicalName
	EntityType    string   `json:"entityType"`  // defaults to "project"
	Status        string   `json:"status"`      // defaults to "active"
	Aliases       []string `json:"aliases"`     // tickers and other names; may be empty
}

// Relationship is a "relationship" line: a directed, typed edge,
// upserted by (sourceEntityId, targetEntityId, relationshipType).
// Each field is the JSON key in its tag; docs/operations/ingest.md documents
// which are required and their defaults.
type Relationship struct {
	Kind             string `json:"kind"`
	SourceEntityID   int64  `json:"sourceEntityId"`
	TargetEntityID   int64  `json:"targetEntityId"`
	RelationshipType string `json:"relationshipType"`
	Status           string `json:"status"` // defaults to "active"
	SearchExpand     bool   `json:"searchExpand"`
}

// Evidence is one evidence post of an event line.
// Each field is the JSON key in its tag; docs/operations/ingest.md documents
// which are required and their defaults.
type Evidence struct {
	ID        int64     `json:"id"`
	Content   string    `json:"content"`
	URL       string    `json:"url"`
	Timestamp time.Time `json:"timestamp"`
}

// Event is an "event" line: a radar event (a signal when
// significance is set), upserted by id. The line is the whole truth about
// the event: evidence and entity roles missing from it are removed.
// Each field is the JSON key in its tag; docs/operations/ingest.md documents
// which are required and their defaults.
type Event struct {
	Kind             string     `json:"kind"`
	ID               int64      `json:"id"`
	Title            string     `json:"title"`
	EventCategory    string     `json:"eventCategory"`
	EventSubcategory string     `json:"eventSubcategory"`
	Summary          string     `json:"summary"`
	Bullets          []string   `json:"bullets"`
	Owners           []int64    `json:"owners"`       // at least one entity id
	Participants     []int64    `json:"participants"` // may be empty
	Evidence         []Evidence `json:"evidence"`     // at least one post
	Significance     *float64   `json:"significance"` // null or absent: radar only
	ContentType      *string    `json:"contentType"`  // research, commentary, analysis, media or null
	// LatestEvidenceTimestamp is accepted and ignored: it is derived from
	// the evidence.
	LatestEvidenceTimestamp *time.Time `json:"latestEvidenceTimestamp,omitempty"`
}

// Reference is a "reference" line: an external reference about an
// entity, upserted by id.
// Each field is the JSON key in its tag; docs/operations/ingest.md documents
// which are required and their defaults.
type Reference struct {
	Kind          string `json:"kind"`
	ID            int64  `json:"id"`
	EntityID      int64  `json:"entityId"`
	ReferenceType string `json:"referenceType"` // defaults to "website"
	Title         string `json:"title"`
	URL           string `json:"url"`
}

// MarketPost is one post of a market sub-event.
// Each field is the JSON key in its tag; docs/operations/ingest.md documents
// which are required and their defaults.
type MarketPost struct {
	ID      int64     `json:"id"`
	Content string    `json:"content"`
	Date    time.Time `json:"date"`
}

// Subevent is one sub-event of a market line.
// Each field is the JSON key in its tag; docs/operations/ingest.md documents
// which are required and their defaults.
type Subevent struct {
	ID              int64        `json:"id"`
	Label           string       `json:"label"`
	Type            string       `json:"type"`
	NormalizedTitle string       `json:"normalizedTitle"`
	InjectedSummary string       `json:"injectedSummary"`
	Posts           []MarketPost `json:"posts"`
}

// Market is a "market" line: a prediction market about an entity
// with its sub-events and their posts, upserted by id. Like an event line it
// is the whole truth: sub-events and posts missing from it are removed.
// Each field is the JSON key in its tag; docs/operations/ingest.md documents
// which are required and their defaults.
type Market struct {
	Kind        string     `json:"kind"`
	ID          int64      `json:"id"`
	EntityID    int64      `json:"entityId"`
	Question    string     `json:"question"`
	URL         string     `json:"url"`
	Outcomes    []string   `json:"outcomes"`
	Probability *float64   `json:"probability"` // 0–1 or null
	Volume      *float64   `json:"volume"`      // ≥ 0 or null
	ClosesAt    *time.Time `json:"closesAt"`
	Subevents   []Subevent `json:"subevents"`
}

// Record is one parsed, validated and normalized ingest line: Kind
// names which one of the pointers is set.
type Record struct {
	Kind         string
	Entity       *Entity
	Relationship *Relationship
	Event        *Event
	Reference    *Reference
	Market       *Market
}

// EntityRefs returns the entity ids rec points at, each with the field
// naming it.
func (rec Record) EntityRefs() []EntityRef {
	var refs []EntityRef
	switch rec.Kind {
	case KindRelationship:
		refs = append(refs, EntityRef{"sourceEntityId", rec.Relationship.SourceEntityID}, EntityRef{"targetEntityId", rec.Relationship.TargetEntityID})
	case KindEvent:
		for _, id := range rec.Event.Owners {
			refs = append(refs, EntityRef{"owners", id})
		}
		for _, id := range rec.Event.Participants {
			refs = append(refs, EntityRef{"participants", id})
		}
	case KindReference:
		refs = append(refs, EntityRef{"entityId", rec.Reference.EntityID})
	case KindMarket:
		refs = append(refs, EntityRef{"entityId", rec.Market.EntityID})
	}
	return refs
}

// EntityRef is an entity id a record points at and the field naming it.
type EntityRef struct {
	Field string
	ID    int64
}

// ParseLine parses, validates and normalizes one JSON Lines object.
// It is pure: it touches no database, so entity ids are checked later;
// now is the server's clock, which bounds evidence timestamps and post
// dates (cryptointel.MaxPublishedAhead). Every instant lies within
// cryptointel.MinInstant and cryptointel.MaxInstant. Unknown fields are
// rejected so that typos do not silently drop data. Returns an EINVALID
// *cryptointel.Error whose message is the reason the line is bad.
func ParseLine(line []byte, now time.Time) (Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return Record{}, cryptointel.Errorf(cryptointel.EINVALID, "empty line")
	}
	var probe struct {
		Kind *string `json:"kind"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return Record{}, cryptointel.Errorf(cryptointel.EINVALID, "invalid JSON: %s", jsonReason(err))
	}
	if probe.Kind == nil {
		return Record{}, cryptointel.Errorf(cryptointel.EINVALID, `missing "kind" (one of %s)`, strings.Join(Kinds, ", "))
	}
	rec := Record{Kind: *probe.Kind}
	var target any
	switch rec.Kind {
	case KindEntity:
		rec.Entity = new(Entity)
		target = rec.Entity
	case KindRelationship:
		rec.Relationship = new(Relationship)
		target = rec.Relationship
	case KindEvent:
		rec.Event = new(Event)
		target = rec.Event
	case KindReference:
		rec.Reference = new(Reference)
		target = rec.Reference
	case KindMarket:
		rec.Market = new(Market)
		target = rec.Market
	default:
		return Record{}, cryptointel.Errorf(cryptointel.EINVALID, "unknown kind %q (one of %s)", rec.Kind, strings.Join(Kinds, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(target); err != nil {
		return Record{}, cryptointel.Errorf(cryptointel.EINVALID, "invalid %s: %s", rec.Kind, jsonReason(err))
	}
	var err error
	switch rec.Kind {
	case KindEntity:
		err = rec.Entity.normalize()
	case KindRelationship:
		err = rec.Relationship.normalize()
	case KindEvent:
		err = rec.Event.normalize(now)
	case KindReference:
		err = rec.Reference.normalize()
	case KindMarket:
		err = rec.Market.normalize(now)
	}
	if err != nil {
		return Record{}, err
	}
	return rec, nil
}

// jsonReason turns an encoding/json error into a short reason.
func jsonReason(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Sprintf("field %q: cannot use JSON %s as %s", typeErr.Field, typeErr.Value, typeErr.Type)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// notPositive is the error of an id field (named at, quoted, with its
// path) that is not a positive integer.
func notPositive(kind, at string) error { return invalidf(kind, "%s must be a positive integer", at) }

// missing is the error of a required field (named at) that is absent or
// blank.
func missing(kind, at string) error { return invalidf(kind, "%s is required", at) }

func invalidf(kind string, format string, args ...any) error {
	return cryptointel.Errorf(cryptointel.EINVALID, "invalid %s: %s", kind, fmt.Sprintf(format, args...))
}

// cleanStrings trims, drops empty and deduplicates values, keeping order.
func cleanStrings(values []string) []string {
	out := make([]string, 0, len(values))
	seen := make(map[string]bool, len(values))
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// cleanIDs deduplicates ids, keeping order; it reports the first id that is
// not positive.
func cleanIDs(ids []int64) ([]int64, int64, bool) {
	out := make([]int64, 0, len(ids))
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if id <= 0 {
			return nil, id, false
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, 0, true
}

func (e *Entity) normalize() error {
	if e.ID <= 0 {
		return notPositive(KindEntity, `"id"`)
	}
	e.CanonicalName = strings.TrimSpace(e.CanonicalName)
	if e.CanonicalName == "" {
		return missing(KindEntity, `"canonicalName"`)
	}
	e.DisplayName = strings.TrimSpace(e.DisplayName)
	if e.DisplayName == "" {
		e.DisplayName = e.CanonicalName
	}
	e.EntityType = strings.TrimSpace(e.EntityType)
	if e.EntityType == "" {
		e.EntityType = "project"
	}
	e.Status = strings.TrimSpace(e.Status)
	if e.Status == "" {
		e.Status = "active"
	}
	e.Aliases = cleanStrings(e.Aliases)
	return nil
}

func (r *Relationship) normalize() error {
	if r.SourceEntityID <= 0 || r.TargetEntityID <= 0 {
		return invalidf(KindRelationship, `"sourceEntityId" and "targetEntityId" must be positive integers`)
	}
	if r.SourceEntityID == r.TargetEntityID {
		return invalidf(KindRelationship, "an entity cannot be related to itself (%d)", r.SourceEntityID)
	}
	r.RelationshipType = strings.TrimSpace(r.RelationshipType)
	if r.RelationshipType == "" {
		return missing(KindRelationship, `"relationshipType"`)
	}
	r.Status = strings.TrimSpace(r.Status)
	if r.Status == "" {
		r.Status = "active"
	}
	return nil
}

func (e *Event) normalize(now time.Time) error {
	if e.ID <= 0 {
		return notPositive(KindEvent, `"id"`)
	}
	e.Title = strings.TrimSpace(e.Title)
	if e.Title == "" {
		return missing(KindEvent, `"title"`)
	}
	e.EventCategory = strings.TrimSpace(e.EventCategory)
	if e.EventCategory == "" {
		return missing(KindEvent, `"eventCategory"`)
	}
	e.EventSubcategory = strings.TrimSpace(e.EventSubcategory)
	e.Bullets = cleanStrings(e.Bullets)
	var ok bool
	var bad int64
	if e.Owners, bad, ok = cleanIDs(e.Owners); !ok {
		return invalidf(KindEvent, `"owners" holds %d, not an entity id`, bad)
	}
	if len(e.Owners) == 0 {
		return invalidf(KindEvent, `"owners" must name at least one entity id`)
	}
	if e.Participants, bad, ok = cleanIDs(e.Participants); !ok {
		return invalidf(KindEvent, `"participants" holds %d, not an entity id`, bad)
	}
	if len(e.Evidence) == 0 {
		return invalidf(KindEvent, `"evidence" must hold at least one post (latestEvidenceTimestamp is derived from it)`)
	}
	seen := make(map[int64]bool, len(e.Evidence))
	for i := range e.Evidence {
		ev := &e.Evidence[i]
		if ev.ID <= 0 {
			return notPositive(KindEvent, fmt.Sprintf(`evidence[%d]: "id"`, i))
		}
		if seen[ev.ID] {
			return invalidf(KindEvent, "evidence[%d]: duplicate evidence id %d", i, ev.ID)
		}
		seen[ev.ID] = true
		if ev.Timestamp.IsZero() {
			return missing(KindEvent, fmt.Sprintf(`evidence[%d]: "timestamp"`, i))
		}
		ev.Timestamp = ev.Timestamp.UTC()
		if err := checkPublished(ev.Timestamp, now); err != nil {
			return invalidf(KindEvent, `evidence[%d]: "timestamp" %s`, i, err)
		}
	}
	if e.Significance != nil && (math.IsNaN(*e.Significance) || math.IsInf(*e.Significance, 0)) {
		return invalidf(KindEvent, `"significance" must be a finite number`)
	}
	if e.Significance != nil && (*e.Significance < 0 || *e.Significance > cryptointel.MaxSignificance) {
		return invalidf(KindEvent, `"significance" must be between 0 and %d`, cryptointel.MaxSignificance)
	}
	if e.ContentType != nil {
		ct := strings.TrimSpace(*e.ContentType)
		switch ct {
		case "":
			e.ContentType = nil
		case cryptointel.ContentResearch, cryptointel.ContentCommentary, cryptointel.ContentAnalysis, cryptointel.ContentMedia:
			e.ContentType = &ct
		default:
			return invalidf(KindEvent, `"contentType" must be one of research, commentary, analysis, media (got %q)`, ct)
		}
	}
	e.LatestEvidenceTimestamp = nil
	return nil
}

// checkPublished bounds the date of a publication (evidence, a market
// post): an instant within the bounds, at most
// cryptointel.MaxPublishedAhead after now.
// The error reads after the field's name.
func checkPublished(t, now time.Time) error {
	if cryptointel.CheckInstant(t) != nil {
		return fmt.Errorf("must be an instant %s", cryptointel.InstantBounds)
	}
	if t.After(now.Add(cryptointel.MaxPublishedAhead)) {
		return fmt.Errorf("is in the future: at most %d minutes after the server's clock are accepted", int(cryptointel.MaxPublishedAhead/time.Minute))
	}
	return nil
}

// The ingest mapping: each stored field of an ingested record from the
// line's form (db writes the stored form's columns, db/columns_gen.go).

// Entity is the entity the line describes, as stored.
func (e *Entity) Entity() *cryptointel.Entity {
	return &cryptointel.Entity{ID: e.ID, CanonicalName: e.CanonicalName, DisplayName: e.DisplayName, EntityType: e.EntityType,
		Status: e.Status, Aliases: e.Aliases}
}

// Event is the event the line describes, as stored.
func (e *Event) Event() *cryptointel.Event {
	return &cryptointel.Event{ID: e.ID, Title: e.Title, Category: e.EventCategory, Subcategory: e.EventSubcategory, Summary: e.Summary,
		Bullets: e.Bullets, Significance: e.Significance, ContentType: e.ContentType, LatestEvidenceAt: e.LatestEvidence(),
		EvidenceText: e.EvidenceText()}
}

// Evidence is the post as stored, backing event eventID.
func (v Evidence) Evidence(eventID int64) *cryptointel.Evidence {
	return &cryptointel.Evidence{ID: v.ID, EventID: eventID, Content: v.Content, URL: v.URL, TS: v.Timestamp}
}

// LatestEvidence returns the newest evidence timestamp.
func (e *Event) LatestEvidence() time.Time {
	var latest time.Time
	for _, ev := range e.Evidence {
		if ev.Timestamp.After(latest) {
			latest = ev.Timestamp
		}
	}
	return latest
}

// EvidenceText concatenates the evidence contents, oldest first, for the
// search vector.
func (e *Event) EvidenceText() string {
	evs := slices.Clone(e.Evidence)
	sort.Slice(evs, func(i, j int) bool {
		if !evs[i].Timestamp.Equal(evs[j].Timestamp) {
			return evs[i].Timestamp.Before(evs[j].Timestamp)
		}
		return evs[i].ID < evs[j].ID
	})
	parts := make([]string, 0, len(evs))
	for _, ev := range evs {
		if c := strings.TrimSpace(ev.Content); c != "" {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, "\n")
}

func (r *Reference) normalize() error {
	if r.ID <= 0 {
		return notPositive(KindReference, `"id"`)
	}
	if r.EntityID <= 0 {
		return notPositive(KindReference, `"entityId"`)
	}
	r.URL = strings.TrimSpace(r.URL)
	if r.URL == "" {
		return missing(KindReference, `"url"`)
	}
	r.ReferenceType = strings.TrimSpace(r.ReferenceType)
	if r.ReferenceType == "" {
		r.ReferenceType = "website"
	}
	r.Title = strings.TrimSpace(r.Title)
	return nil
}

func (m *Market) normalize(now time.Time) error {
	if m.ID <= 0 {
		return notPositive(KindMarket, `"id"`)
	}
	if m.EntityID <= 0 {
		return notPositive(KindMarket, `"entityId"`)
	}
	m.Question = strings.TrimSpace(m.Question)
	if m.Question == "" {
		return missing(KindMarket, `"question"`)
	}
	m.URL = strings.TrimSpace(m.URL)
	m.Outcomes = cleanStrings(m.Outcomes)
	if m.Probability != nil && !(*m.Probability >= 0 && *m.Probability <= 1) {
		return invalidf(KindMarket, `"probability" must be between 0 and 1`)
	}
	if m.Volume != nil && !(*m.Volume >= 0 && !math.IsInf(*m.Volume, 0)) {
		return invalidf(KindMarket, `"volume" must not be negative`)
	}
	if m.ClosesAt != nil {
		t := m.ClosesAt.UTC()
		if cryptointel.CheckInstant(t) != nil {
			return invalidf(KindMarket, `"closesAt" must be an instant %s`, cryptointel.InstantBounds)
		}
		m.ClosesAt = &t
	}
	subSeen := make(map[int64]bool, len(m.Subevents))
	postSeen := make(map[int64]bool)
	for i := range m.Subevents {
		s := &m.Subevents[i]
		if s.ID <= 0 {
			return notPositive(KindMarket, fmt.Sprintf(`subevents[%d]: "id"`, i))
		}
		if subSeen[s.ID] {
			return invalidf(KindMarket, "subevents[%d]: duplicate subevent id %d", i, s.ID)
		}
		subSeen[s.ID] = true
		for j := range s.Posts {
			p := &s.Posts[j]
			if p.ID <= 0 {
				return notPositive(KindMarket, fmt.Sprintf(`subevents[%d].posts[%d]: "id"`, i, j))
			}
			if postSeen[p.ID] {
				return invalidf(KindMarket, "subevents[%d].posts[%d]: duplicate post id %d", i, j, p.ID)
			}
			postSeen[p.ID] = true
			if p.Date.IsZero() {
				return missing(KindMarket, fmt.Sprintf(`subevents[%d].posts[%d]: "date"`, i, j))
			}
			p.Date = p.Date.UTC()
			if err := checkPublished(p.Date, now); err != nil {
				return invalidf(KindMarket, `subevents[%d].posts[%d]: "date" %s`, i, j, err)
			}
		}
	}
	return nil
}
