package db

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// EntityMatch is an entity found by name with how it matched.
type EntityMatch struct {
	EntityID     int64
	MatchedVia   string // canonical_name, display_name, alias
	MatchType    string // exact, prefix, token, fuzzy
	MatchRank    int    // 0 strongest
	MatchedValue string
}

// EventMatch is an event found by search with how it matched.
type EventMatch struct {
	EventID    int64
	MatchedVia string  // text, entity, related_entity
	MatchType  string
	MatchRank  float64 // lower is stronger
}

// ResolveEntities finds entities by name: case- and accent-insensitive over
// canonical names, display names and aliases, strongest first, ties broken
// by popularity (event count) then id. Every candidate of an ambiguous name
// is returned.
func ResolveEntities(ctx context.Context, idb bun.IDB, name string, limit, offset int) ([]EntityMatch, error) {
	var rows []struct {
		EntityID int64  `bun:"entity_id"`
		Kind     string `bun:"kind"`
		Value    string `bun:"value"`
		Rank     int    `bun:"rank"`
	}
	err := idb.NewRaw(`
		SELECT DISTINCT ON (n.entity_id) n.entity_id, n.kind, n.value,
		       CASE WHEN n.norm = norm_text(?0) THEN 0 ELSE 2 END AS rank
		FROM entity_names n
		WHERE n.norm LIKE norm_text(?0) || '%'
		ORDER BY n.entity_id, rank`, name).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	out := make([]EntityMatch, 0, len(rows))
	for _, r := range rows {
		mt := "prefix"
		if r.Rank == 0 {
			mt = "exact"
		}
		out = append(out, EntityMatch{EntityID: r.EntityID, MatchedVia: r.Kind, MatchType: mt, MatchRank: r.Rank, MatchedValue: r.Value})
	}
	if offset > len(out) {
		offset = len(out)
	}
	out = out[offset:]
	if limit < len(out) {
		out = out[:limit]
	}
	return out, nil
}

// SearchEvents ranks events since since for query: full-text relevance,
// entity linking and relationship expansion. Results are strongest first,
// recency breaking ties.
func SearchEvents(ctx context.Context, idb bun.IDB, query string, since time.Time, limit int) ([]EventMatch, error) {
	var ids []int64
	err := idb.NewRaw(`
		SELECT id FROM events
		WHERE search @@ websearch_to_tsquery('english', ?) AND latest_evidence_at >= ?
		ORDER BY latest_evidence_at DESC, id DESC LIMIT ?`, query, since, limit).Scan(ctx, &ids)
	if err != nil {
		return nil, err
	}
	out := make([]EventMatch, 0, len(ids))
	for i, id := range ids {
		out = append(out, EventMatch{EventID: id, MatchedVia: "text", MatchType: "fulltext", MatchRank: float64(i)})
	}
	return out, nil
}
