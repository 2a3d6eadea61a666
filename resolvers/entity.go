package resolvers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
)

type entityResolver struct{ *Resolver }

var _ graph.EntityResolver = (*entityResolver)(nil)

// References returns the entity's external references (possibly empty).
func (r *entityResolver) References(ctx context.Context, obj *cryptointel.Entity) ([]*cryptointel.Reference, error) {
	refs, err := load(ctx, r.loaders(ctx).ReferencesByEntityID, obj.ID)
	if refs == nil && err == nil {
		refs = []*cryptointel.Reference{}
	}
	return refs, err
}

// Relationships returns a page of the entity's direct relationships, of
// one type and one direction when asked.
func (r *entityResolver) Relationships(ctx context.Context, obj *cryptointel.Entity, first *int, offset *int, relationshipType *string, direction *graph.RelationshipDirection) ([]*cryptointel.EntityRelationship, error) {
	rels, err := load(ctx, r.loaders(ctx).RelationshipsByEntityID, relationshipsKey(ctx, obj.ID, first, offset, relationshipType, direction))
	if rels == nil && err == nil {
		rels = []*cryptointel.EntityRelationship{}
	}
	return rels, err
}

// relationshipsKey is the key of Entity.relationships' page for its
// arguments.
func relationshipsKey(ctx context.Context, entityID int64, first *int, offset *int, relationshipType *string, direction *graph.RelationshipDirection) RelationshipsKey {
	key := RelationshipsKey{EntityID: entityID, Limit: graph.Bound(ctx, &cryptointel.RelationshipsFirst, first), Offset: graph.Bound(ctx, &cryptointel.RelationshipsOffset, offset),
		Type: strOr(relationshipType, "")}
	if direction != nil {
		key.Direction = strings.ToLower(string(*direction))
	}
	return key
}

// entityEventsKey is the key of Entity.events' page for its arguments
// (before a cursor; Limit is the page size) and its sort.
func entityEventsKey(ctx context.Context, entityID int64, surface *graph.Surface, since *time.Time, category *string, sort *graph.EventSort, first *int, offset *int) (EntityEventsKey, graph.EventSort) {
	sortV, dbSort := sortOf(sort, graph.EventSortRecency)
	key := EntityEventsKey{
		EntityID:   entityID,
		SignalOnly: isSignal(surface, graph.SurfaceRadar),
		Category:   strOr(category, ""),
		Sort:       dbSort,
		Limit:      graph.Bound(ctx, &cryptointel.EntityEventsFirst, first),
		Offset:     graph.Bound(ctx, &cryptointel.EntityEventsOffset, offset),
	}
	if since != nil {
		key.SinceMicro = since.UnixMicro()
	}
	return key, sortV
}

// Events returns a page of the events the entity owns or takes part in.
func (r *entityResolver) Events(ctx context.Context, obj *cryptointel.Entity, surface *graph.Surface, since *time.Time, category *string, sort *graph.EventSort, first *int, offset *int, after *string) (*graph.EventConnection, error) {
	key, sortV := entityEventsKey(ctx, obj.ID, surface, since, category, sort, first, offset)
	dbSort := key.Sort
	qctx := fmt.Sprintf("entity.events|%d|%t|%s|%q|%s", obj.ID, key.SignalOnly, sinceKey(since), key.Category, dbSort)
	if err := r.checkCategory(ctx, category); err != nil {
		return nil, err
	}
	conn, err := r.page(ctx, key, qctx, after)
	if err != nil {
		return nil, err
	}
	conn.Sort = &sortV
	if since != nil {
		conn.Since = ptr(since.UTC())
	}
	return conn, nil
}

// Timeline returns the entity's events newest first.
func (r *entityResolver) Timeline(ctx context.Context, obj *cryptointel.Entity, since *time.Time, first *int, after *string) (*graph.EventConnection, error) {
	conn, err := r.page(ctx, timelineKey(ctx, obj.ID, since, first), fmt.Sprintf("entity.timeline|%d|%s", obj.ID, sinceKey(since)), after)
	if err != nil {
		return nil, err
	}
	if since != nil {
		conn.Since = ptr(since.UTC())
	}
	conn.Sort = ptr(graph.EventSortRecency)
	return conn, nil
}

// timelineKey is the key of Entity.timeline's page for its arguments
// (before a cursor; Limit is the page size).
func timelineKey(ctx context.Context, entityID int64, since *time.Time, first *int) EntityEventsKey {
	key := EntityEventsKey{EntityID: entityID, Sort: db.SortRecency, Limit: graph.Bound(ctx, &cryptointel.TimelineFirst, first)}
	if since != nil {
		key.SinceMicro = since.UnixMicro()
	}
	return key
}

// Research returns the entity's research, commentary and analysis items.
func (r *entityResolver) Research(ctx context.Context, obj *cryptointel.Entity, since *time.Time, first *int, offset *int, after *string) (*graph.EventConnection, error) {
	return r.content(ctx, obj, contentResearch, since, first, offset, after)
}

// Media returns the entity's media items.
func (r *entityResolver) Media(ctx context.Context, obj *cryptointel.Entity, since *time.Time, first *int, offset *int, after *string) (*graph.EventConnection, error) {
	return r.content(ctx, obj, contentMedia, since, first, offset, after)
}

func (r *entityResolver) content(ctx context.Context, obj *cryptointel.Entity, content string, since *time.Time, first *int, offset *int, after *string) (*graph.EventConnection, error) {
	key, start, err := r.contentKey(ctx, obj.ID, content, since, first, offset)
	if err != nil {
		return nil, err
	}
	conn, err := r.page(ctx, key, fmt.Sprintf("entity.%s|%d|%s", content, obj.ID, sinceKey(since)), after)
	if err != nil {
		return nil, err
	}
	conn.Since = &start
	return conn, nil
}

// contentKey is the key of Entity.research's or Entity.media's page
// (content) for its arguments (before a cursor; Limit is the page size):
// from since, or the lookback before the request's time when since is
// nil; and that start. An error when since is older than the lookback.
func (r *Resolver) contentKey(ctx context.Context, entityID int64, content string, since *time.Time, first *int, offset *int) (EntityEventsKey, time.Time, error) {
	now := r.requestNow(ctx)
	start := now.Add(-cryptointel.HistoryLookback)
	if since != nil {
		if err := checkSince(now, *since, cryptointel.HistoryLookback); err != nil {
			return EntityEventsKey{}, time.Time{}, err
		}
		start = since.UTC()
	}
	return EntityEventsKey{
		EntityID:   entityID,
		SinceMicro: start.UnixMicro(),
		Content:    content,
		Sort:       db.SortRecency,
		Limit:      graph.Bound(ctx, &cryptointel.ContentFirst, first),
		Offset:     graph.Bound(ctx, &cryptointel.ContentOffset, offset),
	}, start, nil
}

// page loads one page of an entity's events for key (Limit is the page
// size), continuing after the cursor when given, and issues the next cursor
// when more rows follow. Recency pages walk by keyset; significance pages
// carry an offset.
func (r *entityResolver) page(ctx context.Context, key EntityEventsKey, qctx string, after *string) (*graph.EventConnection, error) {
	limit := key.Limit
	if after != nil && *after != "" {
		cur, err := r.cursors.DecodeCursor(qctx, *after)
		if err != nil {
			return nil, err
		}
		if key.Sort == db.SortRecency {
			key.Offset = 0
			key.HasBefore, key.BeforeMicro, key.BeforeID = true, cur.AtMicro, cur.ID
		} else {
			key.Offset = int(cur.Offset)
		}
	}
	key.Limit = limit + 1
	evs, err := load(ctx, r.loaders(ctx).EventsByEntityID, key)
	if err != nil {
		return nil, err
	}
	conn := &graph.EventConnection{Limit: limit, Offset: key.Offset}
	if len(evs) > limit {
		evs = evs[:limit]
		last := evs[len(evs)-1]
		cur := Cursor{AtMicro: last.LatestEvidenceAt.UnixMicro(), ID: last.ID, Offset: int64(key.Offset + limit)}
		conn.NextCursor = ptr(r.cursors.EncodeCursor(qctx, cur))
	}
	if evs == nil {
		evs = []*cryptointel.Event{}
	}
	conn.Nodes = evs
	return conn, nil
}

// Markets returns the prediction markets about the entity.
func (r *entityResolver) Markets(ctx context.Context, obj *cryptointel.Entity) ([]*cryptointel.Market, error) {
	ms, err := load(ctx, r.loaders(ctx).MarketsByEntityID, obj.ID)
	if ms == nil && err == nil {
		ms = []*cryptointel.Market{}
	}
	return ms, err
}
