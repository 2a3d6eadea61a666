// Package memo keeps what a process computes again and again from the same
// key: the text of a statement built from its shape (db), a title word's
// key (search). A Bounded memo keeps at most its bound of keys and evicts
// none: past the bound a value is computed and not kept, so nothing a caller
// sends can grow it.
package memo

import "sync"

// DefaultMax is the bound of a Bounded whose Max is 0.
const DefaultMax = 1024

// Bounded keeps the value of each key, at most Max keys (DefaultMax when
// Max is 0). Its zero value is ready to use; it is safe for concurrent use.
type Bounded[K comparable, V any] struct {
	// Max is how many keys are kept.
	Max int

	mu sync.RWMutex
	m  map[K]V
}

// Load returns the value kept for k, if any.
func (b *Bounded[K, V]) Load(k K) (V, bool) {
	b.mu.RLock()
	v, ok := b.m[k]
	b.mu.RUnlock()
	return v, ok
}

// Store keeps v for k, unless the memo holds its bound of keys already.
func (b *Bounded[K, V]) Store(k K, v V) {
	limit := b.Max
	if limit == 0 {
		limit = DefaultMax
	}
	b.mu.Lock()
	if b.m == nil {
		b.m = make(map[K]V)
	}
	if len(b.m) < limit {
		b.m[k] = v
	}
	b.mu.Unlock()
}

// Get returns the value of k: the one kept, or compute's, kept then while
// the bound allows.
func (b *Bounded[K, V]) Get(k K, compute func() V) V {
	if v, ok := b.Load(k); ok {
		return v
	}
	v := compute()
	b.Store(k, v)
	return v
}

// Len is how many keys are kept.
func (b *Bounded[K, V]) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.m)
}
