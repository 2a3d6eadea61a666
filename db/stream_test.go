package db_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
)

func streamLine(id int64, category, sig, owners string) string {
	s := fmt.Sprintf(`{"kind":"event","id":%d,"title":"e","eventCategory":%q,"owners":[%s],`+
		`"evidence":[{"id":%d,"content":"c","url":"https://example.org","timestamp":"2026-11-20T10:00:00Z"}]`, id, category, owners, id*10)
	if sig != "" {
		s += `,"significance":` + sig
	}
	return s + "}\n"
}

// TestEventsAfterSeq reads events in ingest order above a position, with
// the stream filters, and StreamHead is the newest position.
func TestEventsAfterSeq(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	head, err := store.StreamHead(ctx)
	require.NoError(t, err)
	require.Zero(t, head)
	_, err = ingest.Write(ctx, store, strings.NewReader(`{"kind":"entity","id":1,"canonicalName":"One"}`+"\n"+
		`{"kind":"entity","id":2,"canonicalName":"Two"}`+"\n"), ingest.Options{})
	require.NoError(t, err)
	sum, err := ingest.Write(ctx, store, strings.NewReader(
		streamLine(10, "funding", "", "1")+streamLine(11, "listing", "3", "2")+streamLine(12, "funding", "8", "1,2")), ingest.Options{})
	require.NoError(t, err)
	require.Zero(t, sum.FailedCount, "%+v", sum.Failed)
	head, err = store.StreamHead(ctx)
	require.NoError(t, err)

	ids := func(after, upTo int64, f db.StreamFilter, limit int) []int64 {
		evs, err := db.EventsAfterSeq(ctx, store.Bun, after, upTo, f, limit)
		require.NoError(t, err)
		var out []int64
		prev := after
		for _, e := range evs {
			require.Greater(t, e.IngestSeq, prev, "ingest order")
			prev = e.IngestSeq
			out = append(out, e.ID)
		}
		return out
	}
	require.Equal(t, []int64{10, 11, 12}, ids(0, 0, db.StreamFilter{}, 100))
	require.Equal(t, []int64{10, 11}, ids(0, 0, db.StreamFilter{}, 2))
	require.Empty(t, ids(head, 0, db.StreamFilter{}, 100))
	evs, err := db.EventsAfterSeq(ctx, store.Bun, 0, 0, db.StreamFilter{}, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{11, 12}, ids(evs[0].IngestSeq, 0, db.StreamFilter{}, 100))
	require.Equal(t, []int64{10, 11}, ids(0, head-1, db.StreamFilter{}, 100), "upTo bounds the read")
	min := 5.0
	require.Equal(t, []int64{11, 12}, ids(0, 0, db.StreamFilter{SignalOnly: true}, 100))
	require.Equal(t, []int64{10, 12}, ids(0, 0, db.StreamFilter{Category: "funding"}, 100))
	require.Equal(t, []int64{11, 12}, ids(0, 0, db.StreamFilter{EntityID: 2}, 100))
	require.Equal(t, []int64{12}, ids(0, 0, db.StreamFilter{MinSignificance: &min}, 100))

	// A changed event moves to the end of the sequence.
	_, err = ingest.Write(ctx, store, strings.NewReader(strings.Replace(streamLine(10, "funding", "", "1"), `"title":"e"`, `"title":"changed"`, 1)), ingest.Options{})
	require.NoError(t, err)
	require.Equal(t, []int64{10}, ids(head, 0, db.StreamFilter{}, 100))
}

// TestStreamLeases caps a key's open streams at its plan's max_streams
// under concurrent opens, frees places on close and on expiry, and reports
// the credits left.
func TestStreamLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	_, key, err := db.CreateAPIKey(ctx, store.Bun, "streams", cryptointel.PlanPro)
	require.NoError(t, err)
	_, _, month := db.UsagePeriods(time.Now())

	const tries = 20
	var wg sync.WaitGroup
	results := make([]db.StreamLease, tries)
	errs := make([]error, tries)
	for i := 0; i < tries; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := store.OpenStreamLease(ctx, key.ID, month, time.Minute)
			errs[i] = err
			if l != nil {
				results[i] = *l
			}
		}()
	}
	wg.Wait()
	var leases []string
	full := 0
	for i, l := range results {
		require.NoError(t, errs[i])
		require.Equal(t, 5, l.Max)
		if l.ID == "" {
			require.Equal(t, 5, l.Open)
			full++
			continue
		}
		leases = append(leases, l.ID)
	}
	require.Len(t, leases, 5, "exactly the pro plan's 5 places")
	require.Equal(t, tries-5, full)

	require.NoError(t, store.CloseStreamLease(ctx, leases[0]))
	l, err := store.OpenStreamLease(ctx, key.ID, month, time.Minute)
	require.NoError(t, err)
	require.NotEmpty(t, l.ID, "a closed stream frees its place")
	require.EqualValues(t, 50_000, l.CreditsRemaining)

	// Leases of a process that died expire; renewed ones do not.
	_, err = store.Pool.Exec(ctx, `UPDATE stream_leases SET expires_at = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, leases[1:3])
	require.NoError(t, err)
	require.NoError(t, store.RenewStreamLeases(ctx, leases[3:], time.Minute))
	for i := 0; i < 2; i++ {
		l, err := store.OpenStreamLease(ctx, key.ID, month, time.Minute)
		require.NoError(t, err)
		require.NotEmpty(t, l.ID, "expired leases free their places")
	}
	l, err = store.OpenStreamLease(ctx, key.ID, month, time.Minute)
	require.NoError(t, err)
	require.Empty(t, l.ID)

	_, err = store.OpenStreamLease(ctx, 987654, month, time.Minute)
	require.Equal(t, cryptointel.ENOTFOUND, cryptointel.ErrorCode(err))
}

// TestSettleStreamCredits charges pushed events to the month's and day's
// credits (not requests) in one statement for several keys and returns each
// key's balance, revocation and plan.
func TestSettleStreamCredits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	_, a, err := db.CreateAPIKey(ctx, store.Bun, "a", cryptointel.PlanPro)
	require.NoError(t, err)
	_, b, err := db.CreateAPIKey(ctx, store.Bun, "b", cryptointel.PlanBusiness)
	require.NoError(t, err)
	now := time.Now()
	bal, err := store.SettleStreamCredits(ctx, []db.StreamCharge{{KeyID: a.ID, Credits: 7}, {KeyID: b.ID, Credits: 0}, {KeyID: a.ID, Credits: 3}}, now)
	require.NoError(t, err)
	got := map[int64]db.StreamBalance{}
	for _, x := range bal {
		got[x.KeyID] = x
	}
	require.Equal(t, db.StreamBalance{KeyID: a.ID, Remaining: 50_000 - 10, Plan: "pro"}, got[a.ID])
	require.Equal(t, db.StreamBalance{KeyID: b.ID, Remaining: 500_000, Plan: "business"}, got[b.ID])
	usage, err := store.UsageFor(ctx, a.ID, now)
	require.NoError(t, err)
	require.EqualValues(t, 10, usage.MonthCredits)
	require.Zero(t, usage.Today, "events are not requests")
	var dayCredits int64
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT credits FROM usage_daily WHERE api_key_id = $1`, a.ID).Scan(&dayCredits))
	require.EqualValues(t, 10, dayCredits)

	_, err = store.Pool.Exec(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, b.ID)
	require.NoError(t, err)
	bal, err = store.SettleStreamCredits(ctx, []db.StreamCharge{{KeyID: b.ID, Credits: 1}, {KeyID: 987654, Credits: 1}}, now)
	require.NoError(t, err)
	require.Equal(t, []db.StreamBalance{{KeyID: b.ID, Remaining: 500_000 - 1, Revoked: true, Plan: "business"}}, bal)
}

// TestPlanStreamCapsSeeded holds the plans the migrations seed to
// cryptointel.PlanStreamCaps, the table the schema and /v1 docs quote:
// the plans with streams, in rank order with their caps, and 0 for every
// other plan.
func TestPlanStreamCapsSeeded(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	var plans []cryptointel.Plan
	require.NoError(t, store.Bun.NewSelect().Model(&plans).Order("rank").Scan(context.Background()))
	require.NotEmpty(t, plans)
	var seeded []cryptointel.PlanStreamCap
	for _, p := range plans {
		if p.MaxStreams != 0 {
			seeded = append(seeded, cryptointel.PlanStreamCap{Plan: p.Name, MaxStreams: p.MaxStreams})
		}
	}
	require.Equal(t, cryptointel.PlanStreamCaps, seeded)
}
