package db

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
)

// Folding. A page of events whose selection asks for their owners,
// participants or evidence reads them in its own statement, instead of one
// more statement per child level keyed by the page's ids. The page and its
// children then cost PostgreSQL one statement, one snapshot and one round
// trip. The children come back as the same Go values the child statements
// (EntitiesByEventIDs, EvidenceByEventIDs) return, in the same order, so
// what is written from them is unchanged. A page of events (foldPage) and
// the entity tree (fold_tree.go) return their children as typed rows
// (fold_rows.go); the entity-events level of other shapes
// (EventsByEntityIDsFolded) still returns each event's children as JSON
// arrays of subqueries of its row (foldColumns).

// EventChildren are the children of events a read folds into its
// statement.
type EventChildren struct {
	// Roles: the events' owners and participants (EntitiesByEventIDs).
	Roles bool
	// Evidence: the events' evidence, newest first (EvidenceByEventIDs).
	Evidence bool
	// NoText: the document selects no event's summary or bullets, so a
	// folded page or tree does not read them (they are left empty).
	NoText bool
	// NoContent: the document selects no evidence's content, so folded
	// evidence does not carry it (left empty).
	NoContent bool
	// Shown, in an entity tree (EntityTreeFolded), reads the children of
	// each related entity's first Shown events only (0: of all of them):
	// its events page reads one event more than it shows, to know whether
	// another page follows, and that event's children are not written.
	Shown int
}

// leanEventColumns are eventColumns without summary and bullets when
// c.NoText (their text is most of an event's bytes).
func (c EventChildren) leanEventColumns(cols string) string {
	if !c.NoText {
		return cols
	}
	return strings.Replace(cols, "e.summary, e.bullets", "''::text AS summary, '{}'::text[] AS bullets", 1)
}

// leanNumbered is leanEventColumns of a numbered list of columns.
func (c EventChildren) leanNumbered(cols string) string {
	if !c.NoText {
		return cols
	}
	return strings.NewReplacer("e.summary AS", "''::text AS", "e.bullets AS", "'{}'::text[] AS").Replace(cols)
}

// Any reports whether any child is folded.
func (c EventChildren) Any() bool { return c.Roles || c.Evidence }

// FoldedChildren are the children read with a page of events, in the
// orders EntitiesByEventIDs and EvidenceByEventIDs return them.
type FoldedChildren struct {
	// Roles are each event's owners and participants, by event id; an
	// event of the page without any has no entry.
	Roles map[int64][]cryptointel.EventEntityRef
	// Evidence is each event's evidence, newest first, by event id; an
	// event of the page without any has no entry.
	Evidence map[int64][]*cryptointel.Evidence
}

// rolesJSON is the JSON array of event e's owners and participants with
// their entities, in EntitiesByEventIDs' order (role, position, entity
// id); NULL when it has none. The array is json_agg of the rows of a
// subquery whose columns are named as roleJSON's members: PostgreSQL
// looks each column's output function up once per row that way, where
// json_build_object did it for each value of each row and cost four times
// as much (0.023 against 0.005 ms an event).
const rolesJSON = `(SELECT json_agg(q ORDER BY q.r, q.p, q.i) FROM (
	SELECT ee.role AS r, ee.position AS p, n.id AS i, n.canonical_name AS c, n.display_name AS d, n.entity_type AS t,
		n.status AS s, n.aliases AS a, n.event_count AS n, n.created_at AS ca, n.updated_at AS ua
	FROM event_entities ee JOIN entities n ON n.id = ee.entity_id WHERE ee.event_id = e.id) q)`

// evidenceJSON is the JSON array of event e's evidence in
// EvidenceByEventIDs' order (newest first, then id); NULL when it has
// none.
const evidenceJSON = `(SELECT json_agg(q ORDER BY q.t DESC, q.i) FROM (
	SELECT v.id AS i, v.content AS c, v.url AS u, v.ts AS t FROM evidence v WHERE v.event_id = e.id) q)`

// foldColumns are the columns a folded page adds after eventColumns for
// c: the events' children as JSON (NULL when not folded or none).
func foldColumns(c EventChildren) string {
	s := ""
	if c.Roles {
		s += ", " + rolesJSON
	} else {
		s += ", NULL::json"
	}
	if c.Evidence {
		s += ", " + evidenceJSON
	} else {
		s += ", NULL::json"
	}
	return s
}

// roleJSON and evidenceItemJSON are the members of rolesJSON and
// evidenceJSON.
type roleJSON struct {
	EventID       int64     `json:"e"`
	Role          string    `json:"r"`
	ID            int64     `json:"i"`
	CanonicalName string    `json:"c"`
	DisplayName   string    `json:"d"`
	EntityType    string    `json:"t"`
	Status        string    `json:"s"`
	Aliases       []string  `json:"a"`
	EventCount    int64     `json:"n"`
	CreatedAt     time.Time `json:"ca"`
	UpdatedAt     time.Time `json:"ua"`
}

type evidenceItemJSON struct {
	EventID int64     `json:"e"`
	ID      int64     `json:"i"`
	Content string    `json:"c"`
	URL     string    `json:"u"`
	TS      time.Time `json:"t"`
}

// add decodes one event's folded children into f.
func (f *FoldedChildren) add(eventID int64, roles, evidence []byte) error {
	if len(roles) > 0 {
		var rs []roleJSON
		if err := json.Unmarshal(roles, &rs); err != nil {
			return fmt.Errorf("error decoding folded roles: %w", err)
		}
		refs := make([]cryptointel.EventEntityRef, len(rs))
		for i, r := range rs {
			r.EventID = eventID
			refs[i] = r.ref()
		}
		if f.Roles == nil {
			f.Roles = map[int64][]cryptointel.EventEntityRef{}
		}
		f.Roles[eventID] = refs
	}
	if len(evidence) > 0 {
		var vs []evidenceItemJSON
		if err := json.Unmarshal(evidence, &vs); err != nil {
			return fmt.Errorf("error decoding folded evidence: %w", err)
		}
		out := make([]*cryptointel.Evidence, len(vs))
		for i, v := range vs {
			out[i] = &cryptointel.Evidence{ID: v.ID, EventID: eventID, Content: v.Content, URL: v.URL, TS: v.TS.UTC()}
		}
		if f.Evidence == nil {
			f.Evidence = map[int64][]*cryptointel.Evidence{}
		}
		f.Evidence[eventID] = out
	}
	return nil
}

// ref is the role r as EntitiesByEventIDs scans it.
func (r roleJSON) ref() cryptointel.EventEntityRef {
	aliases := r.Aliases
	if aliases == nil {
		aliases = []string{}
	}
	return cryptointel.EventEntityRef{EventID: r.EventID, Role: r.Role, Entity: &cryptointel.Entity{
		ID: r.ID, CanonicalName: r.CanonicalName, DisplayName: r.DisplayName, EntityType: r.EntityType,
		Status: r.Status, Aliases: aliases, EventCount: r.EventCount,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}}
}
