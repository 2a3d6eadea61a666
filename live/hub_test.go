package live_test

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
	"github.com/cryptointel/cryptointel/live"
)

type testBundle struct {
	store *db.DB
	hub   *live.Hub
	next  int64
}

func setup(t *testing.T, buffer int) *testBundle {
	t.Helper()
	store := dbtest.New(t)
	b := &testBundle{store: store, next: 100}
	b.ingest(t, `{"kind":"entity","id":1,"canonicalName":"One"}`, `{"kind":"entity","id":2,"canonicalName":"Two"}`)
	b.hub = live.New(live.Config{Store: store, Buffer: buffer, PollInterval: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	b.hub.Start(ctx)
	t.Cleanup(func() {
		cancel()
		b.hub.Wait()
	})
	return b
}

func (b *testBundle) ingest(t *testing.T, lines ...string) {
	t.Helper()
	require.NoError(t, b.tryIngest(lines...))
}

// tryIngest ingests lines and reports any failure as an error, for
// goroutines other than the test's.
func (b *testBundle) tryIngest(lines ...string) error {
	sum, err := ingest.Write(context.Background(), b.store, strings.NewReader(strings.Join(lines, "\n")+"\n"), ingest.Options{})
	if err != nil {
		return err
	}
	if sum.FailedCount != 0 {
		return fmt.Errorf("%d lines failed: %+v", sum.FailedCount, sum.Failed)
	}
	return nil
}

// events ingests n new events (owner 1, category funding, every other one
// scored) in one transaction and returns their ids.
func (b *testBundle) events(t *testing.T, n int) []int64 {
	t.Helper()
	ids, err := b.tryEvents(n)
	require.NoError(t, err)
	return ids
}

// tryEvents is events for goroutines other than the test's.
func (b *testBundle) tryEvents(n int) ([]int64, error) {
	var lines []string
	var ids []int64
	for i := 0; i < n; i++ {
		b.next++
		sig := ""
		if b.next%2 == 0 {
			sig = `,"significance":5`
		}
		lines = append(lines, fmt.Sprintf(`{"kind":"event","id":%d,"title":"e%d","eventCategory":"funding","owners":[1],"participants":[2],`+
			`"evidence":[{"id":%d,"content":"c","url":"https://example.org","timestamp":"2026-11-20T10:00:00Z"}]%s}`, b.next, b.next, b.next*10, sig))
		ids = append(ids, b.next)
	}
	return ids, b.tryIngest(lines...)
}

func read(t *testing.T, s *live.Subscriber, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ids []int64
	var last int64 = -1
	for len(ids) < n {
		it, err := s.Next(ctx)
		require.NoError(t, err)
		require.Greater(t, it.Seq(), last, "items arrive once each, in ingest order")
		last = it.Seq()
		require.NotEmpty(t, it.Owners, "items carry their entities")
		require.NotEmpty(t, it.Evidence, "and evidence")
		ids = append(ids, it.Event.ID)
	}
	return ids
}

// TestHubResumesThenGoesLive: a subscriber starting from a cursor reads
// what it missed from the database, then live events, while ingest runs
// concurrently — every event once, in order.
func TestHubResumesThenGoesLive(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	missed := b.events(t, 30)
	sub, err := b.hub.Subscribe(db.StreamFilter{}, 0)
	require.NoError(t, err)
	defer sub.Close()

	var want []int64
	want = append(want, missed...)
	var (
		ingested  []int64
		ingestErr error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 10 && ingestErr == nil; i++ {
			var ids []int64
			ids, ingestErr = b.tryEvents(17)
			ingested = append(ingested, ids...)
		}
	}()
	got := read(t, sub, 30+170)
	<-done
	require.NoError(t, ingestErr)
	want = append(want, ingested...)
	require.Equal(t, want, got)
}

// TestHubStartsNow: without a cursor a subscriber gets only what is
// ingested after it subscribed, filtered.
func TestHubStartsNow(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	b.events(t, 5)
	require.Eventually(t, func() bool { return b.hub.Stats().Position > 0 }, 10*time.Second, 10*time.Millisecond)
	all, err := b.hub.Subscribe(db.StreamFilter{}, -1)
	require.NoError(t, err)
	signals, err := b.hub.Subscribe(db.StreamFilter{SignalOnly: true}, -1)
	require.NoError(t, err)
	other, err := b.hub.Subscribe(db.StreamFilter{Category: "listing"}, -1)
	require.NoError(t, err)
	ids := b.events(t, 4)
	require.Equal(t, ids, read(t, all, 4))
	var scored []int64
	for _, id := range ids {
		if id%2 == 0 {
			scored = append(scored, id)
		}
	}
	require.Equal(t, scored, read(t, signals, len(scored)))
	require.Zero(t, other.Waiting())
	require.Equal(t, 3, b.hub.Stats().Subscribers)
}

// TestSubscriberNextBefore: with nothing to read, NextBefore returns
// ErrNothingBefore at its deadline and the subscriber goes on: the next
// event is read by the next call; an event ready, or one that comes before
// the deadline, is returned; a deadline already past still returns what is
// ready.
func TestSubscriberNextBefore(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	sub, err := b.hub.Subscribe(db.StreamFilter{}, -1)
	require.NoError(t, err)
	defer sub.Close()
	ctx := context.Background()

	start := time.Now()
	it, err := sub.NextBefore(ctx, start.Add(50*time.Millisecond))
	require.ErrorIs(t, err, live.ErrNothingBefore)
	require.Nil(t, it)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "it waited for the deadline")

	ids := b.events(t, 2)
	it, err = sub.NextBefore(ctx, time.Now().Add(10*time.Second))
	require.NoError(t, err, "the subscriber is still open")
	require.Equal(t, ids[0], it.Event.ID)
	require.Eventually(t, func() bool { return sub.Waiting() > 0 }, 10*time.Second, 5*time.Millisecond)
	it, err = sub.NextBefore(ctx, time.Now().Add(-time.Second))
	require.NoError(t, err, "what is ready is returned whatever the deadline")
	require.Equal(t, ids[1], it.Event.ID)
	_, err = sub.NextBefore(ctx, time.Now().Add(-time.Second))
	require.ErrorIs(t, err, live.ErrNothingBefore, "nothing ready and the deadline past: no wait")

	later := make(chan []int64, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		ids, err := b.tryEvents(1)
		if err != nil {
			ids = nil
		}
		later <- ids
	}()
	it, err = sub.NextBefore(ctx, time.Now().Add(10*time.Second))
	require.NoError(t, err)
	ids = <-later
	require.Len(t, ids, 1)
	require.Equal(t, ids[0], it.Event.ID, "an event that comes while it waits")
}

// TestHubClosesSlowConsumers: a subscriber that does not read is closed
// when its buffer is full, with the slow_consumer reason, and counted.
func TestHubClosesSlowConsumers(t *testing.T) {
	t.Parallel()
	b := setup(t, 8)
	slow, err := b.hub.Subscribe(db.StreamFilter{}, -1)
	require.NoError(t, err)
	fast, err := b.hub.Subscribe(db.StreamFilter{}, -1)
	require.NoError(t, err)
	ids := b.events(t, 2)
	require.Equal(t, ids, read(t, fast, 2))
	for i := 0; i < 6; i++ {
		ids := b.events(t, 2)
		require.Equal(t, ids, read(t, fast, 2), "a reader that keeps up stays")
	}
	select {
	case <-slow.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the slow subscriber was not closed")
	}
	_, err = slow.Next(context.Background())
	require.Equal(t, live.CodeSlowConsumer, cryptointel.ErrorCode(err))
	require.Equal(t, "The stream fell more than 8 events behind and was closed. Resume from your last cursor.", cryptointel.ErrorMessage(err))
	st := b.hub.Stats()
	require.EqualValues(t, 1, st.Closed[live.CodeSlowConsumer])
	require.Equal(t, 1, st.Subscribers)
	require.LessOrEqual(t, st.Buffered, 8)
}

// TestHubClose ends every subscriber with the reason and refuses new ones;
// a consumer's own close is not a server reason.
func TestHubClose(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	require.Eventually(t, func() bool {
		_, err := b.hub.Subscribe(db.StreamFilter{}, -1)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	mine, err := b.hub.Subscribe(db.StreamFilter{}, -1)
	require.NoError(t, err)
	mine.Close()
	_, err = mine.Next(context.Background())
	require.True(t, live.IsClosedByConsumer(err))

	subs := make([]*live.Subscriber, 3)
	for i := range subs {
		subs[i], err = b.hub.Subscribe(db.StreamFilter{}, -1)
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(subs))
	for i, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Next(context.Background())
		}()
	}
	b.hub.Close(nil)
	wg.Wait()
	for i, err := range errs {
		require.ErrorIs(t, err, live.ErrShuttingDown, "subscriber %d", i)
	}
	_, err = b.hub.Subscribe(db.StreamFilter{}, -1)
	require.ErrorIs(t, err, live.ErrShuttingDown)
}

// TestHubNotRunning refuses subscribers until the hub is positioned.
func TestHubNotRunning(t *testing.T) {
	t.Parallel()
	hub := live.New(live.Config{Store: dbtest.New(t)})
	_, err := hub.Subscribe(db.StreamFilter{}, -1)
	require.ErrorIs(t, err, live.ErrNotRunning)
}

// TestItemMemo builds a shared value once; the others wait for it.
func TestItemMemo(t *testing.T) {
	t.Parallel()
	it := &live.Item{Event: &cryptointel.Event{ID: 1}}
	var wg sync.WaitGroup
	var owners sync.Map
	results := make([]any, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, owner := it.Memo("k")
			if owner {
				owners.Store(i, true)
				time.Sleep(10 * time.Millisecond)
				f.Set("built")
			}
			results[i] = f.Wait(context.Background())
		}()
	}
	wg.Wait()
	n := 0
	owners.Range(func(any, any) bool { n++; return true })
	require.Equal(t, 1, n)
	for _, r := range results {
		require.Equal(t, "built", r)
	}
	f, owner := it.Memo("other")
	require.True(t, owner)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Nil(t, f.Wait(ctx))
}
