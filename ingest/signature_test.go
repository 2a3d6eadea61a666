package ingest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestLinksCarryTheirSignatureFromTheUpsert: ingest writes its links'
// word signatures (migration 031) in its own upsert, so the links'
// per-row trigger (migration 032: only for a link inserted without one)
// never runs for them, and the signatures are the ones the trigger and
// migration 031's search_signature give.
func TestLinksCarryTheirSignatureFromTheUpsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.New(t)
	input := strings.Join([]string{
		`{"kind":"entity","id":1,"canonicalName":"Wormhole"}`,
		`{"kind":"entity","id":2,"canonicalName":"Jump Crypto"}`,
		`{"kind":"event","id":11,"title":"Wormhole bridge drained by attacker","eventCategory":"security","summary":"An exploit of the bridge's guardian check.","owners":[1],"participants":[2],"evidence":[{"id":111,"content":"Bridge exploit confirmed","url":"https://example.org/11","timestamp":"2026-11-20T10:00:00Z"}]}`,
		`{"kind":"event","id":12,"title":"Jump Crypto refills the bridge","eventCategory":"funding","owners":[2],"evidence":[{"id":121,"content":"Jump restores funds","url":"https://example.org/12","timestamp":"2026-11-21T10:00:00Z"}]}`,
	}, "\n") + "\n"
	sum, err := Write(ctx, store, strings.NewReader(input), Options{})
	require.NoError(t, err)
	require.Empty(t, sum.Failed)

	// differing counts the links whose signature is not their event's
	// words', and signed those that carry one.
	const check = `SELECT count(*) FILTER (WHERE (ee.sig_a, ee.sig_b) IS DISTINCT FROM (s.a, s.b)),
		count(*) FILTER (WHERE ee.sig_a IS NOT NULL)
		FROM event_entities ee JOIN events e ON e.id = ee.event_id CROSS JOIN LATERAL search_signature(e.search) s`
	var differing, signed int
	require.NoError(t, store.Pool.QueryRow(ctx, check).Scan(&differing, &signed))
	require.Zero(t, differing)
	require.Equal(t, 3, signed)

	// The upsert itself, on new links and on one that exists: no signature
	// trigger runs (EXPLAIN ANALYZE lists every trigger that ran, the
	// foreign keys' among them), and the new links carry their signature.
	tx, err := store.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	links := []eventEntityRow{
		eventEntityRowOf(&cryptointel.EventEntity{EventID: 12, EntityID: 1, Role: cryptointel.RoleParticipant, LatestEvidenceAt: at, Category: "funding"}),
		eventEntityRowOf(&cryptointel.EventEntity{EventID: 11, EntityID: 2, Role: cryptointel.RoleOwner, Position: 1, LatestEvidenceAt: at, Category: "security"}),
		eventEntityRowOf(&cryptointel.EventEntity{EventID: 12, EntityID: 2, Role: cryptointel.RoleOwner, LatestEvidenceAt: at, Category: "funding"}),
	}
	param, err := jsonParam(links)
	require.NoError(t, err)
	rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) "+eventEntityUpsert, param)
	require.NoError(t, err)
	var plan strings.Builder
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		plan.WriteString(line + "\n")
	}
	require.NoError(t, rows.Err())
	require.Contains(t, plan.String(), "Trigger for constraint event_entities_event_id_fkey", "EXPLAIN lists the triggers that ran")
	require.NotContains(t, plan.String(), "event_entities_signature", "a signature trigger ran for links the upsert signed:\n%s", plan.String())
	require.NoError(t, tx.QueryRow(ctx, check).Scan(&differing, &signed))
	require.Zero(t, differing)
	require.Equal(t, 5, signed)
}
