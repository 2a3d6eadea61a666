package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/ingest"
)

// EmitOptions configure Emit.
type EmitOptions struct {
	// Radar makes the event radar-only (no significance); by default it is
	// a signal, so it reaches the signal feeds, streams and webhooks too.
	Radar bool
	// Seed seeds the choice of event; 0 picks one from the clock.
	Seed uint64
}

// Emitted is the event Emit ingested.
type Emitted struct {
	ID           int64    `json:"id"`
	Title        string   `json:"title"`
	Category     string   `json:"eventCategory"`
	Subcategory  string   `json:"eventSubcategory"`
	Owner        string   `json:"owner"`
	Participants []string `json:"participants"`
	Significance *float64 `json:"significance"`
	At           string   `json:"latestEvidenceTimestamp"`
}

// Emit ingests one new event about the demo entities, written the way the
// demo data is (a category, a title naming its owner and participant,
// bullets, one evidence post) and dated now, through the ingest path, so
// the feeds, the live streams and the webhooks see it as they would a real
// one. The demo entities must be there (seed --demo).
func Emit(ctx context.Context, store *db.DB, opts EmitOptions) (*Emitted, error) {
	var lastEvent, lastEvidence int64
	if err := store.Pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM events`).Scan(&lastEvent); err != nil {
		return nil, fmt.Errorf("error reading the last event id: %w", err)
	}
	if err := store.Pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM evidence`).Scan(&lastEvidence); err != nil {
		return nil, fmt.Errorf("error reading the last evidence id: %w", err)
	}
	seed := opts.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	g := newSeedGen(defaultSeed, time.Now(), 0)
	rng := rand.New(rand.NewPCG(seed, 0xe1171))
	at := time.Now().UTC().Truncate(time.Second)
	h := g.fresh(rng, at)
	h.significance = nil
	if !opts.Radar {
		s := math.Round((6+3.5*rng.Float64())*10) / 10
		h.significance = &s
	}
	id := lastEvent + 1
	ev := g.report(rng, id, h, at, at)
	participantIDs := []int64{}
	participantNames := []string{}
	for _, p := range ev.participants {
		participantIDs = append(participantIDs, p.id)
		participantNames = append(participantNames, p.name)
	}
	line := map[string]any{
		"kind": "event", "id": id, "title": ev.title, "eventCategory": ev.category, "eventSubcategory": ev.subcategory,
		"summary": ev.summary, "bullets": ev.bullets, "owners": []int64{ev.owner.id}, "participants": participantIDs,
		"significance": h.significance,
		"evidence": []map[string]any{{
			"id": lastEvidence + 1, "url": fmt.Sprintf("https://news.example/%s/%d-1", ev.category, id),
			"content":   ev.contents[0],
			"timestamp": at.Format(time.RFC3339),
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return nil, err
	}
	res, err := ingest.Write(ctx, store, bytes.NewReader(append(b, '\n')), ingest.Options{})
	if err != nil {
		return nil, err
	}
	if res.FailedCount > 0 {
		reason := ""
		if len(res.Failed) > 0 {
			reason = res.Failed[0].Reason
		}
		return nil, fmt.Errorf("the demo event was refused (%s): is the demo data loaded? (cryptointel seed --demo)", reason)
	}
	return &Emitted{ID: id, Title: ev.title, Category: ev.category, Subcategory: ev.subcategory, Owner: ev.owner.name,
		Participants: participantNames, Significance: h.significance, At: at.Format(time.RFC3339)}, nil
}
