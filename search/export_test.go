package search

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
	name = CleanName(name)
	lit := "'" + strings.ReplaceAll(name, "'", "''") + "'"
	return strings.NewReplacer("$1", lit, "$2", strconv.Itoa(limit), "$3", strconv.Itoa(offset)).
		Replace(ResolveSQL(utf8.RuneCountInString(name) >= MinFuzzyRunes))
}

// SearchStatementForTest is one of SearchEvents' statements with its
// arguments, to run under EXPLAIN as a prepared statement would be.
type SearchStatementForTest struct {
	SQL  string
	Args []any
}

// SearchStatementsForTest returns the two statements SearchEvents runs for
// query: the analysis (entity linking, stems, statistics) and the search
// statement (candidates) with what the first found.
func SearchStatementsForTest(ctx context.Context, q Querier, query string, since time.Time, limit int) (analyze, rank SearchStatementForTest, err error) {
	return searchStatementsForTest(ctx, q, query, since, limit, searchFilters{})
}

// FilteredSearchStatementsForTest is SearchStatementsForTest with every
// filter set: a window's end, a category, signals only and an entity.
func FilteredSearchStatementsForTest(ctx context.Context, q Querier, query string, since, until time.Time, limit int, entity int64) (analyze, rank SearchStatementForTest, err error) {
	return searchStatementsForTest(ctx, q, query, since, limit, searchFilters{until: until, category: "other", signal: true, entities: []int64{entity}})
}

func searchStatementsForTest(ctx context.Context, q Querier, query string, since time.Time, limit int, f searchFilters) (analyze, rank SearchStatementForTest, err error) {
	sq, err := parseSearchQuery(query)
	if err != nil {
		return analyze, rank, err
	}
	a, err := analyzeSearch(ctx, q, sq)
	if err != nil {
		return analyze, rank, err
	}
	sql, args := analyzeStatement(sq)
	csql, cargs, _ := a.candidateStatement(since, limit, f)
	return SearchStatementForTest{sql, args}, SearchStatementForTest{csql, cargs}, nil
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

// TermFrequencyForTest is the weighted frequency search reads from a
// search vector in binary form for an alternative whose tsquery (written
// by phraseto_tsquery) is tsq; ok is false when it cannot read tsq.
func TermFrequencyForTest(vec []byte, tsq string) (float64, bool) {
	s := newScorer([]rankedTerm{{Alts: []rankedAlt{{searchAlt: searchAlt{Weight: weightTyped}, TSQ: tsq}}}})
	if len(s.alts) == 0 {
		return 0, false
	}
	pos := make([][]byte, len(s.lexemes))
	if err := s.vectorPositions(vec, pos); err != nil {
		return 0, false
	}
	return altFrequency(&s.alts[0], pos), true
}

// BucketCodeForTest is the code of level's time bucket holding t, as the
// probes and the feeds' topic name it.
func BucketCodeForTest(level int, t time.Time) int32 { return bucketCode(level, t) }

// ThesaurusForTest returns the thesaurus' synonym groups and form lines,
// members as written.
func ThesaurusForTest() (groups, forms [][]string) {
	for _, g := range searchThesaurus.groups {
		groups = append(groups, append([]string(nil), g...))
	}
	for _, f := range searchThesaurus.formGroups {
		forms = append(forms, append([]string(nil), f...))
	}
	return groups, forms
}

// FilterSearchStatementForTest is the search statement of query filtered
// by category (when not empty) and entities (when any), with its
// arguments.
func FilterSearchStatementForTest(ctx context.Context, q Querier, query string, since time.Time, limit int, category string, entities []int64) (SearchStatementForTest, error) {
	_, rank, err := searchStatementsForTest(ctx, q, query, since, limit, searchFilters{category: category, entities: entities})
	return rank, err
}

// DayQueryForTest is a probe's tsquery at day, as the probe asks
// events_search_day_idx for it.
var DayQueryForTest = dayQuery

// LexemeBitsForTest is the bits a lexeme sets in the two words of a
// link's signature (migration 031's search_signature).
var LexemeBitsForTest = lexemeBits

// WalkSignaturesOffForTest returns a filtered search statement's arguments
// with every probe's signature test passing every link: the statement as it
// ran before signatures.
func WalkSignaturesOffForTest(args []any) []any {
	out := append([]any(nil), args...)
	a, _ := out[10].([]*int64)
	off := make([]*int64, len(a))
	for i := 0; i < len(off); i += walkSignatureSlots {
		off[i] = new(int64)
	}
	out[10], out[11] = off, off
	return out
}
