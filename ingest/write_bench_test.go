package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
)

// BenchmarkIngest measures Write's throughput (events/s) on news-like
// events of 2 evidence posts and an owner and a participant, in the
// default batches of 500: everything ingest maintains on the way, the
// search index and corpus statistics included. Compare runs of two
// commits on the same machine:
//
//	go test ./db -run '^$' -bench Ingest -benchtime 5x
func BenchmarkIngest(b *testing.B) {
	store := dbtest.New(b)
	ctx := context.Background()
	var ents bytes.Buffer
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&ents, `{"kind":"entity","id":%d,"canonicalName":"Project %d","displayName":"Project %d","aliases":["PRJ%d"]}`+"\n", i, i, i, i)
	}
	if _, err := ingest.Write(ctx, store, &ents, ingest.Options{}); err != nil {
		b.Fatal(err)
	}
	words := []string{"exploit", "bridge", "outage", "validators", "listing", "futures", "governance", "proposal", "funding", "seed",
		"round", "mainnet", "upgrade", "stablecoin", "peg", "lawsuit", "regulator", "license", "burn", "unlock"}
	const perOp = 2000
	now := time.Now().UTC().Truncate(time.Second)
	id := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		var buf bytes.Buffer
		for range perOp {
			id++
			w := func(k int) string { return words[(id*7+k*13)%len(words)] }
			at := now.Add(-time.Duration(perOp*b.N-id) * time.Second).Format(time.RFC3339)
			fmt.Fprintf(&buf, `{"kind":"event","id":%d,"title":"Project %d %s %s after %s","eventCategory":"security","eventSubcategory":"exploit",`+
				`"summary":"Project %d reports %s and %s; %s follows.","bullets":["%s in %s","%s planned"],"owners":[%d],"participants":[%d],`+
				`"evidence":[{"id":%d,"content":"Newswire: %s %s","url":"https://news.example/%d/1","timestamp":"%s"},`+
				`{"id":%d,"content":"Official blog: %s","url":"https://news.example/%d/2","timestamp":"%s"}]}`+"\n",
				id, id%50+1, w(1), w(2), w(3), id%50+1, w(4), w(5), w(6), w(7), w(8), w(9), id%50+1, (id+7)%50+1,
				2*id, w(10), w(11), id, at, 2*id+1, w(12), id, at)
		}
		b.StartTimer()
		sum, err := ingest.Write(ctx, store, &buf, ingest.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(sum.Failed) > 0 {
			b.Fatalf("ingest failures: %+v", sum.Failed[:1])
		}
	}
	b.ReportMetric(float64(perOp*b.N)/b.Elapsed().Seconds(), "events/s")
}
