package search

import (
	"context"
	"sync"
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
type Memo struct {
	mu      sync.Mutex
	version int64
	byQuery map[string]*searchAnalysis
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

// put keeps a, the analysis of text read at version or later.
func (m *Memo) put(version int64, text string, a *searchAnalysis) {
	if m == nil || version <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case version < m.version:
		return
	case version > m.version:
		m.version, m.byQuery = version, map[string]*searchAnalysis{}
	}
	if len(m.byQuery) < searchMemoMaxQueries {
		m.byQuery[text] = a
	}
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
