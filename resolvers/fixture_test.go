package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/resolvers"
)

// testBundle is what every resolver test works with: a fresh database
// holding the fixture, the executor over it and the fixed "now".
type testBundle struct {
	store *db.DB
	exec  *resolvers.Executor
	now   time.Time
}

// Fixture shape: entity 1 is the hub; entities 101..100+fan are related to
// it (odd ones outbound from 1, even ones inbound to 1); each related
// entity owns fan events with entity 1 as participant and two evidence
// posts each.
const hubID = 1

func setup(t *testing.T, fan int) *testBundle {
	t.Helper()
	store := dbtest.New(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	store.Now = func() time.Time { return now }
	seedFixture(t, store, now, fan)
	exec := resolvers.NewExecutor(resolvers.Config{Store: store, CursorSecret: "test-secret"})
	return &testBundle{store: store, exec: exec, now: now}
}

func seedFixture(t *testing.T, store *db.DB, now time.Time, fan int) {
	t.Helper()
	ctx := context.Background()
	ents := []*cryptointel.Entity{{ID: hubID, CanonicalName: "Ethereum", DisplayName: "Ethereum", EntityType: "project", Status: "active",
		Aliases: []string{"ETH", "Ether", "eth2", "ethereum-mainnet", "the merge", "ethereum classic?"}}}
	for i := 1; i <= fan; i++ {
		ents = append(ents, &cryptointel.Entity{ID: int64(100 + i), CanonicalName: fmt.Sprintf("Related %d", i),
			DisplayName: fmt.Sprintf("Related %d", i), EntityType: "foundation", Status: "active", Aliases: []string{}})
	}
	_, err := store.Bun.NewInsert().Model(&ents).Exec(ctx)
	require.NoError(t, err)

	var rels []*cryptointel.Relationship
	for i := 1; i <= fan; i++ {
		r := &cryptointel.Relationship{SourceEntityID: hubID, TargetEntityID: int64(100 + i), RelationshipType: "PARTNER_OF", Status: "active", SearchExpand: true}
		if i%2 == 0 {
			r.SourceEntityID, r.TargetEntityID, r.RelationshipType = int64(100+i), hubID, "FOUNDATION_OF"
		}
		r.CreatedAt = now
		rels = append(rels, r)
	}
	_, err = store.Bun.NewInsert().Model(&rels).Exec(ctx)
	require.NoError(t, err)

	var events []*cryptointel.Event
	for i := 1; i <= fan; i++ {
		for j := 1; j <= fan; j++ {
			id := int64(i*1000 + j)
			ev := &cryptointel.Event{
				ID: id, Title: fmt.Sprintf("Event %d", id), Category: []string{"partnership", "funding", "listing"}[j%3],
				Subcategory: "acquisition", Summary: fmt.Sprintf("Summary %d", id), Bullets: []string{"a", "b"},
				LatestEvidenceAt: now.Add(-time.Duration(i*fan+j) * time.Minute), CreatedAt: now, UpdatedAt: now,
			}
			if j%2 == 0 {
				ev.Significance = ptr(float64(j))
			}
			switch j % 5 {
			case 1:
				ev.ContentType = ptr(cryptointel.ContentResearch)
			case 2:
				ev.ContentType = ptr(cryptointel.ContentMedia)
			}
			events = append(events, ev)
		}
	}
	insertEvents(t, store, events, func(ev *cryptointel.Event) (owners, participants []int64) {
		return []int64{ev.ID/1000 + 100}, []int64{hubID}
	})
}

// insertEvents inserts events with their roles and two evidence posts each.
func insertEvents(t *testing.T, store *db.DB, events []*cryptointel.Event, roles func(*cryptointel.Event) (owners, participants []int64)) {
	t.Helper()
	ctx := context.Background()
	if len(events) == 0 {
		return
	}
	_, err := store.Bun.NewInsert().Model(&events).Exec(ctx)
	require.NoError(t, err)
	var links []*cryptointel.EventEntity
	var evidence []*cryptointel.Evidence
	for _, ev := range events {
		owners, participants := roles(ev)
		for k, id := range owners {
			links = append(links, &cryptointel.EventEntity{EventID: ev.ID, EntityID: id, Role: cryptointel.RoleOwner, Position: k,
				LatestEvidenceAt: ev.LatestEvidenceAt, Significance: ev.Significance, ContentType: ev.ContentType, Category: ev.Category})
		}
		for k, id := range participants {
			links = append(links, &cryptointel.EventEntity{EventID: ev.ID, EntityID: id, Role: cryptointel.RoleParticipant, Position: k,
				LatestEvidenceAt: ev.LatestEvidenceAt, Significance: ev.Significance, ContentType: ev.ContentType, Category: ev.Category})
		}
		for k := 0; k < 2; k++ {
			evidence = append(evidence, &cryptointel.Evidence{ID: ev.ID*10 + int64(k), EventID: ev.ID, Content: "post",
				URL: "https://example.com/p", TS: ev.LatestEvidenceAt.Add(-time.Duration(k) * time.Minute)})
		}
	}
	_, err = store.Bun.NewInsert().Model(&links).Exec(ctx)
	require.NoError(t, err)
	_, err = store.Bun.NewInsert().Model(&evidence).Exec(ctx)
	require.NoError(t, err)
}

func ptr[T any](v T) *T { return &v }

// run executes query and returns the decoded data and the errors.
func (b *testBundle) run(t *testing.T, ctx context.Context, query string, vars map[string]any) (map[string]any, []gqlErr) {
	t.Helper()
	resp := b.exec.Execute(ctx, query, "", vars)
	var data map[string]any
	if len(resp.Data) > 0 {
		require.NoError(t, json.Unmarshal(resp.Data, &data))
	}
	var errs []gqlErr
	for _, e := range resp.Errors {
		code, _ := e.Extensions["code"].(string)
		errs = append(errs, gqlErr{Message: e.Message, Code: code})
	}
	return data, errs
}

// mustRun executes query and fails on any error.
func (b *testBundle) mustRun(t *testing.T, query string, vars map[string]any) map[string]any {
	t.Helper()
	data, errs := b.run(t, context.Background(), query, vars)
	require.Empty(t, errs)
	return data
}

type gqlErr struct {
	Message string
	Code    string
}

// dig walks a decoded JSON value by keys and indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}
