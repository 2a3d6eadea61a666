package db

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/internal/memo"
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
	// Children are the events' children (nil when none were asked for);
	// with EventChildren.Shown, of the events each page shows.
	Children *FoldedChildren
}

// EntityTreeFolded reads, in one statement, the entities ids, a page of
// their relationships (RelationshipsByEntityIDs with rf) and, when ef is
// not nil, a page of each related entity's events (EventsByEntityIDs with
// *ef) with their children c: the three levels of a document asking for
// an entity's relationships' events (three hops) folded into one
// statement (fold.go). Each level is its own statement's text as a common
// table expression whose rows come back as typed rows (fold_rows.go),
// scanned into the same values its statement scans.
func EntityTreeFolded(ctx context.Context, q Querier, ids []int64, rf RelationshipFilter, ef *EntityEventFilter, c EventChildren) (*EntityTree, error) {
	if ef == nil {
		c = EventChildren{}
	}
	sql, args := entityTreeStatement(ids, rf, ef, c)
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("error selecting entity tree: %w", err)
	}
	type numberedRel struct {
		rn int64
		r  *cryptointel.EntityRelationship
	}
	type numberedEvent struct {
		o int64
		r cryptointel.EntityEvent
	}
	var (
		t    = &EntityTree{}
		ent  *cryptointel.Entity
		rel  numberedRel
		ev   numberedEvent
		rels []numberedRel
		evs  []numberedEvent
		kids childRows
		// events hands out the events' values.
		events slab[cryptointel.Event]
	)
	err = treeLayout.scan(rows, "entity tree", func(kind int, buf []any) []any {
		switch kind {
		case treeEntityKind:
			ent = kids.entities.next()
			return entityDest(ent, buf)
		case treeRelationshipKind:
			rel = numberedRel{r: &cryptointel.EntityRelationship{Related: kids.entities.next()}}
			return entityDest(rel.r.Related, relationshipDest(rel.r, append(buf, &rel.rn)))
		case treeEventKind:
			ev = numberedEvent{r: cryptointel.EntityEvent{Event: events.next()}}
			return eventDest(ev.r.Event, entityEventDest(&ev.r, append(buf, &ev.o)))
		case treeRoleKind:
			return kids.roleDest(buf)
		default:
			return kids.evidenceDest(buf)
		}
	}, func(kind int) error {
		switch kind {
		case treeEntityKind:
			utcEntity(ent)
			t.Entities = append(t.Entities, ent)
		case treeRelationshipKind:
			utcRelationship(rel.r)
			utcEntity(rel.r.Related)
			rels = append(rels, rel)
		case treeEventKind:
			utcEvent(ev.r.Event)
			evs = append(evs, ev)
		case treeRoleKind:
			kids.addRole()
		default:
			kids.addEvidence()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// As RelationshipsByEntityIDs orders them: by entity, then its page.
	slices.SortFunc(rels, func(a, b numberedRel) int {
		return cmp.Or(cmp.Compare(a.r.EntityID, b.r.EntityID), cmp.Compare(a.rn, b.rn))
	})
	for _, r := range rels {
		t.Relationships = append(t.Relationships, r.r)
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
	slices.SortFunc(evs, func(a, b numberedEvent) int { return cmp.Compare(a.o, b.o) })
	for _, e := range evs {
		t.Events = append(t.Events, e.r)
	}
	if c.Any() {
		t.Children = kids.folded(c)
	}
	return t, nil
}

// The kinds of rows of the entity tree (treeLayout): the entities, their
// relationships (numbered in their page) with the related entities, the
// related entities' events (numbered in their statement's order), the
// events' roles and evidence.
const (
	treeEntityKind = iota
	treeRelationshipKind
	treeEventKind
	treeRoleKind
	treeEvidenceKind
)

var treeLayout = func() *rowLayout {
	var (
		n, rn int64
		e     cryptointel.Entity
		r     cryptointel.EntityRelationship
		ev    cryptointel.EntityEvent
		role  roleRow
		v     cryptointel.Evidence
	)
	ev.Event = new(cryptointel.Event)
	return newRowLayout(entityDest(&e, nil), entityDest(&e, relationshipDest(&r, []any{&rn})),
		eventDest(ev.Event, entityEventDest(&ev, []any{&n})), role.dest(new(cryptointel.Entity), nil), evidenceDest(&v, nil))
}()

// entityTreeStatement is EntityTreeFolded's statement: the relationships
// statement as r (its arguments first: the entities' ids are the tree's),
// the related entities' events statement as ev over r's related entities,
// then the entities, r's rows, ev's rows and the events' children as
// typed rows (treeLayout). The levels' columns are named c1, c2, … in
// their statement's order.
func entityTreeStatement(ids []int64, rf RelationshipFilter, ef *EntityEventFilter, c EventChildren) (string, []any) {
	args := rf.args(ids)
	shape := treeShape{rel: relationshipsSQL(rf), shift: len(args) - 1, c: c}
	if ef != nil {
		esql, eargs := entityEventsStatement([]int64{}, *ef, EventChildren{})
		shape.events = esql
		args = append(args, eargs[1:]...)
	}
	// The relationships' and the events' statements hold the filters'
	// shapes (which are given, the sort); the values are the arguments.
	return treeTexts.Get(shape, func() string { return buildEntityTree(shape, ef) }), args
}

// treeShape is what entityTreeStatement's text depends on: the
// relationships' statement, the related entities' events statement (empty
// when not read) and where its arguments start, and the children read.
type treeShape struct {
	rel, events string
	shift       int
	c           EventChildren
}

// treeTexts keeps entityTreeStatement's texts (see foldedPages).
var treeTexts memo.Bounded[treeShape, string]

// buildEntityTree builds entityTreeStatement's text of shape; ef is the
// events' filter (nil when shape reads no events).
func buildEntityTree(shape treeShape, ef *EntityEventFilter) string {
	c := shape.c
	relCols := relationshipColumns + ", " + entityColumns
	rel := strings.Replace(shape.rel, "SELECT "+relCols,
		"SELECT y.related_entity_id AS rid, y.rn AS rn, "+numbered(relCols), 1)
	sql := "WITH r AS MATERIALIZED (" + rel + ")"
	body := "SELECT " + treeLayout.selectList(treeEntityKind, entityColumns) + " FROM entities n WHERE n.id = ANY($1)" +
		" UNION ALL SELECT " + treeLayout.selectList(treeRelationshipKind, "r.rn, "+cellList("r", len(splitColumns(relCols)))) + " FROM r"
	if ef != nil {
		esql := shape.events
		evCols := entityEventColumns + ", " + eventColumns
		order := entityEventsOrder(ef.Sort)
		// shown numbers each entity's events in its page.
		shown := ""
		if c.Shown > 0 {
			shown = "row_number() OVER (PARTITION BY k.ord ORDER BY " + strings.TrimPrefix(order, "k.ord, ") + ") AS shown, "
		}
		esql = strings.Replace(esql, "SELECT "+evCols,
			"SELECT row_number() OVER (ORDER BY "+order+") AS o, "+shown+c.leanNumbered(numbered(evCols)), 1)
		// The events statement's $1 (its entities) is r's related
		// entities; its other arguments follow the relationships'.
		esql = placeholder.ReplaceAllStringFunc(esql, func(p string) string {
			n, _ := strconv.Atoi(p[1:])
			if n == 1 {
				return "ARRAY(SELECT DISTINCT rid FROM r)"
			}
			return "$" + strconv.Itoa(n+shape.shift)
		})
		sql += ", ev AS MATERIALIZED (" + esql + ")"
		body += " UNION ALL SELECT " + treeLayout.selectList(treeEventKind, "ev.o, "+cellList("ev", len(splitColumns(evCols)))) + " FROM ev"
		// The events' children, of all of them at once (fold_rows.go),
		// or of the events each page shows.
		where := ""
		if c.Shown > 0 {
			where = " WHERE shown <= " + strconv.Itoa(c.Shown)
		}
		ids := "ARRAY(SELECT DISTINCT c" + strconv.Itoa(columnIndex(evCols, "e.id")+1) + " FROM ev" + where + ")"
		body += childrenOf(treeLayout, ids, c, treeRoleKind, treeEvidenceKind)
	}
	return sql + " " + body
}

// cellList is the columns c1 … cn of the relation alias.
func cellList(alias string, n int) string {
	cols := make([]string, n)
	for i := range cols {
		cols[i] = alias + ".c" + strconv.Itoa(i+1)
	}
	return strings.Join(cols, ", ")
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
