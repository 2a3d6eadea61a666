package resolvers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
)

// searchEvents and searchReport asked together with the same arguments run
// the search once: the document costs what searchEvents alone costs.
func TestSearchReportSharesTheSearch(t *testing.T) {
	t.Parallel()
	b := setup(t, 5)
	count := func(doc string) (map[string]any, int64) {
		ctx, counter := db.WithStatementCounter(context.Background())
		data, errs := b.run(t, ctx, doc, map[string]any{"q": "events zebra"})
		require.Empty(t, errs)
		return data, counter.Load()
	}
	_, alone := count(`query($q: String!) { searchEvents(query: $q) { matchedTerms event { id } } }`)
	data, both := count(`query($q: String!) {
		searchEvents(query: $q) { matchedTerms event { id } }
		searchReport(query: $q) { query unmatchedTerms terms { text expansions documentFrequency matched } }
	}`)
	require.Equal(t, alone, both, "searchReport beside searchEvents runs no statement of its own")
	require.Equal(t, []any{"zebra"}, dig(data, "searchReport", "unmatchedTerms"))
	terms := dig(data, "searchReport", "terms").([]any)
	require.Len(t, terms, 2)
	require.Equal(t, "events", dig(terms[0], "text"))
	require.Equal(t, true, dig(terms[0], "matched"))
	require.Equal(t, []any{}, dig(terms[0], "expansions"))
	require.Positive(t, dig(terms[0], "documentFrequency"))
	matches := dig(data, "searchEvents").([]any)
	require.NotEmpty(t, matches)
	for _, m := range matches {
		require.Equal(t, []any{"events"}, dig(m, "matchedTerms"))
	}
}

// A search's page of events, with their owners, participants and evidence,
// is read in one statement beside the search's own.
func TestSearchPageIsOneStatement(t *testing.T) {
	t.Parallel()
	b := setup(t, 5)
	count := func(doc string) (map[string]any, int64) {
		ctx, counter := db.WithStatementCounter(context.Background())
		data, errs := b.run(t, ctx, doc, map[string]any{"q": "events"})
		require.Empty(t, errs)
		return data, counter.Load()
	}
	_, bare := count(`query($q: String!) { searchEvents(query: $q) { matchedTerms } }`)
	data, page := count(`query($q: String!) { searchEvents(query: $q) { matchedTerms event { id title
		owners { id canonicalName } participants { id } evidence { id content } } } }`)
	require.Equal(t, bare+1, page, "the page, its entities and its evidence: one statement")
	matches := dig(data, "searchEvents").([]any)
	require.NotEmpty(t, matches)
	for _, m := range matches {
		require.NotEmpty(t, dig(m, "event", "title"))
		require.NotEmpty(t, dig(m, "event", "evidence"))
	}
}
