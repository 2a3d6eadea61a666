package db

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
)

// EntityTree is what EntityTreeFolded reads: entities, a page of their
// relationships with the related entities and, for each related entity,
// a page of its events with their children.
type EntityTree struct {
	// Entities are the entities found, in no particular order.
	Entities []*cryptointel.Entity
	// Relationships are as RelationshipsByEntityIDs returns them.
	Relationships []*cryptointel.EntityRelationship
	// RelatedIDs are the related entities whose events were read, each
	// once (nil when no events were asked for).
	RelatedIDs []int64
	// Events are as EventsByEntityIDs returns them for RelatedIDs.
	Events []cryptointel.EntityEvent
	// Children are the events' children (nil when none were asked for).
	Children *FoldedChildren
}

// EntityTreeFolded reads, in one statement, the entities ids, a page of
// their relationships (RelationshipsByEntityIDs with rf) and, when ef is
// not nil, a page of each related entity's events (EventsByEntityIDs with
// *ef) with their children c: the three levels of a document asking for
// an entity's relationships' events (three hops) folded into one
// statement (fold.go). Each level is its own statement's text as a common
// table expression whose rows come back as one JSON array each, decoded
// into the same values its statement scans.
func EntityTreeFolded(ctx context.Context, q Querier, ids []int64, rf RelationshipFilter, ef *EntityEventFilter, c EventChildren) (*EntityTree, error) {
	sql, args := entityTreeStatement(ids, rf, ef, c)
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("error selecting entity tree: %w", err)
	}
	t := &EntityTree{}
	var rels, evs, roles, evidence []byte
	err = scan(rows, "entity tree",
		func(e *cryptointel.Entity, dst []any) []any {
			return append(entityDest(e, dst), &rels, &evs, &roles, &evidence)
		},
		utcEntity,
		func(e *cryptointel.Entity) { t.Entities = append(t.Entities, e) })
	if err != nil {
		return nil, err
	}
	// Every row carries the same arrays (they do not depend on the row).
	if err := decodeRows(rels, func(cells []json.RawMessage) error {
		r := &cryptointel.EntityRelationship{Related: new(cryptointel.Entity)}
		if err := decodeCells(cells, entityDest(r.Related, relationshipDest(r, nil))); err != nil {
			return err
		}
		utcRelationship(r)
		utcEntity(r.Related)
		t.Relationships = append(t.Relationships, r)
		return nil
	}); err != nil {
		return nil, err
	}
	if ef == nil {
		return t, nil
	}
	seen := map[int64]bool{}
	for _, r := range t.Relationships {
		if !seen[r.RelatedEntityID] {
			seen[r.RelatedEntityID] = true
			t.RelatedIDs = append(t.RelatedIDs, r.RelatedEntityID)
		}
	}
	if c.Any() {
		t.Children = &FoldedChildren{}
	}
	if err := decodeRows(evs, func(cells []json.RawMessage) error {
		var r cryptointel.EntityEvent
		r.Event = new(cryptointel.Event)
		dst := eventDest(r.Event, entityEventDest(&r, nil))
		if err := decodeCells(cells, dst); err != nil {
			return err
		}
		utcEvent(r.Event)
		t.Events = append(t.Events, r)
		return nil
	}); err != nil {
		return nil, err
	}
	if t.Children != nil {
		if err := t.Children.addAll(roles, evidence); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// entityTreeStatement is EntityTreeFolded's statement: the relationships
// statement as r (its arguments first: the entities' ids are the tree's),
// the related entities' events statement as ev over r's related entities,
// then the entities with r's and ev's rows as JSON arrays. The levels' rows
// are aggregated whole (json_agg of the row, its columns named c1, c2, …
// in their statement's order, decoded by position): building each row
// with json_build_array looked every value's output function up again.
func entityTreeStatement(ids []int64, rf RelationshipFilter, ef *EntityEventFilter, c EventChildren) (string, []any) {
	args := rf.args(ids)
	relCols := relationshipColumns + ", " + entityColumns
	rel := strings.Replace(relationshipsSQL(rf), "SELECT "+relCols,
		"SELECT y.related_entity_id AS rid, y.rn AS rn, "+numbered(relCols), 1)
	sql := "WITH r AS MATERIALIZED (" + rel + ")"
	relOrder := "r.c" + strconv.Itoa(columnIndex(relCols, "y.entity_id")+1) + ", r.rn"
	evs, roles, evidence := "NULL::json", "NULL::json", "NULL::json"
	if ef != nil {
		esql, eargs := entityEventsStatement([]int64{}, *ef, EventChildren{})
		evCols := entityEventColumns + ", " + eventColumns
		esql = strings.Replace(esql, "SELECT "+evCols,
			"SELECT row_number() OVER (ORDER BY "+entityEventsOrder(ef.Sort)+") AS o, "+numbered(evCols), 1)
		// The events statement's $1 (its entities) is r's related
		// entities; its other arguments follow the relationships'.
		shift := len(args) - 1
		esql = placeholder.ReplaceAllStringFunc(esql, func(p string) string {
			n, _ := strconv.Atoi(p[1:])
			if n == 1 {
				return "ARRAY(SELECT DISTINCT rid FROM r)"
			}
			return "$" + strconv.Itoa(n+shift)
		})
		args = append(args, eargs[1:]...)
		sql += ", ev AS MATERIALIZED (" + esql + ")"
		evs = "(SELECT json_agg(ev ORDER BY ev.o) FROM ev)"
		// The events' children, of all of them at once (fold.go).
		ids := "ARRAY(SELECT DISTINCT c" + strconv.Itoa(columnIndex(evCols, "e.id")+1) + " FROM ev)"
		if c.Roles {
			roles = rolesOfJSON(ids)
		}
		if c.Evidence {
			evidence = evidenceOfJSON(ids)
		}
	}
	sql += " SELECT " + entityColumns + ", (SELECT json_agg(r ORDER BY " + relOrder + ") FROM r), " + evs +
		", " + roles + ", " + evidence + " FROM entities n WHERE n.id = ANY($1)"
	return sql, args
}

// numbered names the columns of a select list c1, c2, …; a column is an
// expression without a comma outside parentheses.
func numbered(list string) string {
	cols := splitColumns(list)
	for i, c := range cols {
		cols[i] = c + " AS c" + strconv.Itoa(i+1)
	}
	return strings.Join(cols, ", ")
}

// splitColumns splits a select list at its top-level commas.
func splitColumns(list string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range list {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(list[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(list[start:]))
}

// columnIndex is the position of col in the select list, -1 when absent.
func columnIndex(list, col string) int {
	for i, c := range splitColumns(list) {
		if c == col {
			return i
		}
	}
	return -1
}

// placeholder matches a statement's parameter placeholders.
var placeholder = regexp.MustCompile(`\$[0-9]+`)

// decodeRows calls each with the cells of every row of a JSON array of
// rows, objects whose columns are named c1, c2, … (others are ignored), in
// column order; nothing for null.
func decodeRows(b []byte, each func([]json.RawMessage) error) error {
	if len(b) == 0 {
		return nil
	}
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal(b, &rows); err != nil {
		return fmt.Errorf("error decoding folded rows: %w", err)
	}
	var cells []json.RawMessage
	for _, row := range rows {
		cells = cells[:0]
		for i := 1; ; i++ {
			v, ok := row[cellName(i)]
			if !ok {
				break
			}
			cells = append(cells, v)
		}
		if err := each(cells); err != nil {
			return err
		}
	}
	return nil
}

// cellNames are the names of the first columns of a folded row.
var cellNames = func() []string {
	n := make([]string, 40)
	for i := range n {
		n[i] = "c" + strconv.Itoa(i)
	}
	return n
}()

func cellName(i int) string {
	if i < len(cellNames) {
		return cellNames[i]
	}
	return "c" + strconv.Itoa(i)
}

// decodeCells decodes each cell into its destination.
func decodeCells(cells []json.RawMessage, dst []any) error {
	if len(cells) != len(dst) {
		return fmt.Errorf("error decoding folded row: %d cells for %d columns", len(cells), len(dst))
	}
	for i, c := range cells {
		if err := decodeCell(c, dst[i]); err != nil {
			return fmt.Errorf("error decoding folded column %d: %w", i, err)
		}
	}
	return nil
}

// decodeCell decodes one JSON cell into dst: the scalar kinds of the
// columns directly (encoding/json's reflection per cell was most of the
// decoding), anything else with encoding/json.
func decodeCell(c json.RawMessage, dst any) error {
	plain := func() (string, bool) { // a string without escapes
		if len(c) >= 2 && c[0] == '"' && c[len(c)-1] == '"' && bytes.IndexByte(c, '\\') < 0 {
			return string(c[1 : len(c)-1]), true
		}
		return "", false
	}
	switch d := dst.(type) {
	case *int64:
		n, err := strconv.ParseInt(string(c), 10, 64)
		if err == nil {
			*d = n
			return nil
		}
	case *string:
		if v, ok := plain(); ok {
			*d = v
			return nil
		}
	case *time.Time:
		if v, ok := plain(); ok {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err == nil {
				*d = t
				return nil
			}
		}
	case *bool:
		switch string(c) {
		case "true":
			*d = true
			return nil
		case "false":
			*d = false
			return nil
		}
	}
	return json.Unmarshal(c, dst)
}
