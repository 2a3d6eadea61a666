package resolvers

import (
	"fmt"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/graph/scalar"
)

// Windows and lookbacks of the contract.
const (
	day             = 24 * time.Hour
	bulkLookback    = 7 * day
	historyLookback = 30 * day
	// sinceGrace forgives the time a client's "exactly N days ago" spends in
	// flight.
	sinceGrace = time.Minute
)

// Exact messages for since outside its window.
const (
	msgSince7Days  = "since must be within the last 7 days"
	msgSince30Days = "since must be within the last 30 days"
)

// checkSince returns an EINVALID error with msg when since is older than
// lookback before now.
func checkSince(now, since time.Time, lookback time.Duration, msg string) error {
	if since.Before(now.Add(-lookback - sinceGrace)) {
		return cryptointel.Errorf(cryptointel.EINVALID, "%s", msg)
	}
	return nil
}

// windowDuration parses an events window.
func windowDuration(w string) (time.Duration, error) {
	switch w {
	case "24h":
		return day, nil
	case "7d":
		return 7 * day, nil
	case "30d":
		return 30 * day, nil
	}
	return 0, cryptointel.Errorf(cryptointel.EINVALID, "window must be one of 24h, 7d, 30d")
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
