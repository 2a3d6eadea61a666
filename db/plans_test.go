package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
)

// TestHotStatementsGenericPlans: the service's pools run every prepared
// statement on its generic plan (plan_cache_mode force_generic_plan, see
// newPool), planned once per connection without the values. Each hot read
// statement's generic plan is checked against the plan PostgreSQL makes
// for the values (its custom plan) on demo data: it must not read a whole
// content table (events, their entities, evidence) the custom plan reaches
// by index and, when it is another plan, not cost much more.
func TestHotStatementsGenericPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := demoStore(t, 3000)
	var ids []int64
	rows, err := store.Pool.Query(ctx, `SELECT entity_id FROM event_entities GROUP BY entity_id ORDER BY count(*) DESC LIMIT 5`)
	require.NoError(t, err)
	ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	var newest time.Time
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT max(latest_evidence_at) FROM events`).Scan(&newest))

	conn, err := store.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	plan := func(mode, name string, args []any) (cost float64, text string) {
		_, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode)
		require.NoError(t, err)
		lits := make([]string, len(args))
		for i, a := range args {
			lits[i] = literal(t, a)
		}
		var out []byte
		require.NoError(t, conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE "+name+"("+strings.Join(lits, ", ")+")").Scan(&out))
		var p []struct {
			Plan struct {
				TotalCost float64 `json:"Total Cost"`
			} `json:"Plan"`
		}
		require.NoError(t, json.Unmarshal(out, &p))
		return p[0].Plan.TotalCost, string(out)
	}
	for i, s := range db.HotStatementsForTest(ids, newest.Add(-30*24*time.Hour)) {
		name := fmt.Sprintf("hot_%d", i)
		_, err := conn.Conn().Prepare(ctx, name, s.SQL)
		require.NoError(t, err, s.Name)
		generic, gtext := plan("force_generic_plan", name, s.Args)
		custom, ctext := plan("force_custom_plan", name, s.Args)
		t.Logf("%s: generic plan cost %.0f, custom %.0f", s.Name, generic, custom)
		for _, table := range []string{"events", "event_entities", "evidence"} {
			seq := `"Node Type": "Seq Scan",`
			if strings.Contains(ctext, seq) {
				continue // the values' own plan reads tables whole: so may the generic one
			}
			require.NotContains(t, compact(gtext), compact(seq+` "Parallel Aware": false, "Async Capable": false, "Relation Name": "`+table+`"`),
				"%s: the generic plan reads %s whole", s.Name, table)
		}
		if gs, cs := shape(t, gtext), shape(t, ctext); gs != cs {
			// Another plan than the values' own: it must not cost much
			// more than it. (The same plan may: the generic estimate of an
			// unknown LIMIT alone makes it cost four times more.)
			require.LessOrEqual(t, generic, 2*custom+50, "%s: generic plan %s (cost %.0f) against %s (cost %.0f)", s.Name, gs, generic, cs, custom)
		}
	}
}

// demoStore is a database of the test's own holding the demo data of n
// events, analyzed, for plans to be made on.
func demoStore(t *testing.T, n int) *db.DB {
	t.Helper()
	ctx := context.Background()
	store := dbtest.New(t)
	_, err := demo.Seed(ctx, store, demo.Options{Events: n})
	require.NoError(t, err)
	_, err = store.Pool.Exec(ctx, "ANALYZE")
	require.NoError(t, err)
	return store
}

// literal is a as an SQL expression (EXPLAIN EXECUTE takes no
// parameters).
func literal(t *testing.T, a any) string {
	switch v := a.(type) {
	case int, int32, int64:
		return fmt.Sprint(v)
	case bool:
		return fmt.Sprint(v)
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case time.Time:
		return "'" + v.UTC().Format(time.RFC3339Nano) + "'::timestamptz"
	case []int64:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return "'{" + strings.Join(parts, ",") + "}'::bigint[]"
	case []int32:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return "'{" + strings.Join(parts, ",") + "}'::int[]"
	case []string:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = `"` + strings.ReplaceAll(x, `"`, `\"`) + `"`
		}
		return "'{" + strings.Join(parts, ",") + "}'::text[]"
	}
	t.Fatalf("no literal for %T", a)
	return ""
}

// shape is the nodes of an EXPLAIN JSON plan with their relations and
// indexes, depth first.
func shape(t *testing.T, text string) string {
	var p []map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &p))
	var b strings.Builder
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		fmt.Fprintf(&b, "(%v", n["Node Type"])
		for _, k := range []string{"Relation Name", "Index Name"} {
			if v, ok := n[k]; ok {
				fmt.Fprintf(&b, " %v", v)
			}
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			walk(k.(map[string]any))
		}
		b.WriteString(")")
	}
	walk(p[0]["Plan"].(map[string]any))
	return b.String()
}

// compact removes the white space of an EXPLAIN JSON text.
func compact(s string) string { return strings.Join(strings.Fields(s), "") }
