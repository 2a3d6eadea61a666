package resolvers

import (
	"context"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
)

type organizationResolver struct{ *Resolver }

var _ graph.OrganizationResolver = (*organizationResolver)(nil)

// aliasHint returns at most cryptointel.MaxAliasHint of e's aliases: a
// public hint set, not an inventory.
func aliasHint(e *cryptointel.Entity) []string {
	if len(e.Aliases) <= cryptointel.MaxAliasHint {
		if e.Aliases == nil {
			return []string{}
		}
		return e.Aliases
	}
	return e.Aliases[:cryptointel.MaxAliasHint]
}

// Aliases is the organization's alias hint set.
func (r *organizationResolver) Aliases(ctx context.Context, obj *cryptointel.Entity) ([]string, error) {
	return aliasHint(obj), nil
}

// Entity is the underlying entity.
func (r *organizationResolver) Entity(ctx context.Context, obj *cryptointel.Entity) (*cryptointel.Entity, error) {
	return obj, nil
}

// Radar returns the organization's latest radar events.
func (r *organizationResolver) Radar(ctx context.Context, obj *cryptointel.Entity, first *int) ([]*cryptointel.Event, error) {
	return r.latest(ctx, obj, false, first)
}

// Signal returns the organization's latest signal events.
func (r *organizationResolver) Signal(ctx context.Context, obj *cryptointel.Entity, first *int) ([]*cryptointel.Event, error) {
	return r.latest(ctx, obj, true, first)
}

func (r *organizationResolver) latest(ctx context.Context, obj *cryptointel.Entity, signal bool, first *int) ([]*cryptointel.Event, error) {
	evs, err := load(ctx, r.loaders(ctx).EventsByEntityID, organizationEventsKey(ctx, obj.ID, signal, first))
	if evs == nil && err == nil {
		evs = []*cryptointel.Event{}
	}
	return evs, err
}

// organizationEventsKey is the key of Organization.radar's page (of
// Organization.signal's when signal) for its size.
func organizationEventsKey(ctx context.Context, entityID int64, signal bool, first *int) EntityEventsKey {
	return EntityEventsKey{EntityID: entityID, SignalOnly: signal, Sort: db.SortRecency, Limit: graph.Bound(ctx, &cryptointel.OrganizationEventsFirst, first)}
}

// SignalHistory returns one entry per UTC day of the last `days` days
// (today included), newest first, with zero counts on quiet days.
func (r *organizationResolver) SignalHistory(ctx context.Context, obj *cryptointel.Entity, days *int) ([]*graph.SignalHistoryDay, error) {
	key, n, today := r.signalHistoryKey(ctx, obj.ID, days)
	rows, err := load(ctx, r.loaders(ctx).HistoryByEntityID, key)
	if err != nil {
		return nil, err
	}
	byDay := make(map[string]cryptointel.HistoryDay, len(rows))
	for _, row := range rows {
		byDay[row.Day] = row
	}
	out := make([]*graph.SignalHistoryDay, n)
	for i := 0; i < n; i++ {
		d := today.Add(-time.Duration(i) * cryptointel.Day).Format(time.DateOnly)
		row := byDay[d]
		out[i] = &graph.SignalHistoryDay{Date: d, SignalCount: row.SignalCount, RadarCount: row.RadarCount}
	}
	return out, nil
}

// signalHistoryKey is the key of Organization.signalHistory's counts for
// its number of days, with that number and the request's day (the last of
// them).
func (r *Resolver) signalHistoryKey(ctx context.Context, entityID int64, days *int) (key HistoryKey, n int, today time.Time) {
	n = graph.Bound(ctx, &cryptointel.SignalHistoryDays, days)
	today = r.requestNow(ctx).Truncate(cryptointel.Day)
	from := today.Add(-time.Duration(n-1) * cryptointel.Day)
	return HistoryKey{EntityID: entityID, FromDay: from.Unix()}, n, today
}
