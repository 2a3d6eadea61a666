package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestMeterGroupArgsEncodeInBinary checks that every argument of the
// metering statement encodes in binary for its parameter's type. pgx falls
// back to text for an argument whose binary encoding fails, silently and on
// every call (building an error each time): the group's dates, given as
// strings, did.
func TestMeterGroupArgsEncodeInBinary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	now := time.Date(2026, 11, 29, 23, 30, 0, 0, time.FixedZone("", 3*3600))
	sql, args := db.MeterGroupStatementForTest([]db.MeterParams{
		{KeyHash: []byte{1, 2}, AllowedPlans: []string{"free", "pro"}, WindowStart: now.Truncate(time.Minute), RateLimit: 60,
			Cost: 2, Day: now, Month: now.AddDate(0, 0, -28), Surface: "data"},
		{KeyHash: []byte{3}, WindowStart: now, RateLimit: 1 << 40, Day: now, Month: now, Write: true},
	})
	conn, err := store.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	sd, err := conn.Conn().Prepare(ctx, "", sql)
	require.NoError(t, err)
	require.Len(t, sd.ParamOIDs, len(args))
	m := conn.Conn().TypeMap()
	for i, oid := range sd.ParamOIDs {
		_, err := m.Encode(oid, pgtype.BinaryFormatCode, args[i], nil)
		require.NoError(t, err, "argument $%d (%T)", i+1, args[i])
	}
	// The dates are the UTC dates of the times given.
	var day, month string
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT ($1::date[])[1]::text, ($2::date[])[1]::text`, args[4], args[5]).Scan(&day, &month))
	require.Equal(t, "2026-11-29", day)
	require.Equal(t, "2026-11-01", month)
}
