package resolvers

import (
	"fmt"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/graph/scalar"
)

// checkSince returns the EINVALID error of a since reaching further back
// than lookback before now (with cryptointel.SinceGrace).
func checkSince(now, since time.Time, lookback time.Duration) error {
	if since.Before(now.Add(-lookback - cryptointel.SinceGrace)) {
		return cryptointel.SinceTooOld("since", lookback)
	}
	return nil
}

// sortOf maps the GraphQL sort to the db sort.
func sortOf(s *graph.EventSort, def graph.EventSort) (graph.EventSort, string) {
	v := def
	if s != nil && s.IsValid() {
		v = *s
	}
	if v == graph.EventSortRecency {
		return v, db.SortRecency
	}
	return v, db.SortSignificance
}

// isSignal reports whether surface asks for signal events only.
func isSignal(s *graph.Surface, def graph.Surface) bool {
	if s == nil {
		return def == graph.SurfaceSignal
	}
	return *s == graph.SurfaceSignal
}

func strOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

// sinceKey is the cursor-context spelling of an optional since.
func sinceKey(t *time.Time) string {
	if t == nil {
		return ""
	}
	return scalar.FormatTime(*t) + fmt.Sprintf("/%d", t.UnixMicro())
}

func ptr[T any](v T) *T { return &v }

// eventIDsOf lists ids of events.
func eventIDsOf(evs []*cryptointel.Event) []int64 {
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}
