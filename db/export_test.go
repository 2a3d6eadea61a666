package db_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/wire"
)

type exportBundle struct {
	store     *db.DB
	ctx       context.Context
	accountID int64
	keyID     int64
}

func setupExportDB(t *testing.T) *exportBundle {
	t.Helper()
	store := dbtest.New(t)
	ctx := context.Background()
	_, key, err := db.CreateAPIKey(ctx, store.Bun, fmt.Sprintf("export-%d", time.Now().UnixNano()), cryptointel.PlanEnterprise)
	require.NoError(t, err)
	return &exportBundle{store: store, ctx: ctx, accountID: key.AccountID, keyID: key.ID}
}

// TestStreamExportEventsKeyset: batches cover every event exactly once in
// (latest_evidence_at, id) order even when many events share a timestamp,
// and the statement count per batch is constant (no per-row queries).
func TestStreamExportEventsKeyset(t *testing.T) {
	t.Parallel()
	b := setupExportDB(t)
	ts := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ents := []cryptointel.Entity{{ID: 1, CanonicalName: "a", DisplayName: "A", EntityType: "project", Status: "active", Aliases: []string{}}}
	_, err := b.store.Bun.NewInsert().Model(&ents).Exec(b.ctx)
	require.NoError(t, err)
	var events []cryptointel.Event
	var links []cryptointel.EventEntity
	for i := 0; i < 23; i++ {
		at := ts.Add(time.Duration(i/10) * time.Hour) // ten events per timestamp
		events = append(events, cryptointel.Event{ID: int64(100 - i), Title: "t", Category: "c", Bullets: []string{}, LatestEvidenceAt: at})
		links = append(links, cryptointel.EventEntity{EventID: int64(100 - i), EntityID: 1, Role: cryptointel.RoleOwner, LatestEvidenceAt: at})
	}
	_, err = b.store.Bun.NewInsert().Model(&events).Exec(b.ctx)
	require.NoError(t, err)
	_, err = b.store.Bun.NewInsert().Model(&links).Exec(b.ctx)
	require.NoError(t, err)

	ctx, counter := db.WithStatementCounter(b.ctx)
	var seen []int64
	batches := 0
	filter := db.ExportEventFilter{Scope: exportjob.ScopeRadarHistory, Params: exportjob.Params{Since: &exportjob.Time{Time: ts}, IncludeEvidence: true}}
	err = db.StreamExportEvents(ctx, b.store, filter, 4, func(batch []wire.Event) error {
		batches++
		for _, ev := range batch {
			require.Len(t, ev.Owners, 1)
			seen = append(seen, ev.ID)
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, seen, 23)
	for i := 1; i < len(seen); i++ {
		prev, cur := 100-seen[i-1], 100-seen[i] // index in insertion order
		if prev/10 == cur/10 {
			require.Less(t, seen[i-1], seen[i], "ids ascend within a timestamp")
		} else {
			require.Less(t, prev/10, cur/10, "timestamps ascend")
		}
	}
	require.Equal(t, 6, batches)
	// Three statements per batch (events, entities, evidence).
	require.Equal(t, int64(3*batches), counter.Load())
}
