package db

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/internal/memo"
)

// SignalHistoryByEntityIDs returns, in one statement, the per-day event
// counts of the given entities from the UTC day of from onwards. Days
// without events are absent. Ordered by entity id, then newest day first.
func SignalHistoryByEntityIDs(ctx context.Context, q Querier, entityIDs []int64, from time.Time) ([]cryptointel.HistoryDay, error) {
	out := []cryptointel.HistoryDay{}
	if len(entityIDs) == 0 {
		return out, nil
	}
	rows, err := readRows(ctx, q, signalHistorySQL("$1::bigint[]", "$2::timestamptz")+`
		ORDER BY entity_id, day DESC`, []any{entityIDs, from.UTC().Truncate(cryptointel.Day)}, historyDest, nil)
	if err != nil {
		return nil, fmt.Errorf("error selecting signal history: %w", err)
	}
	for _, r := range rows {
		out = append(out, *r)
	}
	return out, nil
}

// signalHistorySQL is SignalHistoryByEntityIDs' statement, unordered, for
// the entity ids and the first day given as the expressions ids and from.
func signalHistorySQL(ids, from string) string {
	return `
		SELECT entity_id, to_char(day, 'YYYY-MM-DD') AS day,
		       count(*) FILTER (WHERE significance IS NOT NULL) AS signal_count,
		       count(*) AS radar_count
		FROM (
			SELECT DISTINCT ee.entity_id, ee.event_id, ee.significance,
			       date_trunc('day', ee.latest_evidence_at AT TIME ZONE 'UTC') AS day
			FROM event_entities ee
			WHERE ee.entity_id = ANY(` + ids + `) AND ee.latest_evidence_at >= ` + from + `
		) d
		GROUP BY entity_id, day`
}

// historyLayout lays out EntityWithSignalHistory's rows: the
// organization (entityWithKind), then its days.
var historyLayout = func() *rowLayout {
	var (
		e cryptointel.Entity
		h cryptointel.HistoryDay
	)
	return newRowLayout(entityDest(&e, nil), historyDest(&h, nil))
}()

func historyDest(h *cryptointel.HistoryDay, dst []any) []any {
	return append(dst, &h.EntityID, &h.Day, &h.SignalCount, &h.RadarCount)
}

// entityWithSignalHistorySQL is EntityWithSignalHistory's statement.
var entityWithSignalHistorySQL = "SELECT " + historyLayout.selectList(entityWithKind, entityColumns) +
	" FROM entities n WHERE n.id = $1::bigint UNION ALL SELECT " +
	historyLayout.selectList(entityChildKind, "h.entity_id, h.day, h.signal_count::int, h.radar_count::int") +
	" FROM (" + signalHistorySQL("ARRAY[$1::bigint]", "$2::timestamptz") + ") h"

// EntityWithSignalHistory reads, in one statement, the entity id (nil
// when there is none) and its per-day event counts from the UTC day of
// from on (SignalHistoryByEntityIDs', newest day first), as typed rows
// (fold_rows.go): an organization written with its history costs one
// statement instead of two.
func EntityWithSignalHistory(ctx context.Context, q Querier, id int64, from time.Time) (*cryptointel.Entity, []cryptointel.HistoryDay, error) {
	e, rows, err := readEntityWith(ctx, q, historyLayout, "the organization with its signal history", entityWithSignalHistorySQL,
		[]any{id, from.UTC().Truncate(cryptointel.Day)}, historyDest, nil)
	if err != nil {
		return nil, nil, err
	}
	days := make([]cryptointel.HistoryDay, len(rows))
	for i, r := range rows {
		days[i] = *r
	}
	slices.SortFunc(days, func(a, b cryptointel.HistoryDay) int { return cmp.Compare(b.Day, a.Day) })
	return e, days, nil
}

// Briefs is what BriefsFolded reads: the organizations found, each one's
// radar and signal pages, and the children of their events.
type Briefs struct {
	// Entities are the organizations found, in the order of the ids.
	Entities []*cryptointel.Entity
	// Radar and Signal are the pages, as EventsByEntityIDs returns them
	// (by organization in the order asked, then each page's order).
	Radar, Signal []cryptointel.EntityEvent
	// Children are the events' children c asked for; nil when none.
	Children *FoldedChildren
}

// BriefsFolded reads, in one statement, the briefs of the organizations
// ids: the organizations (EntitiesByIDs), a page of each one's events
// (EventsByEntityIDs with f), a page of its signal events (the same with
// f.SignalOnly), and the children c of all of those events, once each, as
// typed rows (fold_rows.go). A role's entity is a row of its own, read
// once however many events it is on (an organization is on every event of
// its pages). A brief batch was six statements: the entities, the two
// pages and a statement per child level.
func BriefsFolded(ctx context.Context, q Querier, ids []int64, f EntityEventFilter, c EventChildren) (*Briefs, error) {
	return readBriefs(ctx, q, ids, f, c, false)
}

// EntityPageFolded reads, in one statement, the entity id (nil when there
// is none) and one page of its events (EventsByEntityIDs with f, its
// SignalOnly as given) with the children c of those events: a brief of one
// page.
func EntityPageFolded(ctx context.Context, q Querier, id int64, f EntityEventFilter, c EventChildren) (*cryptointel.Entity, []cryptointel.EntityEvent, *FoldedChildren, error) {
	b, err := readBriefs(ctx, q, []int64{id}, f, c, true)
	if err != nil {
		return nil, nil, nil, err
	}
	var e *cryptointel.Entity
	if len(b.Entities) > 0 {
		e = b.Entities[0]
	}
	return e, b.Radar, b.Children, nil
}

// readBriefs is BriefsFolded, or with onePage its radar page alone, read
// with f as given (EntityPageFolded).
func readBriefs(ctx context.Context, q Querier, ids []int64, f EntityEventFilter, c EventChildren, onePage bool) (*Briefs, error) {
	out := &Briefs{}
	if len(ids) == 0 {
		return out, nil
	}
	sql, args := briefsStatement(ids, f, c, onePage)
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("error selecting briefs: %w", err)
	}
	type numberedEvent struct {
		o int64
		r cryptointel.EntityEvent
	}
	var (
		ent   *cryptointel.Entity
		ev    numberedEvent
		pages [2][]numberedEvent
		kids  childRows
		role  briefRole
		// roleEnts are the entity ids of kids.roles, which are resolved
		// once every entity row is read.
		roleEnts []int64
		ents     = map[int64]*cryptointel.Entity{}
		evSlab   slab[cryptointel.Event]
	)
	err = briefsLayout.scan(rows, "briefs", func(kind int, buf []any) []any {
		switch kind {
		case briefsEntityKind:
			ent = kids.entities.next()
			return entityDest(ent, buf)
		case briefsRadarKind, briefsSignalKind:
			ev = numberedEvent{r: cryptointel.EntityEvent{Event: evSlab.next()}}
			return eventDest(ev.r.Event, entityEventDest(&ev.r, append(buf, &ev.o)))
		case briefsRoleKind:
			role = briefRole{}
			return role.dest(buf)
		default:
			return kids.evidenceDest(buf)
		}
	}, func(kind int) error {
		switch kind {
		case briefsEntityKind:
			utcEntity(ent)
			ents[ent.ID] = ent
		case briefsRadarKind, briefsSignalKind:
			utcEvent(ev.r.Event)
			pages[kind-briefsRadarKind] = append(pages[kind-briefsRadarKind], ev)
		case briefsRoleKind:
			kids.roles = append(kids.roles, role.row)
			roleEnts = append(roleEnts, role.entityID)
		default:
			kids.addEvidence()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if e, ok := ents[id]; ok {
			out.Entities = append(out.Entities, e)
		}
	}
	// Each role's entity is read once, however many events it is on.
	for i, id := range roleEnts {
		r := &kids.roles[i]
		if r.ref.Entity = ents[id]; r.ref.Entity == nil {
			return nil, fmt.Errorf("error selecting briefs: no entity %d for a role of event %d", id, r.ref.EventID)
		}
	}
	events := make(map[int64]*cryptointel.Event, len(pages[0])+len(pages[1]))
	for i, page := range pages {
		slices.SortFunc(page, func(a, b numberedEvent) int { return cmp.Compare(a.o, b.o) })
		evs := make([]cryptointel.EntityEvent, len(page))
		for j, e := range page {
			// An event on both pages, or of two organizations, is one
			// value, as the loaders would hold it.
			if prev, ok := events[e.r.Event.ID]; ok {
				e.r.Event = prev
			} else {
				events[e.r.Event.ID] = e.r.Event
			}
			evs[j] = e.r
		}
		if i == 0 {
			out.Radar = evs
		} else {
			out.Signal = evs
		}
	}
	if c.Any() {
		out.Children = kids.folded(c)
	}
	return out, nil
}

// The kinds of rows of BriefsFolded (briefsLayout): the organizations,
// their radar and signal events (numbered in their statement's order),
// the events' roles and evidence.
const (
	briefsEntityKind = iota
	briefsRadarKind
	briefsSignalKind
	briefsRoleKind
	briefsEvidenceKind
)

var briefsLayout = func() *rowLayout {
	var (
		n    int64
		e    cryptointel.Entity
		ev   cryptointel.EntityEvent
		role briefRole
		v    cryptointel.Evidence
	)
	ev.Event = new(cryptointel.Event)
	page := eventDest(ev.Event, entityEventDest(&ev, []any{&n}))
	return newRowLayout(entityDest(&e, nil), page, page, role.dest(nil), evidenceDest(&v, nil))
}()

// briefRole is a role row of BriefsFolded: the role, and its entity's id
// (the entity is a row of its own, read once).
type briefRole struct {
	row      roleRow
	entityID int64
}

func (r *briefRole) dest(dst []any) []any {
	return append(dst, &r.row.ref.EventID, &r.row.ref.Role, &r.row.position, &r.entityID)
}

// briefsStatement is BriefsFolded's statement: the radar and signal pages
// as EventsByEntityIDs' statements rd and sg (their arguments are the
// same: the ids, the filter's), then the organizations, rd's and sg's
// rows and their events' children as typed rows (briefsLayout). The pages'
// columns are named c1, c2, … in their statement's order.
//
// With onePage, the statement reads the radar page alone, with f's
// SignalOnly as given (EntityPageFolded).
func briefsStatement(ids []int64, f EntityEventFilter, c EventChildren, onePage bool) (string, []any) {
	if !onePage {
		f.SignalOnly = false
	}
	radar, args := entityEventsStatement(ids, f, EventChildren{})
	// The radar page's text holds the filter's shape (which filters are
	// given, the sort); the values are its arguments.
	return briefsTexts.Get(briefsShape{radar, c, onePage}, func() string { return buildBriefs(ids, f, c, onePage) }), args
}

// briefsShape is what briefsStatement's text depends on: the radar page's
// statement (the filters given, the sort), the children read and whether
// the signal page is read.
type briefsShape struct {
	radar   string
	c       EventChildren
	onePage bool
}

// briefsTexts keeps briefsStatement's texts (see foldedPages).
var briefsTexts memo.Bounded[briefsShape, string]

// buildBriefs builds briefsStatement's text.
func buildBriefs(ids []int64, f EntityEventFilter, c EventChildren, onePage bool) string {
	evCols := entityEventColumns + ", " + eventColumns
	page := func(f EntityEventFilter) string {
		sql, _ := entityEventsStatement(ids, f, EventChildren{})
		return strings.Replace(sql, "SELECT "+evCols,
			"SELECT row_number() OVER (ORDER BY "+entityEventsOrder(f.Sort)+") AS o, "+c.leanNumbered(numbered(evCols)), 1)
	}
	cells := cellList("p", len(splitColumns(evCols)))
	id := "c" + strconv.Itoa(columnIndex(evCols, "e.id")+1)
	var sql string
	if onePage {
		sql = "WITH rd AS MATERIALIZED (" + page(f) + ")," +
			" ev AS MATERIALIZED (SELECT " + id + " AS id FROM rd)"
	} else {
		f.SignalOnly = false
		radar := page(f)
		f.SignalOnly = true
		signal := page(f)
		sql = "WITH rd AS MATERIALIZED (" + radar + "), sg AS MATERIALIZED (" + signal + ")," +
			" ev AS MATERIALIZED (SELECT " + id + " AS id FROM rd UNION SELECT " + id + " FROM sg)"
	}
	// The organizations, and the entities of the events' roles, once each.
	// The ids as a subquery's array: as a parameter, of unknown length to
	// a generic plan, they made a small entities table look cheaper read
	// whole.
	ents := "ARRAY(SELECT unnest($1::bigint[]))"
	if c.Roles {
		sql += ", ro AS MATERIALIZED (SELECT ee.event_id, ee.role, ee.position, ee.entity_id" +
			" FROM event_entities ee WHERE ee.event_id = ANY(ARRAY(SELECT id FROM ev)))"
		ents = "ARRAY(SELECT unnest($1::bigint[]) UNION SELECT entity_id FROM ro)"
	}
	sql += " SELECT " + briefsLayout.selectList(briefsEntityKind, entityColumns) + " FROM entities n WHERE n.id = ANY(" + ents + ")" +
		" UNION ALL SELECT " + briefsLayout.selectList(briefsRadarKind, "p.o, "+cells) + " FROM rd p"
	if !onePage {
		sql += " UNION ALL SELECT " + briefsLayout.selectList(briefsSignalKind, "p.o, "+cells) + " FROM sg p"
	}
	if c.Roles {
		sql += " UNION ALL SELECT " + briefsLayout.selectList(briefsRoleKind, "ro.event_id, ro.role, ro.position, ro.entity_id") + " FROM ro"
	}
	evidence := c
	evidence.Roles = false
	sql += childrenOf(briefsLayout, "ARRAY(SELECT id FROM ev)", evidence, briefsRoleKind, briefsEvidenceKind)
	return sql
}
