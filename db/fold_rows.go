package db

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/internal/memo"
)

// Typed rows. A folded statement returns every level of its document as
// rows of one result: each row starts with its kind (0 for the first
// level, 1 for the next, …) and carries its level's columns in slots of
// their type, NULL in the others, the levels joined by UNION ALL. The rows
// come back in the binary format and are scanned by the same destination
// functions (columns_gen.go) as each level's own statement: PostgreSQL
// sends each value as it is stored instead of writing it into JSON (a text
// form of every timestamp, number and array, every string escaped), and
// the service reads it without parsing JSON. At a million events this
// halved PostgreSQL's CPU of the 25 latest with their owners and evidence
// (tests/bench/NOTES.md).
//
// A level's slots are shared with the other levels' columns of the same
// type (the i-th bigint of every level is one column), so a row carries
// few NULLs. The order of the rows is not relied upon: each level carries
// what orders it (a row number, or the columns of its statement's ORDER
// BY) and is sorted in the service.

// rowLayout places the columns of each kind of row in slots.
type rowLayout struct {
	// types is each slot's SQL type (the slots follow the kind column).
	types []string
	// kinds are each kind's columns' slots, in column order.
	kinds [][]int
	// lists keeps the select lists built (selectList).
	lists memo.Bounded[selectShape, string]
}

// selectShape is a select list's shape: its kind and its expressions.
type selectShape struct {
	kind  int
	exprs string
}

// sqlTypeOf is the SQL type of a column scanned into dst.
func sqlTypeOf(dst any) string {
	switch dst.(type) {
	case *int64:
		return "bigint"
	case *int32, *int:
		return "int"
	case *string, **string:
		return "text"
	case *[]string:
		return "text[]"
	case *float64, **float64:
		return "float8"
	case *time.Time, **time.Time:
		return "timestamptz"
	case *bool:
		return "bool"
	}
	panic(fmt.Sprintf("db: no column type for %T", dst))
}

// newRowLayout lays out kinds, each given as its columns' scan
// destinations (their types matter, not their values).
func newRowLayout(kinds ...[]any) *rowLayout {
	l := &rowLayout{}
	for _, dsts := range kinds {
		used := map[string]int{}
		slots := make([]int, len(dsts))
		for j, d := range dsts {
			t := sqlTypeOf(d)
			n := used[t]
			used[t]++
			slot := -1
			for i, st := range l.types {
				if st == t {
					if n == 0 {
						slot = i
						break
					}
					n--
				}
			}
			if slot < 0 {
				l.types = append(l.types, t)
				slot = len(l.types) - 1
			}
			slots[j] = slot
		}
		l.kinds = append(l.kinds, slots)
	}
	return l
}

// selectList is the select list of kind's rows: the kind, then exprs (its
// columns, a comma-separated list in its destinations' order) in their
// slots and NULL in the others.
func (l *rowLayout) selectList(kind int, exprs string) string {
	return l.lists.Get(selectShape{kind, exprs}, func() string { return l.buildSelectList(kind, exprs) })
}

// buildSelectList builds selectList's text.
func (l *rowLayout) buildSelectList(kind int, exprs string) string {
	cols := splitColumns(exprs)
	if len(cols) != len(l.kinds[kind]) {
		panic(fmt.Sprintf("db: %d columns for kind %d of %d", len(cols), kind, len(l.kinds[kind])))
	}
	out := make([]string, 1+len(l.types))
	out[0] = strconv.Itoa(kind)
	for i, t := range l.types {
		out[1+i] = "NULL::" + t
	}
	for j, s := range l.kinds[kind] {
		out[1+s] = cols[j]
	}
	return strings.Join(out, ", ")
}

// scan reads rows of the layout: for each row, dest(kind, buf) returns
// the kind's destinations, in its columns' order, appended to buf (the
// last row's, emptied), and each is called after they are scanned.
//
// The columns are decoded with a scan plan per kind and column, planned at
// the kind's first row: a slot holds one SQL type but the kinds that share
// it scan it into different Go types (a title's *string, an alias list's
// *[]string, a nullable **string), and pgx's own Scan, which keeps one plan
// per column, planned the column again at every change of kind — a quarter
// of its time on a folded page, whose kinds alternate. Text columns are
// decoded into one arena per statement (rowArena, fold_text.go) and
// binary fixed-width values (integers, floats, booleans, instants) read in
// place; the other columns and what those leave go by pgx's plans.
func (l *rowLayout) scan(rows pgx.Rows, what string, dest func(kind int, buf []any) []any, each func(kind int) error) error {
	defer rows.Close()
	var (
		kind     int32
		fields   []pgconn.FieldDescription
		types    *pgtype.Map
		kindPlan pgtype.ScanPlan
		plans    = make([][]pgtype.ScanPlan, len(l.kinds))
		decoding = make([][]colDecoding, len(l.kinds))
		arena    rowArena
		buf      []any
	)
	for rows.Next() {
		raw := rows.RawValues()
		if fields == nil {
			fields = rows.FieldDescriptions()
			if len(fields) != 1+len(l.types) {
				return fmt.Errorf("error scanning %s: %d columns, the layout has %d", what, len(fields), 1+len(l.types))
			}
			if c := rows.Conn(); c != nil {
				types = c.TypeMap()
			} else {
				types = pgtype.NewMap()
			}
			kindPlan = types.PlanScan(fields[0].DataTypeOID, fields[0].Format, &kind)
		}
		if len(raw) != len(fields) {
			return fmt.Errorf("error scanning %s: %d values for %d columns", what, len(raw), len(fields))
		}
		if err := kindPlan.Scan(raw[0], &kind); err != nil {
			return fmt.Errorf("error scanning %s: kind: %w", what, err)
		}
		k := int(kind)
		if k < 0 || k >= len(l.kinds) {
			return fmt.Errorf("error scanning %s: row of kind %d", what, k)
		}
		d := dest(k, buf[:0])
		buf = d
		slots := l.kinds[k]
		ps := plans[k]
		ds := decoding[k]
		if ps == nil {
			ps = make([]pgtype.ScanPlan, len(slots))
			ds = make([]colDecoding, len(slots))
			for j, s := range slots {
				f := fields[1+s]
				if ds[j] = decodingOf(f.DataTypeOID, f.Format, d[j]); ds[j] == byPlan {
					ps[j] = types.PlanScan(f.DataTypeOID, f.Format, d[j])
				}
			}
			plans[k], decoding[k] = ps, ds
		}
		for j, s := range slots {
			v := raw[1+s]
			switch ds[j] {
			case textString:
				if v != nil {
					*d[j].(*string) = arena.str(v)
					continue
				}
			case textNullable:
				p := d[j].(**string)
				if v == nil {
					*p = nil
				} else {
					*p = arena.ptr(v)
				}
				continue
			case textList:
				p := d[j].(*[]string)
				if v == nil {
					*p = nil
					continue
				}
				if arena.list(v, p) {
					continue
				}
			case byPlan:
			default: // a fixed-width value
				if v == nil && ds[j] == binFloatNullable {
					*d[j].(**float64) = nil
					continue
				}
				if v != nil && arena.fixed(ds[j], v, d[j]) {
					continue
				}
			}
			if ps[j] == nil { // a value the arena leaves to pgx
				ps[j] = types.PlanScan(fields[1+s].DataTypeOID, fields[1+s].Format, d[j])
			}
			if err := ps[j].Scan(v, d[j]); err != nil {
				return fmt.Errorf("error scanning %s: column %d (%s): %w", what, 1+s, fields[1+s].Name, err)
			}
		}
		if err := each(k); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("error selecting %s: %w", what, err)
	}
	return nil
}

// The kinds of rows of the events' children, as their own statements
// (EntitiesByEventIDs, EvidenceByEventIDs) select them: an owner or
// participant with its position and entity, an evidence item.
const (
	roleRowColumns     = "ee.event_id, ee.role, ee.position, " + entityColumns
	evidenceRowColumns = evidenceColumns
)

// roleRow is a scanned role row.
type roleRow struct {
	ref      cryptointel.EventEntityRef
	position int32
}

func (r *roleRow) dest(ent *cryptointel.Entity, dst []any) []any {
	r.ref.Entity = ent
	return entityDest(r.ref.Entity, append(dst, &r.ref.EventID, &r.ref.Role, &r.position))
}

// slab hands out the values of one statement's rows from shared blocks:
// one allocation for several rows' values, which serve one request.
type slab[T any] []T

// next is a new zero T.
func (s *slab[T]) next() *T {
	if len(*s) == 0 {
		*s = make([]T, 16)
	}
	p := &(*s)[0]
	*s = (*s)[1:]
	return p
}

// childRows collects the children rows of a folded statement.
type childRows struct {
	roles    []roleRow
	evidence []*cryptointel.Evidence
	role     roleRow
	ev       *cryptointel.Evidence
	entities slab[cryptointel.Entity]
	evs      slab[cryptointel.Evidence]
}

func (c *childRows) roleDest(dst []any) []any {
	c.role = roleRow{}
	return c.role.dest(c.entities.next(), dst)
}

func (c *childRows) addRole() {
	utcEntity(c.role.ref.Entity)
	c.roles = append(c.roles, c.role)
}

func (c *childRows) evidenceDest(dst []any) []any {
	c.ev = c.evs.next()
	return evidenceDest(c.ev, dst)
}

func (c *childRows) addEvidence() {
	utcEvidence(c.ev)
	c.evidence = append(c.evidence, c.ev)
}

// folded returns the children in EntitiesByEventIDs' order (event, role,
// position, entity) and EvidenceByEventIDs' (event, newest first, id), by
// event; the maps are nil when cs does not fold them.
func (c *childRows) folded(cs EventChildren) *FoldedChildren {
	f := &FoldedChildren{}
	if cs.Roles {
		slices.SortFunc(c.roles, func(a, b roleRow) int {
			return cmp.Or(cmp.Compare(a.ref.EventID, b.ref.EventID), strings.Compare(a.ref.Role, b.ref.Role),
				cmp.Compare(a.position, b.position), cmp.Compare(a.ref.Entity.ID, b.ref.Entity.ID))
		})
		refs := make([]cryptointel.EventEntityRef, len(c.roles))
		for i, r := range c.roles {
			refs[i] = r.ref
		}
		f.Roles = groupByEvent(refs, func(r *cryptointel.EventEntityRef) int64 { return r.EventID })
	}
	if cs.Evidence {
		slices.SortFunc(c.evidence, func(a, b *cryptointel.Evidence) int {
			return cmp.Or(cmp.Compare(a.EventID, b.EventID), b.TS.Compare(a.TS), cmp.Compare(a.ID, b.ID))
		})
		f.Evidence = groupByEvent(c.evidence, func(v **cryptointel.Evidence) int64 { return (*v).EventID })
	}
	return f
}

// groupByEvent maps each event to its run of the sorted items: each run
// is a part of items (capped, so that an append copies it), one
// allocation for all of them instead of a slice grown per event.
func groupByEvent[T any](items []T, event func(*T) int64) map[int64][]T {
	runs := 0
	for i := range items {
		if i == 0 || event(&items[i]) != event(&items[i-1]) {
			runs++
		}
	}
	out := make(map[int64][]T, runs)
	for start := 0; start < len(items); {
		id := event(&items[start])
		end := start + 1
		for end < len(items) && event(&items[end]) == id {
			end++
		}
		out[id] = items[start:end:end]
		start = end
	}
	return out
}

// childrenOf are the UNION ALL branches of the children c of the events
// whose ids are the array ids, as kinds roleKind and evidenceKind of l.
// Each role's entity is read by its primary key (a LATERAL subquery kept
// apart by OFFSET 0): joined, the generic plan hashed the whole entities
// table for every statement, which cost more than the page's probes.
func childrenOf(l *rowLayout, ids string, c EventChildren, roleKind, evidenceKind int) string {
	s := ""
	if c.Roles {
		s += " UNION ALL SELECT " + l.selectList(roleKind, roleRowColumns) +
			" FROM event_entities ee CROSS JOIN LATERAL (SELECT * FROM entities n WHERE n.id = ee.entity_id OFFSET 0) n" +
			" WHERE ee.event_id = ANY(" + ids + ")"
	}
	if c.Evidence {
		cols := evidenceRowColumns
		if c.NoContent {
			cols = strings.Replace(cols, "v.content", "''::text", 1)
		}
		s += " UNION ALL SELECT " + l.selectList(evidenceKind, cols) +
			" FROM evidence v WHERE v.event_id = ANY(" + ids + ")"
	}
	return s
}

// The kinds of a folded page of events (pageLayout): the page's events
// with their row number, their roles, their evidence.
const (
	pageEventKind = iota
	pageRoleKind
	pageEvidenceKind
)

var pageLayout = func() *rowLayout {
	var (
		o int64
		e cryptointel.Event
		r roleRow
		v cryptointel.Evidence
	)
	return newRowLayout(eventDest(&e, []any{&o}), r.dest(new(cryptointel.Entity), nil), evidenceDest(&v, nil))
}()

// foldPage folds into page, a statement selecting eventColumns of events
// e in order, the children c of its events: the page is a materialized
// common table expression numbering its rows in its order, followed by
// its events' roles and evidence over the page's ids (one index scan each
// for the whole page), as typed rows (pageLayout). What the document does
// not select of the events' text and the evidence's content is not read
// (c.NoText, c.NoContent).
func foldPage(page, order string, c EventChildren) string {
	return foldedPages.Get(foldedPageShape{page, order, c}, func() string { return buildFoldPage(page, order, c) })
}

// foldedPageShape is what foldPage's text depends on.
type foldedPageShape struct {
	page, order string
	c           EventChildren
}

// foldedPages keeps foldPage's texts. Like every memo of statement texts
// here (a layout's select lists, ResolveEntitiesFolded's texts), it is
// keyed by a shape — which filters are given, what the fixed document
// selects — never by a value, which travels as an argument: shapes are a
// few dozen, far below the memo's bound (memo.DefaultMax), and a shape
// always builds the same text, so a process builds each once.
var foldedPages memo.Bounded[foldedPageShape, string]

// buildFoldPage builds foldPage's text.
func buildFoldPage(page, order string, c EventChildren) string {
	page = strings.Replace(page, "SELECT "+eventColumns+" FROM",
		"SELECT "+c.leanEventColumns(eventColumns)+", row_number() OVER (ORDER BY "+order+") AS o FROM", 1)
	return "WITH p AS MATERIALIZED (" + page + ") SELECT " + pageLayout.selectList(pageEventKind, "e.o, "+eventColumns) +
		" FROM p e" + childrenOf(pageLayout, "ARRAY(SELECT id FROM p)", c, pageRoleKind, pageEvidenceKind)
}

// scanFoldedPage reads the rows of foldPage: the events in the page's
// order and their children.
func scanFoldedPage(rows pgx.Rows, what string, c EventChildren) ([]*cryptointel.Event, *FoldedChildren, error) {
	type numbered struct {
		o int64
		e *cryptointel.Event
	}
	var (
		evs    []numbered
		cur    numbered
		kids   childRows
		events slab[cryptointel.Event]
	)
	err := pageLayout.scan(rows, what, func(kind int, buf []any) []any {
		switch kind {
		case pageEventKind:
			cur = numbered{e: events.next()}
			return eventDest(cur.e, append(buf, &cur.o))
		case pageRoleKind:
			return kids.roleDest(buf)
		default:
			return kids.evidenceDest(buf)
		}
	}, func(kind int) error {
		switch kind {
		case pageEventKind:
			utcEvent(cur.e)
			evs = append(evs, cur)
		case pageRoleKind:
			kids.addRole()
		default:
			kids.addEvidence()
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(evs, func(a, b numbered) int { return cmp.Compare(a.o, b.o) })
	out := make([]*cryptointel.Event, len(evs))
	for i, n := range evs {
		out[i] = n.e
	}
	return out, kids.folded(c), nil
}
