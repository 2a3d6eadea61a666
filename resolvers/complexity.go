package resolvers

import (
	"time"

	"github.com/cryptointel/cryptointel/graph"
)

// MaxIDsPerRequest bounds the ids of entities(ids:) and briefs(ids:).
const MaxIDsPerRequest = 25

// mul is the complexity of a list field returning up to n items: each item
// costs its children, plus one for the field itself.
func mul(child, n int) int { return child*n + 1 }

// setComplexity makes every list field with `first` (or a list of ids)
// multiply its children by the effective, capped page size, so the limit
// bounds what an operation can fan out to.
func setComplexity(c *graph.ComplexityRoot) {
	q := &c.Query
	q.Events = func(child int, _ *graph.Surface, _ *time.Time, _ *string, _ *string, _ *int, _ *string, _ *graph.EventSort, first *int, _ *int) int {
		return mul(child, clamp(first, 10, 1, 25))
	}
	q.TopSignals = func(child int, _ *time.Time, first *int) int { return mul(child, clamp(first, 10, 1, 25)) }
	q.EventsByCategory = func(child int, _ string, _ *graph.Surface, _ *time.Time, first *int) int {
		return mul(child, clamp(first, 10, 1, 25))
	}
	q.Feed = func(child int, _ *graph.Surface, _ *string, _ time.Time, _ *string, first *int, _ *int, _ *string) int {
		return mul(child, clamp(first, 25, 1, 25))
	}
	// A list of ids over the cap is refused by the resolver before anything
	// is loaded: it costs the field alone, so a refused request is never
	// charged for the fan-out it did not get.
	q.Entities = func(child int, ids []int) int {
		if len(ids) > MaxIDsPerRequest {
			return 1
		}
		return mul(child, max(len(ids), 1))
	}
	q.ResolveEntities = func(child int, _ string, first *int, _ *int) int { return mul(child, clamp(first, 50, 1, 50)) }
	q.SearchEvents = func(child int, _ string, _ *time.Time, first *int) int { return mul(child, clamp(first, 10, 1, 20)) }
	q.OrganizationsByName = func(child int, _ string, first *int) int { return mul(child, clamp(first, 50, 1, 50)) }
	q.Organizations = func(child int, first *int, _ *int) int { return mul(child, clamp(first, 25, 1, 25)) }
	q.Brief = func(child int, _ int, _ time.Time, first *int) int { return mul(child, clamp(first, 5, 1, 20)) }
	q.Briefs = func(child int, ids []int, _ time.Time, first *int) int {
		if len(ids) > MaxIDsPerRequest {
			return 1
		}
		return mul(child, max(len(ids), 1)*clamp(first, 5, 1, 10))
	}
	q.MarketViews = func(child int, first *int, _ *int) int { return mul(child, clamp(first, 25, 1, 50)) }

	e := &c.Entity
	e.Relationships = func(child int, first *int, _ *int) int { return mul(child, clamp(first, 50, 1, 50)) }
	e.Events = func(child int, _ *graph.Surface, _ *time.Time, _ *string, _ *graph.EventSort, first *int, _ *int, _ *string) int {
		return mul(child, clamp(first, 10, 1, 25))
	}
	e.Timeline = func(child int, _ *time.Time, first *int, _ *string) int { return mul(child, clamp(first, 50, 1, 50)) }
	e.Research = func(child int, _ *time.Time, first *int, _ *int, _ *string) int {
		return mul(child, clamp(first, 25, 1, 25))
	}
	e.Media = func(child int, _ *time.Time, first *int, _ *int, _ *string) int {
		return mul(child, clamp(first, 25, 1, 25))
	}

	o := &c.Organization
	o.Radar = func(child int, first *int) int { return mul(child, clamp(first, 5, 1, 20)) }
	o.Signal = func(child int, first *int) int { return mul(child, clamp(first, 5, 1, 20)) }
	o.SignalHistory = func(child int, days *int) int { return mul(child, clamp(days, 30, 1, 90)) }
}
