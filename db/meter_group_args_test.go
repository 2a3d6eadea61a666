package db_test

import (
	"context"
	"crypto/sha256"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
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

// BenchmarkMeterGroupArgs builds the metering statement's parameters as pgx
// does for each group (binary first, text when that fails), for a group of
// one: the arguments as meterGroup gives them, and with the dates given as
// strings (as they were).
func BenchmarkMeterGroupArgs(b *testing.B) {
	ctx := context.Background()
	store := dbtest.New(b)
	now := time.Now()
	sql, args := db.MeterGroupStatementForTest([]db.MeterParams{{KeyHash: make([]byte, 32), AllowedPlans: []string{"pro"},
		WindowStart: now.Truncate(time.Minute), RateLimit: 60, Cost: 1, Day: now, Month: now, Surface: "data"}})
	conn, err := store.Pool.Acquire(ctx)
	require.NoError(b, err)
	defer conn.Release()
	sd, err := conn.Conn().Prepare(ctx, "", sql)
	require.NoError(b, err)
	m := conn.Conn().TypeMap()
	strs := append([]any(nil), args...)
	strs[4], strs[5] = []string{now.UTC().Format(time.DateOnly)}, []string{now.UTC().Format(time.DateOnly)}
	for _, c := range []struct {
		name string
		args []any
	}{{"as built", args}, {"dates as strings", strs}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var eqb pgx.ExtendedQueryBuilder
			for b.Loop() {
				if err := eqb.Build(m, sd, c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMeterLone meters requests one after another, each alone in its
// group (a client at concurrency 1): the lone request leads its flight
// from its own goroutine. cpu-ns/op is the process's CPU (user and
// system) per request, where the hand-over to a flight's goroutine and
// back showed: 107–151 µs a request with it, 88–98 µs without, five
// rounds each on two cores.
func BenchmarkMeterLone(b *testing.B) {
	ctx := context.Background()
	store := dbtest.New(b)
	acct := &cryptointel.Account{Name: "lone", Plan: cryptointel.PlanEnterprise}
	_, err := store.Bun.NewInsert().Model(acct).Exec(ctx)
	require.NoError(b, err)
	hash := sha256.Sum256([]byte(acct.Name))
	_, err = store.Bun.NewInsert().Model(&cryptointel.APIKey{AccountID: acct.ID, Prefix: "ci_test", Hash: hash[:]}).Exec(ctx)
	require.NoError(b, err)
	p := meterAt(time.Date(2026, 3, 4, 10, 0, 5, 0, time.UTC), hash[:], 0)
	p.RateLimit = 1 << 30
	var before, after syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &before))
	b.ResetTimer()
	for range b.N {
		res, err := store.Meter(ctx, p)
		if err != nil || !res.Charged {
			b.Fatal(res, err)
		}
	}
	b.StopTimer()
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &after))
	cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
