package live

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// Item is one event as streams push it: the event and its owners,
// participants and evidence, loaded together once per page and shared by
// every subscriber it is handed to. Items are read-only once loaded.
type Item struct {
	// Event is the event.
	Event *cryptointel.Event
	// Owners and Participants are the event's entities by role, in order.
	Owners, Participants []*cryptointel.Entity
	// Evidence is the event's evidence, newest first.
	Evidence []*cryptointel.Evidence

	// The first key's future is read without a lock (every subscriber of
	// an event asks for it at once); other keys go through the map.
	first  atomic.Pointer[memoEntry]
	memoMu sync.Mutex
	memo   map[string]*Future
}

type memoEntry struct {
	key string
	fut *Future
}

// Seq is the item's position: the event's ingest_seq.
func (it *Item) Seq() int64 { return it.Event.IngestSeq }

// Memo returns the future holding what subscribers sharing key make of the
// item (for example its encoded response) and whether the caller is the one
// to compute it: then it must call Set, even with nil when it could not.
// Others Wait for it.
func (it *Item) Memo(key string) (f *Future, owner bool) {
	if e := it.first.Load(); e != nil && e.key == key {
		return e.fut, false
	}
	it.memoMu.Lock()
	defer it.memoMu.Unlock()
	if e := it.first.Load(); e != nil && e.key == key {
		return e.fut, false
	}
	if f, ok := it.memo[key]; ok {
		return f, false
	}
	f = &Future{done: make(chan struct{})}
	if it.first.Load() == nil {
		it.first.Store(&memoEntry{key: key, fut: f})
		return f, true
	}
	if it.memo == nil {
		it.memo = map[string]*Future{}
	}
	it.memo[key] = f
	return f, true
}

// Future is a value computed once by one subscriber and read by others.
type Future struct {
	done chan struct{}
	v    any
}

// Set stores the value and wakes the waiters.
func (f *Future) Set(v any) {
	f.v = v
	close(f.done)
}

// Wait returns the value once set, or nil when ctx ends first.
func (f *Future) Wait(ctx context.Context) any {
	select {
	case <-f.done:
		return f.v
	case <-ctx.Done():
		return nil
	}
}

// filter matches items against a stream's db.StreamFilter.
type filter struct{ db.StreamFilter }

func (f filter) matches(it *Item) bool {
	ev := it.Event
	if (f.SignalOnly || f.MinSignificance != nil) && ev.Significance == nil {
		return false
	}
	if f.MinSignificance != nil && *ev.Significance < *f.MinSignificance {
		return false
	}
	if f.Category != "" && ev.Category != f.Category {
		return false
	}
	if f.EntityID != 0 {
		has := func(e *cryptointel.Entity) bool { return e.ID == f.EntityID }
		if !slices.ContainsFunc(it.Owners, has) && !slices.ContainsFunc(it.Participants, has) {
			return false
		}
	}
	return true
}

// loadItems reads up to limit events above after (and at most upTo when
// upTo > 0) matching f, with their entities and evidence: three statements.
func loadItems(ctx context.Context, store *db.DB, after, upTo int64, f db.StreamFilter, limit int) ([]*Item, error) {
	evs, err := db.EventsAfterSeq(ctx, store.Bun, after, upTo, f, limit)
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	ids := make([]int64, len(evs))
	byID := make(map[int64]*Item, len(evs))
	items := make([]*Item, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
		items[i] = &Item{Event: ev, Owners: []*cryptointel.Entity{}, Participants: []*cryptointel.Entity{}, Evidence: []*cryptointel.Evidence{}}
		byID[ev.ID] = items[i]
	}
	refs, err := db.EntitiesByEventIDs(ctx, store.Pool, ids)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		it := byID[r.EventID]
		cryptointel.AppendByRole(&it.Owners, &it.Participants, r.Role, r.Entity)
	}
	evidence, err := db.EvidenceByEventIDs(ctx, store.Pool, ids)
	if err != nil {
		return nil, err
	}
	for _, e := range evidence {
		byID[e.EventID].Evidence = append(byID[e.EventID].Evidence, e)
	}
	return items, nil
}
