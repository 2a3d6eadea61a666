package tests

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel/ingest"
	"github.com/stretchr/testify/require"
)

// walkFeed follows next_cursor from path until it is null, calling
// between(page) after every page, and returns the ids in order with the
// (latestEvidenceTimestamp, id) key of each.
func walkFeed(t *testing.T, s *restServer, path string, between func(page int)) (ids []int, keys []string) {
	t.Helper()
	cursor := ""
	for page := 0; ; page++ {
		require.Less(t, page, 500, "walk does not end")
		p := path
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		r := s.get(t, p)
		require.Equal(t, 200, r.Status, "GET %s: %s", p, r.Body)
		body := r.JSON(t)
		for _, it := range jlist(t, body["data"]) {
			ev := jobj(t, it)
			id := jint(t, ev["id"])
			ids = append(ids, id)
			keys = append(keys, fmt.Sprintf("%s/%08d", jtime(t, ev["latestEvidenceTimestamp"]).UTC().Format(time.RFC3339Nano), id))
		}
		next, _ := body["next_cursor"].(string)
		if between != nil {
			between(page)
		}
		if next == "" {
			require.Nil(t, body["next_cursor"], "next_cursor is null on the last page")
			return ids, keys
		}
		cursor = next
	}
}

// newEventLine renders a fresh event n, newer than the whole fixture.
func newEventLine(n int) string {
	s := 1.5
	return eventLine(fixtureEvent{
		ID: int64(7000 + n), At: restNow.Add(-9*time.Minute + time.Duration(n)*time.Second),
		Owner: entSolana, Category: "listing", Significance: &s,
	})
}

// requireWalk checks a walk: strictly ascending keys (so no duplicates),
// every event that existed before the walk, and the arrived ones as given.
func requireWalk(t *testing.T, ids []int, keys []string, before []int) map[int]bool {
	t.Helper()
	seen := map[int]bool{}
	for i, id := range ids {
		require.False(t, seen[id], "event %d returned twice", id)
		seen[id] = true
		if i > 0 {
			require.Less(t, keys[i-1], keys[i], "pages are in ascending keyset order")
		}
	}
	for _, id := range before {
		require.True(t, seen[id], "event %d was skipped", id)
	}
	return seen
}

// preexisting returns the fixture events at or after since.
func preexisting(since time.Time, signalOnly bool) []int {
	var out []int
	for _, e := range fixtureEventList() {
		if !e.At.Before(since) && (!signalOnly || e.Significance != nil) {
			out = append(out, int(e.ID))
		}
	}
	return out
}

// TestRESTCursorWalkWhileIngesting walks /v1/radar/all page by page while
// new events are ingested between pages: every event present before the
// walk appears exactly once, every event ingested before the last page is
// picked up, and next_cursor ends null.
func TestRESTCursorWalkWhileIngesting(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	since := restNow.Add(-7*24*time.Hour + time.Hour)
	before := preexisting(since, false)
	var arrived []int
	ids, keys := walkFeed(t, s, "/v1/radar/all?limit=3&since="+url.QueryEscape(since.Format(time.RFC3339)), func(page int) {
		if page < 12 {
			ingestLines(t, s.store, []string{newEventLine(page)})
			arrived = append(arrived, 7000+page)
		}
	})
	seen := requireWalk(t, ids, keys, before)
	for _, id := range arrived {
		require.True(t, seen[id], "event %d ingested during the walk was missed", id)
	}
	require.Len(t, ids, len(before)+len(arrived))
}

// TestRESTCursorWalkConcurrentIngest walks /v1/signal/all while another
// goroutine ingests events as fast as it can: no duplicates, nothing that
// existed before is skipped, and the arrived events seen form a prefix of
// the arrival order (an event is never skipped while a later one is
// returned).
func TestRESTCursorWalkConcurrentIngest(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	since := restNow.Add(-6 * 24 * time.Hour)
	before := preexisting(since, true)

	const n = 40
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n && ctx.Err() == nil; i++ {
			if _, err := ingest.Write(ctx, s.store, strings.NewReader(newEventLine(i)+"\n"), dbIngestDefaults); err != nil {
				return
			}
		}
	}()
	ids, keys := walkFeed(t, s, "/v1/signal/all?limit=2&since="+url.QueryEscape(since.Format(time.RFC3339)), nil)
	cancel()
	wg.Wait()

	seen := requireWalk(t, ids, keys, before)
	gap := false
	for i := 0; i < n; i++ {
		if !seen[7000+i] {
			gap = true
		} else {
			require.False(t, gap, "event %d returned although an earlier arrival was skipped", 7000+i)
		}
	}
}

// TestRESTCursorErrors: a tampered cursor, and cursors reused with another
// since, route or feed, are 400s with a message; offset is ignored with a
// cursor.
func TestRESTCursorErrors(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	since := url.QueryEscape(ts(-6 * 24 * time.Hour))
	first := s.get(t, "/v1/radar/all?limit=5&since="+since).JSON(t)
	cursor := first["next_cursor"].(string)
	second := s.get(t, "/v1/radar/all?limit=5&since="+since+"&cursor="+url.QueryEscape(cursor))
	require.Equal(t, 200, second.Status)
	withOffset := s.get(t, "/v1/radar/all?limit=5&offset=7&since="+since+"&cursor="+url.QueryEscape(cursor))
	require.Equal(t, 200, withOffset.Status)
	require.Equal(t, idsOf(t, second.JSON(t)["data"]), idsOf(t, withOffset.JSON(t)["data"]), "offset is ignored with a cursor")
	require.Equal(t, 0, jint(t, withOffset.JSON(t)["offset"]))

	research := s.get(t, "/v1/entities/101/research?limit=1").JSON(t)
	researchCursor := research["next_cursor"].(string)

	flip := func(c string) string {
		b := []byte(c)
		i := len(b) / 2
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	for name, path := range map[string]string{
		"tampered":         "/v1/radar/all?limit=5&since=" + since + "&cursor=" + url.QueryEscape(flip(cursor)),
		"garbage":          "/v1/radar/all?limit=5&since=" + since + "&cursor=not-a-cursor!!",
		"truncated":        "/v1/radar/all?limit=5&since=" + since + "&cursor=" + url.QueryEscape(cursor[:len(cursor)/2]),
		"different since":  "/v1/radar/all?limit=5&since=" + url.QueryEscape(ts(-5*24*time.Hour)) + "&cursor=" + url.QueryEscape(cursor),
		"different route":  "/v1/signal/all?limit=5&since=" + since + "&cursor=" + url.QueryEscape(cursor),
		"replay feed":      "/v1/replay/global?limit=5&since=" + since + "&cursor=" + url.QueryEscape(cursor),
		"research on feed": "/v1/radar/all?limit=5&since=" + since + "&cursor=" + url.QueryEscape(researchCursor),
		"feed on media":    "/v1/entities/101/media?cursor=" + url.QueryEscape(researchCursor),
		"other entity":     "/v1/entities/103/research?cursor=" + url.QueryEscape(researchCursor),
	} {
		r := s.get(t, path)
		require.Equal(t, 400, r.Status, "%s: %s", name, r.Body)
		require.Contains(t, strings.ToLower(r.Error(t)), "cursor", name)
	}
}

// TestRESTCursorWalksOtherRoutes walks research, media, timeline and
// replay to their end: each id once, next_cursor null at the end.
func TestRESTCursorWalksOtherRoutes(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	for path, want := range map[string]int{
		"/v1/entities/101/research?limit=1":                                        3,
		"/v1/entities/103/media?limit=1":                                           2,
		"/v1/timeline/byOrganizationId?id=101&limit=4":                             17,
		"/v1/replay/global?limit=7&since=" + url.QueryEscape(ts(-29*24*time.Hour)): 42,
	} {
		ids, _ := walkFeed(t, s, path, nil)
		seen := map[int]bool{}
		for _, id := range ids {
			require.False(t, seen[id], "%s: %d twice", path, id)
			seen[id] = true
		}
		require.Len(t, ids, want, path)
	}
}
