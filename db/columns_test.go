package db_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestColumnsMatchTables: every column the domain types name (the
// generated table of columns_gen.go) exists in the migrated database with
// the type the Go field holds, so a field added without its migration, or
// a column renamed under the code, fails here and not on a request.
func TestColumnsMatchTables(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	ctx := context.Background()
	n := 0
	for table, cols := range db.TableColumns() {
		for _, c := range cols {
			var typ string
			err := store.Pool.QueryRow(ctx, `
				SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
				WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped`, table, c[0]).Scan(&typ)
			require.NoError(t, err, "%s.%s: the domain type names a column the database does not have", table, c[0])
			require.Equal(t, c[1], typ, "%s.%s", table, c[0])
			n++
		}
	}
	require.Greater(t, n, 20)
}
