package db

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
)

// Keyset is a position in a walk ordered by (latest_evidence_at, id): the
// last row a page returned.
type Keyset struct {
	// At is the latest_evidence_at of the last row.
	At time.Time
	// ID is the id of the last row.
	ID int64
}

// readExcluded are the events columns the read paths never need:
// evidence_text (a copy of every post, kept only for the search vector).
var readExcluded = []string{"evidence_text"}

// eventReadColumns are the events columns raw read queries select (alias e).
const eventReadColumns = "e.id, e.title, e.category, e.subcategory, e.summary, e.bullets, e.significance, " +
	"e.content_type, e.latest_evidence_at, e.ingest_seq, e.created_at, e.updated_at"

// Event orders.
const (
	// SortSignificance orders by significance (unscored last), then newest.
	SortSignificance = "significance"
	// SortRecency orders newest latest_evidence_at first.
	SortRecency = "recency"
)

// EventFilter selects events across the whole feed for ListEvents.
type EventFilter struct {
	// SignalOnly keeps scored events only.
	SignalOnly bool
	// Since is the start of the window (inclusive).
	Since time.Time
	// Category keeps events of this category; empty means any.
	Category string
	// EntityID keeps events the entity owns or takes part in; 0 means any.
	EntityID int64
	// Topic is matched against the event text with full-text search; empty
	// means any.
	Topic string
	// Sort is SortSignificance or SortRecency. Defaults to SortSignificance.
	Sort string
	// Limit and Offset page the result.
	Limit, Offset int
}

// ListEvents returns one page of events matching f.
func ListEvents(ctx context.Context, idb bun.IDB, f EventFilter) ([]*cryptointel.Event, error) {
	out := []*cryptointel.Event{}
	q := idb.NewSelect().Model(&out).ExcludeColumn(readExcluded...).Where("latest_evidence_at >= ?", f.Since)
	if f.SignalOnly {
		q = q.Where("significance IS NOT NULL")
	}
	if f.Category != "" {
		q = q.Where("category = ?", f.Category)
	}
	if f.EntityID != 0 {
		q = q.Where("id IN (SELECT event_id FROM event_entities WHERE entity_id = ? AND latest_evidence_at >= ?)", f.EntityID, f.Since)
	}
	if strings.TrimSpace(f.Topic) != "" {
		q = q.Where("search @@ websearch_to_tsquery('english', ?)", f.Topic)
	}
	if f.Sort == SortRecency {
		q = q.OrderExpr("latest_evidence_at DESC, id DESC")
	} else {
		q = q.OrderExpr("significance DESC NULLS LAST, latest_evidence_at DESC, id DESC")
	}
	if err := q.Limit(int64(f.Limit)).Offset(int64(f.Offset)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("error listing events: %w", err)
	}
	return out, nil
}

// FeedFilter selects a page of a bulk feed for FeedEvents.
type FeedFilter struct {
	// SignalOnly keeps scored events only.
	SignalOnly bool
	// Since is the start of the feed (inclusive).
	Since time.Time
	// Category keeps events of this category; empty means any.
	Category string
	// Limit is the page size.
	Limit int
	// Offset skips rows; only used without After.
	Offset int
	// After continues strictly after this position.
	After *Keyset
}

// FeedEvents returns one page of a bulk feed, ascending by
// (latest_evidence_at, id) from f.Since, so that a keyset walk picks up
// events ingested while it runs without duplicates or gaps.
func FeedEvents(ctx context.Context, idb bun.IDB, f FeedFilter) ([]*cryptointel.Event, error) {
	out := []*cryptointel.Event{}
	q := idb.NewSelect().Model(&out).ExcludeColumn(readExcluded...).Where("latest_evidence_at >= ?", f.Since)
	if f.SignalOnly {
		q = q.Where("significance IS NOT NULL")
	}
	if f.Category != "" {
		q = q.Where("category = ?", f.Category)
	}
	if f.After != nil {
		q = q.Where("(latest_evidence_at, id) > (?, ?)", f.After.At, f.After.ID)
	} else if f.Offset > 0 {
		q = q.Offset(int64(f.Offset))
	}
	if err := q.OrderExpr("latest_evidence_at, id").Limit(int64(f.Limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("error reading feed: %w", err)
	}
	return out, nil
}

// EventsByIDs returns the events with the given ids in one statement, in no
// particular order; unknown ids are absent.
func EventsByIDs(ctx context.Context, idb bun.IDB, ids []int64) ([]*cryptointel.Event, error) {
	out := []*cryptointel.Event{}
	if len(ids) == 0 {
		return out, nil
	}
	if err := idb.NewSelect().Model(&out).ExcludeColumn(readExcluded...).Where("id = ANY(?)", pgArray(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("error selecting events by ids: %w", err)
	}
	return out, nil
}

// EvidenceByEventIDs returns the evidence of the given events in one
// statement, ordered by event id, then newest first.
func EvidenceByEventIDs(ctx context.Context, idb bun.IDB, eventIDs []int64) ([]*cryptointel.Evidence, error) {
	out := []*cryptointel.Evidence{}
	if len(eventIDs) == 0 {
		return out, nil
	}
	err := idb.NewSelect().Model(&out).Where("event_id = ANY(?)", pgArray(eventIDs)).OrderExpr("event_id, ts DESC, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("error selecting evidence by event ids: %w", err)
	}
	return out, nil
}

// EntitiesByEventIDs returns, in one statement, the owners and participants
// of the given events with their entities, ordered by event id, role and
// position.
func EntitiesByEventIDs(ctx context.Context, idb bun.IDB, eventIDs []int64) ([]cryptointel.EventEntityRef, error) {
	if len(eventIDs) == 0 {
		return []cryptointel.EventEntityRef{}, nil
	}
	var rows []struct {
		EventID int64  `bun:"ee_event_id"`
		Role    string `bun:"ee_role"`
		cryptointel.Entity
	}
	err := idb.NewRaw(`
		SELECT ee.event_id AS ee_event_id, ee.role AS ee_role, e.*
		FROM event_entities ee JOIN entities e ON e.id = ee.entity_id
		WHERE ee.event_id = ANY(?)
		ORDER BY ee.event_id, ee.role, ee.position, ee.entity_id`, pgArray(eventIDs)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("error selecting entities by event ids: %w", err)
	}
	out := make([]cryptointel.EventEntityRef, len(rows))
	for i := range rows {
		ent := rows[i].Entity
		out[i] = cryptointel.EventEntityRef{EventID: rows[i].EventID, Role: rows[i].Role, Entity: &ent}
	}
	return out, nil
}

// EntityEventFilter selects, per entity, the events it owns or takes part
// in for EventsByEntityIDs. Limit and Offset apply to each entity.
type EntityEventFilter struct {
	// SignalOnly keeps scored events only.
	SignalOnly bool
	// Since keeps events at or after it; zero means no lower bound.
	Since time.Time
	// Category keeps events of this category; empty means any.
	Category string
	// ContentTypes keeps classified items of these content types; empty
	// means any event.
	ContentTypes []string
	// Sort is SortRecency (default) or SortSignificance.
	Sort string
	// Limit and Offset page each entity's list.
	Limit, Offset int
	// Before continues strictly before this position (descending keyset
	// walk, recency order only).
	Before *Keyset
}

// EventsByEntityIDs returns, in one statement (a LATERAL join over all the
// given entities), each entity's events matching f, an event once per entity
// even when the entity is both owner and participant. The result is grouped
// by entity in the order of entityIDs, each group in f's order. The
// owner-duplicate check is a scalar subquery with LIMIT so it stays a
// per-row primary-key probe (an EXISTS here gets planned as a hashed scan of
// every owner row).
func EventsByEntityIDs(ctx context.Context, idb bun.IDB, entityIDs []int64, f EntityEventFilter) ([]cryptointel.EntityEvent, error) {
	if len(entityIDs) == 0 {
		return []cryptointel.EntityEvent{}, nil
	}
	var (
		conds []string
		args  = []any{pgArray(entityIDs)}
	)
	if f.SignalOnly {
		conds = append(conds, "ee.significance IS NOT NULL")
	}
	if !f.Since.IsZero() {
		conds = append(conds, "ee.latest_evidence_at >= ?")
		args = append(args, f.Since)
	}
	if f.Category != "" {
		conds = append(conds, "ee.category = ?")
		args = append(args, f.Category)
	}
	if len(f.ContentTypes) > 0 {
		conds = append(conds, "ee.content_type IN (?)")
		args = append(args, bun.In(f.ContentTypes))
	}
	if f.Before != nil {
		conds = append(conds, "(ee.latest_evidence_at, ee.event_id) < (?, ?)")
		args = append(args, f.Before.At, f.Before.ID)
	}
	order := "ee.latest_evidence_at DESC, ee.event_id DESC"
	outerOrder := "x.latest_evidence_at DESC, x.event_id DESC"
	if f.Sort == SortSignificance {
		order = "ee.significance DESC NULLS LAST, " + order
		outerOrder = "x.significance DESC NULLS LAST, " + outerOrder
	}
	where := ""
	for _, c := range conds {
		where += " AND " + c
	}
	args = append(args, f.Limit, f.Offset)
	query := `
		SELECT k.entity_id AS k_entity_id, ` + eventReadColumns + `
		FROM unnest(?::bigint[]) WITH ORDINALITY AS k(entity_id, ord)
		CROSS JOIN LATERAL (
			SELECT ee.event_id, ee.latest_evidence_at, ee.significance
			FROM event_entities ee
			WHERE ee.entity_id = k.entity_id` + where + `
			  AND (ee.role = 'owner' OR (
			      SELECT 1 FROM event_entities o
			      WHERE o.event_id = ee.event_id AND o.role = 'owner' AND o.entity_id = ee.entity_id
			      LIMIT 1) IS NULL)
			ORDER BY ` + order + `
			LIMIT ? OFFSET ?
		) x
		JOIN events e ON e.id = x.event_id
		ORDER BY k.ord, ` + outerOrder
	var rows []struct {
		EntityID int64 `bun:"k_entity_id"`
		cryptointel.Event
	}
	if err := idb.NewRaw(query, args...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("error selecting events by entity ids: %w", err)
	}
	out := make([]cryptointel.EntityEvent, len(rows))
	for i := range rows {
		ev := rows[i].Event
		out[i] = cryptointel.EntityEvent{EntityID: rows[i].EntityID, Event: &ev}
	}
	return out, nil
}
