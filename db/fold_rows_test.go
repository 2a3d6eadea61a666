package db_test

import (
	"context"
	"testing"

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
