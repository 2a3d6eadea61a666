package resolvers

import (
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph"
)

// mul is the complexity of a list field returning up to n items: each item
// costs its children, plus one for the field itself.
func mul(child, n int) int { return child*n + 1 }

// setComplexity makes every list field with `first` (or a list of ids)
// multiply its children by the effective, capped page size (the
// argument's cryptointel bounds), so the limit bounds what an operation can
// fan out to.
func setComplexity(c *graph.ComplexityRoot) {
	q := &c.Query
	q.Events = func(child int, _ *graph.Surface, _ *time.Time, _ *string, _ *string, _ *int, _ *string, _ *graph.EventSort, first *int, _ *int) int {
		return mul(child, cryptointel.EventsFirst.Clamp(first))
	}
	q.TopSignals = func(child int, _ *time.Time, first *int) int {
		return mul(child, cryptointel.TopSignalsFirst.Clamp(first))
	}
	// eventsByCategory is charged at the radar surface's bounds, the larger.
	q.EventsByCategory = func(child int, _ string, _ *graph.Surface, _ *time.Time, first *int) int {
		return mul(child, cryptointel.RadarByCategoryFirst.Clamp(first))
	}
	q.Feed = func(child int, _ *graph.Surface, _ *string, _ time.Time, _ *string, first *int, _ *int, _ *string) int {
		return mul(child, cryptointel.FeedFirst.Clamp(first))
	}
	// A list of ids over the cap is refused by the resolver before anything
	// is loaded: it costs the field alone, so a refused request is never
	// charged for the fan-out it did not get.
	q.Entities = func(child int, ids []int) int {
		if len(ids) > cryptointel.MaxIDsPerRequest {
			return 1
		}
		return mul(child, max(len(ids), 1))
	}
	q.ResolveEntities = func(child int, _ string, first *int, _ *int) int {
		return mul(child, cryptointel.ResolveEntitiesFirst.Clamp(first))
	}
	q.SearchEvents = func(child int, _ string, _ *time.Time, first *int, _, _ *time.Time, _ *graph.SearchSort, _, _ *string, _ *graph.Surface, _ *bool, _ *string) int {
		return mul(child, cryptointel.SearchEventsFirst.Clamp(first))
	}
	q.OrganizationsByName = func(child int, _ string, first *int) int {
		return mul(child, cryptointel.OrganizationsByNameFirst.Clamp(first))
	}
	q.Organizations = func(child int, first *int, _ *int) int {
		return mul(child, cryptointel.OrganizationsFirst.Clamp(first))
	}
	q.Brief = func(child int, _ int, _ time.Time, first *int) int {
		return mul(child, cryptointel.BriefFirst.Clamp(first))
	}
	q.Briefs = func(child int, ids []int, _ time.Time, first *int) int {
		if len(ids) > cryptointel.MaxIDsPerRequest {
			return 1
		}
		return mul(child, max(len(ids), 1)*cryptointel.BriefsFirst.Clamp(first))
	}
	q.MarketViews = func(child int, first *int, _ *int) int { return mul(child, cryptointel.MarketViewsFirst.Clamp(first)) }

	e := &c.Entity
	e.Relationships = func(child int, first *int, _ *int, _ *string, _ *graph.RelationshipDirection) int {
		return mul(child, cryptointel.RelationshipsFirst.Clamp(first))
	}
	e.Events = func(child int, _ *graph.Surface, _ *time.Time, _ *string, _ *graph.EventSort, first *int, _ *int, _ *string) int {
		return mul(child, cryptointel.EntityEventsFirst.Clamp(first))
	}
	e.Timeline = func(child int, _ *time.Time, first *int, _ *string) int {
		return mul(child, cryptointel.TimelineFirst.Clamp(first))
	}
	e.Research = func(child int, _ *time.Time, first *int, _ *int, _ *string) int {
		return mul(child, cryptointel.ContentFirst.Clamp(first))
	}
	e.Media = func(child int, _ *time.Time, first *int, _ *int, _ *string) int {
		return mul(child, cryptointel.ContentFirst.Clamp(first))
	}

	o := &c.Organization
	o.Radar = func(child int, first *int) int { return mul(child, cryptointel.OrganizationEventsFirst.Clamp(first)) }
	o.Signal = func(child int, first *int) int { return mul(child, cryptointel.OrganizationEventsFirst.Clamp(first)) }
	o.SignalHistory = func(child int, days *int) int { return mul(child, cryptointel.SignalHistoryDays.Clamp(days)) }
}
