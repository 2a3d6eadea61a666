package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/search"
)

// TestNormTextInlined: norm_text, which folds every looked-up name, is
// written into the generic plans of the statements that call it (the
// name lookups, as the service's pools prepare them) as its expression,
// lower(unaccent(...)). Left a function call, each of its call sites parsed
// and planned norm_text's body again at every execution (migration 027).
// The folding itself is unchanged: case and accents folded, NULL for NULL.
func TestNormTextInlined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	conn, err := store.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)

	statements := map[string]string{
		"norm_text":     `SELECT norm_text($1::text)`,
		"resolve_long":  search.ResolveSQL(true),
		"resolve_short": search.ResolveSQL(false),
	}
	for name, sql := range statements {
		_, err := conn.Conn().Prepare(ctx, "inl_"+name, sql)
		require.NoError(t, err, name)
		args := "('Crème')"
		if strings.Contains(sql, "$2") {
			args = "('Crème', 5, 0)"
		}
		rows, err := conn.Query(ctx, "EXPLAIN (VERBOSE) EXECUTE inl_"+name+args)
		require.NoError(t, err, name)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err, name)
		plan := strings.Join(lines, "\n")
		require.NotContains(t, plan, "norm_text(", "%s: norm_text is called, not inlined:\n%s", name, plan)
		require.Contains(t, plan, "unaccent(", "%s:\n%s", name, plan)
	}

	var folded, null *string
	require.NoError(t, conn.QueryRow(ctx, `SELECT norm_text('Ÿ Crème BRÛLÉE Ærø'), norm_text(NULL)`).Scan(&folded, &null))
	require.NotNil(t, folded)
	require.Equal(t, "y creme brulee aero", *folded)
	require.Nil(t, null)
}
