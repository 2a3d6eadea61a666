package db

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Test hooks: the search statements as SQL text, so tests and benchmarks can
// EXPLAIN exactly what ResolveEntities and SearchEvents run.

// ResolveSQLForTest returns ResolveEntities' statement for name.
// The name and page are written in as literals, so the text can be
// EXPLAINed as it is.
func ResolveSQLForTest(name string, limit, offset int) string {
	name = cleanName(name)
	lit := "'" + strings.ReplaceAll(name, "'", "''") + "'"
	return strings.NewReplacer("$1", lit, "$2", strconv.Itoa(limit), "$3", strconv.Itoa(offset)).
		Replace(resolveSQL(utf8.RuneCountInString(name) >= minFuzzyRunes))
}

// SearchStatementForTest is one of SearchEvents' statements with its
// arguments, to run under EXPLAIN as a prepared statement would be.
type SearchStatementForTest struct {
	SQL  string
	Args []any
}

// SearchStatementsForTest returns the two statements SearchEvents runs for
// query: the analysis (entity linking, stems, statistics) and the ranking
// with what the first found.
func SearchStatementsForTest(ctx context.Context, q Querier, query string, since time.Time, limit int) (analyze, rank SearchStatementForTest, err error) {
	sq, err := parseSearchQuery(query)
	if err != nil {
		return analyze, rank, err
	}
	a, err := analyzeSearch(ctx, q, sq)
	if err != nil {
		return analyze, rank, err
	}
	sql, args := analyzeStatement(sq)
	return SearchStatementForTest{sql, args}, SearchStatementForTest{rankSQL, a.rankArgs(since, limit)}, nil
}

// ParseSearchQueryForTest returns the terms of query: each term's text and
// the words and phrases it searches for.
func ParseSearchQueryForTest(query string) (terms []string, alts [][]string, err error) {
	sq, err := parseSearchQuery(query)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range sq.Terms {
		terms = append(terms, t.Text)
		var as []string
		for _, a := range t.Alts {
			as = append(as, a.Text)
		}
		alts = append(alts, as)
	}
	return terms, alts, nil
}
