package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel/db"
)

// benchAccount names the harness's accounts ("bench-harness-<i>", one per
// key), deleted and created again at the start of every run.
const benchAccount = "bench-harness"

// perKeyBudget is how many requests the harness sends with one key per rate
// window: below the limit of 100, so no request is ever refused for rate.
const perKeyBudget = 90

// rateWindow is the service's fixed rate window (aligned to the UTC clock).
const rateWindow = 60 * time.Second

// fixtures are what the scenarios need: keys and real ids and names.
type fixtures struct {
	keys *keyPool
	// entityIDs are entities that own events, most active first.
	entityIDs []int64
	// names are their canonical names (search and byName queries).
	names []string
	// hopIDs are entities with at least five outbound relationships: the
	// 3-hop traversal's roots (five per level on both the service and
	// PostGraphile, whose query follows outbound edges only).
	hopIDs []int64
	// now is when the fixtures were read (since parameters derive from it).
	now time.Time
}

// prepareFixtures creates the harness's API keys (enterprise, so every
// measured route is allowed) and reads entity ids and names to query.
func prepareFixtures(ctx context.Context, o options) (*fixtures, error) {
	store, err := db.Open(ctx, o.databaseURL, db.Options{MaxConns: 8})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	// Every key is an account of its own ("bench-harness-<i>"): the rate
	// window and the credits belong to the account, so the harness's keys
	// each get their own. Accounts of earlier runs go with their keys,
	// meters and usage rows.
	if _, err := store.Pool.Exec(ctx, `DELETE FROM accounts WHERE name = $1 OR name LIKE $1 || '-%'`, benchAccount); err != nil {
		return nil, fmt.Errorf("error deleting earlier bench accounts: %w", err)
	}
	keys := make([]string, o.keys)
	errs := make([]error, o.keys)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			keys[i], _, errs[i] = db.CreateAPIKey(ctx, store.Bun, fmt.Sprintf("%s-%d", benchAccount, i), "enterprise")
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("error creating bench keys: %w", err)
	}
	ents, err := db.ListEntities(ctx, store.Pool, 400, 0)
	if err != nil {
		return nil, err
	}
	fx := &fixtures{keys: newKeyPool(keys), now: time.Now()}
	for _, e := range ents {
		if e.EventCount == 0 {
			continue
		}
		fx.entityIDs = append(fx.entityIDs, e.ID)
		fx.names = append(fx.names, e.CanonicalName)
	}
	if len(fx.entityIDs) < 25 {
		return nil, fmt.Errorf("the benchmark database has only %d entities with events; is it seeded?", len(fx.entityIDs))
	}
	rows, err := store.Pool.Query(ctx, `SELECT source_entity_id FROM relationships GROUP BY 1 HAVING count(*) >= 5 ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("error reading the 3-hop roots: %w", err)
	}
	fx.hopIDs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("error reading the 3-hop roots: %w", err)
	}
	if len(fx.hopIDs) == 0 {
		return nil, errors.New("the benchmark database has no entity with five outbound relationships; is it seeded?")
	}
	return fx, nil
}

// keyPool hands out keys so that none is used more than perKeyBudget times
// in one rate window; when all are spent it waits for the next window (and
// counts the wait, which the report shows).
type keyPool struct {
	mu     sync.Mutex
	keys   []string
	used   []int
	window int64
	next   int
	waits  atomic.Int64
}

func newKeyPool(keys []string) *keyPool {
	return &keyPool{keys: keys, used: make([]int, len(keys))}
}

// get returns a key with budget left in the current window.
func (p *keyPool) get() string {
	for {
		now := time.Now()
		w := now.UnixNano() / int64(rateWindow)
		p.mu.Lock()
		if w != p.window {
			p.window = w
			clear(p.used)
		}
		for range p.keys {
			i := p.next
			p.next = (p.next + 1) % len(p.keys)
			if p.used[i] < perKeyBudget {
				p.used[i]++
				p.mu.Unlock()
				return p.keys[i]
			}
		}
		p.mu.Unlock()
		p.waits.Add(1)
		wait := time.Duration((w+1)*int64(rateWindow) - now.UnixNano())
		log.Printf("all %d keys spent their %d requests in this window; waiting %s", len(p.keys), perKeyBudget, wait.Round(time.Millisecond))
		time.Sleep(wait + 50*time.Millisecond)
	}
}
