package db

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
)

// Folding. A page of events whose selection asks for their owners,
// participants or evidence reads them in its own statement: each child
// list is a correlated subquery of the page's row returning the list as a
// JSON array (as PostGraphile 5 builds a document), instead of one more
// statement per child level keyed by the page's ids. The page and its
// children then cost PostgreSQL one statement, one snapshot and one round
// trip. The children come back as the same Go values the child statements
// (EntitiesByEventIDs, EvidenceByEventIDs) return, in the same order, so
// what is written from them is unchanged.

// EventChildren are the children of events a read folds into its
// statement.
type EventChildren struct {
	// Roles: the events' owners and participants (EntitiesByEventIDs).
	Roles bool
	// Evidence: the events' evidence, newest first (EvidenceByEventIDs).
	Evidence bool
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
// id); NULL when it has none.
const rolesJSON = `(SELECT json_agg(json_build_object('r', ee.role, 'i', n.id, 'c', n.canonical_name, 'd', n.display_name,
	't', n.entity_type, 's', n.status, 'a', n.aliases, 'n', n.event_count, 'ca', n.created_at, 'ua', n.updated_at)
	ORDER BY ee.role, ee.position, ee.entity_id)
	FROM event_entities ee JOIN entities n ON n.id = ee.entity_id WHERE ee.event_id = e.id)`

// evidenceJSON is the JSON array of event e's evidence in
// EvidenceByEventIDs' order (newest first, then id); NULL when it has
// none.
const evidenceJSON = `(SELECT json_agg(json_build_object('i', v.id, 'c', v.content, 'u', v.url, 't', v.ts)
	ORDER BY v.ts DESC, v.id)
	FROM evidence v WHERE v.event_id = e.id)`

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

// foldPage wraps page, a statement selecting eventColumns of events e in
// order, so that each row also carries its children for c (foldColumns),
// the rows still in order.
func foldPage(page, order string, c EventChildren) string {
	return "SELECT " + eventColumns + foldColumns(c) + " FROM (" + page + ") e ORDER BY " + order
}

// roleJSON and evidenceItemJSON are the members of rolesJSON and
// evidenceJSON.
type roleJSON struct {
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
			aliases := r.Aliases
			if aliases == nil {
				aliases = []string{}
			}
			refs[i] = cryptointel.EventEntityRef{EventID: eventID, Role: r.Role, Entity: &cryptointel.Entity{
				ID: r.ID, CanonicalName: r.CanonicalName, DisplayName: r.DisplayName, EntityType: r.EntityType,
				Status: r.Status, Aliases: aliases, EventCount: r.EventCount,
				CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
			}}
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

// scanFoldedEvents reads rows of eventColumns and foldColumns into events
// and their children.
func scanFoldedEvents(rows pgx.Rows, what string, folded *FoldedChildren, each func(e *cryptointel.Event)) error {
	defer rows.Close()
	var dst []any
	var roles, evidence []byte
	for rows.Next() {
		e := new(cryptointel.Event)
		dst = append(eventDest(e, dst[:0]), &roles, &evidence)
		if err := rows.Scan(dst...); err != nil {
			return fmt.Errorf("error scanning %s: %w", what, err)
		}
		utcEvent(e)
		if err := folded.add(e.ID, roles, evidence); err != nil {
			return err
		}
		each(e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("error selecting %s: %w", what, err)
	}
	return nil
}
