package db_test

import (
	"context"
	neturl "net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestBunStatementsAreNotPrepared: Bun writes its arguments into the SQL
// text, so each lookup is a new text; none of them may be left prepared on
// the connection (each would cost a round trip and backend memory), while
// the fixed statements of raw pgx code still are, once.
func TestBunStatementsAreNotPrepared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := db.Open(ctx, dbtest.NewURL(t), db.Options{MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() }) //nolint:errcheck

	prepared := func() int {
		var n int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared_statements%'`).Scan(&n))
		return n
	}
	base := prepared()
	for id := int64(1); id <= 30; id++ {
		var e cryptointel.Entity
		err := store.Bun.NewSelect().Model(&e).Where("id = ?", id).Scan(ctx)
		require.ErrorContains(t, err, "no rows")
		var n int
		require.NoError(t, store.Bun.NewRaw("SELECT ?::int", id).Scan(ctx, &n))
		require.EqualValues(t, id, n)
	}
	require.Equal(t, base, prepared(), "no Bun statement is prepared")

	for i := 0; i < 3; i++ {
		var n int
		require.NoError(t, store.Pool.QueryRow(ctx, `SELECT $1::int + 1`, i).Scan(&n))
	}
	require.Equal(t, base+1, prepared(), "a raw pgx statement is prepared once")
}

// TestSessionsPlanGenericallyWithoutJIT: the pool's sessions plan prepared
// statements once (generic plans) and never JIT-compile them, unless the
// database URL says otherwise.
func TestSessionsPlanGenericallyWithoutJIT(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewURL(t)
	show := func(store *db.DB, name string) string {
		var v string
		require.NoError(t, store.Pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v))
		return v
	}
	store, err := db.Open(ctx, url, db.Options{MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() }) //nolint:errcheck
	require.Equal(t, "force_generic_plan", show(store, "plan_cache_mode"))
	require.Equal(t, "off", show(store, "jit"))

	u, err := neturl.Parse(url)
	require.NoError(t, err)
	q := u.Query()
	q.Set("plan_cache_mode", "auto")
	q.Set("jit", "on")
	u.RawQuery = q.Encode()
	own, err := db.Open(ctx, u.String(), db.Options{MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { own.Close() }) //nolint:errcheck
	require.Equal(t, "auto", show(own, "plan_cache_mode"))
	require.Equal(t, "on", show(own, "jit"))
}
