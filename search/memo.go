package search

import (
	"context"
	"fmt"
	"sync"

	"github.com/cryptointel/cryptointel"
)

// searchMemoMaxQueries bounds the analyses a Memo keeps for one content
// version.
const searchMemoMaxQueries = 4096

// Memo keeps the analysis of each query searched at one content
// version (data_version, which every write to the content bumps as it
// commits): the query's terms and their stems, the words' document
// frequencies, the corpus statistics and the entities the query names —
// everything the analysis statement reads. A search at the same version
// reuses it and runs the search statement alone; the first search at a
// newer version starts an empty memo, and a search at an older one (a
// request metered before a commit, answered after) neither reads nor
// fills it. An analysis read on a replica that had replayed a newer version
// is newer than its key, which a request metered at the key may see anyway.
//
// It keeps, the same way, the entities each entity filter given by name
// names (EntityFilter), which entity_names' writes bump the version for.
type Memo struct {
	mu      sync.Mutex
	version int64
	byQuery map[string]*searchAnalysis
	byName  map[string][]int64
}

// get returns the analysis of text kept for version, or nil.
func (m *Memo) get(version int64, text string) *searchAnalysis {
	if m == nil || version <= 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if version != m.version {
		return nil
	}
	return m.byQuery[text]
}

// at readies the memo to keep what was read at version or later, m.mu
// held: a newer version empties it. It reports false for an older one,
// whose reads are not kept.
func (m *Memo) at(version int64) bool {
	switch {
	case version < m.version:
		return false
	case version > m.version || m.byQuery == nil:
		m.version, m.byQuery, m.byName = version, map[string]*searchAnalysis{}, map[string][]int64{}
	}
	return true
}

// put keeps a, the analysis of text read at version or later.
func (m *Memo) put(version int64, text string, a *searchAnalysis) {
	if m == nil || version <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.at(version) {
		return
	}
	if len(m.byQuery) < searchMemoMaxQueries {
		m.byQuery[text] = a
	}
}

// getName returns the entities kept for the filter name at version, and
// whether any were kept.
func (m *Memo) getName(version int64, name string) ([]int64, bool) {
	if m == nil || version <= 0 {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if version != m.version {
		return nil, false
	}
	ids, ok := m.byName[name]
	return ids, ok
}

// putName keeps ids, the entities the filter name names, read at version
// or later.
func (m *Memo) putName(version int64, name string, ids []int64) {
	if m == nil || version <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.at(version) {
		return
	}
	if len(m.byName) < searchMemoMaxQueries {
		m.byName[name] = ids
	}
}

// EntityFilter returns the entities a search's entity filter given by
// name keeps: every one of the strongest exact or prefix matches of the
// name (ResolveEntities' order: a ticker several projects share names them
// all), none when nothing matches so (weaker matches — a word or part of
// a name, a close spelling — never filter). They are kept for content
// version version as the analyses are, so a name filtered by again before
// the content changes costs no statement; otherwise one statement, the
// exact and prefix branches of name resolution only (ResolveSQL(false)),
// on q.
//
// Returns EINVALID when name is empty once cleaned (CleanName).
func (m *Memo) EntityFilter(ctx context.Context, q Querier, version int64, name string) ([]int64, error) {
	name = CleanName(name)
	if name == "" {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: MsgNameRequired}
	}
	if ids, ok := m.getName(version, name); ok {
		return ids, nil
	}
	rows, err := query(ctx, q, ResolveSQL(false), name, cryptointel.MaxIDsPerRequest, 0)
	if err != nil {
		return nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	defer rows.Close()
	var (
		ids  []int64
		best = -1
	)
	for rows.Next() {
		var (
			em  EntityMatch
			sim float64
		)
		if err := rows.Scan(&em.EntityID, &em.MatchedVia, &em.MatchedValue, &em.MatchRank, &em.MatchType, &sim, &em.Popularity); err != nil {
			return nil, fmt.Errorf("error scanning entity matches: %w", err)
		}
		if best < 0 {
			best = em.MatchRank
		}
		if em.MatchRank != best || em.MatchRank > RankPrefix {
			break
		}
		ids = append(ids, em.EntityID)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("error resolving entity name: %w", err)
	}
	m.putName(version, name, ids)
	return ids, nil
}

// SearchEvents is SearchEventsWith on q, keeping each query's analysis
// for content version version — the one the request's metering statement
// read (access.Caller.DataVersion; 0 when unknown, which keeps nothing) —
// so that a query searched again before the content changes costs one
// statement (Memo). db.DB holds one and runs it on its routed reads
// (DB.SearchEvents).
func (m *Memo) SearchEvents(ctx context.Context, q Querier, version int64, text string, o SearchOptions) (*SearchResult, error) {
	return searchEvents(ctx, q, m, version, text, o)
}
