package db

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/internal/memo"
)

// MarketsByEntityIDs returns the prediction markets about the given entities
// in one statement, ordered by entity id then market id.
func MarketsByEntityIDs(ctx context.Context, q Querier, entityIDs []int64) ([]*cryptointel.Market, error) {
	if len(entityIDs) == 0 {
		return []*cryptointel.Market{}, nil
	}
	out, err := readRows(ctx, q, "SELECT "+marketColumns+" FROM markets mk WHERE mk.entity_id = ANY($1::bigint[]) ORDER BY mk.entity_id, mk.id",
		[]any{entityIDs}, marketDest, utcMarket)
	if err != nil {
		return nil, fmt.Errorf("error selecting markets by entity ids: %w", err)
	}
	return out, nil
}

// MarketPostsBySubeventIDs returns the posts of the given sub-events in one
// statement, ordered by sub-event id then newest first.
func MarketPostsBySubeventIDs(ctx context.Context, q Querier, subeventIDs []int64) ([]*cryptointel.MarketPost, error) {
	if len(subeventIDs) == 0 {
		return []*cryptointel.MarketPost{}, nil
	}
	out, err := readRows(ctx, q, "SELECT "+marketPostColumns+" FROM market_posts mp WHERE mp.subevent_id = ANY($1::bigint[]) ORDER BY mp.subevent_id, mp.posted_at DESC, mp.id",
		[]any{subeventIDs}, marketPostDest, utcMarketPost)
	if err != nil {
		return nil, fmt.Errorf("error selecting market posts by sub-event ids: %w", err)
	}
	return out, nil
}

// MarketViews is what MarketViewsFolded reads: the organizations found,
// their markets (by entity, then id), the markets' sub-events (by market,
// then id) and, when asked for, the sub-events' posts (by sub-event, then
// newest first, then id) — each list as its own statement orders it.
type MarketViews struct {
	Entities  []*cryptointel.Entity
	Markets   []*cryptointel.Market
	Subevents []*cryptointel.MarketSubevent
	// Posts are nil when not asked for.
	Posts []*cryptointel.MarketPost
}

// The kinds of rows of MarketViewsFolded (marketViewsLayout).
const (
	marketViewEntityKind = iota
	marketViewMarketKind
	marketViewSubeventKind
	marketViewPostKind
)

var marketViewsLayout = func() *rowLayout {
	var (
		e cryptointel.Entity
		m cryptointel.Market
		s cryptointel.MarketSubevent
		p cryptointel.MarketPost
	)
	return newRowLayout(entityDest(&e, nil), marketDest(&m, nil), subeventDest(&s, nil), marketPostDest(&p, nil))
}()

// MarketViewsFolded reads, in one statement, the market views of the
// organizations ids — the organizations, their markets
// (MarketsByEntityIDs'), the markets' sub-events and, when posts, the
// sub-events' posts (MarketPostsBySubeventIDs') — as typed rows
// (fold_rows.go).
func MarketViewsFolded(ctx context.Context, q Querier, ids []int64, posts bool) (*MarketViews, error) {
	if len(ids) == 0 {
		return &MarketViews{}, nil
	}
	return readMarketViews(ctx, q, posts, marketViewsTexts.Get([2]bool{false, posts}, func() string {
		return marketViewsSQL("SELECT unnest($1::bigint[]) AS id", posts)
	}), ids)
}

// MarketViewsPageFolded is MarketViewsFolded for a page of the
// organizations that have markets, by id.
func MarketViewsPageFolded(ctx context.Context, q Querier, limit, offset int, posts bool) (*MarketViews, error) {
	return readMarketViews(ctx, q, posts, marketViewsTexts.Get([2]bool{true, posts}, func() string {
		return marketViewsSQL("SELECT DISTINCT entity_id AS id FROM markets ORDER BY entity_id LIMIT $1 OFFSET $2", posts)
	}), limit, offset)
}

// marketViewsTexts keeps the market views' statement texts, by page and
// posts.
var marketViewsTexts memo.Bounded[[2]bool, string]

// marketViewsSQL is the market views' statement for the organizations
// ids selects (a column id).
func marketViewsSQL(ids string, posts bool) string {
	l := marketViewsLayout
	sql := "WITH o AS MATERIALIZED (" + ids + ")," +
		" m AS MATERIALIZED (SELECT " + marketColumns + " FROM markets mk WHERE mk.entity_id = ANY(ARRAY(SELECT id FROM o)))," +
		" s AS MATERIALIZED (SELECT " + subeventColumns + " FROM market_subevents se WHERE se.market_id = ANY(ARRAY(SELECT id FROM m)))" +
		" SELECT " + l.selectList(marketViewEntityKind, entityColumns) + " FROM entities n WHERE n.id = ANY(ARRAY(SELECT id FROM o))" +
		" UNION ALL SELECT " + l.selectList(marketViewMarketKind, strings.ReplaceAll(marketColumns, "mk.", "m.")) + " FROM m" +
		" UNION ALL SELECT " + l.selectList(marketViewSubeventKind, strings.ReplaceAll(subeventColumns, "se.", "s.")) + " FROM s"
	if posts {
		sql += " UNION ALL SELECT " + l.selectList(marketViewPostKind, marketPostColumns) +
			" FROM market_posts mp WHERE mp.subevent_id = ANY(ARRAY(SELECT id FROM s))"
	}
	return sql
}

// readMarketViews runs a market views' statement, which reads posts when
// posts.
func readMarketViews(ctx context.Context, q Querier, posts bool, sql string, args ...any) (*MarketViews, error) {
	rows, err := query(ctx, q, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("error selecting market views: %w", err)
	}
	var (
		out = &MarketViews{Entities: []*cryptointel.Entity{}, Markets: []*cryptointel.Market{}, Subevents: []*cryptointel.MarketSubevent{}}
		e   *cryptointel.Entity
		m   *cryptointel.Market
		s   *cryptointel.MarketSubevent
		p   *cryptointel.MarketPost
	)
	if posts {
		out.Posts = []*cryptointel.MarketPost{}
	}
	err = marketViewsLayout.scan(rows, "market views", func(kind int, buf []any) []any {
		switch kind {
		case marketViewEntityKind:
			e = new(cryptointel.Entity)
			return entityDest(e, buf)
		case marketViewMarketKind:
			m = new(cryptointel.Market)
			return marketDest(m, buf)
		case marketViewSubeventKind:
			s = new(cryptointel.MarketSubevent)
			return subeventDest(s, buf)
		default:
			p = new(cryptointel.MarketPost)
			return marketPostDest(p, buf)
		}
	}, func(kind int) error {
		switch kind {
		case marketViewEntityKind:
			utcEntity(e)
			out.Entities = append(out.Entities, e)
		case marketViewMarketKind:
			utcMarket(m)
			out.Markets = append(out.Markets, m)
		case marketViewSubeventKind:
			utcSubevent(s)
			out.Subevents = append(out.Subevents, s)
		default:
			utcMarketPost(p)
			out.Posts = append(out.Posts, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out.Markets, func(a, b *cryptointel.Market) int {
		return cmp.Or(cmp.Compare(a.EntityID, b.EntityID), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(out.Subevents, func(a, b *cryptointel.MarketSubevent) int {
		return cmp.Or(cmp.Compare(a.MarketID, b.MarketID), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(out.Posts, func(a, b *cryptointel.MarketPost) int {
		return cmp.Or(cmp.Compare(a.SubeventID, b.SubeventID), b.PostedAt.Compare(a.PostedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}
