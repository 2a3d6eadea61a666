package search_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/search"
)

// branchResolveSQL is name resolution for long names as five branches,
// one a kind of match, each reading its own index: the form
// search.ResolveSQL(true) replaced, kept here as its definition.
const branchResolveSQL = `
	WITH q AS MATERIALIZED (SELECT norm_text($1::text) AS n), m AS (
		SELECT en.entity_id, en.kind, en.value, CASE en.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END AS rank, 'exact' AS match_type, 1.0::float8 AS sim
		FROM entity_names en WHERE en.norm = (SELECT q.n FROM q)
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 3, 'prefix', 1.0::float8
		FROM entity_names en WHERE en.norm LIKE (replace(replace(replace((SELECT q.n FROM q), '\', '\\'), '%', '\%'), '_', '\_') || '%') AND en.norm <> (SELECT q.n FROM q)
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 4, 'token', 1.0::float8
		FROM entity_names en WHERE en.norm ~ ('\m' || regexp_replace((SELECT q.n FROM q), '([^[:alnum:][:space:]])', '\\\1', 'g') || '\M') AND en.norm NOT LIKE (replace(replace(replace((SELECT q.n FROM q), '\', '\\'), '%', '\%'), '_', '\_') || '%')
		UNION ALL
		SELECT en.entity_id, en.kind, en.value, 5, 'substring', 1.0::float8
		FROM entity_names en WHERE en.norm LIKE '%' || (replace(replace(replace((SELECT q.n FROM q), '\', '\\'), '%', '\%'), '_', '\_') || '%') AND en.norm NOT LIKE (replace(replace(replace((SELECT q.n FROM q), '\', '\\'), '%', '\%'), '_', '\_') || '%') AND en.norm !~ ('\m' || regexp_replace((SELECT q.n FROM q), '([^[:alnum:][:space:]])', '\\\1', 'g') || '\M')
		UNION ALL
		SELECT f.entity_id, f.kind, f.value, CASE WHEN f.sim >= 0.6 THEN 6 WHEN f.sim >= 0.45 THEN 7 ELSE 8 END, 'fuzzy', f.sim
		FROM (
			SELECT en.entity_id, en.kind, en.value, similarity(en.norm, (SELECT q.n FROM q))::float8 AS sim
			FROM entity_names en WHERE en.norm % (SELECT q.n FROM q)
		) f WHERE f.sim >= 0.3
	), best AS (
		SELECT DISTINCT ON (m.entity_id) m.*
		FROM m
		ORDER BY m.entity_id, m.rank, m.sim DESC, CASE m.kind WHEN 'canonical_name' THEN 0 WHEN 'display_name' THEN 1 ELSE 2 END, m.value
	)
	SELECT b.entity_id, b.kind, b.value, b.rank, b.match_type, b.sim, e.event_count
	FROM best b JOIN entities e ON e.id = b.entity_id
	ORDER BY b.rank, e.event_count DESC, b.entity_id
	LIMIT $2 OFFSET $3`

// TestResolveLongMatchesTheBranches checks that the one-pass statement
// resolving long names (search.ResolveSQL(true)) answers every name as
// the five branches do, rows, ranks, kinds of match, similarities and
// order alike: over the demo world's names and aliases, their starts and
// ends, their words, misspellings (a letter dropped, two swapped), and
// names with LIKE's and the regex's metacharacters.
func TestResolveLongMatchesTheBranches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, values := dbtest.NamedStore(t, demoWorld(200))
	require.Greater(t, len(values), 1000)

	// The plan the statement keeps (a connection's prepared statement
	// settles on the generic plan), with sequential scans allowed: each of
	// the two conditions reads the trigram index. As one condition ORed,
	// the planner costed a sequential scan of every name level with the
	// index (its similarity test looks as cheap as a comparison), and
	// that scan computed the similarity of every name: 3–4 ms a lookup.
	// Checked right after the names were written, before any vacuum: while
	// the index kept new names in its pending list (fast update, before
	// migration 028), the planner chose a sequential scan until autovacuum
	// had merged them.
	func() {
		_, err := store.Pool.Exec(ctx, "ANALYZE")
		require.NoError(t, err)
		conn, err := store.Pool.Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
		require.NoError(t, err)
		defer conn.Exec(context.Background(), "RESET plan_cache_mode") //nolint:errcheck
		_, err = conn.Exec(ctx, "PREPARE resolve_long(text, int, int) AS "+search.ResolveSQL(true))
		require.NoError(t, err)
		defer conn.Exec(context.Background(), "DEALLOCATE resolve_long") //nolint:errcheck
		for _, name := range []string{"Ronin Foundation", "Chainlink", "swap"} {
			plan := explain(t, ctx, conn, "EXECUTE resolve_long('"+strings.ReplaceAll(name, "'", "''")+"', 20, 0)")
			require.NotContains(t, plan, "Seq Scan on entity_names", "%s:\n%s", name, plan)
			require.Equal(t, 2, strings.Count(plan, "Bitmap Index Scan on entity_names_trgm_idx"), "%s:\n%s", name, plan)
		}
	}()

	names := dbtest.NameVariants(values)
	answer := func(sql, name string, limit, offset int) string {
		rows, err := store.Pool.Query(ctx, sql, name, limit, offset)
		require.NoError(t, err, name)
		var b strings.Builder
		for rows.Next() {
			vals, err := rows.Values()
			require.NoError(t, err)
			fmt.Fprintln(&b, vals...)
		}
		require.NoError(t, rows.Err(), name)
		return b.String()
	}
	compared, matched := 0, 0
	for name := range names {
		name = search.CleanName(name)
		if len([]rune(name)) < search.MinFuzzyRunes {
			continue
		}
		want := answer(branchResolveSQL, name, 100, 0)
		require.Equal(t, want, answer(search.ResolveSQL(true), name, 100, 0), "name %q", name)
		// A page past the first: the same order.
		require.Equal(t, answer(branchResolveSQL, name, 3, 2), answer(search.ResolveSQL(true), name, 3, 2), "name %q, second page", name)
		compared++
		if want != "" {
			matched++
		}
	}
	require.Greater(t, compared, 3000)
	require.Greater(t, matched, compared*9/10)
}

// demoWorld seeds the demo world of n events.
func demoWorld(n int) func(context.Context, *db.DB) error {
	return func(ctx context.Context, store *db.DB) error {
		_, err := demo.Seed(ctx, store, demo.Options{Events: n})
		return err
	}
}
