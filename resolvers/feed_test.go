package resolvers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph/scalar"
	"github.com/cryptointel/cryptointel/resolvers"
)

const feedQuery = `query($since: Time!, $after: String, $first: Int, $category: String, $surface: Surface, $feed: String) {
  feed(since: $since, after: $after, first: $first, category: $category, surface: $surface, feed: $feed) {
    nodes { id latestEvidenceTimestamp }
    nextCursor limit offset since
  }
}`

// Walking the bulk feed with cursors while events are ingested gives every
// event once, in ascending (latestEvidenceTimestamp, id) order, including
// the ones that arrive during the walk.
func TestFeedCursorWalkWithConcurrentInserts(t *testing.T) {
	t.Parallel()
	b := setup(t, 10) // 100 events
	since := scalar.FormatTime(b.now.Add(-24 * time.Hour))
	seen := map[float64]bool{}
	var order []string
	var after any
	inserted := 0
	for page := 0; ; page++ {
		require.Less(t, page, 20, "walk does not end")
		data := b.mustRun(t, feedQuery, map[string]any{"since": since, "after": after, "first": 25})
		feed := dig(data, "feed").(map[string]any)
		require.EqualValues(t, 25, feed["limit"])
		for _, n := range feed["nodes"].([]any) {
			id := dig(n, "id").(float64)
			require.False(t, seen[id], "duplicate event %v", id)
			seen[id] = true
			order = append(order, fmt.Sprintf("%s/%010.0f", dig(n, "latestEvidenceTimestamp"), id))
		}
		if feed["nextCursor"] == nil {
			break
		}
		after = feed["nextCursor"]
		// Ingest while walking: two new events ahead of the walk.
		if page < 3 {
			var evs []*cryptointel.Event
			for k := 0; k < 2; k++ {
				id := int64(900000 + page*10 + k)
				evs = append(evs, &cryptointel.Event{ID: id, Title: "late", Category: "listing", Bullets: []string{},
					LatestEvidenceAt: b.now.Add(time.Duration(page*10+k+1) * time.Second), CreatedAt: b.now, UpdatedAt: b.now})
			}
			insertEvents(t, b.store, evs, func(*cryptointel.Event) ([]int64, []int64) { return []int64{hubID}, nil })
			inserted += len(evs)
		}
	}
	require.Len(t, seen, 100+inserted)
	for i := 1; i < len(order); i++ {
		require.Less(t, order[i-1], order[i], "feed must ascend")
	}
}

func TestFeedCursorErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, 6)
	since := scalar.FormatTime(b.now.Add(-24 * time.Hour))
	data := b.mustRun(t, feedQuery, map[string]any{"since": since, "first": 5})
	cursor := dig(data, "feed", "nextCursor").(string)
	require.NotEmpty(t, cursor)

	// The genuine cursor continues.
	b.mustRun(t, feedQuery, map[string]any{"since": since, "first": 5, "after": cursor})

	tampered := []byte(cursor)
	mid := len(tampered) / 2
	if tampered[mid] == 'A' {
		tampered[mid] = 'B'
	} else {
		tampered[mid] = 'A'
	}
	for _, bad := range []string{string(tampered), "not-a-cursor", cursor + "x", ""[0:0] + "AAAA"} {
		_, errs := b.run(t, context.Background(), feedQuery, map[string]any{"since": since, "first": 5, "after": bad})
		require.Len(t, errs, 1, bad)
		require.Equal(t, "invalid cursor", errs[0].Message)
		require.Equal(t, "invalid", errs[0].Code)
	}

	mismatch := "cursor does not match this query (different route, since or filters)"
	for name, vars := range map[string]map[string]any{
		"since":    {"since": scalar.FormatTime(b.now.Add(-48 * time.Hour))},
		"category": {"since": since, "category": "listing"},
		"surface":  {"since": since, "surface": "SIGNAL"},
		"feed":     {"since": since, "feed": "replay"},
	} {
		vars["after"] = cursor
		_, errs := b.run(t, context.Background(), feedQuery, vars)
		require.Len(t, errs, 1, name)
		require.Equal(t, mismatch, errs[0].Message, name)
		require.Equal(t, "invalid", errs[0].Code, name)
	}

	// A cursor signed with another secret is invalid.
	other := &testBundle{store: b.store, now: b.now, exec: resolvers.NewExecutor(resolvers.Config{Store: b.store, CursorSecret: "another-secret"})}
	_, errs := other.run(t, context.Background(), feedQuery, map[string]any{"since": since, "after": cursor})
	require.Len(t, errs, 1)
	require.Equal(t, "invalid cursor", errs[0].Message)
}

func TestSinceWindows(t *testing.T) {
	t.Parallel()
	b := setup(t, 3)
	old8 := scalar.FormatTime(b.now.Add(-8 * 24 * time.Hour))
	old31 := scalar.FormatTime(b.now.Add(-31 * 24 * time.Hour))
	ok20 := scalar.FormatTime(b.now.Add(-20 * 24 * time.Hour))
	cases := []struct {
		query string
		vars  map[string]any
		msg   string
	}{
		{feedQuery, map[string]any{"since": old8}, "since must be within the last 7 days"},
		{feedQuery, map[string]any{"since": old31, "feed": "replay"}, "since must be within the last 30 days"},
		{`query($s: Time) { entity(id: 101) { research(since: $s) { limit } } }`, map[string]any{"s": old31}, "since must be within the last 30 days"},
		{`query($s: Time) { entity(id: 101) { media(since: $s) { limit } } }`, map[string]any{"s": old31}, "since must be within the last 30 days"},
		{`query($s: Time) { events(since: $s) { limit } }`, map[string]any{"s": old31}, "since must be within the last 30 days"},
		{`{ events(window: "2d") { limit } }`, nil, "window must be one of 24h, 7d, 30d"},
		{`{ feed(since: "2026-13-45", first: 1) { limit } }`, nil, `invalid timestamp "2026-13-45": use an ISO 8601 date-time such as 2026-11-20T10:00:00Z`},
	}
	for _, c := range cases {
		_, errs := b.run(t, context.Background(), c.query, c.vars)
		require.Len(t, errs, 1, c.msg)
		require.Equal(t, c.msg, errs[0].Message)
		require.Equal(t, "invalid", errs[0].Code)
	}
	// Within the windows is fine.
	b.mustRun(t, feedQuery, map[string]any{"since": ok20, "feed": "replay"})
	b.mustRun(t, `query($s: Time) { entity(id: 101) { research(since: $s) { limit } } }`, map[string]any{"s": ok20})
}

// Research and media walk newest first with cursors; nextCursor is null on
// the last page.
func TestResearchAndMediaWalk(t *testing.T) {
	t.Parallel()
	b := setup(t, 25)
	for field, want := range map[string][]string{"research": {"research"}, "media": {"media"}} {
		q := fmt.Sprintf(`query($after: String) { entity(id: 101) { %s(first: 2, after: $after) {
		  nodes { id contentType sourceType eventSurface latestEvidenceTimestamp } nextCursor limit since } } }`, field)
		var after any
		seen := map[float64]bool{}
		last := "~"
		pages := 0
		for {
			data := b.mustRun(t, q, map[string]any{"after": after})
			conn := dig(data, "entity", field).(map[string]any)
			pages++
			for _, n := range conn["nodes"].([]any) {
				ev := n.(map[string]any)
				require.Contains(t, want, ev["contentType"])
				require.Equal(t, "classified_event", ev["sourceType"])
				require.Contains(t, []any{"radar", "signal"}, ev["eventSurface"])
				key := fmt.Sprintf("%s/%010.0f", ev["latestEvidenceTimestamp"], ev["id"])
				require.Less(t, key, last, "newest first")
				last = key
				require.False(t, seen[ev["id"].(float64)])
				seen[ev["id"].(float64)] = true
			}
			if conn["nextCursor"] == nil {
				break
			}
			after = conn["nextCursor"]
		}
		require.Len(t, seen, 5, field) // j%5 == 1 (research) or 2 (media) of 25
		require.Equal(t, 3, pages, field)
	}
	// A research cursor does not continue media.
	data := b.mustRun(t, `{ entity(id: 101) { research(first: 2) { nextCursor } } }`, nil)
	_, errs := b.run(t, context.Background(), `query($a: String) { entity(id: 101) { media(first: 2, after: $a) { limit } } }`,
		map[string]any{"a": dig(data, "entity", "research", "nextCursor")})
	require.Len(t, errs, 1)
	require.True(t, strings.HasPrefix(errs[0].Message, "cursor does not match"))
}
