package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
)

// TestV1StreamResumes subscribes to GET /v1/stream, ingests events and
// receives them in the /v1 shape with cursors as ids; disconnects, ingests
// more, reconnects with Last-Event-ID and receives exactly the missed ones.
// While idle the stream gets heartbeat comments.
func TestV1StreamResumes(t *testing.T) {
	t.Parallel()
	s := startStreamServer(t, "", app.Config{StreamHeartbeat: 100 * time.Millisecond})
	ingestEvents(t, s.app.DB, streamFixtureEntities...)
	key := s.key(t, cryptointel.PlanPro)

	c, status, body := openSSE(t, s.base, "/v1/stream", key)
	require.Equal(t, 200, status, "%s", body)
	open := c.next(t, 10*time.Second)
	require.Equal(t, "2000", open.Retry)
	require.NotEmpty(t, open.ID, "the stream opens with its starting position")

	first := ingestEvents(t, s.app.DB, streamEvent("funding", nil), streamEvent("listing", sig(0.7)), streamEvent("funding", nil))
	evs, last := c.events(t, 3)
	require.Equal(t, first, eventIDs(t, evs))
	for _, ev := range evs {
		require.Equal(t, 1, checkLegacy(t, ev), "legacy fields beside the canonical ones")
		requireKeys(t, ev, "id", "title", "eventCategory", "eventSubcategory", "summary", "bullets", "owners", "participants",
			"evidence", "latestEvidenceTimestamp", "significance", "globalSummary", "bulletSummary", "eventOwner",
			"eventParticipants", "posts", "latestPostTimestamp", "signal")
	}
	c.close()

	missed := ingestEvents(t, s.app.DB, streamEvent("funding", nil), streamEvent("partnership", nil))
	c2, status, body := openSSE(t, s.base, "/v1/stream", key, "Last-Event-ID", last)
	require.Equal(t, 200, status, "%s", body)
	require.Equal(t, last, c2.next(t, 10*time.Second).ID, "the stream restarts at the cursor")
	evs, _ = c2.events(t, 2)
	require.Equal(t, missed, eventIDs(t, evs))
	c2.quiet(t, 300*time.Millisecond)
	c2.mu.Lock()
	heartbeats := c2.comments
	c2.mu.Unlock()
	require.GreaterOrEqual(t, heartbeats, 2, "an idle stream gets heartbeats")
	more := ingestEvents(t, s.app.DB, streamEvent("funding", nil))
	evs, _ = c2.events(t, 1)
	require.Equal(t, more, eventIDs(t, evs), "and still its events")
}
