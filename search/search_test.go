package search_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/search"
)

// Entity ids of the search fixture.
const (
	entEthereum int64 = iota + 1
	entEthereumFoundation
	entEthena
	entTerra
	entTerraClassic
	entSGForge
	entUniswapLabs
	entHundredYield
	entThousandX
	entOptimism
	entOptimus
)

type searchBundle struct {
	store *db.DB
	ctx   context.Context
	now   time.Time
}

// searchFixtureEntity is an entity with its names and popularity.
type searchFixtureEntity struct {
	id         int64
	canonical  string
	display    string
	aliases    []string
	eventCount int64
	entityType string
}

// searchFixtureEvent is an event with its owner and participants.
type searchFixtureEvent struct {
	id           int64
	title        string
	summary      string
	evidence     string
	age          time.Duration
	owner        int64
	participants []int64
}

func setupSearch(t *testing.T) *searchBundle {
	t.Helper()
	b := &searchBundle{store: dbtest.New(t), ctx: context.Background(), now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	b.insertEntities(t, []searchFixtureEntity{
		{entEthereum, "Ethereum", "Ethereum", []string{"ETH", "Ether"}, 50, "project"},
		{entEthereumFoundation, "Ethereum Foundation", "Ethereum Foundation", []string{"EF"}, 5, "foundation"},
		{entEthena, "Ethena", "Ethena", []string{"ENA", "USDe"}, 10, "project"},
		{entTerra, "Terra", "Terra", []string{"LUNA"}, 20, "project"},
		{entTerraClassic, "Terra Classic", "Terra Classic", []string{"LUNA", "LUNC"}, 30, "project"},
		{entSGForge, "Société Générale FORGE", "SG Forge", []string{"SG-FORGE"}, 1, "project"},
		{entUniswapLabs, "Uniswap Labs", "Uniswap Labs", nil, 3, "project"},
		{entHundredYield, "100% Yield", "100% Yield", nil, 0, "project"},
		{entThousandX, "1000x", "1000x", nil, 0, "project"},
		{entOptimism, "Optimism", "Optimism", []string{"OP"}, 7, "project"},
		{entOptimus, "Optimus", "Optimus", []string{"OP"}, 7, "project"},
	})
	_, err := b.store.Bun.NewInsert().Model(&[]cryptointel.Relationship{
		{SourceEntityID: entEthereumFoundation, TargetEntityID: entEthereum, RelationshipType: "FOUNDATION_OF", Status: "active", SearchExpand: true},
		{SourceEntityID: entUniswapLabs, TargetEntityID: entEthena, RelationshipType: "PARTNER_OF", Status: "active", SearchExpand: false},
	}).Exec(b.ctx)
	require.NoError(t, err)
	b.insertEvents(t, []searchFixtureEvent{
		{id: 1, title: "Pectra upgrade goes live on mainnet", summary: "The network activated its scheduled hard fork.", age: 1 * time.Hour, owner: entEthereum},
		{id: 2, title: "Grants round opens for client teams", summary: "Funding for protocol research.", age: 2 * time.Hour, owner: entEthereumFoundation},
		{id: 3, title: "Exploit drains stablecoin bridge", summary: "Attackers moved funds after an exploit.", age: 3 * time.Hour, owner: entEthena},
		{id: 4, title: "Old news about the merge", age: 40 * 24 * time.Hour, owner: entEthereum},
		{id: 5, title: "Validator queue shrinks", age: 5 * time.Hour, owner: entEthereum},
		{id: 6, title: "Ethereum staking hits a record", summary: "Ethereum validators grow.", age: 30 * time.Hour, owner: entEthereum},
		{id: 7, title: "Terra revival vote passes", age: 6 * time.Hour, owner: entTerra},
		{id: 8, title: "Classic chain burns tax", age: 7 * time.Hour, owner: entTerraClassic},
		{id: 9, title: "Bridge exploit post-mortem", summary: "Details of the exploit.", evidence: "ethereum mainnet", age: 8 * time.Hour, owner: entUniswapLabs, participants: []int64{entEthereum}},
		{id: 10, title: "Security audit published", evidence: "no exploit found in the audit", age: 9 * time.Hour, owner: entOptimism},
		{id: 11, title: "Rollup settles faster", summary: "Batches now settle to Ethereum every minute.", age: 10 * time.Minute, owner: entOptimism},
		{id: 12, title: "LUNA burn vote opens", age: 1 * time.Hour, owner: entTerra},
		{id: 13, title: "LUNA staking update", age: 2 * time.Hour, owner: entTerra},
	})
	return b
}

func (b *searchBundle) insertEntities(t *testing.T, ents []searchFixtureEntity) {
	t.Helper()
	var rows []cryptointel.Entity
	var names []db.EntityName
	for _, e := range ents {
		rows = append(rows, cryptointel.Entity{ID: e.id, CanonicalName: e.canonical, DisplayName: e.display, EntityType: e.entityType,
			Status: "active", Aliases: append([]string{}, e.aliases...), EventCount: e.eventCount})
		names = append(names, db.EntityName{EntityID: e.id, Kind: "canonical_name", Value: e.canonical})
		names = append(names, db.EntityName{EntityID: e.id, Kind: "display_name", Value: e.display})
		for _, a := range e.aliases {
			names = append(names, db.EntityName{EntityID: e.id, Kind: "alias", Value: a})
		}
	}
	_, err := b.store.Bun.NewInsert().Model(&rows).Exec(b.ctx)
	require.NoError(t, err)
	_, err = b.store.Bun.NewInsert().Model(&names).Exec(b.ctx)
	require.NoError(t, err)
	_, err = b.store.Bun.NewUpdate().Table("entity_names").Set("norm = norm_text(value)").Where("true").Exec(b.ctx)
	require.NoError(t, err)
}

func (b *searchBundle) insertEvents(t *testing.T, evs []searchFixtureEvent) {
	t.Helper()
	var rows []cryptointel.Event
	var links []cryptointel.EventEntity
	for _, e := range evs {
		at := b.now.Add(-e.age)
		rows = append(rows, cryptointel.Event{ID: e.id, Title: e.title, Category: "other", Summary: e.summary, Bullets: []string{},
			EvidenceText: e.evidence, LatestEvidenceAt: at})
		links = append(links, cryptointel.EventEntity{EventID: e.id, EntityID: e.owner, Role: "owner", LatestEvidenceAt: at})
		for i, p := range e.participants {
			links = append(links, cryptointel.EventEntity{EventID: e.id, EntityID: p, Role: "participant", Position: i, LatestEvidenceAt: at})
		}
	}
	_, err := b.store.Bun.NewInsert().Model(&rows).Exec(b.ctx)
	require.NoError(t, err)
	_, err = b.store.Bun.NewInsert().Model(&links).Exec(b.ctx)
	require.NoError(t, err)
}

func (b *searchBundle) resolve(t *testing.T, name string) []search.EntityMatch {
	t.Helper()
	ms, err := db.ResolveEntities(b.ctx, b.store.Pool, name, 50, 0)
	require.NoError(t, err)
	return ms
}

func (b *searchBundle) search(t *testing.T, query string, limit int) []search.EventMatch {
	t.Helper()
	return b.searchResult(t, query, limit).Matches
}

func (b *searchBundle) searchResult(t *testing.T, query string, limit int) *search.SearchResult {
	t.Helper()
	res, err := db.SearchEvents(b.ctx, b.store.Pool, query, b.now.Add(-30*24*time.Hour), limit)
	require.NoError(t, err, "%q", query)
	return res
}

// insertTitled inserts n events titled title, ids from first on, the i-th
// age(i) old, with no entities.
func (b *searchBundle) insertTitled(t *testing.T, title string, first int64, n int, age func(i int) time.Duration) {
	t.Helper()
	ids, ats := make([]int64, n), make([]time.Time, n)
	for i := range n {
		ids[i], ats[i] = first+int64(i), b.now.Add(-age(i))
	}
	_, err := b.store.Pool.Exec(b.ctx, `INSERT INTO events (id, title, category, latest_evidence_at)
		SELECT id, $3, 'analysis', at FROM unnest($1::bigint[], $2::timestamptz[]) AS x(id, at)`, ids, ats, title)
	require.NoError(t, err)
}

// every17min is an age for insertTitled: the i-th event 17·i minutes old.
func every17min(i int) time.Duration { return time.Duration(i) * 17 * time.Minute }

func matchEntityIDs(ms []search.EntityMatch) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.EntityID
	}
	return out
}

func matchEventIDs(ms []search.EventMatch) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.EventID
	}
	return out
}

func findEventMatch(t *testing.T, ms []search.EventMatch, id int64) (search.EventMatch, int) {
	t.Helper()
	for i, m := range ms {
		if m.EventID == id {
			return m, i
		}
	}
	t.Fatalf("event %d not in results %v", id, matchEventIDs(ms))
	return search.EventMatch{}, -1
}

func requireMatchOrder(t *testing.T, ms []search.EntityMatch) {
	t.Helper()
	for i := 1; i < len(ms); i++ {
		a, c := ms[i-1], ms[i]
		require.True(t, a.MatchRank < c.MatchRank ||
			(a.MatchRank == c.MatchRank && (a.Popularity > c.Popularity ||
				(a.Popularity == c.Popularity && a.EntityID < c.EntityID))),
			"matches out of order at %d: %+v then %+v", i, a, c)
	}
}

func TestResolveEntitiesStrengthOrder(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)

	ms := b.resolve(t, "ethereum")
	require.GreaterOrEqual(t, len(ms), 2)
	require.Equal(t, search.EntityMatch{EntityID: entEthereum, MatchedVia: "canonical_name", MatchType: "exact", MatchRank: 0, MatchedValue: "Ethereum", Popularity: 50}, ms[0])
	require.Equal(t, search.EntityMatch{EntityID: entEthereumFoundation, MatchedVia: "canonical_name", MatchType: "prefix", MatchRank: 3, MatchedValue: "Ethereum Foundation", Popularity: 5}, ms[1])
	requireMatchOrder(t, ms)

	// Display name beats alias; accents and case are folded.
	ms = b.resolve(t, "sg forge")
	require.Equal(t, search.EntityMatch{EntityID: entSGForge, MatchedVia: "display_name", MatchType: "exact", MatchRank: 1, MatchedValue: "SG Forge", Popularity: 1}, ms[0])
	ms = b.resolve(t, "  SOCIETE generale forge ")
	require.Equal(t, search.EntityMatch{EntityID: entSGForge, MatchedVia: "canonical_name", MatchType: "exact", MatchRank: 0, MatchedValue: "Société Générale FORGE", Popularity: 1}, ms[0])
	ms = b.resolve(t, "ÉTHEREUM")
	require.Equal(t, entEthereum, ms[0].EntityID)
	require.Equal(t, 0, ms[0].MatchRank)

	// Alias, then prefixes by popularity (Ethena 10 before the foundation
	// 5); the entity matched by alias appears once.
	ms = b.resolve(t, "ETH")
	require.Equal(t, search.EntityMatch{EntityID: entEthereum, MatchedVia: "alias", MatchType: "exact", MatchRank: 2, MatchedValue: "ETH", Popularity: 50}, ms[0])
	require.Equal(t, []int64{entEthereum, entEthena, entEthereumFoundation}, matchEntityIDs(ms)[:3])
	require.Equal(t, "prefix", ms[1].MatchType)
	require.Equal(t, 3, ms[1].MatchRank)
	requireMatchOrder(t, ms)
	seen := map[int64]bool{}
	for _, m := range ms {
		require.False(t, seen[m.EntityID], "entity %d twice", m.EntityID)
		seen[m.EntityID] = true
	}

	// A whole word of a name.
	ms = b.resolve(t, "foundation")
	require.Equal(t, search.EntityMatch{EntityID: entEthereumFoundation, MatchedVia: "canonical_name", MatchType: "token", MatchRank: 4, MatchedValue: "Ethereum Foundation", Popularity: 5}, ms[0])

	// Inside a word.
	ms = b.resolve(t, "swap")
	require.Equal(t, search.EntityMatch{EntityID: entUniswapLabs, MatchedVia: "canonical_name", MatchType: "substring", MatchRank: 5, MatchedValue: "Uniswap Labs", Popularity: 3}, ms[0])

	// A typo.
	ms = b.resolve(t, "Etherium")
	require.NotEmpty(t, ms)
	require.Equal(t, entEthereum, ms[0].EntityID)
	require.Equal(t, "fuzzy", ms[0].MatchType)
	require.GreaterOrEqual(t, ms[0].MatchRank, search.RankFuzzyBase)
	require.Equal(t, "Ethereum", ms[0].MatchedValue)
	requireMatchOrder(t, ms)

	// Nothing close.
	require.Empty(t, b.resolve(t, "qwxzv"))
}

func TestResolveEntitiesAmbiguousTickerReturnsEveryCandidate(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)

	// LUNA is an alias of two entities: both, more popular first.
	ms := b.resolve(t, "luna")
	require.Len(t, ms, 2)
	require.Equal(t, []int64{entTerraClassic, entTerra}, matchEntityIDs(ms))
	for _, m := range ms {
		require.Equal(t, "alias", m.MatchedVia)
		require.Equal(t, "exact", m.MatchType)
		require.Equal(t, 2, m.MatchRank)
		require.Equal(t, "LUNA", m.MatchedValue)
	}

	// OP: two candidates of equal popularity, ordered by id. Short names do
	// not match fuzzily.
	ms = b.resolve(t, "OP")
	require.Equal(t, []int64{entOptimism, entOptimus}, matchEntityIDs(ms))
}

func TestResolveEntitiesPagingAndEscaping(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)

	all := b.resolve(t, "eth")
	require.GreaterOrEqual(t, len(all), 3)
	page, err := db.ResolveEntities(b.ctx, b.store.Pool, "eth", 1, 1)
	require.NoError(t, err)
	require.Equal(t, all[1:2], page)
	page, err = db.ResolveEntities(b.ctx, b.store.Pool, "eth", 5, 100)
	require.NoError(t, err)
	require.Empty(t, page)

	// LIKE and regex metacharacters are literal.
	ms := b.resolve(t, "100%")
	require.Equal(t, entHundredYield, ms[0].EntityID)
	require.Equal(t, "prefix", ms[0].MatchType)
	for _, m := range b.resolve(t, "1_0") {
		require.Equal(t, "fuzzy", m.MatchType, "%+v", m)
	}
	require.Empty(t, b.resolve(t, "%"))
	require.Empty(t, b.resolve(t, "_"))
	require.Empty(t, b.resolve(t, ".*"))
	require.Equal(t, entSGForge, b.resolve(t, "sg-forge")[0].EntityID)
}

func TestResolveEntitiesEmptyName(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	for _, name := range []string{"", "   ", "\t\n"} {
		_, err := db.ResolveEntities(b.ctx, b.store.Pool, name, 10, 0)
		require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
		require.Equal(t, "name parameter is required", cryptointel.ErrorMessage(err))
	}
}

func TestSearchEventsEntityLinking(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)

	// Event 1 does not say "Ethereum" but Ethereum owns it; event 6 says it
	// in its title and ranks first; event 4 is older than since.
	ms := b.search(t, "Ethereum", 20)
	require.Equal(t, int64(6), ms[0].EventID)
	m, i1 := findEventMatch(t, ms, 1)
	require.Equal(t, "entity", m.MatchedVia)
	require.Equal(t, "exact", m.MatchType)
	require.Equal(t, entEthereum, m.EntityID)
	_, i5 := findEventMatch(t, ms, 5)
	require.Less(t, i1, i5, "recency breaks ties: event 1 is newer than event 5")
	require.NotContains(t, matchEventIDs(ms), int64(4))
	// The participant's event ranks below the owned ones.
	m9, i9 := findEventMatch(t, ms, 9)
	require.Equal(t, "entity", m9.MatchedVia)
	require.Greater(t, i9, i5)
	// Expansion to the foundation, below every direct match.
	m2, i2 := findEventMatch(t, ms, 2)
	require.Equal(t, "related_entity", m2.MatchedVia)
	require.Equal(t, "expansion", m2.MatchType)
	require.Equal(t, entEthereumFoundation, m2.EntityID)
	for _, m := range ms[:i2] {
		require.NotEqual(t, "related_entity", m.MatchedVia)
	}
	for i := 1; i < len(ms); i++ {
		require.LessOrEqual(t, ms[i-1].MatchRank, ms[i].MatchRank)
	}
	// A text-only mention comes after the entity's and its related
	// entities' events when the query names the entity, however recent.
	m11, i11 := findEventMatch(t, ms, 11)
	require.Equal(t, "text", m11.MatchedVia)
	require.Greater(t, i11, i2)
	require.GreaterOrEqual(t, m11.MatchRank, 2.0, "tier 2: neither the entity's nor a related entity's event")

	// Alias and typo link too.
	m, _ = findEventMatch(t, b.search(t, "ETH", 10), 1)
	require.Equal(t, "alias", m.MatchType)
	m, _ = findEventMatch(t, b.search(t, "Etherium", 10), 1)
	require.Equal(t, "fuzzy", m.MatchType)
}

func TestSearchEventsFoundationExpandsToProject(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)

	// The foundation's own event first, then the project's.
	ms := b.search(t, "EF", 10)
	require.Equal(t, int64(2), ms[0].EventID)
	require.Equal(t, "entity", ms[0].MatchedVia)
	m, _ := findEventMatch(t, ms, 1)
	require.Equal(t, "related_entity", m.MatchedVia)
	require.Equal(t, entEthereum, m.EntityID)
	require.Greater(t, m.MatchRank, ms[0].MatchRank)

	// A relationship without search_expand does not expand.
	ms = b.search(t, "Uniswap Labs", 10)
	require.NotContains(t, matchEventIDs(ms), int64(3))
}

func TestSearchEventsFullText(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)

	// Title and summary hits before an evidence-only hit.
	ms := b.search(t, "exploit", 10)
	require.ElementsMatch(t, []int64{3, 9, 10}, matchEventIDs(ms))
	require.Equal(t, int64(10), ms[2].EventID)
	for _, m := range ms {
		require.Equal(t, "text", m.MatchedVia)
		require.Equal(t, "fulltext", m.MatchType)
	}

	// Every word when enough events have them all, otherwise any word.
	ms = b.search(t, "bridge exploit", 10)
	require.Equal(t, "text", ms[0].MatchedVia)
	require.Subset(t, matchEventIDs(ms), []int64{3, 9})
	require.Contains(t, matchEventIDs(ms), int64(10), "too few results: any word matches")
	_, i9 := findEventMatch(t, ms, 9)
	_, i10 := findEventMatch(t, ms, 10)
	require.Less(t, i9, i10)

	// Part of the query names an entity: its events, text hits first.
	ms = b.search(t, "Ethereum exploit", 10)
	require.Equal(t, int64(9), ms[0].EventID)
	require.Contains(t, matchEventIDs(ms), int64(1))

	// An ambiguous ticker finds the events of every candidate, interleaved:
	// Terra's three events (two naming LUNA) do not push Terra Classic's
	// off the first two results.
	require.Subset(t, matchEventIDs(b.search(t, "LUNA", 10)), []int64{7, 8, 12, 13})
	ms = b.search(t, "LUNA", 2)
	require.Len(t, ms, 2)
	require.Contains(t, matchEventIDs(ms), int64(8))
	require.Equal(t, int64(12), ms[0].EventID)

	// Nothing to match.
	res := b.searchResult(t, "qwxzv", 10)
	require.Empty(t, res.Matches)
	require.Equal(t, []string{"qwxzv"}, res.UnmatchedTerms)
	_, err := db.SearchEvents(b.ctx, b.store.Pool, "the", b.now.Add(-30*24*time.Hour), 10)
	require.Equal(t, search.MsgQueryOnlyStopWords, cryptointel.ErrorMessage(err))
}

func TestSearchEventsLimitSinceAndStatements(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)

	ms := b.search(t, "Ethereum", 2)
	require.Len(t, ms, 2)

	// since bounds every channel.
	res, err := db.SearchEvents(b.ctx, b.store.Pool, "Ethereum", b.now.Add(-90*time.Minute), 10)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 11}, matchEventIDs(res.Matches))
	res, err = db.SearchEvents(b.ctx, b.store.Pool, "Ethereum", b.now.Add(-50*24*time.Hour), 20)
	require.NoError(t, err)
	require.Contains(t, matchEventIDs(res.Matches), int64(4))

	// The statement count does not depend on the limit.
	counts := map[int]int64{}
	for _, limit := range []int{1, 20} {
		ctx, n := db.WithStatementCounter(b.ctx)
		_, err := db.SearchEvents(ctx, b.store.Pool, "Ethereum staking", b.now.Add(-30*24*time.Hour), limit)
		require.NoError(t, err)
		counts[limit] = n.Load()
	}
	require.Equal(t, int64(2), counts[1])
	require.Equal(t, int64(2), counts[20])
}

func TestSearchEventsEmptyQuery(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	for _, q := range []string{"", "  "} {
		_, err := db.SearchEvents(b.ctx, b.store.Pool, q, b.now, 10)
		require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
		require.Equal(t, "query parameter is required (use query or q)", cryptointel.ErrorMessage(err))
	}
}

// TestSearchOddInput checks that no input makes resolution or search fail
// with anything but a clear EINVALID: operators of the query syntaxes,
// quotes, backslashes, NUL, invalid UTF-8, emoji and long strings are only
// text; a query of punctuation, of stop words, too long or of too many words
// is refused with its message.
func TestSearchOddInput(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	refusals := []string{search.MsgQueryRequired, search.MsgQueryNoWords, search.MsgQueryOnlyStopWords,
		search.MsgQueryTooLong, search.MsgQueryTooManyWords}
	for _, in := range []string{`"`, `'`, `\`, `\'`, `-`, `:*`, `a & b`, `!!`, `(`, `a | b <-> c`, `"unclosed phrase`,
		`-exploit`, `or`, `%_%`, `[[:alpha:]]`, `\m`, "eth\x00er", "\xff\xfe", "🚀 moon", "ü", strings.Repeat("ethereum ", 500),
		strings.Repeat("x", 5000), "ETH's", "Ethereum, Solana; Uniswap!", "& | ! : * ( ) < >", "the of and", "... ???",
		strings.Repeat("exploit ", 40), "exploit:* & !bridge", "(Ethereum) <-> (exploit)"} {
		_, err := db.ResolveEntities(b.ctx, b.store.Pool, in, 10, 0)
		if strings.TrimSpace(strings.ToValidUTF8(in, "")) == "" {
			require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err), "%q", in)
		} else {
			require.NoError(t, err, "%q", in)
		}
		_, err = db.SearchEvents(b.ctx, b.store.Pool, in, b.now.Add(-30*24*time.Hour), 10)
		if err != nil {
			require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err), "%q: %v", in, err)
			require.Contains(t, refusals, cryptointel.ErrorMessage(err), "%q", in)
		}
	}
	for in, msg := range map[string]string{
		`"`:                              search.MsgQueryNoWords,
		"& | ! : * ( ) < >":              search.MsgQueryNoWords,
		"... ???":                        search.MsgQueryNoWords,
		"the of and":                     search.MsgQueryOnlyStopWords,
		strings.Repeat("x", 5000):        search.MsgQueryTooLong,
		strings.Repeat("ethereum ", 500): search.MsgQueryTooLong,
		strings.Repeat("hack ", 40):      search.MsgQueryTooManyWords,
		strings.Repeat("a ", 100):        search.MsgQueryTooManyWords,
	} {
		_, err := db.SearchEvents(b.ctx, b.store.Pool, in, b.now.Add(-30*24*time.Hour), 10)
		require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err), "%q", in)
		require.Equal(t, msg, cryptointel.ErrorMessage(err), "%q", in)
	}
	// Operators are text: the words around them are searched.
	for _, in := range []string{"exploit:* & !bridge", "(Ethereum) <-> (exploit)", "a & b | exploit"} {
		require.NotEmpty(t, b.search(t, in, 10), "%q", in)
	}
	ms := b.search(t, "eth\x00ereum", 10)
	require.NotEmpty(t, ms)
	require.Equal(t, "entity", ms[0].MatchedVia)
}

func TestParseSearchQueryTermsAndThesaurus(t *testing.T) {
	t.Parallel()
	terms, alts, err := search.ParseSearchQueryForTest("Solana chain went down, froze wallets?")
	require.NoError(t, err)
	require.Equal(t, []string{"Solana", "chain", "went down", "froze", "wallets"}, terms)
	require.Contains(t, alts[1], "blockchain", "a synonym group")
	require.Contains(t, alts[2], "outage", "a thesaurus phrase is one term")
	require.Subset(t, alts[3], []string{"freeze", "frozen"}, "irregular forms")
	// Inflections meet their group: hacked, hacks and hacking find exploits.
	for _, w := range []string{"hacked", "hacks", "hacking", "Hack"} {
		_, alts, err := search.ParseSearchQueryForTest(w)
		require.NoError(t, err)
		require.Contains(t, alts[0], "exploit", w)
	}
	// Operators and punctuation separate words; names with dots and
	// hyphens stay whole; a leading $ of a ticker goes.
	terms, _, err = search.ParseSearchQueryForTest(`(ether.fi) & !layer-2 | $SOL <-> "a16z"`)
	require.NoError(t, err)
	require.Equal(t, []string{"ether.fi", "layer-2", "SOL", "a16z"}, terms)
}

// TestSearchCorpusStatsFollowIngest checks that the document frequencies
// and corpus counts BM25 reads move with every insert, update, delete and
// truncate of events.
func TestSearchCorpusStatsFollowIngest(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	df := func(term string) int64 {
		var n int64
		err := b.store.Pool.QueryRow(b.ctx, "SELECT coalesce((SELECT df FROM search_terms WHERE term = $1), 0)", term).Scan(&n)
		require.NoError(t, err)
		return n
	}
	docs := func() int64 {
		var n int64
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT docs FROM search_corpus").Scan(&n))
		return n
	}
	var want int64
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT count(*) FROM events WHERE search @@ 'exploit'::tsquery").Scan(&want))
	require.Equal(t, want, df("exploit"))
	require.Equal(t, int64(13), docs())

	_, err := b.store.Pool.Exec(b.ctx, "UPDATE events SET title = 'Exploit hits the zebra bridge' WHERE id = 7")
	require.NoError(t, err)
	require.Equal(t, want+1, df("exploit"))
	require.Equal(t, int64(1), df("zebra"))
	_, err = b.store.Pool.Exec(b.ctx, "UPDATE events SET ingest_seq = ingest_seq + 1 WHERE id = 7")
	require.NoError(t, err)
	require.Equal(t, want+1, df("exploit"), "an update that leaves the text alone changes nothing")
	_, err = b.store.Pool.Exec(b.ctx, "DELETE FROM events WHERE id = 7")
	require.NoError(t, err)
	require.Equal(t, want, df("exploit"))
	require.Equal(t, int64(0), df("zebra"))
	require.Equal(t, int64(12), docs())

	// Search reads them: a word no event holds is reported unmatched.
	res := b.searchResult(t, "zebra exploit", 10)
	require.Equal(t, []string{"zebra"}, res.UnmatchedTerms)
	require.NotEmpty(t, res.Matches)
	for _, m := range res.Matches {
		require.Equal(t, []string{"exploit"}, m.MatchedTerms)
	}
	_, err = b.store.Pool.Exec(b.ctx, "TRUNCATE events CASCADE")
	require.NoError(t, err)
	require.Equal(t, int64(0), docs())
	require.Equal(t, int64(0), df("exploit"))
}

// TestSearchCorpusSpanFollowsRemovals checks that the span of times the
// corpus records (where probes start, what a search without a clock reads
// its time words against) is the events' own after every delete and
// update, not only after inserts: a future-dated event deleted again, the
// oldest event deleted, an event moved back in time and forward again, and
// a removal that commits after another writer's insert.
func TestSearchCorpusSpanFollowsRemovals(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	requireSpan := func(msg string) {
		t.Helper()
		var first, last, lo, hi time.Time
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT c.first_at, c.last_at, e.lo, e.hi FROM search_corpus c,
			(SELECT min(latest_evidence_at) AS lo, max(latest_evidence_at) AS hi FROM events) e`).Scan(&first, &last, &lo, &hi))
		require.True(t, first.Equal(lo), "%s: first_at %s, oldest event %s", msg, first, lo)
		require.True(t, last.Equal(hi), "%s: last_at %s, newest event %s", msg, last, hi)
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := b.store.Pool.Exec(b.ctx, sql, args...)
		require.NoError(t, err, sql)
	}
	// With no clock given, "today" is the newest event's day.
	today := func() []int64 {
		t.Helper()
		res, err := db.SearchEvents(b.ctx, b.store.Pool, "exploit today", b.now.Add(-30*24*time.Hour), 10)
		require.NoError(t, err)
		return matchEventIDs(res.Matches)
	}
	requireSpan("as inserted")
	want := today()
	require.Contains(t, want, int64(3), "the exploit three hours before the newest event")

	exec(`INSERT INTO events (id, title, category, latest_evidence_at) VALUES (60, 'Walrus exploit', 'security', $1)`, b.now.AddDate(1, 0, 0))
	requireSpan("a year ahead, mistyped")
	exec(`DELETE FROM events WHERE id = 60`)
	requireSpan("the mistyped event deleted")
	require.Equal(t, want, today(), "today is the newest event's day again")

	exec(`DELETE FROM events WHERE id = 4`)
	requireSpan("the oldest event deleted")
	exec(`UPDATE events SET latest_evidence_at = $1 WHERE id = 5`, b.now.Add(-100*24*time.Hour))
	requireSpan("an event moved back before the oldest")
	exec(`UPDATE events SET latest_evidence_at = $1 WHERE id = 5`, b.now.Add(-5*time.Hour))
	requireSpan("and forward again")
	exec(`UPDATE events SET latest_evidence_at = $1 WHERE id = 11`, b.now.Add(-20*time.Minute))
	requireSpan("the newest event moved back")

	// The newest event is deleted in a transaction that commits after
	// another writer's older insert: the span read again sees the insert.
	tx, err := b.store.Pool.Begin(b.ctx)
	require.NoError(t, err)
	defer tx.Rollback(b.ctx) //nolint:errcheck
	_, err = tx.Exec(b.ctx, `DELETE FROM events WHERE id = 11`)
	require.NoError(t, err)
	exec(`INSERT INTO events (id, title, category, latest_evidence_at) VALUES (61, 'Walrus exploit', 'security', $1)`, b.now.Add(-30*time.Minute))
	require.NoError(t, tx.Commit(b.ctx))
	requireSpan("the newest deleted while another writer inserted")
	var last time.Time
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT last_at FROM search_corpus`).Scan(&last))
	require.True(t, last.Equal(b.now.Add(-30*time.Minute)), "last_at %s", last)
}

// TestSearchThesaurusAndRarity checks the search-engine behaviour: a
// synonym finds what the typed word does not (below typed matches), the
// rarer of two words decides, and equal texts are ordered by recency.
func TestSearchThesaurusAndRarity(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)

	// "hack" is in no event: the exploits come through the thesaurus.
	res := b.searchResult(t, "hack", 10)
	require.Subset(t, matchEventIDs(res.Matches), []int64{3, 9})
	for _, m := range res.Matches {
		require.Equal(t, search.MatchTypeSynonym, m.MatchType, "%+v", m)
	}
	require.Empty(t, res.UnmatchedTerms)
	require.Equal(t, "hack", res.Terms[0].Text)
	require.Contains(t, res.Terms[0].Expansions, "exploit")

	// The typed word ranks above its synonyms.
	ms := b.search(t, "drains", 10)
	require.Equal(t, int64(3), ms[0].EventID, "the event that says drains")
	require.Equal(t, search.MatchTypeFulltext, ms[0].MatchType)

	// Ranks strictly order the page (no page of equal ranks).
	ms = b.search(t, "exploit", 10)
	for i := 1; i < len(ms); i++ {
		require.Less(t, ms[i-1].MatchRank, ms[i].MatchRank)
	}
}

// TestSearchSynonymPhrasesKeepTheirMeaning checks that a thesaurus phrase
// the stemmer would cut to one word is not searched as a synonym: "stalled"
// lists "goes down", which without its stop word "down" would find the
// upgrade that "goes live"; "Series A" keeps its meaning without "a".
func TestSearchSynonymPhrasesKeepTheirMeaning(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	b.insertEvents(t, []searchFixtureEvent{
		{id: 60, title: "Chain halts after a consensus bug", age: 2 * time.Hour, owner: entTerra},
		{id: 61, title: "Lender closes its Series A", age: 2 * time.Hour, owner: entUniswapLabs},
	})
	res := b.searchResult(t, "stalled", 10)
	require.Equal(t, []int64{60}, matchEventIDs(res.Matches), "the halt, not the upgrade that goes live")
	require.NotContains(t, res.Terms[0].Expansions, "goes down")
	require.Contains(t, res.Terms[0].Expansions, "halt")

	require.Contains(t, matchEventIDs(b.search(t, "seed round", 10)), int64(61), "series a is searched as a synonym")
}

// TestSearchVocabularyIsNotAMisspeltName checks that a word the thesaurus
// lists is never read as a misspelt entity name, however close the name:
// "raised money" must not search Monero's events, while "Monerro" still
// finds them.
func TestSearchVocabularyIsNotAMisspeltName(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	const entMonero = 900
	b.insertEntities(t, []searchFixtureEntity{{entMonero, "Monero", "Monero", []string{"XMR"}, 1, "project"}})
	b.insertEvents(t, []searchFixtureEvent{{id: 50, title: "Wallet release ships view keys", age: time.Hour, owner: entMonero}})

	res := b.searchResult(t, "grants money", 10)
	require.NotEmpty(t, res.Matches, "the grants round matches")
	for _, m := range res.Matches {
		require.NotEqual(t, int64(entMonero), m.EntityID, "%+v", m)
		require.NotEqual(t, int64(50), m.EventID, "%+v", m)
	}
	require.Equal(t, "money", res.Terms[1].Text)
	require.NotContains(t, res.Terms[1].Expansions, "Monero")
	require.Contains(t, res.Terms[1].Expansions, "funding round", "money is a funding word")

	m, _ := findEventMatch(t, b.search(t, "Monerro wallet", 10), 50)
	require.Equal(t, search.MatchTypeFuzzy, m.MatchType, "a misspelt name still links")
	require.Equal(t, int64(entMonero), m.EntityID)
}

// TestSearchTopicFeedSpeaksTheVocabulary checks that the feeds' topic reads
// words like search: a synonym finds the event, a refused topic is EINVALID.
func TestSearchTopicFeedSpeaksTheVocabulary(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	list := func(topic string) []int64 {
		evs, err := db.ListEvents(b.ctx, b.store.Pool, db.EventFilter{Since: b.now.Add(-30 * 24 * time.Hour), Topic: topic, Sort: db.SortRecency, Limit: 20})
		require.NoError(t, err, topic)
		var ids []int64
		for _, e := range evs {
			ids = append(ids, e.ID)
		}
		return ids
	}
	require.ElementsMatch(t, []int64{3, 9, 10}, list("exploit"))
	require.Subset(t, list("hack"), []int64{3, 9}, "synonyms")
	require.ElementsMatch(t, []int64{3, 9}, list("bridge hacked"), "every term")
	require.Subset(t, list("ETH"), []int64{6, 11}, "an entity's other names")
	require.Empty(t, list("the"))
	_, err := db.ListEvents(b.ctx, b.store.Pool, db.EventFilter{Since: b.now, Topic: "&&&", Limit: 5})
	require.Equal(t, search.MsgQueryNoWords, cryptointel.ErrorMessage(err))
}

// planConn is dbtest.PlanConn on b's database.
func planConn(t *testing.T, b *searchBundle) *pgxpool.Conn {
	t.Helper()
	return dbtest.PlanConn(t, b.ctx, b.store.Pool)
}

// explain is dbtest.Explain.
var explain = dbtest.Explain

// TestSearchPlansUseIndexes checks that every statement search and
// resolution run can be answered from indexes: with sequential scans
// disabled, no plan scans a large table sequentially. (On tiny tables the
// planner rightly prefers sequential scans; the benchmark shows the plans
// chosen on a large database.)
func TestSearchPlansUseIndexes(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	conn := planConn(t, b)
	_, err := conn.Exec(b.ctx, "ANALYZE")
	require.NoError(t, err)
	since := b.now.Add(-30 * 24 * time.Hour)
	for _, q := range []string{"Ethereum", "Etherium", "OP", "Ethereum exploit news", "bridge hacked", "exploit",
		"which exchanges were hacked recently", "token unlocks next week"} {
		an, rk, err := search.SearchStatementsForTest(b.ctx, conn, q, since, 10)
		require.NoError(t, err, q)
		// The filters (a window's end, a category, signals, an entity)
		// filter what the indexes find: no plan reads a table whole.
		_, frk, err := search.FilteredSearchStatementsForTest(b.ctx, conn, q, since, b.now.Add(-time.Hour), 10, entEthereum)
		require.NoError(t, err, q)
		for name, st := range map[string]search.SearchStatementForTest{"analyze": an, "rank": rk, "filtered": frk, "resolve": {SQL: search.ResolveSQLForTest(q, 50, 0)}} {
			text := explain(t, b.ctx, conn, st.SQL, st.Args...)
			for _, table := range []string{"events", "event_entities", "entity_names", "entities", "search_terms"} {
				require.NotContains(t, text, "Seq Scan on "+table+" ", "%s %q:\n%s", name, q, text)
			}
		}
	}
}

// TestSearchFilterReadsItsOwnIndex checks that a search filtered by a
// category or an entity matches its words against the filter's newest
// events, read from the filter's index, and not from events_search_idx:
// the search index knows neither filter, and a probe whose matches mostly
// failed it read tens of thousands of rows to keep a few (a second at a
// million events).
func TestSearchFilterReadsItsOwnIndex(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	conn := planConn(t, b)
	since := b.now.Add(-30 * 24 * time.Hour)
	for _, c := range []struct {
		name     string
		category string
		entities []int64
		index    string
	}{
		{"category", "security", nil, "events_category_idx"},
		{"entity", "", []int64{entEthereum}, "event_entities_entity_recency_idx"},
		{"both", "security", []int64{entEthereum, entEthereumFoundation}, "event_entities_entity_recency_idx"},
	} {
		for _, q := range []string{"bridge hacked", "exploit", "Ethereum exploit news"} {
			st, err := search.FilterSearchStatementForTest(b.ctx, conn, q, since, 10, c.category, c.entities)
			require.NoError(t, err, q)
			text := explain(t, b.ctx, conn, st.SQL, st.Args...)
			require.NotContains(t, text, "events_search_idx", "%s %q:\n%s", c.name, q, text)
			require.Contains(t, text, c.index, "%s %q:\n%s", c.name, q, text)
		}
	}
	// The filtered search still finds what the plain one finds within
	// the filter.
	res, err := db.SearchEventsWith(b.ctx, b.store.Pool, "exploit", search.SearchOptions{Since: since, Limit: 10, EntityIDs: []int64{entEthereum}})
	require.NoError(t, err)
	plain, err := db.SearchEventsWith(b.ctx, b.store.Pool, "exploit", search.SearchOptions{Since: since, Limit: 50})
	require.NoError(t, err)
	want := 0
	for _, m := range plain.Matches {
		var owns bool
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT EXISTS (SELECT 1 FROM event_entities WHERE event_id = $1 AND entity_id = $2)", m.EventID, entEthereum).Scan(&owns))
		if owns {
			want++
		}
	}
	require.Positive(t, want)
	require.Len(t, res.Matches, min(want, 10))
}

// TestSearchFilterWalkStopsAtItsMatches checks that a search filtered by an
// entity reads the entity's events newest first only as far as its probes
// need: each probe stops at the matches it keeps, and the walk at its
// deepest probe, where it read the filter's whole bound (1,000 events) and
// matched every probe against each (at a million events the entity form
// cost twice the plain one). The entity's events are read from its recency
// index alone (their ids; no heap fetch for a category), and an event two
// of the filter's entities name is one event of the walk.
func TestSearchFilterWalkStopsAtItsMatches(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	const entWalrus = 950
	b.insertEntities(t, []searchFixtureEntity{{entWalrus, "Walrus", "Walrus", nil, 300, "project"}})
	var evs []searchFixtureEvent
	for i := range 300 {
		evs = append(evs, searchFixtureEvent{id: int64(2000 + i), title: fmt.Sprintf("Validator upgrade report %d", i),
			age: time.Duration(i+1) * 17 * time.Minute, owner: entWalrus, participants: []int64{entEthena}})
	}
	b.insertEvents(t, evs)
	conn := planConn(t, b)
	_, err := conn.Exec(b.ctx, "VACUUM (ANALYZE) event_entities")
	require.NoError(t, err)
	since := b.now.Add(-30 * 24 * time.Hour)
	for _, ents := range [][]int64{{entWalrus}, {entWalrus, entEthena}} {
		st, err := search.FilterSearchStatementForTest(b.ctx, conn, "validator upgrade", since, 10, "", ents)
		require.NoError(t, err)
		text := explainAnalyzeGeneric(t, b.ctx, conn, st.SQL, st.Args...)
		walk := planNodeRows(t, text, "CTE walk")
		require.Less(t, walk, 100, "the walk stops at its probes' matches (%v):\n%s", ents, text)
		require.Contains(t, text, "Index Only Scan using event_entities_entity_recency_idx", "%v:\n%s", ents, text)
		// A cache of the lookups copies every vector and holds no repeat.
		require.NotContains(t, text, "Memoize", "%v:\n%s", ents, text)

		res, err := db.SearchEventsWith(b.ctx, b.store.Pool, "validator upgrade", search.SearchOptions{Since: since, Limit: 10, EntityIDs: ents, NoCollapse: true})
		require.NoError(t, err)
		seen := map[int64]bool{}
		for i, m := range res.Matches {
			require.False(t, seen[m.EventID], "%v: event %d twice", ents, m.EventID)
			seen[m.EventID] = true
			require.Equal(t, int64(2000+i), m.EventID, "%v: the newest matches, newest first", ents)
		}
		require.Len(t, res.Matches, 10, "%v", ents)
	}
}

// TestSearchFilterWalkReadsSignatures checks that an entity-filtered
// search looks up only the walked events whose words may match a probe:
// each link carries its event's word signature (migration 031), which the
// walk reads from the entity's recency index. A word only the entity's
// oldest event holds was 300 lookups, one per event walked. The signature
// is set when a link is written and follows its event's words, and the
// statement finds what it finds with every link looked up.
func TestSearchFilterWalkReadsSignatures(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	const entWalrus, entOstrich = 951, 952
	b.insertEntities(t, []searchFixtureEntity{{entWalrus, "Walrus", "Walrus", nil, 300, "project"},
		{entOstrich, "Ostrich", "Ostrich", nil, 1, "project"}})
	var evs []searchFixtureEvent
	for i := range 300 {
		evs = append(evs, searchFixtureEvent{id: int64(3000 + i), title: fmt.Sprintf("Validator upgrade report %d", i),
			age: time.Duration(i+1) * 17 * time.Minute, owner: entWalrus})
	}
	evs[299].title = "Zebra crossing validator report"
	b.insertEvents(t, evs)
	conn := planConn(t, b)
	_, err := conn.Exec(b.ctx, "VACUUM (ANALYZE) event_entities")
	require.NoError(t, err)
	since := b.now.Add(-30 * 24 * time.Hour)
	filtered := func(query string, ents ...int64) []int64 {
		t.Helper()
		res, err := db.SearchEventsWith(b.ctx, b.store.Pool, query, search.SearchOptions{Since: since, Limit: 10, EntityIDs: ents, NoCollapse: true})
		require.NoError(t, err, query)
		ids := []int64{}
		for _, m := range res.Matches {
			ids = append(ids, m.EventID)
		}
		return ids
	}

	// Every link holds the bits of each of its event's words, as the
	// service computes them.
	checkSignatures := func() {
		t.Helper()
		rows, err := b.store.Pool.Query(b.ctx, `SELECT ee.event_id, ee.entity_id, ee.sig_a, ee.sig_b, tsvector_to_array(e.search)
			FROM event_entities ee JOIN events e ON e.id = ee.event_id`)
		require.NoError(t, err)
		defer rows.Close()
		n := 0
		for rows.Next() {
			var ev, ent int64
			var sa, sb *int64
			var lexemes []string
			require.NoError(t, rows.Scan(&ev, &ent, &sa, &sb, &lexemes))
			require.NotNil(t, sa, "event %d, entity %d: no signature", ev, ent)
			require.NotNil(t, sb, "event %d, entity %d: no signature", ev, ent)
			require.NotEmpty(t, lexemes)
			for _, l := range lexemes {
				la, lb := search.LexemeBitsForTest(l)
				require.True(t, *sa&la == la && *sb&lb == lb, "event %d: %q not in its signature", ev, l)
			}
			n++
		}
		require.NoError(t, rows.Err())
		require.Greater(t, n, 300)
	}
	checkSignatures()

	st, err := search.FilterSearchStatementForTest(b.ctx, conn, "zebra", since, 10, "", []int64{entWalrus})
	require.NoError(t, err)
	text := explainAnalyzeGeneric(t, b.ctx, conn, st.SQL, st.Args...)
	require.Less(t, lookups(t, text), 30, "the walk looks up only the events that may hold the word:\n%s", text)
	off := explainAnalyzeGeneric(t, b.ctx, conn, st.SQL, search.WalkSignaturesOffForTest(st.Args)...)
	require.Equal(t, 300, lookups(t, off), "without signatures every event walked is looked up:\n%s", off)
	require.Equal(t, []int64{3299}, filtered("zebra", entWalrus))

	// An event whose words change carries its new words into its links.
	// (An event the entity's newest twenty would not hold: those are
	// candidates whatever their words.)
	_, err = b.store.Pool.Exec(b.ctx, "UPDATE events SET summary = 'A zebra stood on the validator' WHERE id = 3150")
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{3150, 3299}, filtered("zebra", entWalrus))
	// A link written later takes its event's words.
	_, err = b.store.Pool.Exec(b.ctx, `INSERT INTO event_entities (event_id, entity_id, role, latest_evidence_at)
		SELECT id, $1, 'participant', latest_evidence_at FROM events WHERE id = 3299`, entOstrich)
	require.NoError(t, err)
	require.Equal(t, []int64{3299}, filtered("zebra crossing", entOstrich))
	checkSignatures()

	// The statement finds what it finds with every link looked up.
	for _, c := range []struct {
		query string
		ents  []int64
	}{
		{"zebra", []int64{entWalrus}},
		{"validator upgrade", []int64{entWalrus}},
		{"zebra validator", []int64{entWalrus, entOstrich}},
		{"exploit bridge", []int64{entEthereum}},
		{"bridge hacked", []int64{entEthena, entUniswapLabs}},
		{"staking record", []int64{entEthereum}},
		{"report", []int64{entWalrus}},
	} {
		st, err := search.FilterSearchStatementForTest(b.ctx, conn, c.query, since, 10, "", c.ents)
		require.NoError(t, err, c.query)
		ids := func(args []any) []int64 {
			rows, err := b.store.Pool.Query(b.ctx, st.SQL, args...)
			require.NoError(t, err, c.query)
			defer rows.Close()
			var out []int64
			for rows.Next() {
				vals, err := rows.Values()
				require.NoError(t, err)
				out = append(out, vals[0].(int64))
			}
			require.NoError(t, rows.Err(), c.query)
			slices.Sort(out)
			return out
		}
		with := ids(st.Args)
		require.NotEmpty(t, with, c.query)
		require.Equal(t, ids(search.WalkSignaturesOffForTest(st.Args)), with, c.query)
	}
}

// TestSearchLinkSignatureBesideAChangeOfItsWords checks that a link
// written while another transaction changes its event's words carries the
// words that commit, whichever comes first: the link waits for the change
// to commit and reads its words, or the change waits for the link's
// transaction and rewrites its signature. Without the link's share lock on
// its event, each order left the link with the old words' signature.
func TestSearchLinkSignatureBesideAChangeOfItsWords(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	ctx := b.ctx
	holds := func(eventID, entityID int64, word string) bool {
		t.Helper()
		var sa, sb int64
		require.NoError(t, b.store.Pool.QueryRow(ctx, "SELECT sig_a, sig_b FROM event_entities WHERE event_id = $1 AND entity_id = $2",
			eventID, entityID).Scan(&sa, &sb))
		la, lb := search.LexemeBitsForTest(word)
		return sa&la == la && sb&lb == lb
	}
	link := func(q interface {
		Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	}, eventID, entityID int64) error {
		_, err := q.Exec(ctx, `INSERT INTO event_entities (event_id, entity_id, role, latest_evidence_at)
			SELECT id, $2, 'participant', latest_evidence_at FROM events WHERE id = $1`, eventID, entityID)
		return err
	}
	// beside runs f while tx is open (f has run or waits on tx by the time
	// tx commits), then commits tx and returns f's error.
	beside := func(tx pgx.Tx, f func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			require.NoError(t, tx.Commit(ctx))
			return err
		case <-time.After(300 * time.Millisecond):
		}
		require.NoError(t, tx.Commit(ctx))
		return <-done
	}

	// The words change first.
	tx, err := b.store.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	_, err = tx.Exec(ctx, "UPDATE events SET summary = 'A quokka was seen' WHERE id = 5")
	require.NoError(t, err)
	require.NoError(t, beside(tx, func() error { return link(b.store.Pool, 5, entTerra) }))
	require.True(t, holds(5, entTerra, "quokka"), "the link carries the committed words")

	// The link is written first.
	tx, err = b.store.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	require.NoError(t, link(tx, 6, entTerra))
	require.NoError(t, beside(tx, func() error {
		_, err := b.store.Pool.Exec(ctx, "UPDATE events SET summary = 'A wombat was seen' WHERE id = 6")
		return err
	}))
	require.True(t, holds(6, entTerra, "wombat"), "the change rewrites the link written before it")
}

// lookups is how many times a filtered search statement's probes looked an
// event up by id (the walk's events_pkey scans), from its EXPLAIN ANALYZE.
func lookups(t *testing.T, text string) int {
	t.Helper()
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, "Index Scan using events_pkey on events e_") {
			continue
		}
		at := strings.Index(l, " loops=")
		require.Positive(t, at, l)
		var loops int
		_, err := fmt.Sscanf(l[at:], " loops=%d", &loops)
		require.NoError(t, err, l)
		n += loops
	}
	return n
}

// explainAnalyzeGeneric runs sql with args under EXPLAIN ANALYZE as the
// service's pools run it: prepared, on its generic plan.
func explainAnalyzeGeneric(t *testing.T, ctx context.Context, conn *pgxpool.Conn, sql string, args ...any) string {
	t.Helper()
	_, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	defer conn.Exec(context.Background(), "RESET plan_cache_mode") //nolint:errcheck
	name := fmt.Sprintf("explain_generic_%d", time.Now().UnixNano())
	sd, err := conn.Conn().Prepare(ctx, name, sql)
	require.NoError(t, err)
	defer conn.Conn().Deallocate(context.Background(), name) //nolint:errcheck
	lits := make([]string, len(args))
	for i, a := range args {
		// Each argument as the text of its parameter's type: EXPLAIN
		// EXECUTE takes no parameters.
		var typ string
		require.NoError(t, conn.QueryRow(ctx, "SELECT format_type($1, NULL)", sd.ParamOIDs[i]).Scan(&typ))
		var lit *string
		require.NoError(t, conn.QueryRow(ctx, "SELECT ($1::"+typ+")::text", a).Scan(&lit))
		lits[i] = "NULL::" + typ
		if lit != nil {
			lits[i] = "'" + strings.ReplaceAll(*lit, "'", "''") + "'::" + typ
		}
	}
	rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) EXECUTE "+name+"("+strings.Join(lits, ", ")+")")
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}

// planNodeRows is the rows the plan node on the line after the line
// holding label (an EXPLAIN ANALYZE text plan) returned.
func planNodeRows(t *testing.T, text, label string) int {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == label && i+1 < len(lines) {
			var rows int
			at := strings.Index(lines[i+1], " rows=")
			require.Positive(t, at, "%s: no rows on %q", label, lines[i+1])
			_, err := fmt.Sscanf(lines[i+1][at:], " rows=%d", &rows)
			require.NoError(t, err, lines[i+1])
			return rows
		}
	}
	t.Fatalf("no %s in the plan:\n%s", label, text)
	return 0
}

// TestSearchIndexPendingListStaysSmall checks that events ingested one
// batch after another do not pile up in events_search_idx's pending list,
// which every search probe reads in full: at GIN's default 4 MB the list
// held 8,000 events and a news-style search took three times as long
// (migration 016).
func TestSearchIndexPendingListStaysSmall(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	_, err := b.store.Pool.Exec(b.ctx, "CREATE EXTENSION IF NOT EXISTS pgstattuple")
	require.NoError(t, err)
	words := []string{"exploit", "bridge", "outage", "validator", "listing", "governance", "stablecoin", "upgrade"}
	id := int64(1000)
	for batch := 0; batch < 40; batch++ {
		var evs []searchFixtureEvent
		for i := 0; i < 50; i++ {
			id++
			evs = append(evs, searchFixtureEvent{id: id, owner: entEthereum, age: time.Duration(id) * time.Second,
				title:   fmt.Sprintf("%s %s report %d", words[id%8], words[(id/8)%8], id),
				summary: fmt.Sprintf("Summary %d of the %s and the %s, with details %d", id, words[(id/3)%8], words[(id/5)%8], id*7)})
		}
		b.insertEvents(t, evs)
	}
	var pages, tuples int64
	require.NoError(t, b.store.Pool.QueryRow(b.ctx,
		"SELECT pending_pages, pending_tuples FROM pgstatginindex('events_search_idx')").Scan(&pages, &tuples))
	t.Logf("after 2,000 events in 40 batches: %d pending pages, %d pending tuples", pages, tuples)
	require.LessOrEqual(t, pages, int64(40), "the pending list is merged every 256 kB")
	require.NotEmpty(t, b.search(t, "exploit bridge", 10), "the new events are found, pending or merged")
}

// TestSearchStatsDoNotSerializeWriters checks that two transactions writing
// events with the same words do not wait on each other for the counters: the
// second commits while the first is still open (a lock wait would fail it
// with lock_timeout), and both counts arrive once each has committed.
func TestSearchStatsDoNotSerializeWriters(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	insert := func(tx interface {
		Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	}, id int64) {
		_, err := tx.Exec(b.ctx, `INSERT INTO events (id, title, category, latest_evidence_at) VALUES ($1, 'Walrus bridge exploit', 'security', $2)`, id, b.now)
		require.NoError(t, err)
	}
	df := func() int64 {
		var n int64
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT coalesce((SELECT df FROM search_terms WHERE term = 'walrus'), 0)").Scan(&n))
		return n
	}
	first, err := b.store.Pool.Begin(b.ctx)
	require.NoError(t, err)
	defer first.Rollback(b.ctx) //nolint:errcheck
	insert(first, 901)
	second, err := b.store.Pool.Begin(b.ctx)
	require.NoError(t, err)
	defer second.Rollback(b.ctx) //nolint:errcheck
	_, err = second.Exec(b.ctx, "SET LOCAL lock_timeout = '10s'")
	require.NoError(t, err)
	insert(second, 902)
	require.NoError(t, second.Commit(b.ctx), "the second writer commits while the first is open")
	require.Equal(t, int64(1), df())
	require.NoError(t, first.Commit(b.ctx))
	require.Equal(t, int64(2), df())
}

// TestSearchAnalysisKeptPerContentVersion checks that a query searched again
// at the same content version costs the search statement alone, that a
// write (a new version) is seen at once, and that a search metered at an
// older version neither reads nor replaces the analyses kept.
func TestSearchAnalysisKeptPerContentVersion(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	version := func() int64 {
		var v int64
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT version FROM data_version").Scan(&v))
		return v
	}
	search := func(v int64, q string) (*search.SearchResult, int64) {
		ctx, n := db.WithStatementCounter(b.ctx)
		res, err := b.store.SearchEvents(ctx, v, q, search.SearchOptions{Since: b.now.Add(-30 * 24 * time.Hour), Limit: 10})
		require.NoError(t, err, q)
		return res, n.Load()
	}
	v1 := version()
	first, n := search(v1, "bridge exploit")
	require.Equal(t, int64(2), n, "analysis and search")
	again, n := search(v1, "bridge exploit")
	require.Equal(t, int64(1), n, "the analysis is kept for the version")
	require.Equal(t, first, again)
	_, n = search(0, "bridge exploit")
	require.Equal(t, int64(2), n, "an unknown version keeps nothing")

	_, err := b.store.Pool.Exec(b.ctx, `INSERT INTO events (id, title, category, latest_evidence_at) VALUES (50, 'Walrus bridge exploit', 'security', $1)`, b.now)
	require.NoError(t, err)
	v2 := version()
	require.Greater(t, v2, v1)
	res, n := search(v2, "walrus exploit")
	require.Equal(t, int64(2), n)
	require.Equal(t, int64(50), res.Matches[0].EventID, "the write is searched at once")
	require.Empty(t, res.UnmatchedTerms)
	_, n = search(v2, "walrus exploit")
	require.Equal(t, int64(1), n)
	_, n = search(v1, "walrus exploit")
	require.Equal(t, int64(2), n, "an older version is computed")
	_, n = search(v2, "walrus exploit")
	require.Equal(t, int64(1), n, "and does not replace the newer analyses")
}

// TestSearchProbesFindTheNewestMatches checks that a word common enough to
// be probed bucket by bucket (beyond the whole-index threshold) brings its
// newest matches, however its events spread over time: the newest weeks
// hold many, then none for days, then a few old ones.
func TestSearchProbesFindTheNewestMatches(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	var ids []int64
	var ats []time.Time
	for i := range 900 {
		age := time.Duration(i) * 17 * time.Minute // ~10.6 days, newest first
		if i >= 880 {
			age = 20*24*time.Hour + time.Duration(i)*time.Hour // a few, weeks old
		}
		ids, ats = append(ids, int64(1000+i)), append(ats, b.now.Add(-age))
	}
	_, err := b.store.Pool.Exec(b.ctx, `INSERT INTO events (id, title, category, latest_evidence_at)
		SELECT id, 'Walrus sighting report', 'analysis', at FROM unnest($1::bigint[], $2::timestamptz[]) AS x(id, at)`, ids, ats)
	require.NoError(t, err)
	res := b.searchResult(t, "walrus", 10)
	require.Equal(t, ids[:10], matchEventIDs(res.Matches), "the newest ten, newest first")
	res, err = db.SearchEvents(b.ctx, b.store.Pool, "walrus", b.now.Add(-90*24*time.Hour), 20)
	require.NoError(t, err)
	require.Equal(t, ids[:20], matchEventIDs(res.Matches))

	// Only the old ones hold the second word: the conjunction's newest
	// buckets hold none, the words alone bring them.
	_, err = b.store.Pool.Exec(b.ctx, `UPDATE events SET title = 'Walrus sighting report: tusk count' WHERE id >= 1880`)
	require.NoError(t, err)
	res, err = db.SearchEvents(b.ctx, b.store.Pool, "walrus tusk", b.now.Add(-90*24*time.Hour), 10)
	require.NoError(t, err)
	require.Equal(t, ids[880:890], matchEventIDs(res.Matches), "the events holding both words first")
}

// TestSearchOldStepsReadEachDaysWords checks that words common alone but
// seldom together are looked for in older days through their words of
// each day (events_search_day_idx, migration 023), not through the day and
// week buckets of events_search_idx, whose entries list every event of the
// bucket whatever the words, and that their old matches still come first.
func TestSearchOldStepsReadEachDaysWords(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	b.insertTitled(t, "Walrus sighting report", 1000, 900, every17min)
	b.insertTitled(t, "Tusk measurement log", 3000, 900, every17min)
	b.insertTitled(t, "Walrus tusk found on the shore", 5000, 5, func(i int) time.Duration { return 20*24*time.Hour + time.Duration(i)*time.Hour })
	b.insertTitled(t, "Heron census", 10000, 3200, func(i int) time.Duration { return time.Duration(i) * 5 * time.Minute })

	since := b.now.Add(-90 * 24 * time.Hour)
	res, err := db.SearchEvents(b.ctx, b.store.Pool, "walrus tusk", since, 10)
	require.NoError(t, err)
	require.Equal(t, []int64{5000, 5001, 5002, 5003, 5004}, matchEventIDs(res.Matches)[:5], "the events holding both words first")

	_, rk, err := search.SearchStatementsForTest(b.ctx, b.store.Pool, "walrus tusk", since, 10)
	require.NoError(t, err)
	var plan []map[string]any
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+rk.SQL, rk.Args...).Scan(&plan))
	reads := map[string]float64{}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if name, ok := n["Index Name"].(string); ok {
			reads[name] += n["Actual Loops"].(float64)
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			walk(k.(map[string]any))
		}
	}
	walk(plan[0]["Plan"].(map[string]any))
	// A day of these events holds about 85 of each word: each step reaches
	// a day or more back, so every step reads the words of its days. The
	// conjunction finds its matches 20 days back, a day at a time.
	require.Zero(t, reads["events_search_idx"], "reads of events_search_idx: %v", reads)
	require.GreaterOrEqual(t, reads["events_search_day_idx"], 20.0, "reads of events_search_day_idx: %v", reads)
}

// TestSearchAllTermsStopAtTheirNewestHours checks that, of three words,
// all three together do not walk the older days: all but the commonest
// together walk them in the second stage, and their matches hold every
// match of the three. Three words that never meet walked each day twice.
func TestSearchAllTermsStopAtTheirNewestHours(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	// Each word in an event a minute: the probes' newest steps are hours.
	everyMinute := func(i int) time.Duration { return time.Duration(i) * time.Minute }
	b.insertTitled(t, "Walrus sighting report", 100000, 12000, everyMinute)
	b.insertTitled(t, "Tusk measurement log", 200000, 12000, everyMinute)
	b.insertTitled(t, "Pelican migration note", 300000, 12100, everyMinute)
	b.insertTitled(t, "Walrus tusk found on the shore", 30000, 5, func(i int) time.Duration { return 20*24*time.Hour + time.Duration(i)*time.Hour })

	since := b.now.Add(-90 * 24 * time.Hour)
	res, err := db.SearchEventsWith(b.ctx, b.store.Pool, "walrus tusk pelican", search.SearchOptions{Since: since, Limit: 10, NoCollapse: true})
	require.NoError(t, err)
	require.Equal(t, []int64{30000, 30001, 30002, 30003, 30004}, matchEventIDs(res.Matches)[:5], "the events holding two of the words first")

	_, rk, err := search.SearchStatementsForTest(b.ctx, b.store.Pool, "walrus tusk pelican", since, 10)
	require.NoError(t, err)
	var plan []map[string]any
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+rk.SQL, rk.Args...).Scan(&plan))
	// Reads of events_search_day_idx in each stage.
	reads := map[string]float64{}
	var walk func(n map[string]any, cte string)
	walk = func(n map[string]any, cte string) {
		if name, _ := n["Subplan Name"].(string); strings.HasPrefix(name, "CTE ") {
			cte = strings.TrimPrefix(name, "CTE ")
		}
		if n["Index Name"] == "events_search_day_idx" {
			reads[cte] += n["Actual Loops"].(float64)
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			walk(k.(map[string]any), cte)
		}
	}
	walk(plan[0]["Plan"].(map[string]any), "")
	require.Zero(t, reads["s1"], "days read in the first stage: %v", reads)
	require.Positive(t, reads["s2"], "days read in the second stage: %v", reads)
}

// TestSearchDayQuery checks a probe's tsquery keyed with a day: every
// lexeme, quoted ones too, gets the day, and a phrase becomes a
// conjunction (the day's keys hold no positions).
func TestSearchDayQuery(t *testing.T) {
	t.Parallel()
	require.Equal(t, "('lost@20785' & 'peg@20785') & ('stablecoin@20785')", search.DayQueryForTest("('lost' <2> 'peg') & ('stablecoin')", 20785))
	require.Equal(t, "'u.s@7' & 'secur@7' & 'o''neil@7' | 'sec@7'", search.DayQueryForTest("'u.s' <-> 'secur' <-> 'o''neil' | 'sec'", 7))
}

// TestSearchEachProbeWeighsItsOwnFirstStep checks that whether a probe
// reads on past its newest buckets depends on what that probe found there,
// not on what another probe of its stage found: three words common alone,
// two of them together only in old events. All three never meet; the
// second stage probes each word alone (filling its newest buckets) and the
// two rarer words together, whose newest buckets hold none, so their old
// events must be read.
func TestSearchEachProbeWeighsItsOwnFirstStep(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	b.insertTitled(t, "Walrus sighting report", 1000, 900, every17min)
	b.insertTitled(t, "Tusk measurement log", 3000, 900, every17min)
	b.insertTitled(t, "Pelican migration note", 5000, 1000, every17min)
	b.insertTitled(t, "Walrus tusk found on the shore", 7000, 5, func(i int) time.Duration { return 20*24*time.Hour + time.Duration(i)*time.Hour })

	// Five reports of one story: listed each, not collapsed.
	res, err := db.SearchEventsWith(b.ctx, b.store.Pool, "walrus tusk pelican",
		search.SearchOptions{Since: b.now.Add(-90 * 24 * time.Hour), Limit: 10, NoCollapse: true})
	require.NoError(t, err)
	require.Equal(t, []int64{7000, 7001, 7002, 7003, 7004}, matchEventIDs(res.Matches)[:5], "the events holding two of the words first")
}

// TestSearchTopicFeedWithinItsBuckets checks that a feed's topic over a
// short window, which names the window's hours or days to the index, keeps
// exactly the window's matches, at both sorts.
func TestSearchTopicFeedWithinItsBuckets(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	now := time.Now().UTC()
	ages := map[int64]time.Duration{60: time.Minute, 61: 23 * time.Hour, 62: 25 * time.Hour, 63: 6 * 24 * time.Hour,
		64: 7*24*time.Hour + time.Hour, 65: 20 * 24 * time.Hour, 66: -30 * time.Minute}
	for id, age := range ages {
		_, err := b.store.Pool.Exec(b.ctx, `INSERT INTO events (id, title, category, latest_evidence_at, significance) VALUES ($1, 'Walrus bridge exploit', 'security', $2, $3)`,
			id, now.Add(-age), float64(id))
		require.NoError(t, err)
	}
	list := func(window time.Duration, sort string) []int64 {
		evs, err := db.ListEvents(b.ctx, b.store.Pool, db.EventFilter{Since: now.Add(-window), Topic: "walrus hack", Sort: sort, Limit: 20})
		require.NoError(t, err)
		var ids []int64
		for _, e := range evs {
			ids = append(ids, e.ID)
		}
		return ids
	}
	require.Equal(t, []int64{66, 60, 61}, list(24*time.Hour, db.SortRecency))
	require.Equal(t, []int64{66, 61, 60}, list(24*time.Hour, db.SortSignificance))
	require.Equal(t, []int64{66, 60, 61, 62, 63}, list(7*24*time.Hour, db.SortRecency))
	require.Equal(t, []int64{66, 60, 61, 62, 63, 64}, list(10*24*time.Hour, db.SortRecency))
	require.Equal(t, []int64{66, 60, 61, 62, 63, 64, 65}, list(30*24*time.Hour, db.SortRecency))
}

// severedQuerier runs statements on one connection of its own and, before
// its statement number cut (counted from 1), terminates that connection's
// backend from the pool: the statement is sent on a connection the server
// has closed, as when a replica stops between a search's two statements.
type severedQuerier struct {
	t    *testing.T
	conn *pgx.Conn
	pool *pgxpool.Pool
	cut  int
	n    int
}

func (s *severedQuerier) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	s.n++
	if s.n == s.cut {
		pid := s.conn.PgConn().PID()
		_, err := s.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
		require.NoError(s.t, err)
		require.Eventually(s.t, func() bool {
			var alive bool
			require.NoError(s.t, s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&alive))
			return !alive
		}, 10*time.Second, 10*time.Millisecond)
	}
	return s.conn.Query(ctx, sql, args...)
}

// TestSearchEventsConnectionLostBetweenStatements: a search whose
// connection is lost after its analysis answers an error, never a panic
// (the candidates' statement failed before its first row, so its rows
// describe no columns).
func TestSearchEventsConnectionLostBetweenStatements(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	for _, cut := range []int{1, 2} {
		conn, err := pgx.Connect(b.ctx, b.store.Pool.Config().ConnConfig.ConnString())
		require.NoError(t, err)
		q := &severedQuerier{t: t, conn: conn, pool: b.store.Pool}
		// The statements are prepared and cached on the connection first,
		// so that the severed one is sent without waiting for an answer.
		_, err = db.SearchEvents(b.ctx, q, "Ethereum staking", b.now.Add(-30*24*time.Hour), 5)
		require.NoError(t, err)
		q.n, q.cut = 0, cut
		require.NotPanics(t, func() {
			_, err = db.SearchEvents(b.ctx, q, "Ethereum staking", b.now.Add(-30*24*time.Hour), 5)
		}, "statement %d sent on a closed connection", cut)
		require.Error(t, err, "statement %d sent on a closed connection", cut)
		conn.Close(b.ctx) //nolint:errcheck // already closed by the server
	}
}
