package jobs

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/wire"
)

// exportFixture is a small, fully known data set: entities and events with
// owners, participants and evidence, inserted through Bun.
type exportFixture struct {
	base      time.Time
	entities  []cryptointel.Entity
	events    []wire.Event // with owners, participants and evidence
	accountID int64
	apiKeyID  int64
}

var fixtureCategories = []string{"partnership", "funding", "listing"}

// seedExportFixture inserts n events over 5 entities. Pairs of events share
// a timestamp so the keyset's id tie-breaker is exercised; text holds
// commas, quotes, newlines and non-ASCII characters.
func seedExportFixture(t testing.TB, store *db.DB, n int) *exportFixture {
	t.Helper()
	ctx := context.Background()
	fx := &exportFixture{base: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	for i := 1; i <= 5; i++ {
		fx.entities = append(fx.entities, cryptointel.Entity{
			ID: int64(i), CanonicalName: fmt.Sprintf("entity-%d", i), DisplayName: fmt.Sprintf("Entity %d, Ünïcode", i),
			EntityType: "project", Status: "active", Aliases: []string{fmt.Sprintf("E%d", i), fmt.Sprintf("ent %d", i)},
		})
	}
	_, err := store.Bun.NewInsert().Model(&fx.entities).Exec(ctx)
	require.NoError(t, err)

	var events []cryptointel.Event
	var links []cryptointel.EventEntity
	var evidence []cryptointel.Evidence
	for i := 0; i < n; i++ {
		id := int64(1000 + i)
		ts := fx.base.Add(time.Duration(i/2) * time.Hour).Add(123 * time.Millisecond)
		cat := fixtureCategories[i%3]
		var sig *float64
		if i%2 == 0 {
			v := 0.5 + float64(i)/1000
			sig = &v
		}
		ev := cryptointel.Event{
			ID: id, Title: fmt.Sprintf("Event %d: \"quoted\", comma", i), Category: cat, Subcategory: "sub" + strconv.Itoa(i%2),
			Summary: fmt.Sprintf("Summary %d\nsecond line, with comma", i), Bullets: []string{fmt.Sprintf("first %d", i), "second ünïcode"},
			Significance: sig, LatestEvidenceAt: ts,
		}
		events = append(events, ev)
		xe := wire.Event{
			ID: id, Title: ev.Title, EventCategory: cat, EventSubcategory: ev.Subcategory, Summary: ev.Summary,
			Bullets: ev.Bullets, Significance: sig, LatestEvidenceTimestamp: ts,
		}
		owner := fx.entities[i%5]
		links = append(links, cryptointel.EventEntity{EventID: id, EntityID: owner.ID, Role: cryptointel.RoleOwner, LatestEvidenceAt: ts, Significance: sig, Category: cat})
		xe.Owners = append(xe.Owners, wire.EntityRef{ID: owner.ID, Label: owner.DisplayName, Type: owner.EntityType, Aliases: owner.Aliases})
		if i%4 == 0 {
			p := fx.entities[(i+1)%5]
			links = append(links, cryptointel.EventEntity{EventID: id, EntityID: p.ID, Role: cryptointel.RoleParticipant, LatestEvidenceAt: ts, Significance: sig, Category: cat})
			xe.Participants = append(xe.Participants, wire.EntityRef{ID: p.ID, Label: p.DisplayName, Type: p.EntityType, Aliases: p.Aliases})
		}
		if i%3 != 2 {
			for k := 1; k >= 0; k-- { // newest first, as exported
				e := cryptointel.Evidence{ID: id*10 + int64(k), EventID: id, Content: fmt.Sprintf("post %d/%d", i, k),
					URL: fmt.Sprintf("https://example.com/p/%d/%d", i, k), TS: ts.Add(-time.Duration(2-k) * time.Minute)}
				evidence = append(evidence, e)
				xe.Evidence = append(xe.Evidence, wire.Evidence{ID: e.ID, Content: e.Content, URL: e.URL, Timestamp: e.TS})
			}
		}
		fx.events = append(fx.events, xe)
	}
	if len(events) > 0 {
		_, err = store.Bun.NewInsert().Model(&events).Exec(ctx)
		require.NoError(t, err)
		_, err = store.Bun.NewInsert().Model(&links).Exec(ctx)
		require.NoError(t, err)
		if len(evidence) > 0 {
			_, err = store.Bun.NewInsert().Model(&evidence).Exec(ctx)
			require.NoError(t, err)
		}
	}
	_, key, err := db.CreateAPIKey(ctx, store.Bun, fmt.Sprintf("acct-%d", time.Now().UnixNano()), cryptointel.PlanEnterprise)
	require.NoError(t, err)
	fx.accountID, fx.apiKeyID = key.AccountID, key.ID
	return fx
}

// expected returns the fixture events an export with scope and params must
// contain, in export order, computed in Go independently of the SQL.
func (fx *exportFixture) expected(scope string, p exportjob.Params) []wire.Event {
	var out []wire.Event
	for _, ev := range fx.events {
		if p.Since != nil && ev.LatestEvidenceTimestamp.Before(p.Since.Time) {
			continue
		}
		if p.Until != nil && !ev.LatestEvidenceTimestamp.Before(p.Until.Time) {
			continue
		}
		if p.Category != nil && ev.EventCategory != *p.Category {
			continue
		}
		if scope == exportjob.ScopeSignalHistory && ev.Significance == nil {
			continue
		}
		if scope == exportjob.ScopeTimelineByOrg {
			linked := false
			for _, r := range append(slices.Clone(ev.Owners), ev.Participants...) {
				linked = linked || slices.Contains(p.OrganizationIDs, r.ID)
			}
			if !linked {
				continue
			}
		}
		if !p.IncludeEvidence {
			ev.Evidence = nil
		}
		out = append(out, ev)
	}
	slices.SortStableFunc(out, func(a, b wire.Event) int {
		if c := a.LatestEvidenceTimestamp.Compare(b.LatestEvidenceTimestamp); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	return out
}

// createFixtureJob inserts an export job row (without a River job).
func (fx *exportFixture) createJob(t testing.TB, store *db.DB, scope, format string, p exportjob.Params) *exportjob.Job {
	t.Helper()
	if p.OrganizationIDs == nil {
		p.OrganizationIDs = []int64{}
	}
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	job := &exportjob.Job{AccountID: fx.accountID, APIKeyID: fx.apiKeyID, Scope: scope, Format: format, RequestedParams: raw}
	require.NoError(t, exportstore.CreateExportJob(context.Background(), store, job, exportstore.ExportBounds{}, func(context.Context, pgx.Tx) error { return nil }))
	return job
}

// jsonlEvent decodes a line of a jsonl event export, legacy aliases
// included.
type jsonlEvent struct {
	ID                      int64           `json:"id"`
	Title                   string          `json:"title"`
	EventCategory           string          `json:"eventCategory"`
	EventSubcategory        string          `json:"eventSubcategory"`
	Summary                 string          `json:"summary"`
	Bullets                 []string        `json:"bullets"`
	Owners                  []jsonlRef      `json:"owners"`
	Participants            []jsonlRef      `json:"participants"`
	Evidence                []jsonlEvidence `json:"evidence"`
	LatestEvidenceTimestamp exportjob.Time  `json:"latestEvidenceTimestamp"`
	Significance            *float64        `json:"significance"`

	GlobalSummary       string          `json:"globalSummary"`
	BulletSummary       []string        `json:"bulletSummary"`
	EventOwner          []jsonlRef      `json:"eventOwner"`
	EventParticipants   []jsonlRef      `json:"eventParticipants"`
	Posts               []jsonlEvidence `json:"posts"`
	LatestPostTimestamp exportjob.Time  `json:"latestPostTimestamp"`
	Signal              *float64        `json:"signal"`
}

type jsonlRef struct {
	ID      int64    `json:"id"`
	Label   string   `json:"label"`
	Type    string   `json:"type"`
	Aliases []string `json:"aliases"`
}

type jsonlEvidence struct {
	ID        int64          `json:"id"`
	Content   string         `json:"content"`
	URL       string         `json:"url"`
	Timestamp exportjob.Time `json:"timestamp"`
}

// decodeEvents parses an export file of events in format back into
// wire.Event values (CSV loses evidence content and entity types and
// aliases, which are zeroed in want by normalizeForCSV).
func decodeEvents(t testing.TB, format string, b []byte) []wire.Event {
	t.Helper()
	var out []wire.Event
	switch format {
	case exportjob.FormatJSONL:
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var line jsonlEvent
			err := dec.Decode(&line)
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			// Legacy aliases equal their canonical fields.
			require.Equal(t, line.Summary, line.GlobalSummary)
			require.Equal(t, line.Bullets, line.BulletSummary)
			require.Equal(t, line.Owners, line.EventOwner)
			require.Equal(t, line.Participants, line.EventParticipants)
			require.Equal(t, line.Evidence, line.Posts)
			require.Equal(t, line.LatestEvidenceTimestamp, line.LatestPostTimestamp)
			require.Equal(t, line.Significance, line.Signal)
			ev := wire.Event{ID: line.ID, Title: line.Title, EventCategory: line.EventCategory, EventSubcategory: line.EventSubcategory,
				Summary: line.Summary, Bullets: line.Bullets, Significance: line.Significance, LatestEvidenceTimestamp: line.LatestEvidenceTimestamp.Time}
			for _, r := range line.Owners {
				ev.Owners = append(ev.Owners, wire.EntityRef{ID: r.ID, Label: r.Label, Type: r.Type, Aliases: r.Aliases})
			}
			for _, r := range line.Participants {
				ev.Participants = append(ev.Participants, wire.EntityRef{ID: r.ID, Label: r.Label, Type: r.Type, Aliases: r.Aliases})
			}
			for _, x := range line.Evidence {
				ev.Evidence = append(ev.Evidence, wire.Evidence{ID: x.ID, Content: x.Content, URL: x.URL, Timestamp: x.Timestamp.Time})
			}
			out = append(out, ev)
		}
	case exportjob.FormatCSV:
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		require.NoError(t, err)
		require.NotEmpty(t, recs)
		require.Equal(t, wire.EventCSVHeader, recs[0])
		for _, r := range recs[1:] {
			id, err := strconv.ParseInt(r[0], 10, 64)
			require.NoError(t, err)
			ts, err := time.Parse(time.RFC3339Nano, r[9])
			require.NoError(t, err)
			ev := wire.Event{ID: id, Title: r[1], EventCategory: r[2], EventSubcategory: r[3], Summary: r[4], LatestEvidenceTimestamp: ts}
			if r[5] != "" {
				ev.Bullets = strings.Split(r[5], " | ")
			}
			ev.Owners, ev.Participants = splitRefs(t, r[6]), splitRefs(t, r[7])
			for _, part := range splitNonEmpty(r[8], "|") {
				idStr, u, _ := strings.Cut(part, ":")
				eid, err := strconv.ParseInt(idStr, 10, 64)
				require.NoError(t, err)
				ev.Evidence = append(ev.Evidence, wire.Evidence{ID: eid, URL: u})
			}
			if r[10] != "" {
				v, err := strconv.ParseFloat(r[10], 64)
				require.NoError(t, err)
				ev.Significance = &v
			}
			out = append(out, ev)
		}
	case exportjob.FormatParquet:
		rows, err := parquet.Read[wire.Event](bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		for _, row := range rows {
			ev := wire.Event{ID: row.ID, Title: row.Title, EventCategory: row.EventCategory, EventSubcategory: row.EventSubcategory,
				Summary: row.Summary, Bullets: row.Bullets, Significance: row.Significance, LatestEvidenceTimestamp: row.LatestEvidenceTimestamp.UTC()}
			for _, r := range row.Owners {
				ev.Owners = append(ev.Owners, wire.EntityRef{ID: r.ID, Label: r.Label, Type: r.Type, Aliases: r.Aliases})
			}
			for _, r := range row.Participants {
				ev.Participants = append(ev.Participants, wire.EntityRef{ID: r.ID, Label: r.Label, Type: r.Type, Aliases: r.Aliases})
			}
			for _, x := range row.Evidence {
				ev.Evidence = append(ev.Evidence, wire.Evidence{ID: x.ID, Content: x.Content, URL: x.URL, Timestamp: x.Timestamp.UTC()})
			}
			out = append(out, ev)
		}
	default:
		t.Fatalf("unknown format %s", format)
	}
	return out
}

func splitNonEmpty(s, sep string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, sep)
}

func splitRefs(t testing.TB, s string) []wire.EntityRef {
	var out []wire.EntityRef
	for _, part := range splitNonEmpty(s, "|") {
		idStr, label, ok := strings.Cut(part, ":")
		require.True(t, ok, "ref %q", part)
		id, err := strconv.ParseInt(idStr, 10, 64)
		require.NoError(t, err)
		out = append(out, wire.EntityRef{ID: id, Label: label})
	}
	return out
}

// normalizeFor drops what format does not carry, so want and got compare
// field by field.
func normalizeFor(format string, evs []wire.Event) []wire.Event {
	out := make([]wire.Event, len(evs))
	for i, ev := range evs {
		ev.Owners = slices.Clone(ev.Owners)
		ev.Participants = slices.Clone(ev.Participants)
		ev.Evidence = slices.Clone(ev.Evidence)
		if format == exportjob.FormatCSV {
			for j := range ev.Owners {
				ev.Owners[j].Type, ev.Owners[j].Aliases = "", nil
			}
			for j := range ev.Participants {
				ev.Participants[j].Type, ev.Participants[j].Aliases = "", nil
			}
			for j := range ev.Evidence {
				ev.Evidence[j].Content, ev.Evidence[j].Timestamp = "", time.Time{}
			}
		}
		if len(ev.Owners) == 0 {
			ev.Owners = nil
		}
		if len(ev.Participants) == 0 {
			ev.Participants = nil
		}
		if len(ev.Evidence) == 0 {
			ev.Evidence = nil
		}
		if len(ev.Bullets) == 0 {
			ev.Bullets = nil
		}
		out[i] = ev
	}
	return out
}

// decodeEntities parses an organizations.registry export.
func decodeEntities(t testing.TB, format string, b []byte) []cryptointel.Entity {
	t.Helper()
	var out []cryptointel.Entity
	switch format {
	case exportjob.FormatJSONL:
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var e JSONEntity
			err := dec.Decode(&e)
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			out = append(out, cryptointel.Entity{ID: e.ID, CanonicalName: e.CanonicalName, DisplayName: e.DisplayName, EntityType: e.EntityType, Status: e.Status, Aliases: e.Aliases})
		}
	case exportjob.FormatCSV:
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		require.NoError(t, err)
		require.Equal(t, csvEntityHeader, recs[0])
		for _, r := range recs[1:] {
			id, err := strconv.ParseInt(r[0], 10, 64)
			require.NoError(t, err)
			out = append(out, cryptointel.Entity{ID: id, CanonicalName: r[1], DisplayName: r[2], EntityType: r[3], Status: r[4], Aliases: splitNonEmpty(r[5], "|")})
		}
	case exportjob.FormatParquet:
		rows, err := parquet.Read[ParquetEntity](bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		for _, e := range rows {
			out = append(out, cryptointel.Entity{ID: e.ID, CanonicalName: e.CanonicalName, DisplayName: e.DisplayName, EntityType: e.EntityType, Status: e.Status, Aliases: e.Aliases})
		}
	}
	return out
}
