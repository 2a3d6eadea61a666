package db

import (
	"time"

	"github.com/uptrace/bun"
)

// Test hooks: the search statements as SQL text, so tests and benchmarks can
// EXPLAIN exactly what ResolveEntities and SearchEvents run.

// ResolveSQLForTest returns ResolveEntities' statement for name.
func ResolveSQLForTest(idb bun.IDB, name string, limit, offset int) string {
	return resolveQuery(idb, cleanName(name), limit, offset).String()
}

// SearchSQLForTest returns SearchEvents' two main statements for query: the
// entity-linking one and the event-ranking one (with the links the first
// returns passed in by the caller through run).
func SearchSQLForTest(idb bun.IDB, query string) string {
	return linkQuery(idb, cleanName(query)).String()
}

// LinkedEntityForTest mirrors linkedEntity for tests.
type LinkedEntityForTest = linkedEntity

// RankSQLForTest returns the event-ranking statement for query and links.
func RankSQLForTest(idb bun.IDB, query string, links []LinkedEntityForTest, since time.Time, limit int) string {
	return searchQuery(idb, cleanName(query), links, since, limit).String()
}

// QueryPhrasesForTest exposes queryPhrases.
var QueryPhrasesForTest = queryPhrases
