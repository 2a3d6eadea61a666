package tests

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/search"
)

// worldEvent is what the cases read of an event of the demo world.
type worldEvent struct {
	title, category, subcategory string
	at                           time.Time
	entities                     []int64
}

func readWorldEvents(t *testing.T, store *db.DB, ids []int64) map[int64]worldEvent {
	t.Helper()
	rows, err := store.Pool.Query(context.Background(), `SELECT e.id, e.title, e.category, e.subcategory, e.latest_evidence_at,
		(SELECT array_agg(entity_id ORDER BY entity_id) FROM event_entities WHERE event_id = e.id)
		FROM events e WHERE e.id = ANY($1)`, ids)
	require.NoError(t, err)
	out := map[int64]worldEvent{}
	for rows.Next() {
		var id int64
		var ev worldEvent
		require.NoError(t, rows.Scan(&id, &ev.title, &ev.category, &ev.subcategory, &ev.at, &ev.entities))
		out[id] = ev
	}
	require.NoError(t, rows.Err())
	return out
}

func matchIDs(ms []search.EventMatch) []int64 {
	var out []int64
	for _, m := range ms {
		out = append(out, m.EventID)
	}
	return out
}

// TestSearchCasesOnTheDemoWorld replays the cases a research desk met on
// the demo world `make run` serves (the evaluation data): `recently
// hacked`, `token unlocks next week`, `Solana outage` newest first, the
// feeds' `topic=outage`, and a story five sources told, shown once.
func TestSearchCasesOnTheDemoWorld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	loadEvalFixture(t, store)
	ids := entityIDsByName(t, store)
	since := evalNow.Add(-30 * 24 * time.Hour)
	find := func(t *testing.T, q string, o search.SearchOptions) *search.SearchResult {
		t.Helper()
		o.Since, o.SinceDefault, o.Now = since, true, evalNow
		if o.Limit == 0 {
			o.Limit = 10
		}
		res, err := db.SearchEventsWith(ctx, store.Pool, q, o)
		require.NoError(t, err, q)
		require.NotEmpty(t, res.Matches, q)
		return res
	}
	hackWords := regexp.MustCompile(`(?i)hack|drain|steal|stole|breach|exploit|attack|compromised|siphon`)

	t.Run("RecentlyHacked", func(t *testing.T) {
		for _, q := range []string{"recently hacked", "which exchanges were hacked recently"} {
			res := find(t, q, search.SearchOptions{})
			require.Empty(t, res.UnmatchedTerms, q)
			require.Contains(t, res.Dropped, search.SearchDropped{Text: "recently", Reason: search.DroppedTime}, q)
			evs := readWorldEvents(t, store, matchIDs(res.Matches))
			for i, m := range res.Matches[:5] {
				ev := evs[m.EventID]
				require.Equal(t, "security", ev.category, "%q hit %d: %q", q, i, ev.title)
				require.Regexp(t, hackWords, ev.title, "%q hit %d", q, i)
				require.True(t, ev.at.After(evalNow.Add(-7*24*time.Hour)), "%q hit %d is %v old: %q", q, i, evalNow.Sub(ev.at), ev.title)
			}
		}
	})

	t.Run("TokenUnlocksNextWeek", func(t *testing.T) {
		res := find(t, "token unlocks next week", search.SearchOptions{})
		require.Empty(t, res.UnmatchedTerms)
		evs := readWorldEvents(t, store, matchIDs(res.Matches))
		// evalNow is Sunday 2026-11-01: next week is November 2 to 8.
		nextWeek := regexp.MustCompile(`\bNovember [2-8]\b`)
		for i, m := range res.Matches[:3] {
			ev := evs[m.EventID]
			require.Equal(t, "token_unlock", ev.subcategory, "hit %d: %q", i, ev.title)
			require.Regexp(t, nextWeek, ev.title, "hit %d names a day of next week", i)
		}
		for _, m := range res.Matches {
			require.True(t, evs[m.EventID].at.After(evalNow.Add(-15*24*time.Hour)), "a report of the last two weeks: %q", evs[m.EventID].title)
		}
	})

	t.Run("SolanaOutageNewestFirst", func(t *testing.T) {
		res := find(t, "Solana outage", search.SearchOptions{Sort: search.SearchSortRecency, NoCollapse: true})
		require.GreaterOrEqual(t, len(res.Matches), 5)
		evs := readWorldEvents(t, store, matchIDs(res.Matches))
		for i, m := range res.Matches {
			ev := evs[m.EventID]
			require.Contains(t, ev.entities, ids["Solana"], "hit %d: %q", i, ev.title)
			require.Contains(t, []string{"outage", "outage_resolved"}, ev.subcategory, "hit %d: %q", i, ev.title)
			if i > 0 {
				require.False(t, ev.at.After(evs[res.Matches[i-1].EventID].at), "newest first: %q", ev.title)
			}
		}
	})

	t.Run("TopicOutage", func(t *testing.T) {
		evs, err := db.ListEvents(ctx, store.Pool, db.EventFilter{Since: since, Topic: "outage", Sort: db.SortRecency, Limit: 100})
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		for _, e := range evs {
			require.Contains(t, []string{"outage", "outage_resolved"}, e.Subcategory, "topic=outage matched %q", e.Title)
		}
	})

	t.Run("FiveSourcesOneHit", func(t *testing.T) {
		// A hack five sources reported, each in its own words.
		var owner string
		var group []int64
		require.NoError(t, store.Pool.QueryRow(ctx, `
			SELECT n.canonical_name, array_agg(e.id ORDER BY e.id) FROM events e
			JOIN event_entities o ON o.event_id = e.id AND o.role = 'owner' JOIN entities n ON n.id = o.entity_id
			WHERE e.subcategory = 'exchange_hack' AND NOT EXISTS (SELECT 1 FROM event_entities p WHERE p.event_id = e.id AND p.role = 'participant')
			GROUP BY n.canonical_name, date_trunc('day', e.latest_evidence_at - interval '12 hours')
			HAVING count(*) = 5 AND count(DISTINCT e.title) = 5 AND max(e.latest_evidence_at) - min(e.latest_evidence_at) < interval '30 hours'
			ORDER BY max(e.latest_evidence_at) DESC LIMIT 1`).Scan(&owner, &group))
		require.Len(t, group, 5)
		q := owner + " hack"
		res := find(t, q, search.SearchOptions{})
		var hit *search.EventMatch
		for i, m := range res.Matches {
			if slices.Contains(group, m.EventID) {
				require.Nil(t, hit, "%q: the story shows twice: %v", q, matchIDs(res.Matches))
				hit = &res.Matches[i]
			}
		}
		require.NotNil(t, hit, "%q: %v", q, matchIDs(res.Matches))
		var others []int64
		for _, id := range group {
			if id != hit.EventID {
				others = append(others, id)
			}
		}
		require.ElementsMatch(t, others, hit.AlsoReportedAs, "%q", q)

		all := find(t, q, search.SearchOptions{NoCollapse: true})
		n := 0
		for _, m := range all.Matches {
			if slices.Contains(group, m.EventID) {
				n++
				require.Empty(t, m.AlsoReportedAs)
			}
		}
		require.Equal(t, 5, n, "collapse off lists every report")
	})
}
