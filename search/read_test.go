package search_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/search"
)

// Entities of the reading tests, beside the search fixture's.
const (
	entBitvault int64 = 800 + iota
	entSolana
)

// setupReading is the search fixture with an exchange, Solana, many older
// hacks and one event that says "recent": the rare word a time word would
// take the query over with, were it searched.
func setupReading(t *testing.T) *searchBundle {
	t.Helper()
	b := setupSearch(t)
	b.insertEntities(t, []searchFixtureEntity{
		{entBitvault, "Bitvault", "Bitvault", nil, 3, "exchange"},
		{entSolana, "Solana", "Solana", []string{"SOL"}, 20, "project"},
	})
	var evs []searchFixtureEvent
	for i := range 40 {
		evs = append(evs, searchFixtureEvent{id: int64(2000 + i), title: "Lending protocol hacked in oracle exploit",
			age: time.Duration(10+i%15) * 24 * time.Hour, owner: entOptimism})
	}
	evs = append(evs,
		searchFixtureEvent{id: 100, title: "SOL market structure after recent volatility", age: 3 * time.Hour, owner: entSolana},
		searchFixtureEvent{id: 101, title: "Scheduled unlock releases 40M tokens to early backers", age: 5 * time.Hour, owner: entEthena},
		searchFixtureEvent{id: 102, title: "Treasury begins token buyback", age: 4 * time.Hour, owner: entEthena},
		searchFixtureEvent{id: 103, title: "Token unlock of 12M completed", age: 25 * 24 * time.Hour, owner: entEthena},
	)
	b.insertEvents(t, evs)
	return b
}

func (b *searchBundle) searchWith(t *testing.T, query string, o search.SearchOptions) *search.SearchResult {
	t.Helper()
	if o.Since.IsZero() {
		o.Since, o.SinceDefault = b.now.Add(-30*24*time.Hour), true
	}
	if o.Now.IsZero() {
		o.Now = b.now
	}
	res, err := db.SearchEventsWith(b.ctx, b.store.Pool, query, o)
	require.NoError(t, err, "%q", query)
	return res
}

func termTexts(res *search.SearchResult) []string {
	var out []string
	for _, t := range res.Terms {
		out = append(out, t.Text)
	}
	return out
}

func filterNamed(res *search.SearchResult, name string) (search.SearchFilter, bool) {
	for _, f := range res.Filters {
		if f.Name == name {
			return f, true
		}
	}
	return search.SearchFilter{}, false
}

// TestSearchRecentlyHackedReadsTimeWords: "recently" is a time word, not a
// word to search, so the rare "recent" of a market report no longer takes
// the query over; question words are dropped by rule; the newest hack
// comes first.
func TestSearchRecentlyHackedReadsTimeWords(t *testing.T) {
	t.Parallel()
	b := setupReading(t)
	// The story the desk is after, ingested now.
	b.insertEvents(t, []searchFixtureEvent{{id: 200, title: "Exchange hot wallet hacked, $40M drained",
		summary: "Bitvault halts withdrawals after the hack.", age: 30 * time.Minute, owner: entBitvault}})

	for _, q := range []string{"recently hacked", "which exchanges were hacked recently"} {
		res := b.searchWith(t, q, search.SearchOptions{Limit: 10})
		require.NotEmpty(t, res.Matches, q)
		require.Equal(t, int64(200), res.Matches[0].EventID, "%q: the hack story first, got %v", q, matchEventIDs(res.Matches))
		require.NotContains(t, matchEventIDs(res.Matches)[:3], int64(100), "%q: the volatility report is not a hack", q)
		require.Empty(t, res.UnmatchedTerms, q)
		require.NotContains(t, termTexts(res), "recently", q)
		require.Contains(t, res.Dropped, search.SearchDropped{Text: "recently", Reason: search.DroppedTime}, q)
		f, ok := filterNamed(res, search.SearchFilterRecency)
		require.True(t, ok, "%q: %+v", q, res.Filters)
		require.Equal(t, "recently", f.Text)
	}
	res := b.searchWith(t, "which exchanges were hacked recently", search.SearchOptions{Limit: 10})
	require.Equal(t, []string{"exchanges", "hacked"}, termTexts(res))
	for _, w := range []string{"which", "were"} {
		require.Contains(t, res.Dropped, search.SearchDropped{Text: w, Reason: search.DroppedQuestion})
	}
	f, ok := filterNamed(res, search.SearchFilterCategoryPreference)
	require.True(t, ok)
	require.Equal(t, "security", f.Value)
}

// TestSearchNextWeekIsAWindow: "next week" is a window (the week after the
// clock's), not the words next and week; what is scheduled then was
// reported before it, so the recent reports are searched.
func TestSearchNextWeekIsAWindow(t *testing.T) {
	t.Parallel()
	b := setupReading(t)
	res := b.searchWith(t, "token unlocks next week", search.SearchOptions{Limit: 10})
	require.Equal(t, []string{"token", "unlocks"}, termTexts(res))
	require.Empty(t, res.UnmatchedTerms)
	f, ok := filterNamed(res, "scheduled")
	require.True(t, ok, "%+v", res.Filters)
	require.Equal(t, "next week", f.Text)
	// b.now is Sunday 2026-11-01: next week is Monday 2 to Monday 9.
	require.Equal(t, "2026-11-02T00:00:00Z/2026-11-09T00:00:00Z", f.Value)
	from, ok := filterNamed(res, search.SearchFilterFrom)
	require.True(t, ok)
	require.Equal(t, "2026-10-18T12:00:00Z", from.Value, "the reports of the last two weeks")
	require.Equal(t, int64(101), res.Matches[0].EventID, "the scheduled unlock first")
	require.NotContains(t, matchEventIDs(res.Matches), int64(103), "a month-old unlock is out of the window")

	// A report naming a date inside next week ranks above newer ones that
	// name none or a date after it.
	b.insertEvents(t, []searchFixtureEvent{
		{id: 104, title: "Ethena to unlock 30M ENA tokens on November 4", age: 3 * 24 * time.Hour, owner: entEthena},
		{id: 105, title: "Ethena to unlock 20M ENA tokens on December 20", age: 2 * time.Hour, owner: entEthena},
	})
	res = b.searchWith(t, "token unlocks next week", search.SearchOptions{Limit: 10})
	require.Equal(t, int64(104), res.Matches[0].EventID, "the unlock dated next week first: %v", matchEventIDs(res.Matches))

	// Past windows bound the search; a window in the past says it.
	res = b.searchWith(t, "token unlock since October", search.SearchOptions{Limit: 10})
	from, ok = filterNamed(res, search.SearchFilterFrom)
	require.True(t, ok)
	require.Equal(t, "2026-10-01T00:00:00Z", from.Value)
	require.Contains(t, matchEventIDs(res.Matches), int64(103))
	res = b.searchWith(t, "token unlock in 2025", search.SearchOptions{Limit: 10})
	require.Empty(t, res.Matches)
	to, ok := filterNamed(res, search.SearchFilterTo)
	require.True(t, ok)
	require.Equal(t, "2026-01-01T00:00:00Z", to.Value)
	res = b.searchWith(t, "unlock today", search.SearchOptions{Limit: 10})
	require.ElementsMatch(t, []int64{101, 105}, matchEventIDs(res.Matches), "the unlocks reported today")
}

// TestSearchSortRecency: sort=recency orders the events that match the
// whole query newest first; Solana's other events are not outages and are
// left out.
func TestSearchSortRecency(t *testing.T) {
	t.Parallel()
	b := setupReading(t)
	b.insertEvents(t, []searchFixtureEvent{
		{id: 300, title: "Solana outage: outage halts the network, outage post-mortem", age: 20 * 24 * time.Hour, owner: entSolana},
		{id: 301, title: "Solana outage ends", age: 2 * 24 * time.Hour, owner: entSolana},
		{id: 302, title: "Solana outage as validators stall", age: 9 * 24 * time.Hour, owner: entSolana},
		{id: 303, title: "Solana outage hits payments", age: 30 * time.Minute, owner: entSolana},
		{id: 304, title: "Solana staking grows", age: 10 * time.Minute, owner: entSolana},
	})
	rel := b.searchWith(t, "Solana outage", search.SearchOptions{Limit: 10})
	require.Equal(t, int64(300), rel.Matches[0].EventID, "relevance: the strongest match first")
	require.Equal(t, search.SearchSortRelevance, rel.Sort)

	rec := b.searchWith(t, "Solana outage", search.SearchOptions{Limit: 10, Sort: search.SearchSortRecency})
	require.Equal(t, []int64{303, 301, 302, 300}, matchEventIDs(rec.Matches), "newest first, outages only")
	require.Equal(t, search.SearchSortRecency, rec.Sort)

	// Paging: two by two, the second page after the first's last.
	p1 := b.searchWith(t, "Solana outage", search.SearchOptions{Limit: 2, Sort: search.SearchSortRecency})
	require.True(t, p1.More)
	p2 := b.searchWith(t, "Solana outage", search.SearchOptions{Limit: 2, Offset: 2, AfterID: p1.Matches[1].EventID, Sort: search.SearchSortRecency})
	require.Equal(t, []int64{302, 300}, matchEventIDs(p2.Matches))
	require.Equal(t, 2, p2.Offset)

	// Filters: a window, a category, an entity, the signal surface.
	win := b.searchWith(t, "Solana outage", search.SearchOptions{Limit: 10, Since: b.now.Add(-10 * 24 * time.Hour), Until: b.now.Add(-24 * time.Hour)})
	require.ElementsMatch(t, []int64{301, 302}, matchEventIDs(win.Matches))
	ent := b.searchWith(t, "hacked", search.SearchOptions{Limit: 10, EntityIDs: []int64{entOptimism}})
	require.NotEmpty(t, ent.Matches)
	for _, m := range ent.Matches {
		require.True(t, m.EventID >= 2000 || m.EventID == 10 || m.EventID == 11, "%v", matchEventIDs(ent.Matches))
	}
	sig := b.searchWith(t, "Solana outage", search.SearchOptions{Limit: 10, Surface: search.SearchSurfaceSignal})
	require.Empty(t, sig.Matches, "no outage is a signal")
	cat := b.searchWith(t, "Solana outage", search.SearchOptions{Limit: 10, Category: "security"})
	require.Empty(t, cat.Matches)

	// Facets count the ranked hits.
	fac := b.searchWith(t, "Solana outage", search.SearchOptions{Limit: 2, Facets: true, Sort: search.SearchSortRecency})
	require.NotNil(t, fac.Facets)
	require.Equal(t, []search.SearchFacet{{Value: "other", Count: 4}}, fac.Facets.Categories)
	require.Equal(t, strconv.FormatInt(entSolana, 10), fac.Facets.Entities[0].Value)
	require.Equal(t, 4, fac.Facets.Entities[0].Count)
	require.Len(t, fac.Facets.Days, 4)
}

// TestSearchOneStoryOnce: five sources telling one story are one hit,
// the others listed in alsoReportedAs; collapse off lists all five.
func TestSearchOneStoryOnce(t *testing.T) {
	t.Parallel()
	b := setupReading(t)
	titles := []string{
		"Solana mainnet halts block production for five hours",
		"Solana mainnet halts block production for 5 hours",
		"Solana network halts block production for five hours",
		"Solana block production halts on mainnet for five hours",
		"Solana mainnet halts: block production stops for five hours",
	}
	var evs []searchFixtureEvent
	for i, title := range titles {
		evs = append(evs, searchFixtureEvent{id: int64(400 + i), title: title, age: time.Duration(2+i) * time.Hour, owner: entSolana})
	}
	// Another story of the same owner, and the same story a month before.
	evs = append(evs,
		searchFixtureEvent{id: 410, title: "Solana validators vote on fee changes", age: 3 * time.Hour, owner: entSolana},
		searchFixtureEvent{id: 411, title: "Solana mainnet halts block production for two hours", age: 20 * 24 * time.Hour, owner: entSolana})
	b.insertEvents(t, evs)

	res := b.searchWith(t, "Solana halt", search.SearchOptions{Limit: 10})
	ids := matchEventIDs(res.Matches)
	var hit search.EventMatch
	n := 0
	for _, m := range res.Matches {
		if m.EventID >= 400 && m.EventID < 405 {
			hit, n = m, n+1
		}
	}
	require.Equal(t, 1, n, "one hit for the story: %v", ids)
	require.Len(t, hit.AlsoReportedAs, 4)
	require.Contains(t, ids, int64(411), "the older halt is another story")

	all := b.searchWith(t, "Solana halt", search.SearchOptions{Limit: 10, NoCollapse: true})
	n = 0
	for _, m := range all.Matches {
		if m.EventID >= 400 && m.EventID < 405 {
			n++
			require.Empty(t, m.AlsoReportedAs)
		}
	}
	require.Equal(t, 5, n)
}

// TestSearchOneStoryWhateverTheOrderOfItsEntities: two sources naming
// the same participants in another order tell one story (the order of an
// event's entities is its source's, not the story's).
func TestSearchOneStoryWhateverTheOrderOfItsEntities(t *testing.T) {
	t.Parallel()
	b := setupReading(t)
	b.insertEvents(t, []searchFixtureEvent{
		{id: 420, title: "Bridge halts withdrawals for six hours after exploit", age: 2 * time.Hour,
			owner: entSolana, participants: []int64{entEthereum, entOptimism}},
		{id: 421, title: "Bridge halts withdrawals for 6 hours after exploit", age: 3 * time.Hour,
			owner: entSolana, participants: []int64{entOptimism, entEthereum}},
	})
	res := b.searchWith(t, "bridge halts withdrawals", search.SearchOptions{Limit: 10})
	var hits []search.EventMatch
	for _, m := range res.Matches {
		if m.EventID == 420 || m.EventID == 421 {
			hits = append(hits, m)
		}
	}
	require.Len(t, hits, 1, "one hit for the story: %v", matchEventIDs(res.Matches))
	other := map[int64]int64{420: 421, 421: 420}[hits[0].EventID]
	require.Equal(t, []int64{other}, hits[0].AlsoReportedAs)
}

// TestSearchRefusesBadOptions: clear EINVALID errors, never a search.
func TestSearchRefusesBadOptions(t *testing.T) {
	t.Parallel()
	b := setupReading(t)
	since := b.now.Add(-30 * 24 * time.Hour)
	for _, c := range []struct {
		query string
		o     search.SearchOptions
		msg   string
	}{
		{"recently", search.SearchOptions{Since: since}, search.MsgQueryOnlyTimeWords},
		{"what happened last week", search.SearchOptions{Since: since}, search.MsgQueryOnlyTimeWords},
		{"hack", search.SearchOptions{Since: since, Sort: "newest"}, search.MsgSearchSort},
		{"hack", search.SearchOptions{Since: since, Surface: "feed"}, search.MsgSearchSurface},
		{"hack", search.SearchOptions{Since: since, Until: since.Add(-time.Hour)}, search.MsgSearchRange},
		{"hack in 2019", search.SearchOptions{Since: since}, search.MsgSearchQueryRange},
		{strings.Repeat("hack ", 2000), search.SearchOptions{Since: since}, search.MsgQueryTooLong},
	} {
		_, err := db.SearchEventsWith(b.ctx, b.store.Pool, c.query, c.o)
		require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err), "%.40q: %v", c.query, err)
		require.Equal(t, c.msg, cryptointel.ErrorMessage(err), "%.40q", c.query)
	}
}

// TestSearchTimeWordsAtTheEdges: time words cut short, or out of
// range, are words or windows, never a panic.
func TestSearchTimeWordsAtTheEdges(t *testing.T) {
	t.Parallel()
	b := setupReading(t)
	for _, q := range []string{"hack since", "hack before", "hack in", "hack last", "hack next", "hack past 0 days",
		"hack last 99999 days", "hack since since", "hack after today", "hack before yesterday", "hack until last week",
		"hack in may", "hack may 2025", "hack this quarter", "hack next 3 weeks", "exploit since the", "unlock in the last month"} {
		_, err := db.SearchEventsWith(b.ctx, b.store.Pool, q, search.SearchOptions{Since: b.now.Add(-30 * 24 * time.Hour), Now: b.now})
		if err != nil {
			require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err), "%q: %v", q, err)
		}
	}
}

// TestSearchTopicKeepsPhrasesWhole: the feeds' topic reads synonyms as
// search does, so "outage" does not find "goes live" or "go to
// investors" through its phrase "goes down", cut to "goes" by the
// stemmer.
func TestSearchTopicKeepsPhrasesWhole(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	b.insertEvents(t, []searchFixtureEvent{
		{id: 70, title: "Mainnet goes live", age: time.Hour, owner: entOptimism},
		{id: 71, title: "Tokens go to investors and contributors", age: time.Hour, owner: entEthena},
		{id: 72, title: "Network outage stalls validators", age: time.Hour, owner: entTerra},
		{id: 73, title: "Chain suffers downtime for an hour", age: time.Hour, owner: entTerra},
	})
	evs, err := db.ListEvents(b.ctx, b.store.Pool, db.EventFilter{Since: b.now.Add(-30 * 24 * time.Hour), Topic: "outage", Sort: db.SortRecency, Limit: 20})
	require.NoError(t, err)
	var ids []int64
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	require.Contains(t, ids, int64(72))
	require.Contains(t, ids, int64(73), "a synonym")
	require.NotContains(t, ids, int64(70))
	require.NotContains(t, ids, int64(71))
}

// TestSearchManyThesaurusWords: a query of 32 thesaurus words (the most a
// query may have) still finds the events that hold some of them.
func TestSearchManyThesaurusWords(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	q := "hack exploit drain breach stolen theft heist outage halt stall crash stuck approve clear pass accept " +
		"charge sue fine court permit vote ballot dao burn vest cliff bug flaw patch chain perp"
	require.Len(t, strings.Fields(q), 32)
	res := b.searchResult(t, q, 10)
	require.NotEmpty(t, res.Matches)
	require.Contains(t, matchEventIDs(res.Matches), int64(3), "the exploit")
}

// TestSearchThesaurusEveryEntryIsUsed: every line of the thesaurus is
// loaded and used: each member, typed as a query, is read as one term that
// searches its group (a synonym of its line, or every form of its word),
// and holds a word the stemmer keeps (a member of stop words only would
// never be searched).
func TestSearchThesaurusEveryEntryIsUsed(t *testing.T) {
	t.Parallel()
	groups, forms := search.ThesaurusForTest()
	require.GreaterOrEqual(t, len(groups)+len(forms), 400, "the vocabulary of the field")
	var members []string
	check := func(line []string, all bool) {
		for _, m := range line {
			members = append(members, m)
			terms, alts, err := search.ParseSearchQueryForTest(m)
			require.NoError(t, err, m)
			require.Equal(t, []string{strings.Join(strings.Fields(m), " ")}, terms, "%q is read as one term", m)
			got := map[string]bool{}
			for _, a := range alts[0] {
				got[strings.ToLower(a)] = true
			}
			found := 0
			for _, o := range line {
				if !strings.EqualFold(o, m) && got[strings.ToLower(o)] {
					found++
				}
			}
			if all {
				require.Equal(t, len(line)-1, found, "%q searches every form of its word: %v", m, alts[0])
			} else {
				require.Positive(t, found, "%q searches its group %v: %v", m, line, alts[0])
			}
		}
	}
	for _, g := range groups {
		check(g, false)
	}
	for _, f := range forms {
		check(f, true)
	}
	b := setupSearch(t)
	var empty []string
	rows, err := b.store.Pool.Query(b.ctx, `SELECT m FROM unnest($1::text[]) m WHERE numnode(phraseto_tsquery('english', m)) = 0`, members)
	require.NoError(t, err)
	for rows.Next() {
		var m string
		require.NoError(t, rows.Scan(&m))
		empty = append(empty, m)
	}
	require.NoError(t, rows.Err())
	require.Empty(t, empty, "members the stemmer keeps no word of")
}
