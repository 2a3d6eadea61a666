package db

import (
	"time"

	"github.com/cryptointel/cryptointel"
)

// HotStatementForTest is one of the statements every request of a hot
// shape runs, with sample arguments, to EXPLAIN as pgx prepares it.
type HotStatementForTest struct {
	Name string
	SQL  string
	Args []any
}

// HotStatementsForTest returns the hot read statements — three hops
// folded, the folded latest page, top signals and feed pages, an
// organization's page, timeline and research with the entity, an
// organization with its radar and signal or its signal history, market
// views, an entity with its references, an entity's folded events level,
// relationships, entities and the roles and evidence levels — with
// arguments for entity ids ids (at least one) and window start since.
func HotStatementsForTest(ids []int64, since time.Time) []HotStatementForTest {
	all := EventChildren{Roles: true, Evidence: true}
	latest, la, _ := listEventsStatement(EventFilter{Since: since, Sort: SortRecency, Limit: 25})
	signif, sa, _ := listEventsStatement(EventFilter{Since: since, Sort: SortSignificance, Limit: 25})
	ev, ea := entityEventsStatement(ids, EntityEventFilter{Sort: SortRecency, Limit: 6}, all)
	rf := RelationshipFilter{Limit: 5}
	tf := EntityEventFilter{Sort: SortRecency, Limit: 6}
	shown := all
	shown.Shown = 5 // as the service reads three hops (its events page reads 6, shows 5)
	tree, ta := entityTreeStatement(ids[:1], rf, &tf, shown)
	top, topa, _ := listEventsStatement(EventFilter{SignalOnly: true, Since: since, Sort: SortSignificance, Limit: 10})
	feed, fa := feedStatement(FeedFilter{Since: since, Limit: 101})
	after, aa := feedStatement(FeedFilter{Since: since, Limit: 101, After: &Keyset{At: since.Add(time.Hour), ID: 1}})
	org, oa := briefsStatement(ids[:1], EntityEventFilter{Since: since, Sort: SortRecency, Limit: 11}, all, true)
	timeline, tla := briefsStatement(ids[:1], EntityEventFilter{Sort: SortRecency, Limit: 51}, all, true)
	orgPages, opa := briefsStatement(ids[:1], EntityEventFilter{Sort: SortRecency, Limit: 5}, EventChildren{}, false)
	research, ra := briefsStatement(ids[:1], EntityEventFilter{Since: since, Sort: SortRecency, Limit: 26,
		ContentTypes: []string{cryptointel.ContentResearch, cryptointel.ContentCommentary, cryptointel.ContentAnalysis}}, all, true)
	return []HotStatementForTest{
		{"an organization's page with the entity, folded", org, oa},
		{"an organization's timeline with the entity, folded", timeline, tla},
		{"an entity's research with the entity, folded", research, ra},
		{"an entity with its references", entityWithReferencesSQL, []any{ids[0]}},
		{"an organization with its radar and signal", orgPages, opa},
		{"an organization with its signal history", entityWithSignalHistorySQL, []any{ids[0], since}},
		{"an organization's market views", marketViewsSQL("SELECT unnest($1::bigint[]) AS id", true), []any{ids[:1]}},
		{"a page of market views", marketViewsSQL("SELECT DISTINCT entity_id AS id FROM markets ORDER BY entity_id LIMIT $1 OFFSET $2", true), []any{25, 0}},
		{"top signals, folded", foldPage(top, eventsOrder(SortSignificance), all), topa},
		{"feed, folded", foldPage(feed, feedOrder, all), fa},
		{"feed after a cursor, folded", foldPage(after, feedOrder, all), aa},
		{"three hops, folded", tree, ta},
		{"latest, folded", foldPage(latest, eventsOrder(SortRecency), all), la},
		{"latest by significance, folded", foldPage(signif, eventsOrder(SortSignificance), all), sa},
		{"entity events level, folded", ev, ea},
		{"relationships level", relationshipsSQL(rf), rf.args(ids)},
		{"entities by ids", entitiesByIDsSQL, []any{ids}},
		{"a name's page of entities with their references, folded", namePageFoldedTexts[1], []any{ids}},
	}
}
