package db

import (
	"context"
	"strings"
	"time"
)

// ScannedRowForTest is one row LayoutScanForTest read: its kind and its
// columns as scanned.
type ScannedRowForTest struct {
	Kind   int
	Values []any
}

// LayoutScanForTest reads, through a layout of two kinds sharing their
// slots with other Go types (kind 0: an int32, a text, a nullable text, a
// text[]; kind 1: an int, a nullable text, a text), rows whose kinds alternate:
// one select of kind 0's columns per row of rows0 and of kind 1's per row
// of rows1, each a comma-separated list of SQL expressions, ordered by
// their place.
func LayoutScanForTest(ctx context.Context, q Querier, rows0, rows1 []string) ([]ScannedRowForTest, error) {
	var (
		id               int32
		name, other      string
		pname, pnullable *string
		names            []string
		n                int
	)
	l := newRowLayout(
		[]any{&id, &name, &pnullable, &names},
		[]any{&n, &pname, &other},
	)
	var sel []string
	for i := 0; i < max(len(rows0), len(rows1)); i++ {
		if i < len(rows0) {
			sel = append(sel, "SELECT "+l.selectList(0, rows0[i]))
		}
		if i < len(rows1) {
			sel = append(sel, "SELECT "+l.selectList(1, rows1[i]))
		}
	}
	// UNION ALL keeps the branches' order here (no sort, one process).
	rs, err := q.Query(ctx, strings.Join(sel, " UNION ALL "))
	if err != nil {
		return nil, err
	}
	var out []ScannedRowForTest
	err = l.scan(rs, "test rows", func(kind int, buf []any) []any {
		id, name, pnullable, names, n, pname, other = 0, "", nil, nil, 0, nil, ""
		if kind == 0 {
			return append(buf, &id, &name, &pnullable, &names)
		}
		return append(buf, &n, &pname, &other)
	}, func(kind int) error {
		if kind == 0 {
			out = append(out, ScannedRowForTest{0, []any{id, name, pnullable, names}})
		} else {
			out = append(out, ScannedRowForTest{1, []any{n, pname, other}})
		}
		return nil
	})
	return out, err
}

// LayoutTextForTest reads rows (each a comma-separated list of SQL
// expressions: an int, a text, a nullable text, a text[]) twice: through
// a layout's scan, and by pgx's own Scan of the same statement. The
// values come back as each read them, row by row.
func LayoutTextForTest(ctx context.Context, q Querier, rows []string) (viaLayout, viaPgx [][]any, err error) {
	var (
		id       int32
		name     string
		nullable *string
		names    []string
	)
	return scanBothWays(ctx, q, rows, func() []any {
		id, name, nullable, names = 0, "", nil, nil
		return []any{&id, &name, &nullable, &names}
	}, func() []any { return []any{id, name, nullable, names} })
}

// scanBothWays reads rows (each a select list of one kind, whose
// destinations reset zeroes and returns) through a layout's scan, then by
// pgx's own Scan of the same statement, and returns values after each row
// of each reading.
func scanBothWays(ctx context.Context, q Querier, rows []string, reset, values func() []any) (viaLayout, viaPgx [][]any, err error) {
	l := newRowLayout(reset())
	sel := make([]string, len(rows))
	for i, r := range rows {
		sel[i] = "SELECT " + l.selectList(0, r)
	}
	sql := strings.Join(sel, " UNION ALL ")
	rs, err := q.Query(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	err = l.scan(rs, "test rows", func(_ int, buf []any) []any {
		return append(buf, reset()...)
	}, func(int) error {
		viaLayout = append(viaLayout, values())
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	rs, err = q.Query(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	for rs.Next() {
		var kind int32
		dsts := reset()
		dst := make([]any, 1+len(l.types))
		dst[0] = &kind
		for j, s := range l.kinds[0] {
			dst[1+s] = dsts[j]
		}
		if err := rs.Scan(dst...); err != nil {
			return nil, nil, err
		}
		viaPgx = append(viaPgx, values())
	}
	return viaLayout, viaPgx, rs.Err()
}

// GroupByEventForTest is groupByEvent over pairs (event, value).
func GroupByEventForTest(items [][2]int64) map[int64][][2]int64 {
	return groupByEvent(items, func(p *[2]int64) int64 { return p[0] })
}

// LayoutFixedForTest reads rows (each a comma-separated list of SQL
// expressions: a bigint, an int, an int, a float8, a nullable float8, a
// bool, a timestamptz, each cast to its type) twice: through a layout's
// scan, and by pgx's own Scan of the same statement. The values come back as each read them, row
// by row.
func LayoutFixedForTest(ctx context.Context, q Querier, rows []string) (viaLayout, viaPgx [][]any, err error) {
	var (
		big      int64
		small    int32
		n        int
		f        float64
		nullable *float64
		b        bool
		at       time.Time
	)
	stale := -1.0 // a NULL must set the nullable float to nil, whatever it held
	reset := func() []any {
		big, small, n, f, nullable, b, at = 0, 0, 0, 0, &stale, false, time.Time{}
		return []any{&big, &small, &n, &f, &nullable, &b, &at}
	}
	// Each value is cast to its column's type: left to the union, a
	// literal such as 1.5 is numeric and -2147483648 a bigint, and a bare
	// NULL text.
	typed := make([]string, len(rows))
	for i, r := range rows {
		cols := splitColumns(r)
		for j, d := range reset() {
			cols[j] = "CAST((" + cols[j] + ") AS " + sqlTypeOf(d) + ")"
		}
		typed[i] = strings.Join(cols, ", ")
	}
	return scanBothWays(ctx, q, typed, reset, func() []any { return []any{big, small, n, f, nullable, b, at} })
}
