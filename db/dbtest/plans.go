package dbtest

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// PlanConn is a connection of pool on which sequential scans are off, so a
// plan shows whether an index can answer a statement (on tiny tables the
// planner rightly prefers sequential scans). The setting is reset and the
// connection released when the test ends.
func PlanConn(t testing.TB, ctx context.Context, pool *pgxpool.Pool) *pgxpool.Conn {
	t.Helper()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire a connection: %v", err)
	}
	t.Cleanup(func() {
		conn.Exec(context.Background(), "RESET enable_seqscan") //nolint:errcheck
		conn.Release()
	})
	if _, err := conn.Exec(ctx, "SET enable_seqscan = off"); err != nil {
		t.Fatalf("SET enable_seqscan = off: %v", err)
	}
	return conn
}

// Explain returns the plan of sql with args on conn, one node a line.
func Explain(t testing.TB, ctx context.Context, conn *pgxpool.Conn, sql string, args ...any) string {
	t.Helper()
	rows, err := conn.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", sql, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatalf("read the plan of %s: %v", sql, err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the plan of %s: %v", sql, err)
	}
	return strings.Join(plan, "\n")
}
