package db

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/cryptointel/cryptointel/search"
)

// Name resolution's statement is search's (search/names.go); db runs it
// here and folded with the matched entities (ResolveEntitiesFolded).
const minFuzzyRunes = search.MinFuzzyRunes

// cleanName is search.CleanName.
func cleanName(name string) string { return search.CleanName(name) }

// resolveSQL is search.ResolveSQL.
func resolveSQL(long bool) string { return search.ResolveSQL(long) }

// ResolveEntities finds entities by name: case- and accent-insensitive over
// canonical names, display names and aliases, strongest first, ties broken
// by popularity (event count) then id. Every candidate of an ambiguous name
// is returned.
//
// Matches in strength order: exact canonical name (rank 0), exact display
// name (1), exact alias (2), prefix of any name (3), a whole word of any name
// (4), inside a word of any name (5, "swap" finds Uniswap), trigram
// similarity of at least 0.3 (6–8, so "Etherium" finds Ethereum); ranks 4 to
// 8 need 3+ characters, so short tickers match only exactly or by prefix.
// Each entity appears once, with its best match. Ties of rank are broken by
// popularity, the entity's event count (entities.event_count, maintained by
// ingest and seed) descending, then by id ascending. limit <= 0 means
// cryptointel.ResolveEntitiesFirst.Default;
// offset < 0 means 0.
//
// Returns EINVALID when name is empty or only whitespace. One statement.
func ResolveEntities(ctx context.Context, q Querier, name string, limit, offset int) ([]search.EntityMatch, error) {
	name, limit, offset, err := resolveParams(name, limit, offset)
	if err != nil {
		return nil, err
	}
	rows, err := query(ctx, q, resolveSQL(utf8.RuneCountInString(name) >= minFuzzyRunes), name, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	defer rows.Close()
	out := []search.EntityMatch{}
	for rows.Next() {
		var (
			m   search.EntityMatch
			sim float64
		)
		if err := rows.Scan(&m.EntityID, &m.MatchedVia, &m.MatchedValue, &m.MatchRank, &m.MatchType, &sim, &m.Popularity); err != nil {
			return nil, fmt.Errorf("error scanning entity matches: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	return out, nil
}

// SearchEntityFilter returns the entities a search's entity filter given
// by name keeps (search.Memo.EntityFilter), on d's routed reads, kept in
// d's search memo for content version version: a name filtered by again
// before the content changes costs no statement.
func (d *DB) SearchEntityFilter(ctx context.Context, version int64, name string) ([]int64, error) {
	return d.searchMemo.EntityFilter(ctx, counted{d.Reader()}, version, name)
}
