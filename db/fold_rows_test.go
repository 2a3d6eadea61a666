package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestLayoutScanAlternatingKinds reads rows whose kinds alternate and
// share slots with other Go types (a *string where the other kind has a
// nullable **string, an *int32 where it has an *int), NULLs among them:
// each row is scanned into its own kind's destinations, whichever kind
// came before it.
func TestLayoutScanAlternatingKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	got, err := db.LayoutScanForTest(ctx, store.Pool,
		[]string{
			`1, 'one', NULL, string_to_array('a b', ' ')`,
			`2, 'two', 'x', '{}'::text[]`,
			`3, 'three', NULL, ARRAY['c']`,
		},
		[]string{
			`5, 'p', 'q'`,
			`7, NULL, 'r'`,
		})
	require.NoError(t, err)
	s := func(v string) *string { return &v }
	require.Equal(t, []db.ScannedRowForTest{
		{0, []any{int32(1), "one", (*string)(nil), []string{"a", "b"}}},
		{1, []any{5, s("p"), "q"}},
		{0, []any{int32(2), "two", s("x"), []string{}}},
		{1, []any{7, (*string)(nil), "r"}},
		{0, []any{int32(3), "three", (*string)(nil), []string{"c"}}},
	}, got)

	// A NULL where the kind's destination takes none is an error naming
	// the column, not a zero value.
	_, err = db.LayoutScanForTest(ctx, store.Pool, []string{`1, NULL, NULL, ARRAY['a']`}, nil)
	require.ErrorContains(t, err, "error scanning test rows: column")
}

// TestLayoutTextAsPgx holds the layout's own decoding of text columns
// (db/fold_text.go) to pgx's: the same strings, NULLs and empty lists,
// across the arena's chunks and slabs and past its largest chunk, and the
// forms it leaves to pgx (arrays of two dimensions or with a lower bound
// of their own) decoded as pgx decodes them.
func TestLayoutTextAsPgx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	rows := []string{
		`1, '', NULL, NULL::text[]`,
		`2, 'plain', '', '{}'::text[]`,
		`3, 'Zürich ☃ 東京', 'v', ARRAY['']`,
		`4, repeat('x', 9000), repeat('n', 9000), (ARRAY['a', 'b c', 'ü', repeat('y', 9000)])`,
		`5, 'after the long ones', NULL, (ARRAY[['a', 'b'], ['c', 'd']])`,
		`6, 'bounds', 'w', ('[0:1]={e,f}'::text[])`,
		`7, 'varchar'::varchar, 'x'::varchar, ARRAY['g'::varchar]::text[]`,
	}
	// Enough values to fill several chunks and slabs.
	for i := 0; i < 150; i++ {
		rows = append(rows, fmt.Sprintf(`%d, repeat('m', %d), CASE WHEN %d %% 3 = 0 THEN NULL ELSE 'n%d' END, (ARRAY['l%d', repeat('k', %d)])`,
			100+i, i*17%1500, i, i, i, i*31%700))
	}
	viaLayout, viaPgx, err := db.LayoutTextForTest(ctx, store.Pool, rows)
	require.NoError(t, err)
	require.Len(t, viaLayout, len(rows))
	require.Equal(t, viaPgx, viaLayout)
	require.Equal(t, []string{"a", "b", "c", "d"}, viaLayout[4][3])
	require.Equal(t, []string{}, viaLayout[1][3])
	require.Nil(t, viaLayout[0][3])

	// What pgx refuses, the layout refuses: a NULL text where none fits,
	// an array with a NULL element.
	_, _, err = db.LayoutTextForTest(ctx, store.Pool, []string{`1, NULL, NULL, NULL::text[]`})
	require.ErrorContains(t, err, "error scanning test rows: column")
	_, _, err = db.LayoutTextForTest(ctx, store.Pool, []string{`1, 'a', NULL, (ARRAY['a', NULL])`})
	require.ErrorContains(t, err, "error scanning test rows: column")
}

// TestLayoutFixedAsPgx holds the layout's own decoding of binary
// fixed-width columns (db/fold_text.go: integers, floats, booleans,
// instants) to pgx's: the same values, extremes and signs, instants before
// and after 2000 with their microseconds, in pgx's zone, a nullable float's
// NULL; and what it leaves to pgx (a far instant) decoded as pgx does.
func TestLayoutFixedAsPgx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	rows := []string{
		`0, 0, 0, 0, NULL, false, timestamptz '2000-01-01 00:00:00+00'`,
		`9223372036854775807, 2147483647, 2147483647, 1.5, 2.25, true, timestamptz '2026-11-30 03:04:05.123456+00'`,
		`bigint '-9223372036854775808', -2147483648, -2147483648, -0.0, float8 'Infinity', false, timestamptz '1999-12-31 23:59:59.999999+00'`,
		`-1, -1, -1, 1e308, float8 '-Infinity', true, timestamptz '1969-07-20 20:17:40.000001+00'`,
		`42, 7, -7, 5e-324, 0, true, timestamptz '1900-03-01 12:00:00.5+05:30'`,
		`43, 8, 8, 0.1, NULL, false, timestamptz '2950-01-01 00:00:00+00'`,
		`44, 9, 9, 0.2, 0.3, true, timestamptz '0044-03-15 12:00:00+00'`,
	}
	for i := 0; i < 150; i++ { // past the nullable floats' slab
		rows = append(rows, fmt.Sprintf(`%d, %d, %d, %d.25, CASE WHEN %d %% 4 = 0 THEN NULL ELSE %d.5 END, %t, timestamptz '2026-01-01' + interval '%d seconds 13 microseconds'`,
			1000+i, -i, i*3, i, i, i, i%2 == 0, i*86_417))
	}
	viaLayout, viaPgx, err := db.LayoutFixedForTest(ctx, store.Pool, rows)
	require.NoError(t, err)
	require.Len(t, viaLayout, len(rows))
	require.Equal(t, viaPgx, viaLayout)
	require.Equal(t, int64(-9223372036854775808), viaLayout[2][0])
	require.Nil(t, viaLayout[0][4])
	require.Equal(t, time.Local, viaLayout[1][6].(time.Time).Location(), "pgx's zone")
	require.True(t, time.Date(1969, 7, 20, 20, 17, 40, 1000, time.UTC).Equal(viaLayout[3][6].(time.Time)))

	// What pgx refuses, the layout refuses: a NULL where none fits, an
	// instant at infinity.
	for _, row := range []string{
		`NULL, 0, 0, 0, 0, false, now()`,
		`0, 0, 0, NULL, 0, false, now()`,
		`0, 0, 0, 0, 0, NULL, now()`,
		`0, 0, 0, 0, 0, false, NULL`,
		`0, 0, 0, 0, 0, false, timestamptz 'infinity'`,
	} {
		_, _, err = db.LayoutFixedForTest(ctx, store.Pool, []string{row})
		require.ErrorContains(t, err, "error scanning test rows: column", row)
	}
}

// TestGroupByEventRuns: each event's children are its run of the sorted
// rows, in their order, and appending to one run leaves the next as it is.
func TestGroupByEventRuns(t *testing.T) {
	t.Parallel()
	items := [][2]int64{{3, 1}, {3, 2}, {5, 3}, {8, 4}, {8, 5}, {8, 6}}
	got := db.GroupByEventForTest(items)
	require.Equal(t, map[int64][][2]int64{
		3: {{3, 1}, {3, 2}},
		5: {{5, 3}},
		8: {{8, 4}, {8, 5}, {8, 6}},
	}, got)
	_ = append(got[3], [2]int64{3, 99})
	require.Equal(t, [][2]int64{{5, 3}}, got[5])
	require.Empty(t, db.GroupByEventForTest(nil))
}
