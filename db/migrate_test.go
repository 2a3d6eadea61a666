package db_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db/dbtest"
)

func TestMigrationsCurrent(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ok, err := d.MigrationsCurrent(context.Background())
	require.NoError(t, err)
	require.True(t, ok)

	var plans int
	require.NoError(t, d.Bun.NewRaw("SELECT count(*) FROM plans").Scan(context.Background(), &plans))
	require.Equal(t, 4, plans)
}
