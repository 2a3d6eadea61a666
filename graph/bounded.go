package graph

import (
	"context"
	"sync"

	"github.com/cryptointel/cryptointel"
)

// Bound is the one cap of an integer argument of the API that reaches a
// resolver (a page size, an offset, a number of days), whether it came
// from a /graphql document or a /v1 parameter: v, or b's default when v
// is nil, bounded by b (Bounds.Clamp). When the run records its bounded
// values (WithBounded), the value is recorded under b, so that what a
// caller echoes is the value this cap served and never a second cap.
func Bound(ctx context.Context, b *cryptointel.Bounds, v *int) int {
	n := b.Clamp(v)
	if rec, ok := ctx.Value(boundedKey{}).(*Bounded); ok {
		rec.mu.Lock()
		rec.m[b] = n
		rec.mu.Unlock()
	}
	return n
}

type boundedKey struct{}

// Bounded is the record of one run's bounded arguments, by their bounds.
type Bounded struct {
	mu sync.Mutex
	m  map[*cryptointel.Bounds]int
}

// WithBounded returns ctx recording the values Bound caps in it.
func WithBounded(ctx context.Context) (context.Context, *Bounded) {
	rec := &Bounded{m: map[*cryptointel.Bounds]int{}}
	return context.WithValue(ctx, boundedKey{}, rec), rec
}

// Value returns the value Bound capped with b in the run, if it ran.
func (rec *Bounded) Value(b *cryptointel.Bounds) (int, bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n, ok := rec.m[b]
	return n, ok
}
