package resolvers

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// Loaders are the per-request loaders, one per edge of the graph. They are
// built fresh for every request (NewLoaders) and carried in the context
// (WithLoaders), so nothing is cached across requests.
//
// Every loader batches per level: resolvers register the objects of each
// list they return as a sibling group, and a load of any key also loads
// every sibling of that key that is not loaded yet. A level of the query
// therefore costs one statement, whichever of its keys is asked for first.
type Loaders struct {
	// EntityByID loads entities by id.
	EntityByID *Level[int64, *cryptointel.Entity]
	// EventByID loads events by id.
	EventByID *Level[int64, *cryptointel.Event]
	// EvidenceByEventID loads each event's evidence, newest first.
	EvidenceByEventID *Level[int64, []*cryptointel.Evidence]
	// RolesByEventID loads each event's owners and participants in one
	// statement; OwnersByEventID and ParticipantsByEventID read it.
	RolesByEventID *Level[int64, EventRoles]
	// RelationshipsByEntityID loads a page of each entity's relationships.
	RelationshipsByEntityID *Level[RelationshipsKey, []*cryptointel.EntityRelationship]
	// ReferencesByEntityID loads each entity's references.
	ReferencesByEntityID *Level[int64, []*cryptointel.Reference]
	// MarketsByEntityID loads each entity's prediction markets.
	MarketsByEntityID *Level[int64, []*cryptointel.Market]
	// PostsBySubeventID loads each market sub-event's posts.
	PostsBySubeventID *Level[int64, []*cryptointel.MarketPost]
	// EventsByEntityID loads one page of each entity's events (one
	// LATERAL-join statement per level, whatever the fan-out).
	EventsByEntityID *Level[EntityEventsKey, []*cryptointel.Event]
	// HistoryByEntityID loads each entity's daily signal and radar counts.
	HistoryByEntityID *Level[HistoryKey, []cryptointel.HistoryDay]

	sib *siblings
	// searches memoizes the request's searches (resolvers/search.go).
	searches searchMemo
	// now is the request's time (Resolver.requestNow), read once.
	nowOnce sync.Once
	now     time.Time
}

// EventRoles are the entities of one event by role.
type EventRoles struct {
	// Owners own the event.
	Owners []*cryptointel.Entity
	// Participants take part in it.
	Participants []*cryptointel.Entity
}

// RelationshipsKey asks for one page of an entity's relationships, of
// one type (Type) and one direction (Direction: db.DirectionOutbound or
// db.DirectionInbound) when set.
type RelationshipsKey struct {
	EntityID        int64
	Limit, Offset   int
	Type, Direction string
}

// EntityEventsKey asks for one page of an entity's events; every field but
// EntityID is the shared filter of a level.
type EntityEventsKey struct {
	EntityID   int64
	SignalOnly bool
	// SinceMicro is the window start in Unix microseconds; 0 for none.
	SinceMicro int64
	Category   string
	// Content is "", "research" (research, commentary, analysis) or "media".
	Content       string
	Sort          string
	Limit, Offset int
	// BeforeMicro and BeforeID continue a descending keyset walk when
	// HasBefore.
	HasBefore   bool
	BeforeMicro int64
	BeforeID    int64
}

// HistoryKey asks for an entity's daily counts from a UTC day on.
type HistoryKey struct {
	EntityID int64
	// FromDay is the first day, as Unix seconds of its UTC midnight.
	FromDay int64
}

type loadersKey struct{}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// LoadersFrom returns the loaders carried by ctx, or nil.
func LoadersFrom(ctx context.Context) *Loaders {
	l, _ := ctx.Value(loadersKey{}).(*Loaders)
	return l
}

// siblings records, per request, which entities and events were returned
// together in one list, so a batch can load a whole level at once.
type siblings struct {
	mu sync.Mutex
	// of holds, per siblingKind, each id's group. A kind's map is made
	// by its first group, sized for it: a page's group is most of what a
	// request records, and a map grown an entry at a time rehashed it
	// several times.
	of [2]map[int64][]int64
}

// siblingKind names what a sibling group holds.
type siblingKind int

const (
	siblingEntities siblingKind = iota
	siblingEvents
)

func (s *siblings) add(kind siblingKind, ids []int64) {
	if len(ids) < 2 {
		return
	}
	group := append([]int64(nil), ids...)
	s.mu.Lock()
	m := s.of[kind]
	if m == nil {
		m = make(map[int64][]int64, len(group))
		s.of[kind] = m
	}
	for _, id := range group {
		m[id] = group
	}
	s.mu.Unlock()
}

// Entities registers ids as one sibling group of entities.
func (l *Loaders) Entities(ids []int64) { l.sib.add(siblingEntities, ids) }

// Events registers ids as one sibling group of events.
func (l *Loaders) Events(ids []int64) { l.sib.add(siblingEvents, ids) }

// EntitiesOf registers the entities as one sibling group.
func (l *Loaders) EntitiesOf(ents []*cryptointel.Entity) {
	ids := make([]int64, 0, len(ents))
	for _, e := range ents {
		if e != nil {
			ids = append(ids, e.ID)
		}
	}
	l.Entities(ids)
}

// EventsOf registers the events as one sibling group.
func (l *Loaders) EventsOf(evs []*cryptointel.Event) {
	ids := make([]int64, 0, len(evs))
	for _, e := range evs {
		if e != nil {
			ids = append(ids, e.ID)
		}
	}
	l.Events(ids)
}

func (s *siblings) expand(kind siblingKind, ids []int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.of[kind]
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, id := range ids {
		for _, sib := range m[id] {
			if !seen[sib] {
				seen[sib] = true
				out = append(out, sib)
			}
		}
	}
	return out
}

// Level loads one edge of the graph for a request. A key that is not loaded
// yet is fetched at once, with every sibling of it not loaded yet, in one
// statement; the level remembers everything it fetched, so the rest of the
// level is then served from memory. Loads run one at a time: under gqlgen's
// executor (subscriptions, the differential test's reference), whose fields
// and list elements run concurrently, a load that waits for another finds
// its key loaded by it.
type Level[K comparable, V any] struct {
	mu     sync.Mutex
	done   map[K]V
	expand func([]K) []K
	fetch  func(context.Context, []K) (map[K]V, error)
}

// reserve makes room for n keys when the level holds none yet: a folded
// statement primes a whole page (or a brief's pages) at once, and a map
// grown a key at a time rehashed it several times.
func (b *Level[K, V]) reserve(n int) {
	b.mu.Lock()
	if len(b.done) == 0 && n > 8 {
		b.done = make(map[K]V, n)
	}
	b.mu.Unlock()
}

// Prime records key's value, loaded with something else, unless the key is
// loaded.
func (b *Level[K, V]) Prime(_ context.Context, key K, v V) {
	b.mu.Lock()
	if _, ok := b.done[key]; !ok {
		b.done[key] = v
	}
	b.mu.Unlock()
}

// Load returns key's value.
func (b *Level[K, V]) Load(ctx context.Context, key K) (V, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.done[key]; ok {
		return v, nil
	}
	all := []K{key}
	if b.expand != nil {
		all = all[:0]
		for _, k := range b.expand([]K{key}) {
			if _, ok := b.done[k]; !ok {
				all = append(all, k)
			}
		}
	}
	got, err := b.fetch(ctx, all)
	if err != nil {
		var zero V
		return zero, err
	}
	for _, k := range all {
		b.done[k] = got[k]
	}
	return b.done[key], nil
}

func newLevelLoader[K comparable, V any](expand func([]K) []K, fetch func(context.Context, []K) (map[K]V, error)) *Level[K, V] {
	return &Level[K, V]{done: map[K]V{}, expand: expand, fetch: fetch}
}

// expandByEntity adds, for each key, the same key for every sibling entity.
func expandByEntity[K comparable](s *siblings, keys []K, id func(K) int64, with func(K, int64) K) []K {
	seen := map[K]bool{}
	var out []K
	for _, k := range keys {
		for _, sid := range s.expand(siblingEntities, []int64{id(k)}) {
			nk := with(k, sid)
			if !seen[nk] {
				seen[nk] = true
				out = append(out, nk)
			}
		}
	}
	return out
}

// NewLoaders builds the loaders of one request over store.
func NewLoaders(store *db.DB) *Loaders {
	q := store.Reader() // every read on pgx, routed (db/reader.go)
	s := &siblings{}
	l := &Loaders{sib: s}
	entityIDs := func(ids []int64) []int64 { return s.expand(siblingEntities, ids) }
	eventIDs := func(ids []int64) []int64 { return s.expand(siblingEvents, ids) }

	l.EntityByID = newLevelLoader(entityIDs, func(ctx context.Context, ids []int64) (map[int64]*cryptointel.Entity, error) {
		rows, err := db.EntitiesByIDs(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64]*cryptointel.Entity, len(rows))
		for _, r := range rows {
			m[r.ID] = r
		}
		return m, nil
	})
	l.EventByID = newLevelLoader(eventIDs, func(ctx context.Context, ids []int64) (map[int64]*cryptointel.Event, error) {
		rows, err := db.EventsByIDs(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64]*cryptointel.Event, len(rows))
		for _, r := range rows {
			m[r.ID] = r
		}
		return m, nil
	})
	l.EvidenceByEventID = newLevelLoader(eventIDs, func(ctx context.Context, ids []int64) (map[int64][]*cryptointel.Evidence, error) {
		rows, err := db.EvidenceByEventIDs(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64][]*cryptointel.Evidence, len(ids))
		for _, r := range rows {
			m[r.EventID] = append(m[r.EventID], r)
		}
		return m, nil
	})
	l.RolesByEventID = newLevelLoader(eventIDs, func(ctx context.Context, ids []int64) (map[int64]EventRoles, error) {
		rows, err := db.EntitiesByEventIDs(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64]EventRoles, len(ids))
		var all []int64
		for _, r := range rows {
			roles := m[r.EventID]
			cryptointel.AppendByRole(&roles.Owners, &roles.Participants, r.Role, r.Entity)
			m[r.EventID] = roles
			all = append(all, r.Entity.ID)
		}
		l.Entities(all)
		return m, nil
	})
	l.RelationshipsByEntityID = newLevelLoader(func(keys []RelationshipsKey) []RelationshipsKey {
		return expandByEntity(s, keys, func(k RelationshipsKey) int64 { return k.EntityID },
			func(k RelationshipsKey, id int64) RelationshipsKey { k.EntityID = id; return k })
	},
		func(ctx context.Context, keys []RelationshipsKey) (map[RelationshipsKey][]*cryptointel.EntityRelationship, error) {
			groups := map[db.RelationshipFilter][]int64{}
			for _, k := range keys {
				f := db.RelationshipFilter{Limit: k.Limit, Offset: k.Offset, Type: k.Type, Direction: k.Direction}
				groups[f] = append(groups[f], k.EntityID)
			}
			m := make(map[RelationshipsKey][]*cryptointel.EntityRelationship, len(keys))
			var related []int64
			for f, ids := range groups {
				rows, err := db.RelationshipsByEntityIDs(ctx, q, ids, f)
				if err != nil {
					return nil, err
				}
				for _, r := range rows {
					k := RelationshipsKey{EntityID: r.EntityID, Limit: f.Limit, Offset: f.Offset, Type: f.Type, Direction: f.Direction}
					m[k] = append(m[k], r)
					related = append(related, r.RelatedEntityID)
					if r.Related != nil {
						l.EntityByID.Prime(ctx, r.Related.ID, r.Related)
					}
				}
			}
			l.Entities(related)
			return m, nil
		})
	l.ReferencesByEntityID = newLevelLoader(entityIDs, func(ctx context.Context, ids []int64) (map[int64][]*cryptointel.Reference, error) {
		rows, err := db.ReferencesByEntityIDs(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64][]*cryptointel.Reference, len(ids))
		for _, r := range rows {
			m[r.EntityID] = append(m[r.EntityID], r)
		}
		return m, nil
	})
	l.MarketsByEntityID = newLevelLoader(entityIDs, func(ctx context.Context, ids []int64) (map[int64][]*cryptointel.Market, error) {
		rows, err := db.MarketsByEntityIDs(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64][]*cryptointel.Market, len(ids))
		for _, r := range rows {
			m[r.EntityID] = append(m[r.EntityID], r)
		}
		return m, nil
	})
	l.PostsBySubeventID = newLevelLoader(nil, func(ctx context.Context, ids []int64) (map[int64][]*cryptointel.MarketPost, error) {
		rows, err := db.MarketPostsBySubeventIDs(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[int64][]*cryptointel.MarketPost, len(ids))
		for _, r := range rows {
			m[r.SubeventID] = append(m[r.SubeventID], r)
		}
		return m, nil
	})
	l.EventsByEntityID = newLevelLoader(func(keys []EntityEventsKey) []EntityEventsKey {
		return expandByEntity(s, keys, func(k EntityEventsKey) int64 { return k.EntityID },
			func(k EntityEventsKey, id int64) EntityEventsKey { k.EntityID = id; return k })
	},
		func(ctx context.Context, keys []EntityEventsKey) (map[EntityEventsKey][]*cryptointel.Event, error) {
			groups := map[EntityEventsKey][]int64{}
			var order []EntityEventsKey
			for _, k := range keys {
				g := k
				g.EntityID = 0
				if _, ok := groups[g]; !ok {
					order = append(order, g)
				}
				groups[g] = append(groups[g], k.EntityID)
			}
			m := make(map[EntityEventsKey][]*cryptointel.Event, len(keys))
			var all []int64
			// The children the events' selection asks for are read with
			// them (fold.go); ctx is the first events field's of the level.
			children := selectedEventChildren(ctx)
			type foldedPage struct {
				evs    []*cryptointel.Event
				folded *db.FoldedChildren
			}
			var pages []foldedPage
			for _, g := range order {
				rows, folded, err := db.EventsByEntityIDsFolded(ctx, q, groups[g], g.filter(), children)
				if err != nil {
					return nil, err
				}
				evs := make([]*cryptointel.Event, 0, len(rows))
				for _, r := range rows {
					k := g
					k.EntityID = r.EntityID
					m[k] = append(m[k], r.Event)
					all = append(all, r.Event.ID)
					evs = append(evs, r.Event)
				}
				pages = append(pages, foldedPage{evs, folded})
			}
			l.Events(all)
			for _, p := range pages {
				l.primeFolded(ctx, p.evs, children, p.folded)
			}
			return m, nil
		})
	l.HistoryByEntityID = newLevelLoader(func(keys []HistoryKey) []HistoryKey {
		return expandByEntity(s, keys, func(k HistoryKey) int64 { return k.EntityID },
			func(k HistoryKey, id int64) HistoryKey { k.EntityID = id; return k })
	},
		func(ctx context.Context, keys []HistoryKey) (map[HistoryKey][]cryptointel.HistoryDay, error) {
			groups := map[int64][]int64{}
			for _, k := range keys {
				groups[k.FromDay] = append(groups[k.FromDay], k.EntityID)
			}
			m := make(map[HistoryKey][]cryptointel.HistoryDay, len(keys))
			for from, ids := range groups {
				rows, err := db.SignalHistoryByEntityIDs(ctx, q, ids, time.Unix(from, 0).UTC())
				if err != nil {
					return nil, err
				}
				for _, r := range rows {
					k := HistoryKey{EntityID: r.EntityID, FromDay: from}
					m[k] = append(m[k], r)
				}
			}
			return m, nil
		})
	return l
}

// filter turns a level's shared key into the db filter.
func (k EntityEventsKey) filter() db.EntityEventFilter {
	f := db.EntityEventFilter{
		SignalOnly: k.SignalOnly,
		Category:   k.Category,
		Sort:       k.Sort,
		Limit:      k.Limit,
		Offset:     k.Offset,
	}
	if k.SinceMicro != 0 {
		f.Since = time.UnixMicro(k.SinceMicro).UTC()
	}
	switch k.Content {
	case contentResearch:
		f.ContentTypes = []string{cryptointel.ContentResearch, cryptointel.ContentCommentary, cryptointel.ContentAnalysis}
	case contentMedia:
		f.ContentTypes = []string{cryptointel.ContentMedia}
	}
	if k.HasBefore {
		f.Before = &db.Keyset{At: time.UnixMicro(k.BeforeMicro).UTC(), ID: k.BeforeID}
	}
	return f
}

// Content groups of EntityEventsKey.Content.
const (
	contentResearch = "research"
	contentMedia    = "media"
)

// load runs one loader call and returns its value.
func load[K comparable, V any](ctx context.Context, l *Level[K, V], key K) (V, error) {
	v, err := l.Load(ctx, key)
	if err != nil {
		var zero V
		return zero, fmt.Errorf("error loading: %w", err)
	}
	return v, nil
}
