package db_test

import (
	"context"
	"net"
	neturl "net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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

// TestLargeResultsReadInFewCalls: a connection of the pools takes what
// PostgreSQL has sent in reads of up to 64 KiB, not pgx's 8 KiB a read
// system call. The connection's reads are counted on a pool made from the
// store's own configuration, each read a little late (as a busy service
// reads), so that what the server sent is waiting: a 400 KiB result must
// come in far fewer than the 50 reads 8 KiB at a time would take.
func TestLargeResultsReadInFewCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := db.Open(ctx, dbtest.NewURL(t), db.Options{MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() }) //nolint:errcheck

	cfg := store.Pool.Config()
	var reads atomic.Int64
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &slowCountingConn{Conn: c, reads: &reads}, nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pool.Ping(ctx))

	reads.Store(0)
	var total int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT sum(length(s)) FROM (SELECT repeat('x', 8000) AS s FROM generate_series(1, 50)) r`).Scan(&total))
	require.EqualValues(t, 400000, total, "the check reads what it should")
	small := reads.Load()

	reads.Store(0)
	rows, err := pool.Query(ctx, `SELECT repeat('x', 8000) FROM generate_series(1, 50)`)
	require.NoError(t, err)
	var n, size int
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		n++
		size += len(s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 50, n)
	require.Equal(t, 400000, size)
	got := reads.Load()
	t.Logf("read calls: %d for a 400 KB result, %d for a one-row answer", got, small)
	require.Less(t, got, int64(20), "a 400 KB result is read in reads of up to 64 KiB")
}

// slowCountingConn counts its reads and makes each one 2 ms late.
type slowCountingConn struct {
	net.Conn
	reads *atomic.Int64
}

func (c *slowCountingConn) Read(p []byte) (int, error) {
	c.reads.Add(1)
	time.Sleep(2 * time.Millisecond)
	return c.Conn.Read(p)
}
