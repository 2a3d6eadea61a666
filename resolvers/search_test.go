package resolvers_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/search"
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

// A search's entity filter given by name is resolved once per content
// version, as the query's analysis is kept: searched again before the
// content changes, the entity form costs the statements the plain form
// costs. It keeps every entity of the strongest exact or prefix match,
// never a weaker one, and a write is seen at once.
func TestSearchEntityNameKeptPerContentVersion(t *testing.T) {
	t.Parallel()
	b := setup(t, 5)
	names := func(sql string) {
		_, err := b.store.Pool.Exec(context.Background(), `INSERT INTO entity_names (entity_id, kind, value, norm)
			SELECT id, kind, value, norm_text(value) FROM (`+sql+`) x(id, kind, value)`)
		require.NoError(t, err)
	}
	names(`SELECT id, 'canonical_name', canonical_name FROM entities WHERE id > 100`)
	version := func() int64 {
		var v int64
		require.NoError(t, b.store.Pool.QueryRow(context.Background(), "SELECT version FROM data_version").Scan(&v))
		return v
	}
	const doc = `query($q: String!, $e: String) { searchEvents(query: $q, entity: $e, first: 20) { event { id } } }`
	find := func(v int64, entity string) ([]int64, []gqlErr, int64) {
		ctx := access.WithCaller(context.Background(), &access.Caller{AccountID: 1, DataVersion: v})
		ctx, counter := db.WithStatementCounter(ctx)
		vars := map[string]any{"q": "summary"}
		if entity != "" {
			vars["e"] = entity
		}
		data, errs := b.run(t, ctx, doc, vars)
		var ids []int64
		if len(errs) == 0 {
			for _, m := range dig(data, "searchEvents").([]any) {
				ids = append(ids, int64(dig(m, "event", "id").(float64)))
			}
		}
		return ids, errs, counter.Load()
	}
	v := version()
	find(v, "")
	_, errs, plain := find(v, "")
	require.Empty(t, errs)

	ids, errs, n := find(v, "Related 3")
	require.Empty(t, errs)
	require.Equal(t, plain+1, n, "the name is resolved")
	require.ElementsMatch(t, []int64{3001, 3002, 3003, 3004, 3005}, ids, "the events of the entity named")
	again, _, n := find(v, "Related 3")
	require.Equal(t, plain, n, "the name's entities are kept for the version")
	require.Equal(t, ids, again)
	_, _, n = find(v, "103")
	require.Equal(t, plain, n, "an id is no name")
	_, _, n = find(0, "Related 3")
	require.Equal(t, plain+2, n, "an unknown version keeps nothing: the analysis and the name are read")

	ids, errs, _ = find(v, "related")
	require.Empty(t, errs)
	require.Len(t, ids, 20, "a prefix of five names keeps the five entities")
	_, errs, _ = find(v, "Relatd 3")
	require.Len(t, errs, 1, "a close spelling filters nothing")
	require.Equal(t, fmt.Sprintf(search.MsgSearchEntity, "Relatd 3"), errs[0].Message)
	_, errs, _ = find(v, "Relatd 3")
	require.Len(t, errs, 1, "and is refused again")

	names(`VALUES (103, 'alias', 'R3')`)
	v2 := version()
	require.Greater(t, v2, v)
	ids, errs, _ = find(v2, "R3")
	require.Empty(t, errs, "a new alias filters at once")
	require.ElementsMatch(t, []int64{3001, 3002, 3003, 3004, 3005}, ids)
}
