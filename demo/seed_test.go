package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/ingest"
)

var seedNow = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

func setupSeed(t *testing.T) *db.DB {
	t.Helper()
	store := dbtest.New(t)
	store.Now = func() time.Time { return seedNow }
	return store
}

// seedDump renders every seeded row (without the created_at/updated_at
// defaults) so two seeded databases can be compared.
func seedDump(t *testing.T, store *db.DB) string {
	t.Helper()
	var out bytes.Buffer
	for _, q := range []string{
		"SELECT id, canonical_name, display_name, entity_type, status, aliases, event_count FROM entities ORDER BY id",
		"SELECT entity_id, kind, value, norm FROM entity_names ORDER BY 1, 2, 3",
		"SELECT source_entity_id, target_entity_id, relationship_type, status, search_expand FROM relationships ORDER BY 1, 2, 3",
		"SELECT id, entity_id, reference_type, title, url FROM entity_references ORDER BY id",
		"SELECT id, title, category, subcategory, summary, bullets, significance, content_type, latest_evidence_at, evidence_text, ingest_seq, search FROM events ORDER BY id",
		"SELECT * FROM evidence ORDER BY id",
		"SELECT * FROM event_entities ORDER BY event_id, role, entity_id",
		"SELECT id, entity_id, question, url, outcomes, probability, volume, closes_at FROM markets ORDER BY id",
		"SELECT * FROM market_subevents ORDER BY id",
		"SELECT * FROM market_posts ORDER BY id",
	} {
		var s *string
		require.NoError(t, store.Pool.QueryRow(context.Background(),
			"SELECT string_agg(t::text, E'\\n') FROM ("+q+") t").Scan(&s))
		if s != nil {
			out.WriteString(*s)
		}
		out.WriteString("\n--\n")
	}
	return out.String()
}

func TestSeedDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const events = 3000

	t.Run("DeterministicAndIdempotent", func(t *testing.T) {
		t.Parallel()
		a, b := setupSeed(t), setupSeed(t)
		var progress bytes.Buffer
		resA, err := demo.Seed(ctx, a, demo.Options{Events: events, ChunkSize: 700, Progress: &progress})
		require.NoError(t, err)
		resB, err := demo.Seed(ctx, b, demo.Options{Events: events})
		require.NoError(t, err)
		require.Equal(t, resA, resB)
		dumpA := seedDump(t, a)
		require.Equal(t, dumpA, seedDump(t, b))
		require.Contains(t, progress.String(), fmt.Sprintf("seed: %d/%d events", events, events))

		// A second seed does nothing; --force reseeds the same data.
		again, err := demo.Seed(ctx, a, demo.Options{Events: events})
		require.NoError(t, err)
		require.True(t, again.Skipped)
		forced, err := demo.Seed(ctx, a, demo.Options{Events: events, Force: true})
		require.NoError(t, err)
		require.Equal(t, resA, forced)
		require.Equal(t, dumpA, seedDump(t, a))

		// Another seed value gives other data.
		c := setupSeed(t)
		_, err = demo.Seed(ctx, c, demo.Options{Events: events, Seed: 7})
		require.NoError(t, err)
		require.NotEqual(t, dumpA, seedDump(t, c))
	})

	t.Run("SizesAndShape", func(t *testing.T) {
		t.Parallel()
		store := setupSeed(t)
		res, err := demo.Seed(ctx, store, demo.Options{Events: events})
		require.NoError(t, err)
		require.False(t, res.Skipped)
		require.Equal(t, 520, res.Entities)
		require.Equal(t, events, res.Events)
		require.InDelta(t, 0.30, float64(res.Signals)/events, 0.04)
		require.Positive(t, res.Markets)
		require.Positive(t, res.Subevents)
		require.Positive(t, res.MarketPosts)
		require.Positive(t, res.References)

		q := func(sql string, args ...any) int {
			t.Helper()
			var n int
			require.NoError(t, store.Pool.QueryRow(ctx, sql, args...).Scan(&n))
			return n
		}
		require.Equal(t, 520, q("SELECT count(*) FROM entities"))
		require.Equal(t, events, q("SELECT count(*) FROM events"))
		require.Equal(t, res.Signals, q("SELECT count(*) FROM events WHERE significance BETWEEN 1 AND 10"))
		require.Equal(t, res.Signals, q("SELECT count(*) FROM events WHERE significance IS NOT NULL"))

		// Every entity type, every category, every content type.
		require.Equal(t, 5, q("SELECT count(DISTINCT entity_type) FROM entities"))
		require.GreaterOrEqual(t, q("SELECT count(DISTINCT category) FROM events"), 10)
		require.GreaterOrEqual(t, q("SELECT count(DISTINCT subcategory) FROM events"), 25)
		require.Equal(t, 4, q("SELECT count(DISTINCT content_type) FROM events"))
		require.Equal(t, 1, q("SELECT count(*) FROM entities WHERE entity_type = 'government_institution' AND 'SEC' = ANY(aliases)"))

		// The ingest page's example ids; FOUNDATION_OF expands search.
		require.Equal(t, 1, q("SELECT count(*) FROM entities WHERE id = 101 AND canonical_name = 'Ethereum'"))
		require.Equal(t, 1, q("SELECT count(*) FROM relationships WHERE source_entity_id = 102 AND target_entity_id = 101 AND relationship_type = 'FOUNDATION_OF' AND search_expand"))
		for _, typ := range []string{"FOUNDATION_OF", "LISTED_ON", "INVESTED_IN", "REGULATES", "PARTNER_OF", "BUILT_ON"} {
			require.Positive(t, q("SELECT count(*) FROM relationships WHERE relationship_type = $1", typ), typ)
		}
		require.Zero(t, q("SELECT count(*) FROM relationships WHERE search_expand AND relationship_type <> 'FOUNDATION_OF'"))

		// Deliberately shared tickers resolve to two entities each.
		require.Equal(t, 2, q("SELECT count(DISTINCT entity_id) FROM entity_names WHERE norm = 'atom'"))
		require.Equal(t, 2, q("SELECT count(DISTINCT entity_id) FROM entity_names WHERE norm = 'nova'"))

		// 1–3 evidence posts per event, all in the last 30 days, the newest
		// being the event's latest_evidence_at.
		require.Zero(t, q(`SELECT count(*) FROM (SELECT e.id FROM events e LEFT JOIN evidence v ON v.event_id = e.id
			GROUP BY e.id HAVING count(v.id) NOT BETWEEN 1 AND 3 OR max(v.ts) <> e.latest_evidence_at) x`))
		require.Zero(t, q("SELECT count(*) FROM evidence WHERE ts > $1 OR ts < $2", seedNow, seedNow.Add(-30*24*time.Hour)))
		require.Greater(t, q("SELECT count(DISTINCT date_trunc('day', latest_evidence_at)) FROM events"), 28)
		require.Zero(t, q("SELECT count(*) FROM events WHERE search IS NULL OR ingest_seq <> 0"))

		// Roles copy their event's fields; every event has an owner;
		// event_count matches the roles.
		require.Zero(t, q(`SELECT count(*) FROM event_entities ee JOIN events e ON e.id = ee.event_id
			WHERE (ee.latest_evidence_at, ee.significance, ee.content_type, ee.category)
				IS DISTINCT FROM (e.latest_evidence_at, e.significance, e.content_type, e.category)`))
		require.Zero(t, q("SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM event_entities ee WHERE ee.event_id = e.id AND ee.role = 'owner')"))
		require.Zero(t, q(`SELECT count(*) FROM entities n
			WHERE n.event_count <> (SELECT count(DISTINCT event_id) FROM event_entities ee WHERE ee.entity_id = n.id)`))
		require.Positive(t, q("SELECT count(*) FROM event_entities WHERE role = 'participant'"))
	})

	t.Run("CoherentWorld", func(t *testing.T) {
		t.Parallel()
		store := setupSeed(t)
		_, err := demo.Seed(ctx, store, demo.Options{Events: events})
		require.NoError(t, err)
		q := func(sql string, args ...any) int {
			t.Helper()
			var n int
			require.NoError(t, store.Pool.QueryRow(ctx, sql, args...).Scan(&n), sql)
			return n
		}
		// pairs counts the events of the subcategories whose owner and
		// first participant are not related as the relationship says.
		const pairs = `SELECT count(*) FROM events e
			JOIN event_entities o ON o.event_id = e.id AND o.role = 'owner'
			JOIN event_entities p ON p.event_id = e.id AND p.role = 'participant' AND p.position = 0
			WHERE e.subcategory = ANY($1) AND NOT EXISTS (SELECT 1 FROM relationships r
				WHERE r.relationship_type = $2 AND r.source_entity_id = %s AND r.target_entity_id = %s)`
		for _, c := range []struct {
			subs     []string
			rel      string
			src, dst string
		}{
			// Exchanges list the tokens they list; funds back the projects
			// they invested in; regulators act on whom they regulate.
			{[]string{"spot_listing", "futures_listing", "delisting"}, "LISTED_ON", "o.entity_id", "p.entity_id"},
			{[]string{"seed_round", "series_a"}, "INVESTED_IN", "p.entity_id", "o.entity_id"},
			{[]string{"strategic_investment"}, "INVESTED_IN", "o.entity_id", "p.entity_id"},
			{[]string{"enforcement_action", "lawsuit", "license_granted", "settlement", "probe"}, "REGULATES", "p.entity_id", "o.entity_id"},
			{[]string{"collaboration"}, "PARTNER_OF", "o.entity_id", "p.entity_id"},
			{[]string{"integration"}, "BUILT_ON", "p.entity_id", "o.entity_id"},
			{[]string{"foundation_governance"}, "FOUNDATION_OF", "o.entity_id", "p.entity_id"},
		} {
			require.Positive(t, q("SELECT count(*) FROM events WHERE subcategory = ANY($1)", c.subs), c.subs)
			require.Zero(t, q(fmt.Sprintf(pairs, c.src, c.dst), c.subs, c.rel), "%v without %s", c.subs, c.rel)
		}
		// Foundations grant to applications built on their chain.
		require.Zero(t, q(`SELECT count(*) FROM events e
			JOIN event_entities o ON o.event_id = e.id AND o.role = 'owner'
			JOIN event_entities p ON p.event_id = e.id AND p.role = 'participant'
			WHERE e.subcategory = 'grants' AND NOT EXISTS (SELECT 1 FROM relationships f JOIN relationships b
				ON b.target_entity_id = f.target_entity_id AND b.relationship_type = 'BUILT_ON'
				WHERE f.relationship_type = 'FOUNDATION_OF' AND f.source_entity_id = o.entity_id AND b.source_entity_id = p.entity_id)`))
		// Nobody invests in Bitcoin or acquires Ethereum; only stablecoins
		// depeg; only exchanges have their hot wallets drained; owners
		// have the type their stories need.
		require.Zero(t, q(`SELECT count(*) FROM relationships r JOIN entities n ON n.id = r.target_entity_id
			WHERE r.relationship_type = 'INVESTED_IN' AND n.canonical_name IN ('Bitcoin', 'Ethereum', 'Tether', 'Dogecoin')`))
		require.Zero(t, q(`SELECT count(*) FROM event_entities ee JOIN entities n ON n.id = ee.entity_id JOIN events e ON e.id = ee.event_id
			WHERE e.subcategory = 'acquisition' AND ee.role = 'participant' AND n.canonical_name IN ('Ethereum', 'Bitcoin', 'Solana')`))
		require.Zero(t, q(`SELECT count(*) FROM event_entities ee JOIN entities n ON n.id = ee.entity_id JOIN events e ON e.id = ee.event_id
			WHERE e.subcategory = 'depeg' AND ee.role = 'owner' AND n.canonical_name NOT IN ('Tether', 'USD Coin', 'Ethena', 'Frax Finance')`))
		for sub, typ := range map[string]string{"exchange_hack": "exchange", "exploit": "project", "grants": "foundation",
			"strategic_investment": "fund", "outage": "", "lawsuit": ""} {
			if typ == "" {
				continue
			}
			require.Zero(t, q(`SELECT count(*) FROM event_entities ee JOIN entities n ON n.id = ee.entity_id JOIN events e ON e.id = ee.event_id
				WHERE e.subcategory = $1 AND ee.role = 'owner' AND n.entity_type <> $2`, sub, typ), sub)
		}
		require.Zero(t, q(`SELECT count(*) FROM event_entities ee JOIN entities n ON n.id = ee.entity_id JOIN events e ON e.id = ee.event_id
			WHERE e.subcategory IN ('lawsuit', 'enforcement_action') AND ee.role = 'participant' AND n.entity_type <> 'government_institution'`))

		// One happening, several sources: reports of the same owners and
		// subcategory within a day, in other words; evidence posts of one
		// event tell it in other words than its title.
		require.Greater(t, q(`SELECT count(*) FROM events a JOIN events b ON b.id > a.id AND b.subcategory = a.subcategory
			AND b.latest_evidence_at - a.latest_evidence_at < interval '30 hours' AND b.title <> a.title
			JOIN event_entities oa ON oa.event_id = a.id AND oa.role = 'owner'
			JOIN event_entities ob ON ob.event_id = b.id AND ob.role = 'owner' AND ob.entity_id = oa.entity_id
			WHERE a.subcategory = 'exploit'`), 50)
		require.Greater(t, q(`SELECT count(*) FROM events e WHERE EXISTS (SELECT 1 FROM evidence v
			WHERE v.event_id = e.id AND position(e.title IN v.content) = 0)`), events/4)
		// Storylines: a hack is followed days later by its post-mortem; a
		// proposal by its vote.
		for _, c := range [][2]string{{"exploit", "post_mortem"}, {"proposal", "vote_result"}, {"lawsuit", "hearing"}, {"token_unlock", "unlock_completed"}} {
			require.Greater(t, q(`SELECT count(DISTINCT b.id) FROM events a JOIN events b ON b.subcategory = $2
				AND b.latest_evidence_at - a.latest_evidence_at > interval '1 day'
				JOIN event_entities oa ON oa.event_id = a.id AND oa.role = 'owner'
				JOIN event_entities ob ON ob.event_id = b.id AND ob.role = 'owner' AND ob.entity_id = oa.entity_id
				WHERE a.subcategory = $1`, c[0], c[1]), 3, c)
		}
		// Scheduled events: unlocks, upgrades and votes announced with a
		// date ahead of now.
		for _, sub := range []string{"token_unlock", "upgrade", "proposal"} {
			require.Positive(t, q(`SELECT count(*) FROM events WHERE subcategory = $1 AND latest_evidence_at > $2
				AND (title || ' ' || array_to_string(bullets, ' ')) ~ $3`, sub, seedNow.Add(-7*24*time.Hour),
				seedNow.AddDate(0, 0, 2).Format("January")), sub)
		}
	})

	t.Run("SeededEventsMatchIngest", func(t *testing.T) {
		t.Parallel()
		store := setupSeed(t)
		_, err := demo.Seed(ctx, store, demo.Options{Events: 300})
		require.NoError(t, err)
		before := seedDump(t, store)

		// Write seeded events back as ingest lines: ingest must find every
		// one unchanged, so seed and ingest derive the same data.
		var lines bytes.Buffer
		var evs []*ingest.Event
		rows, err := store.Pool.Query(ctx, `
			SELECT e.id, e.title, e.category, e.subcategory, e.summary, e.bullets, e.significance, e.content_type,
				(SELECT array_agg(entity_id ORDER BY position) FROM event_entities WHERE event_id = e.id AND role = 'owner'),
				coalesce((SELECT array_agg(entity_id ORDER BY position) FROM event_entities WHERE event_id = e.id AND role = 'participant'), '{}')
			FROM events e ORDER BY e.id`)
		require.NoError(t, err)
		for rows.Next() {
			ev := &ingest.Event{Kind: ingest.KindEvent}
			require.NoError(t, rows.Scan(&ev.ID, &ev.Title, &ev.EventCategory, &ev.EventSubcategory, &ev.Summary, &ev.Bullets,
				&ev.Significance, &ev.ContentType, &ev.Owners, &ev.Participants))
			evs = append(evs, ev)
		}
		require.NoError(t, rows.Err())
		for _, ev := range evs {
			rows, err := store.Pool.Query(ctx, "SELECT id, content, url, ts FROM evidence WHERE event_id = $1 ORDER BY id", ev.ID)
			require.NoError(t, err)
			for rows.Next() {
				var p ingest.Evidence
				require.NoError(t, rows.Scan(&p.ID, &p.Content, &p.URL, &p.Timestamp))
				ev.Evidence = append(ev.Evidence, p)
			}
			require.NoError(t, rows.Err())
			b, err := json.Marshal(ev)
			require.NoError(t, err)
			lines.Write(b)
			lines.WriteByte('\n')
		}
		summary, err := ingest.Write(ctx, store, &lines, ingest.Options{})
		require.NoError(t, err)
		require.Zero(t, summary.FailedCount, summary.Failed)
		require.Equal(t, 300, summary.Unchanged)
		require.Equal(t, before, seedDump(t, store))
	})
}
