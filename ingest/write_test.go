package ingest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
)

// ingestFile is a small input with good and bad lines. Bad lines, by number:
// 4 unknown kind, 5 invalid JSON, 7 unknown owner id, 8 missing title,
// 9 owner whose only definition (13) is bad, 12 reference to unknown entity,
// 13 unknown field.
var ingestFile = strings.Join([]string{
	/* 1 */ `{"kind":"entity","id":101,"canonicalName":"Ethereum","displayName":"Ethereum","entityType":"project","status":"active","aliases":["ETH","Ether"]}`,
	/* 2 */ `{"kind":"entity","id":102,"canonicalName":"Ethereum Foundation","entityType":"foundation","aliases":["EF"]}`,
	/* 3 */ `{"kind":"relationship","sourceEntityId":102,"targetEntityId":101,"relationshipType":"FOUNDATION_OF","status":"active","searchExpand":true}`,
	/* 4 */ `{"kind":"token","id":1}`,
	/* 5 */ `{"kind":"event","id":5002,`,
	/* 6 */ `{"kind":"event","id":5001,"title":"Ethereum Foundation funds zk research","eventCategory":"funding","eventSubcategory":"grants","summary":"EF grants for zk.","bullets":["Grant round","zk focus"],"owners":[101],"participants":[102],"evidence":[{"id":9001,"content":"EF announces grants","url":"https://example.org/1","timestamp":"2026-11-20T10:00:00Z"},{"id":9002,"content":"Coverage of the zk grants","url":"https://example.org/2","timestamp":"2026-11-21T08:30:00Z"}],"significance":7.5,"contentType":"research"}`,
	/* 7 */ `{"kind":"event","id":5003,"title":"Ghost","eventCategory":"security","owners":[999],"evidence":[{"id":9003,"content":"x","timestamp":"2026-11-20T10:00:00Z"}]}`,
	/* 8 */ `{"kind":"event","id":5004,"eventCategory":"security","owners":[101],"evidence":[{"id":9004,"content":"x","timestamp":"2026-11-20T10:00:00Z"}]}`,
	/* 9 */ `{"kind":"event","id":5005,"title":"Orphan","eventCategory":"listing","owners":[104],"evidence":[{"id":9005,"content":"x","timestamp":"2026-11-20T10:00:00Z"}]}`,
	/* 10 */ ``,
	/* 11 */ `{"kind":"entity","id":103,"canonicalName":"Sólana","aliases":["SOL"]}`,
	/* 12 */ `{"kind":"reference","id":7001,"entityId":555,"url":"https://nowhere.example"}`,
	/* 13 */ `{"kind":"entity","id":104,"canonicalName":"Typo","alias":["T"]}`,
	/* 14 */ `{"kind":"event","id":5006,"title":"Solana lists on Ethereum bridge","eventCategory":"listing","eventSubcategory":"spot_listing","owners":[103,103],"participants":[101],"evidence":[{"id":9006,"content":"Bridge live","url":"https://example.org/6","timestamp":"2026-11-19T09:00:00Z"}]}`,
	/* 15 */ `{"kind":"reference","id":7002,"entityId":101,"referenceType":"website","title":"ethereum.org","url":"https://ethereum.org"}`,
	/* 16 */ `{"kind":"market","id":8001,"entityId":101,"question":"Will ETH close above 5k?","url":"https://markets.example/8001","outcomes":["Yes","No"],"probability":0.42,"volume":125000.5,"closesAt":"2026-12-31T00:00:00Z","subevents":[{"id":8101,"label":"ETF flows","type":"catalyst","normalizedTitle":"eth etf flows","injectedSummary":"Flows rising","posts":[{"id":8201,"content":"Inflows up","date":"2026-11-20T12:00:00Z"},{"id":8202,"content":"More inflows","date":"2026-11-21T12:00:00Z"}]}]}`,
}, "\n") + "\n"

type ingestBundle struct {
	store *db.DB
	ctx   context.Context
}

func setupIngest(t *testing.T) *ingestBundle {
	t.Helper()
	return &ingestBundle{store: dbtest.New(t), ctx: context.Background()}
}

func (b *ingestBundle) ingest(t *testing.T, input string, opts ingest.Options) *ingest.Summary {
	t.Helper()
	summary, err := ingest.Write(b.ctx, b.store, strings.NewReader(input), opts)
	require.NoError(t, err)
	return summary
}

func (b *ingestBundle) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

// snapshot captures every row of every ingest table, so a re-ingest can be
// shown to change nothing at all.
func (b *ingestBundle) snapshot(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range []string{"entities", "entity_names", "relationships", "entity_references", "events",
		"event_entities", "evidence", "markets", "market_subevents", "market_posts"} {
		var s *string
		require.NoError(t, b.store.Pool.QueryRow(b.ctx,
			"SELECT string_agg(t::text, E'\\n' ORDER BY t::text) FROM "+table+" t").Scan(&s))
		if s != nil {
			out[table] = *s
		}
	}
	return out
}

func TestIngest(t *testing.T) {
	t.Parallel()

	t.Run("ReportsBadLinesAndAppliesGoodOnes", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		s := b.ingest(t, ingestFile, ingest.Options{})

		require.Equal(t, 16, s.Lines)
		require.Equal(t, 7, s.FailedCount)
		lines := make([]int, 0, len(s.Failed))
		reasons := map[int]string{}
		for _, f := range s.Failed {
			lines = append(lines, f.Line)
			reasons[f.Line] = f.Reason
		}
		require.Equal(t, []int{4, 5, 7, 8, 9, 12, 13}, lines)
		require.Contains(t, reasons[4], `unknown kind "token"`)
		require.Contains(t, reasons[5], "invalid JSON")
		require.Contains(t, reasons[7], "unknown entity id 999 (owners)")
		require.Contains(t, reasons[8], `"title" is required`)
		require.Contains(t, reasons[9], "unknown entity id 104 (owners)")
		require.Contains(t, reasons[12], "unknown entity id 555 (entityId)")
		require.Contains(t, reasons[13], `unknown field "alias"`)

		require.Equal(t, map[string]int{"entity": 3, "relationship": 1, "event": 2, "reference": 1, "market": 1}, s.Applied)
		require.Zero(t, s.Unchanged)
		require.Equal(t, 2, s.EventsChanged)

		require.Equal(t, 3, b.count(t, "entities"))
		require.Equal(t, 2, b.count(t, "events"))
		require.Equal(t, 3, b.count(t, "evidence"))
		require.Equal(t, 1, b.count(t, "relationships"))
		require.Equal(t, 1, b.count(t, "entity_references"))
		require.Equal(t, 1, b.count(t, "markets"))
		require.Equal(t, 1, b.count(t, "market_subevents"))
		require.Equal(t, 2, b.count(t, "market_posts"))
		// No dangling rows from the bad lines.
		var ghosts int
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT count(*) FROM events WHERE id IN (5003, 5004, 5005)").Scan(&ghosts))
		require.Zero(t, ghosts)
	})

	t.Run("ReingestChangesNothing", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		first := b.ingest(t, ingestFile, ingest.Options{BatchSize: 3})
		before := b.snapshot(t)

		second := b.ingest(t, ingestFile, ingest.Options{BatchSize: 3})
		require.Equal(t, first.FailedCount, second.FailedCount)
		require.Equal(t, first.Failed, second.Failed)
		require.Equal(t, map[string]int{"entity": 0, "relationship": 0, "event": 0, "reference": 0, "market": 0}, second.Applied)
		require.Equal(t, 8, second.Unchanged)
		require.Zero(t, second.EventsChanged)
		// Every row identical: same ingest_seq, same updated_at, same counts.
		require.Equal(t, before, b.snapshot(t))

		// A third run with another batch size is just as quiet.
		third := b.ingest(t, ingestFile, ingest.Options{BatchSize: 1})
		require.Equal(t, 8, third.Unchanged)
		require.Equal(t, before, b.snapshot(t))
	})

	t.Run("DerivedTables", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		b.ingest(t, ingestFile, ingest.Options{})

		// entity_names with normalized values (case and accents folded).
		type nameRow struct{ Kind, Value, Norm string }
		rows, err := b.store.Pool.Query(b.ctx, "SELECT kind, value, norm FROM entity_names WHERE entity_id = 103 ORDER BY kind, value")
		require.NoError(t, err)
		names, err := pgx.CollectRows(rows, pgx.RowToStructByPos[nameRow])
		require.NoError(t, err)
		require.Equal(t, []nameRow{
			{"alias", "SOL", "sol"},
			{"canonical_name", "Sólana", "solana"},
			{"display_name", "Sólana", "solana"},
		}, names)
		require.Equal(t, 4, countWhere(t, b, "entity_names", "entity_id = 101")) // canonical, display, ETH, Ether

		// The event row: latest evidence time, evidence text, search vector.
		var latest time.Time
		var evidenceText string
		var seq int64
		var matches bool
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, `
			SELECT latest_evidence_at, evidence_text, ingest_seq, search @@ plainto_tsquery('english', 'coverage')
			FROM events WHERE id = 5001`).Scan(&latest, &evidenceText, &seq, &matches))
		require.True(t, latest.Equal(time.Date(2026, 11, 21, 8, 30, 0, 0, time.UTC)))
		require.Equal(t, "EF announces grants\nCoverage of the zk grants", evidenceText)
		require.Positive(t, seq)
		require.True(t, matches)

		// event_entities with the event's fields copied; duplicate owner
		// collapsed.
		type linkRow struct {
			EventID, EntityID int64
			Role              string
			Latest            time.Time
			Significance      *float64
			ContentType       *string
			Category          string
		}
		rows, err = b.store.Pool.Query(b.ctx, `
			SELECT event_id, entity_id, role, latest_evidence_at, significance, content_type, category
			FROM event_entities ORDER BY event_id, role, entity_id`)
		require.NoError(t, err)
		links, err := pgx.CollectRows(rows, pgx.RowToStructByPos[linkRow])
		require.NoError(t, err)
		require.Len(t, links, 4)
		require.Equal(t, int64(101), links[0].EntityID)
		require.Equal(t, "owner", links[0].Role)
		require.True(t, links[0].Latest.Equal(latest))
		require.Equal(t, 7.5, *links[0].Significance)
		require.Equal(t, "research", *links[0].ContentType)
		require.Equal(t, "funding", links[0].Category)
		require.Equal(t, linkRow{5001, 102, "participant", links[1].Latest, links[1].Significance, links[1].ContentType, "funding"}, links[1])
		require.Equal(t, int64(103), links[2].EntityID)
		require.Equal(t, "owner", links[2].Role)
		require.Nil(t, links[2].Significance)
		require.Nil(t, links[2].ContentType)
		require.Equal(t, "participant", links[3].Role)

		// event_count: 101 owns 5001 and takes part in 5006.
		require.Equal(t, map[int64]int64{101: 2, 102: 1, 103: 1}, eventCounts(t, b))
	})

	t.Run("ChangedEventGetsNewSeqAndReplacesChildren", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		b.ingest(t, ingestFile, ingest.Options{})
		var seq5001, seq5006 int64
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT ingest_seq FROM events WHERE id = 5001").Scan(&seq5001))
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT ingest_seq FROM events WHERE id = 5006").Scan(&seq5006))

		listener, err := pgx.Connect(b.ctx, b.store.Pool.Config().ConnConfig.ConnString())
		require.NoError(t, err)
		defer listener.Close(b.ctx)
		_, err = listener.Exec(b.ctx, "LISTEN "+db.PollerChannel)
		require.NoError(t, err)

		// 5001 loses evidence 9002 and participant 102; 5006 gains
		// participant 102, a role change only (its own row is unchanged).
		changed := strings.Join([]string{
			`{"kind":"event","id":5001,"title":"Ethereum Foundation funds zk research","eventCategory":"funding","eventSubcategory":"grants","summary":"EF grants for zk.","bullets":["Grant round","zk focus"],"owners":[101],"evidence":[{"id":9001,"content":"EF announces grants","url":"https://example.org/1","timestamp":"2026-11-20T10:00:00Z"}],"significance":7.5,"contentType":"research"}`,
			`{"kind":"event","id":5006,"title":"Solana lists on Ethereum bridge","eventCategory":"listing","eventSubcategory":"spot_listing","owners":[103],"participants":[101,102],"evidence":[{"id":9006,"content":"Bridge live","url":"https://example.org/6","timestamp":"2026-11-19T09:00:00Z"}]}`,
		}, "\n")
		s := b.ingest(t, changed, ingest.Options{})
		require.Zero(t, s.FailedCount)
		require.Equal(t, 2, s.Applied["event"])
		require.Equal(t, 2, s.EventsChanged)

		var newSeq5001, newSeq5006 int64
		var latest time.Time
		var text string
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT ingest_seq, latest_evidence_at, evidence_text FROM events WHERE id = 5001").Scan(&newSeq5001, &latest, &text))
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT ingest_seq FROM events WHERE id = 5006").Scan(&newSeq5006))
		require.Greater(t, newSeq5001, seq5006)
		require.Greater(t, newSeq5006, seq5006)
		require.True(t, latest.Equal(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)))
		require.Equal(t, "EF announces grants", text)
		require.Zero(t, countWhere(t, b, "evidence", "id = 9002"))
		require.Zero(t, countWhere(t, b, "event_entities", "event_id = 5001 AND entity_id = 102"))
		require.Equal(t, 1, countWhere(t, b, "event_entities", "event_id = 5006 AND entity_id = 102"))
		require.Equal(t, map[int64]int64{101: 2, 102: 1, 103: 1}, eventCounts(t, b))

		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		n, err := listener.WaitForNotification(ctx)
		require.NoError(t, err)
		require.Equal(t, db.PollerChannel, n.Channel)
		require.Equal(t, max(newSeq5001, newSeq5006), mustInt(t, n.Payload))
	})

	t.Run("ForwardReferenceIsBad", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		input := strings.Join([]string{
			`{"kind":"event","id":10,"title":"early","eventCategory":"x","owners":[1],"evidence":[{"id":20,"content":"c","timestamp":"2026-11-20T10:00:00Z"}]}`,
			`{"kind":"entity","id":1,"canonicalName":"Late"}`,
		}, "\n")
		s := b.ingest(t, input, ingest.Options{})
		require.Equal(t, []ingest.Failure{{Line: 1, Kind: "event", Reason: "unknown entity id 1 (owners)"}}, s.Failed)
		require.Zero(t, b.count(t, "events"))
		require.Equal(t, 1, b.count(t, "entities"))
		// Once the entity is stored, the same line is good.
		s = b.ingest(t, input, ingest.Options{})
		require.Zero(t, s.FailedCount)
		require.Equal(t, 1, s.Applied["event"])
		require.Equal(t, 1, s.Unchanged)
	})

	t.Run("SameRowTwiceAppliesInOrder", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		input := strings.Join([]string{
			`{"kind":"entity","id":1,"canonicalName":"First"}`,
			`{"kind":"entity","id":1,"canonicalName":"Second"}`,
			`{"kind":"event","id":10,"title":"a","eventCategory":"x","owners":[1],"evidence":[{"id":20,"content":"c","timestamp":"2026-11-20T10:00:00Z"}]}`,
			`{"kind":"event","id":11,"title":"b","eventCategory":"x","owners":[1],"evidence":[{"id":20,"content":"c","timestamp":"2026-11-20T10:00:00Z"}]}`,
		}, "\n")
		s := b.ingest(t, input, ingest.Options{})
		require.Equal(t, 2, s.Applied["entity"])
		var name string
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT canonical_name FROM entities WHERE id = 1").Scan(&name))
		require.Equal(t, "Second", name)
		require.Equal(t, 1, countWhere(t, b, "entity_names", "entity_id = 1 AND kind = 'canonical_name'"))
		// Evidence ids are global: event 11 cannot take event 10's post.
		require.Equal(t, []ingest.Failure{{Line: 4, Kind: "event", Reason: "evidence id 20 belongs to event 10"}}, s.Failed)
		require.Equal(t, 1, countWhere(t, b, "evidence", "id = 20 AND event_id = 10"))
		require.Zero(t, countWhere(t, b, "events", "id = 11"))

		// Re-ingesting event 10 without the post, then event 11 with it,
		// moves it, and event 10's derived data follows its new line.
		move := strings.Join([]string{
			`{"kind":"event","id":10,"title":"a","eventCategory":"x","owners":[1],"evidence":[{"id":21,"content":"d","timestamp":"2026-11-19T10:00:00Z"}]}`,
			`{"kind":"event","id":11,"title":"b","eventCategory":"x","owners":[1],"evidence":[{"id":20,"content":"c","timestamp":"2026-11-20T10:00:00Z"}]}`,
		}, "\n")
		for _, batchSize := range []int{1, 500} {
			s = b.ingest(t, move, ingest.Options{BatchSize: batchSize})
			require.Zero(t, s.FailedCount, s.Failed)
		}
		require.Equal(t, 1, countWhere(t, b, "evidence", "id = 20 AND event_id = 11"))
		require.Equal(t, 1, countWhere(t, b, "events", "id = 10 AND evidence_text = 'd'"))
	})

	t.Run("MarketChildrenStayWithTheirMarket", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		input := strings.Join([]string{
			`{"kind":"entity","id":1,"canonicalName":"One"}`,
			`{"kind":"market","id":1,"entityId":1,"question":"q1","subevents":[{"id":5,"posts":[{"id":7,"content":"p","date":"2026-11-20T10:00:00Z"}]}]}`,
			`{"kind":"market","id":2,"entityId":1,"question":"q2","subevents":[{"id":5}]}`,
			`{"kind":"market","id":3,"entityId":1,"question":"q3","subevents":[{"id":6,"posts":[{"id":7,"content":"p","date":"2026-11-20T10:00:00Z"}]}]}`,
			`{"kind":"market","id":1,"entityId":1,"question":"q1","subevents":[{"id":5,"posts":[{"id":7,"content":"p2","date":"2026-11-20T10:00:00Z"}]},{"id":8}]}`,
		}, "\n")
		s := b.ingest(t, input, ingest.Options{})
		require.Equal(t, []ingest.Failure{
			{Line: 3, Kind: "market", Reason: "subevent id 5 belongs to market 1"},
			{Line: 4, Kind: "market", Reason: "post id 7 belongs to market 1"},
		}, s.Failed)
		require.Equal(t, 2, s.Applied["market"])
		require.Equal(t, 1, countWhere(t, b, "market_posts", "id = 7 AND content = 'p2'"))
		require.Equal(t, 2, countWhere(t, b, "market_subevents", "market_id = 1"))
	})

	t.Run("DatabaseRejectionIsolatedToItsLine", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		input := strings.Join([]string{
			`{"kind":"entity","id":1,"canonicalName":"Good"}`,
			`{"kind":"entity","id":2,"canonicalName":"Nul \u0000 byte"}`,
			`{"kind":"entity","id":3,"canonicalName":"Also good"}`,
		}, "\n")
		s := b.ingest(t, input, ingest.Options{})
		require.Equal(t, 1, s.FailedCount)
		require.Equal(t, 2, s.Failed[0].Line)
		require.Contains(t, s.Failed[0].Reason, "rejected by the database")
		require.Equal(t, 2, s.Applied["entity"])
		require.Equal(t, 2, b.count(t, "entities"))
	})

	t.Run("LongLine", func(t *testing.T) {
		t.Parallel()
		b := setupIngest(t)
		input := `{"kind":"entity","id":1,"canonicalName":"` + strings.Repeat("x", 300) + `"}` + "\n" +
			`{"kind":"entity","id":2,"canonicalName":"Short"}`
		s := b.ingest(t, input, ingest.Options{MaxLineBytes: 100})
		require.Equal(t, 2, s.Lines)
		require.Equal(t, []ingest.Failure{{Line: 1, Reason: "line longer than 100 bytes"}}, s.Failed)
		require.Equal(t, 1, s.Applied["entity"])
	})
}

func countWhere(t *testing.T, b *ingestBundle, table, where string) int {
	t.Helper()
	var n int
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT count(*) FROM "+table+" WHERE "+where).Scan(&n))
	return n
}

func eventCounts(t *testing.T, b *ingestBundle) map[int64]int64 {
	t.Helper()
	rows, err := b.store.Pool.Query(b.ctx, "SELECT id, event_count FROM entities")
	require.NoError(t, err)
	out := map[int64]int64{}
	var id, n int64
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil })
	require.NoError(t, err)
	return out
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	for _, r := range s {
		require.True(t, r >= '0' && r <= '9', s)
		n = n*10 + int64(r-'0')
	}
	return n
}

// TestIngestLeavesNoPendingIndexEntries checks that what ingest writes is
// in the GIN indexes that searches and name lookups probe, and not in a
// pending list that every probe reads in full until a vacuum merges it
// (migrations 028 and 029): gin_clean_pending_list reports how many
// pending pages it merged, and finds none on any of them.
func TestIngestLeavesNoPendingIndexEntries(t *testing.T) {
	t.Parallel()
	b := setupIngest(t)
	s := b.ingest(t, ingestFile, ingest.Options{})
	require.Equal(t, 2, s.EventsChanged)
	rows, err := b.store.Pool.Query(b.ctx, `
		SELECT c.relname, gin_clean_pending_list(c.oid::regclass)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid IN ('events'::regclass, 'entity_names'::regclass) AND a.amname = 'gin'
		ORDER BY c.relname`)
	require.NoError(t, err)
	pending := map[string]int64{}
	var name string
	var pages int64
	_, err = pgx.ForEachRow(rows, []any{&name, &pages}, func() error { pending[name] = pages; return nil })
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"entity_names_trgm_idx": 0, "events_search_day_idx": 0, "events_search_idx": 0}, pending)
}
