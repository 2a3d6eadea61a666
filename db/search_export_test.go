package db

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
)

// Test hooks: the search statements as SQL text, so tests and benchmarks can
// EXPLAIN exactly what ResolveEntities and SearchEvents run.

// ResolveSQLForTest returns ResolveEntities' statement for name.
// The name and page are written in as literals, so the text can be
// EXPLAINed as it is.
func ResolveSQLForTest(_ bun.IDB, name string, limit, offset int) string {
	name = cleanName(name)
	lit := "'" + strings.ReplaceAll(name, "'", "''") + "'"
	return strings.NewReplacer("$1", lit, "$2", strconv.Itoa(limit), "$3", strconv.Itoa(offset)).
		Replace(resolveSQL(utf8.RuneCountInString(name) >= minFuzzyRunes))
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

// SearchStatementsForTest returns the two statements SearchEvents runs for
// query: entity linking, and event ranking with the links the first finds.
func SearchStatementsForTest(ctx context.Context, idb bun.IDB, query string, since time.Time, limit int) (link, rank string, err error) {
	query = cleanName(query)
	links, err := linkEntities(ctx, idb, query)
	if err != nil {
		return "", "", err
	}
	return linkQuery(idb, query).String(), searchQuery(idb, query, links, since, limit).String(), nil
}
