package db

import (
	"context"
	"strings"
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
	err = l.scan(rs, "test rows", func(kind int) []any {
		id, name, pnullable, names, n, pname, other = 0, "", nil, nil, 0, nil, ""
		if kind == 0 {
			return []any{&id, &name, &pnullable, &names}
		}
		return []any{&n, &pname, &other}
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
