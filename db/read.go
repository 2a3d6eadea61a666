package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/search"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The graph's hot reads — pages of events, their owners, participants and
// evidence, entities by id, relationships, each entity's events — run on
// pgx directly rather than through Bun: their SQL texts are fixed (one per
// combination of filters), so pgx prepares each once per connection and
// PostgreSQL plans it once, and rows come back in the binary format and are
// scanned without reflection. Bun's text scanning was about a third of the
// CPU of a computed page (tests/bench/NOTES.md).

// Querier runs the read statements: DB.Reader() for content reads (a
// caught-up replica when the request's grant allows it, else the primary),
// the primary's pool (*pgxpool.Pool) for reads that must see the primary,
// a connection or a transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

var (
	_ Querier = (*pgxpool.Pool)(nil)
	_ Querier = (*Reader)(nil)
)

// query runs sql on q, counting it as one of the request's statements.
func query(ctx context.Context, q Querier, sql string, args ...any) (pgx.Rows, error) {
	CountStatement(ctx)
	return q.Query(ctx, sql, args...)
}

// readRows runs sql, whose columns are dest's, and returns its rows, each
// scanned into a new T and then put right by fix (nil for nothing).
func readRows[T any](ctx context.Context, q Querier, sql string, args []any, dest func(*T, []any) []any, fix func(*T)) ([]*T, error) {
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*T{}
	var buf []any
	for rows.Next() {
		x := new(T)
		buf = dest(x, buf[:0])
		if err := rows.Scan(buf...); err != nil {
			return nil, err
		}
		if fix != nil {
			fix(x)
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// sqlArgs builds a statement's positional arguments.
type sqlArgs []any

// add appends v and returns its placeholder.
func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// scan reads every row of rows into a fresh T through dest (a generated
// destination function of columns_gen.go), puts its instants in UTC and
// hands it to each. what names the rows in errors.
func scan[T any](rows pgx.Rows, what string, dest func(*T, []any) []any, utc func(*T), each func(*T)) error {
	defer rows.Close()
	var dst []any
	for rows.Next() {
		x := new(T)
		dst = dest(x, dst[:0])
		if err := rows.Scan(dst...); err != nil {
			return fmt.Errorf("error scanning %s: %w", what, err)
		}
		utc(x)
		each(x)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("error selecting %s: %w", what, err)
	}
	return nil
}

// scanEvents reads rows of eventColumns into events.
func scanEvents(rows pgx.Rows, what string, each func(e *cryptointel.Event)) error {
	return scan(rows, what, eventDest, utcEvent, each)
}

// ListEvents returns one page of events matching f.
func ListEvents(ctx context.Context, q Querier, f EventFilter) ([]*cryptointel.Event, error) {
	if f.EntityID != 0 && strings.TrimSpace(f.Topic) == "" {
		// An entity's events are walked from event_entities in the page's
		// order (EventsByEntityIDs): the events of a busy entity in the
		// window are never all read.
		rows, err := EventsByEntityIDs(ctx, q, []int64{f.EntityID}, f.entityFilter())
		if err != nil {
			return nil, err
		}
		out := make([]*cryptointel.Event, len(rows))
		for i := range rows {
			out[i] = rows[i].Event
		}
		return out, nil
	}
	sql, a, err := listEventsStatement(f)
	if err != nil {
		return nil, err
	}
	rows, err := query(ctx, q, sql, a...)
	if err != nil {
		return nil, fmt.Errorf("error listing events: %w", err)
	}
	out := make([]*cryptointel.Event, 0, f.Limit)
	if err := scanEvents(rows, "events", func(e *cryptointel.Event) { out = append(out, e) }); err != nil {
		return nil, err
	}
	return out, nil
}

// ListEventsFolded is ListEvents with the children c of the page's events
// read in the same statement (fold.go). Without children it is ListEvents
// and returns no children.
func ListEventsFolded(ctx context.Context, q Querier, f EventFilter, c EventChildren) ([]*cryptointel.Event, *FoldedChildren, error) {
	if !c.Any() {
		evs, err := ListEvents(ctx, q, f)
		return evs, nil, err
	}
	if f.EntityID != 0 && strings.TrimSpace(f.Topic) == "" {
		rows, folded, err := EventsByEntityIDsFolded(ctx, q, []int64{f.EntityID}, f.entityFilter(), c)
		if err != nil {
			return nil, nil, err
		}
		out := make([]*cryptointel.Event, len(rows))
		for i := range rows {
			out[i] = rows[i].Event
		}
		return out, folded, nil
	}
	sql, a, err := listEventsStatement(f)
	if err != nil {
		return nil, nil, err
	}
	sql = foldPage(sql, eventsOrder(f.Sort), c)
	rows, err := query(ctx, q, sql, a...)
	if err != nil {
		return nil, nil, fmt.Errorf("error listing events: %w", err)
	}
	return scanFoldedPage(rows, "events", c)
}

// eventsOrder is the order of a page of events sorted by sort.
func eventsOrder(sort string) string {
	if sort == SortRecency {
		return "e.latest_evidence_at DESC, e.id DESC"
	}
	return "e.significance DESC NULLS LAST, e.latest_evidence_at DESC, e.id DESC"
}

// entityFilter is f as the filter of its entity's events (f.EntityID set,
// no topic): the same window, category, signal filter, order and page.
func (f EventFilter) entityFilter() EntityEventFilter {
	sort := SortSignificance
	if f.Sort == SortRecency {
		sort = SortRecency
	}
	return EntityEventFilter{SignalOnly: f.SignalOnly, Since: f.Since, Category: f.Category, Sort: sort, Limit: f.Limit, Offset: f.Offset}
}

// listEventsStatement is ListEvents' statement for f. The significance
// order is events_significance_recency_idx's, so a page reads its rows from
// the index without a sort whatever the window (migration 014).
func listEventsStatement(f EventFilter) (string, sqlArgs, error) {
	var (
		a sqlArgs
		b strings.Builder
	)
	b.WriteString("SELECT " + eventColumns + " FROM events e WHERE e.latest_evidence_at >= ")
	since := a.add(f.Since)
	b.WriteString(since)
	if f.SignalOnly {
		b.WriteString(" AND e.significance IS NOT NULL")
	}
	if f.Category != "" {
		b.WriteString(" AND e.category = " + a.add(f.Category))
	}
	if f.EntityID != 0 {
		b.WriteString(" AND e.id IN (SELECT event_id FROM event_entities WHERE entity_id = " + a.add(f.EntityID) +
			" AND latest_evidence_at >= " + since + ")")
	}
	if strings.TrimSpace(f.Topic) != "" {
		cond, err := search.TopicFilter(a.add, f.Topic, f.Since, f.Sort == SortRecency)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(" AND " + cond)
	}
	b.WriteString(" ORDER BY " + eventsOrder(f.Sort))
	b.WriteString(" LIMIT " + a.add(f.Limit) + " OFFSET " + a.add(f.Offset))
	return b.String(), a, nil
}

// FeedEvents returns one page of a bulk feed, ascending by
// (latest_evidence_at, id) from f.Since, so that a keyset walk picks up
// events ingested while it runs without duplicates or gaps.
func FeedEvents(ctx context.Context, q Querier, f FeedFilter) ([]*cryptointel.Event, error) {
	sql, a := feedStatement(f)
	rows, err := query(ctx, q, sql, a...)
	if err != nil {
		return nil, fmt.Errorf("error reading feed: %w", err)
	}
	out := make([]*cryptointel.Event, 0, f.Limit)
	if err := scanEvents(rows, "feed", func(e *cryptointel.Event) { out = append(out, e) }); err != nil {
		return nil, err
	}
	return out, nil
}

// FeedEventsFolded is FeedEvents with the children c asks for read in the
// same statement (foldPage), as ListEventsFolded reads a page of events.
func FeedEventsFolded(ctx context.Context, q Querier, f FeedFilter, c EventChildren) ([]*cryptointel.Event, *FoldedChildren, error) {
	if !c.Any() {
		evs, err := FeedEvents(ctx, q, f)
		return evs, nil, err
	}
	sql, a := feedStatement(f)
	rows, err := query(ctx, q, foldPage(sql, feedOrder, c), a...)
	if err != nil {
		return nil, nil, fmt.Errorf("error reading feed: %w", err)
	}
	return scanFoldedPage(rows, "feed", c)
}

// feedOrder is the order of a feed's page.
const feedOrder = "e.latest_evidence_at, e.id"

// feedStatement is FeedEvents' statement.
func feedStatement(f FeedFilter) (string, sqlArgs) {
	var (
		a sqlArgs
		b strings.Builder
	)
	b.WriteString("SELECT " + eventColumns + " FROM events e WHERE e.latest_evidence_at >= " + a.add(f.Since))
	if f.SignalOnly {
		b.WriteString(" AND e.significance IS NOT NULL")
	}
	if f.Category != "" {
		b.WriteString(" AND e.category = " + a.add(f.Category))
	}
	offset := 0
	if f.After != nil {
		b.WriteString(" AND (e.latest_evidence_at, e.id) > (" + a.add(f.After.At) + ", " + a.add(f.After.ID) + ")")
	} else {
		offset = f.Offset
	}
	b.WriteString(" ORDER BY " + feedOrder + " LIMIT " + a.add(f.Limit) + " OFFSET " + a.add(offset))
	return b.String(), a
}

// EventsByIDs returns the events with the given ids in one statement, in no
// particular order; unknown ids are absent.
func EventsByIDs(ctx context.Context, q Querier, ids []int64) ([]*cryptointel.Event, error) {
	out := make([]*cryptointel.Event, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := query(ctx, q, "SELECT "+eventColumns+" FROM events e WHERE e.id = ANY($1)", ids)
	if err != nil {
		return nil, fmt.Errorf("error selecting events by ids: %w", err)
	}
	if err := scanEvents(rows, "events by ids", func(e *cryptointel.Event) { out = append(out, e) }); err != nil {
		return nil, err
	}
	return out, nil
}

// EvidenceByEventIDs returns the evidence of the given events in one
// statement, ordered by event id, then newest first.
func EvidenceByEventIDs(ctx context.Context, q Querier, eventIDs []int64) ([]*cryptointel.Evidence, error) {
	out := make([]*cryptointel.Evidence, 0, 2*len(eventIDs))
	if len(eventIDs) == 0 {
		return out, nil
	}
	rows, err := query(ctx, q, `SELECT `+evidenceColumns+` FROM evidence v
		WHERE v.event_id = ANY($1) ORDER BY v.event_id, v.ts DESC, v.id`, eventIDs)
	if err != nil {
		return nil, fmt.Errorf("error selecting evidence by event ids: %w", err)
	}
	if err := scan(rows, "evidence", evidenceDest, utcEvidence, func(v *cryptointel.Evidence) { out = append(out, v) }); err != nil {
		return nil, err
	}
	return out, nil
}

// EntitiesByEventIDs returns, in one statement, the owners and participants
// of the given events with their entities, ordered by event id, role and
// position.
func EntitiesByEventIDs(ctx context.Context, q Querier, eventIDs []int64) ([]cryptointel.EventEntityRef, error) {
	out := make([]cryptointel.EventEntityRef, 0, 2*len(eventIDs))
	if len(eventIDs) == 0 {
		return out, nil
	}
	rows, err := query(ctx, q, `SELECT `+eventEntityRefColumns+`, `+entityColumns+`
		FROM event_entities ee JOIN entities n ON n.id = ee.entity_id
		WHERE ee.event_id = ANY($1)
		ORDER BY ee.event_id, ee.role, ee.position, ee.entity_id`, eventIDs)
	if err != nil {
		return nil, fmt.Errorf("error selecting entities by event ids: %w", err)
	}
	err = scan(rows, "entities by event ids",
		func(r *cryptointel.EventEntityRef, dst []any) []any {
			r.Entity = new(cryptointel.Entity)
			return entityDest(r.Entity, eventEntityRefDest(r, dst))
		},
		func(r *cryptointel.EventEntityRef) { utcEntity(r.Entity) },
		func(r *cryptointel.EventEntityRef) { out = append(out, *r) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// entitiesByIDsSQL is EntitiesByIDs' statement.
const entitiesByIDsSQL = "SELECT " + entityColumns + " FROM entities n WHERE n.id = ANY($1)"

// EntitiesByIDs returns the entities with the given ids in one statement,
// in no particular order; unknown ids are absent.
func EntitiesByIDs(ctx context.Context, q Querier, ids []int64) ([]*cryptointel.Entity, error) {
	out := make([]*cryptointel.Entity, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := query(ctx, q, entitiesByIDsSQL, ids)
	if err != nil {
		return nil, fmt.Errorf("error selecting entities by ids: %w", err)
	}
	if err := scan(rows, "entities", entityDest, utcEntity, func(e *cryptointel.Entity) { out = append(out, e) }); err != nil {
		return nil, err
	}
	return out, nil
}

// RelationshipsByEntityIDs returns, in one statement, the direct
// relationships of each given entity that f keeps, outbound and inbound,
// paged per entity (f's limit and offset apply to each entity separately),
// each with the entity at its other end (Related). Each entity's edges are
// ordered outbound first, then by relationship type and related entity id;
// the result is ordered by entity id, then that order. Each direction is
// read from the index that leads with its end and the type (migration 013),
// so a type filter is an index range, not a scan of the entity's edges.
func RelationshipsByEntityIDs(ctx context.Context, q Querier, entityIDs []int64, f RelationshipFilter) ([]*cryptointel.EntityRelationship, error) {
	out := []*cryptointel.EntityRelationship{}
	if len(entityIDs) == 0 {
		return out, nil
	}
	// The entity at the other end exists (the edge's foreign keys cascade),
	// so it is joined, not outer-joined.
	rows, err := query(ctx, q, relationshipsSQL(f), f.args(entityIDs)...)
	if err != nil {
		return nil, fmt.Errorf("error selecting relationships by entity ids: %w", err)
	}
	err = scan(rows, "relationships",
		func(r *cryptointel.EntityRelationship, dst []any) []any {
			r.Related = new(cryptointel.Entity)
			return entityDest(r.Related, relationshipDest(r, dst))
		},
		func(r *cryptointel.EntityRelationship) { utcRelationship(r); utcEntity(r.Related) },
		func(r *cryptointel.EntityRelationship) { out = append(out, r) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// relationshipsSQL is RelationshipsByEntityIDs' statement for f.
func relationshipsSQL(f RelationshipFilter) string {
	return `
		SELECT ` + relationshipColumns + `, ` + entityColumns + `
		FROM (
			SELECT x.*, row_number() OVER (
				PARTITION BY x.entity_id
				ORDER BY x.direction DESC, x.relationship_type, x.related_entity_id) AS rn
			FROM (` + f.edgesSQL() + `) x
		) y
		CROSS JOIN LATERAL (SELECT * FROM entities n WHERE n.id = y.related_entity_id OFFSET 0) n
		WHERE y.rn > $2 AND y.rn <= $2 + $3
		ORDER BY y.entity_id, y.rn`
}

// EventsByEntityIDs returns, in one statement (a LATERAL join over all the
// given entities), each entity's events matching f, an event once per entity
// even when the entity is both owner and participant. The result is grouped
// by entity in the order of entityIDs, each group in f's order. The
// owner-duplicate check is a scalar subquery with LIMIT so it stays a
// per-row primary-key probe (an EXISTS here gets planned as a hashed scan of
// every owner row).
func EventsByEntityIDs(ctx context.Context, q Querier, entityIDs []int64, f EntityEventFilter) ([]cryptointel.EntityEvent, error) {
	out, _, err := EventsByEntityIDsFolded(ctx, q, entityIDs, f, EventChildren{})
	return out, err
}

// EventsByEntityIDsFolded is EventsByEntityIDs with the children c of the
// events read in the same statement (fold.go); nil children when c has
// none.
func EventsByEntityIDsFolded(ctx context.Context, q Querier, entityIDs []int64, f EntityEventFilter, c EventChildren) ([]cryptointel.EntityEvent, *FoldedChildren, error) {
	if len(entityIDs) == 0 {
		return []cryptointel.EntityEvent{}, nil, nil
	}
	sql, a := entityEventsStatement(entityIDs, f, c)
	rows, err := query(ctx, q, sql, a...)
	if err != nil {
		return nil, nil, fmt.Errorf("error selecting events by entity ids: %w", err)
	}
	defer rows.Close()
	out := make([]cryptointel.EntityEvent, 0, len(entityIDs)*max(f.Limit, 1))
	var folded *FoldedChildren
	var roles, evidence []byte
	dest := func(r *cryptointel.EntityEvent, dst []any) []any {
		r.Event = new(cryptointel.Event)
		return eventDest(r.Event, entityEventDest(r, dst))
	}
	if c.Any() {
		folded = &FoldedChildren{}
		plain := dest
		dest = func(r *cryptointel.EntityEvent, dst []any) []any { return append(plain(r, dst), &roles, &evidence) }
	}
	var ferr error
	err = scan(rows, "events by entity ids", dest,
		func(r *cryptointel.EntityEvent) { utcEvent(r.Event) },
		func(r *cryptointel.EntityEvent) {
			if folded != nil && ferr == nil {
				ferr = folded.add(r.Event.ID, roles, evidence)
			}
			out = append(out, *r)
		})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, nil, err
	}
	return out, folded, nil
}

// entityEventsStatement is EventsByEntityIDs' statement. The significance
// order walks event_entities_entity_significance_idx and the recency order
// event_entities_entity_recency_idx, the window an index condition of each
// (migration 015).
func entityEventsStatement(entityIDs []int64, f EntityEventFilter, c EventChildren) (string, sqlArgs) {
	var (
		a     sqlArgs
		where strings.Builder
	)
	ids := a.add(entityIDs)
	if f.SignalOnly {
		where.WriteString(" AND ee.significance IS NOT NULL")
	}
	if !f.Since.IsZero() {
		where.WriteString(" AND ee.latest_evidence_at >= " + a.add(f.Since))
	}
	if f.Category != "" {
		where.WriteString(" AND ee.category = " + a.add(f.Category))
	}
	// Several content types in recency order are read one type at a
	// time (byContentType below); one, or in significance order, by the
	// condition.
	byContentType := len(f.ContentTypes) > 0 && f.Sort != SortSignificance
	contentTypes := ""
	if byContentType {
		contentTypes = a.add(f.ContentTypes)
		where.WriteString(" AND ee.content_type = t.content_type")
	} else if len(f.ContentTypes) > 0 {
		where.WriteString(" AND ee.content_type = ANY(" + a.add(f.ContentTypes) + ")")
	}
	if f.Before != nil {
		where.WriteString(" AND (ee.latest_evidence_at, ee.event_id) < (" + a.add(f.Before.At) + ", " + a.add(f.Before.ID) + ")")
	}
	order := "ee.latest_evidence_at DESC, ee.event_id DESC"
	if f.Sort == SortSignificance {
		order = "ee.significance DESC NULLS LAST, " + order
	}
	fold := ""
	if c.Any() {
		fold = foldColumns(c)
	}
	page := `
			SELECT ee.event_id, ee.latest_evidence_at, ee.significance
			FROM event_entities ee
			WHERE ee.entity_id = k.entity_id` + where.String() + `
			  AND (ee.role = 'owner' OR (
			      SELECT 1 FROM event_entities o
			      WHERE o.event_id = ee.event_id AND o.role = 'owner' AND o.entity_id = ee.entity_id
			      LIMIT 1) IS NULL)
			ORDER BY ` + order
	limit, offset := a.add(f.Limit), a.add(f.Offset)
	if byContentType {
		// Each type's newest limit+offset events, in order on
		// event_entities_entity_content_idx, then the page of their
		// merge: the whole page is among them. ANY() over the types
		// cannot be read in order from the index, so it fetched every
		// event of the window and sorted them (4,607 for 26 at the
		// busiest entity's research at 1M events, 8.5 ms).
		page = `
			SELECT y.event_id, y.latest_evidence_at, y.significance
			FROM unnest(` + contentTypes + `::text[]) AS t(content_type)
			CROSS JOIN LATERAL (` + page + `
			LIMIT ` + limit + `::bigint + ` + offset + `::bigint
			) y
			ORDER BY y.latest_evidence_at DESC, y.event_id DESC`
	}
	sql := `
		SELECT ` + entityEventColumns + `, ` + eventColumns + fold + `
		FROM unnest(` + ids + `::bigint[]) WITH ORDINALITY AS k(entity_id, ord)
		CROSS JOIN LATERAL (` + page + `
			LIMIT ` + limit + ` OFFSET ` + offset + `
		) x
		JOIN events e ON e.id = x.event_id
		ORDER BY ` + entityEventsOrder(f.Sort)
	return sql, a
}

// entityEventsOrder is the order of entityEventsStatement's rows for sort:
// by entity, in the order asked, then each entity's page in sort's order.
func entityEventsOrder(sort string) string {
	if sort == SortSignificance {
		return "k.ord, x.significance DESC NULLS LAST, x.latest_evidence_at DESC, x.event_id DESC"
	}
	return "k.ord, x.latest_evidence_at DESC, x.event_id DESC"
}

// TableColumns returns the columns (name and type) of the tables the
// ingest writes, as the domain types name them: the generated table's
// check against the database.
func TableColumns() map[string][][2]string { return tableColumns }
