package jobs

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
)

// BenchmarkExport exports N events (EXPORT_BENCH_ROWS, default 100,000)
// with owners and evidence to each format and reports rows/s, the worker's
// peak heap in use and peak live heap (sampled every 5 ms while it runs)
// and the file size:
//
//	EXPORT_BENCH_ROWS=1000000 go test ./jobs/ -run '^$' -bench BenchmarkExport -benchtime 1x -timeout 60m
//
// Peak heap must stay flat as N grows: rows stream through one batch at a
// time.
func BenchmarkExport(b *testing.B) {
	n := 100_000
	if v := os.Getenv("EXPORT_BENCH_ROWS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err)
	}
	store := dbtest.New(b)
	accountKey := seedBenchEvents(b, store, n)
	storage, err := exportstore.OpenDir(context.Background(), b.TempDir())
	require.NoError(b, err)
	worker := NewExportWorker(store, ExportConfig{Storage: storage})
	for _, format := range exportjob.Formats {
		b.Run(fmt.Sprintf("%s/rows=%d", format, n), func(b *testing.B) {
			var rows, size int64
			var peak, peakLive uint64
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				job := accountKey.createJob(b, store, exportjob.ScopeRadarHistory, format,
					exportjob.Params{Since: ptime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)), IncludeEvidence: true})
				runtime.GC()
				stop := sampleHeap()
				start := time.Now()
				require.NoError(b, worker.Run(context.Background(), job.ID, false))
				elapsed += time.Since(start)
				inuse, live := stop()
				peak, peakLive = max(peak, inuse), max(peakLive, live)
				done, err := exportstore.ExportJobForWorker(context.Background(), store.Bun, job.ID)
				require.NoError(b, err)
				require.Equal(b, exportjob.StatusCompleted, done.Status)
				require.Equal(b, int64(n), *done.RowCount)
				rows += *done.RowCount
				size = *done.ByteSize
				require.NoError(b, storage.Delete(context.Background(), *done.StorageKey))
			}
			b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(peakLive)/(1<<20), "peak-live-MiB")
			b.ReportMetric(float64(size)/(1<<20), "file-MiB")
		})
	}
}

// sampleHeap samples the heap every 5 ms until the returned function is
// called, which returns the high-water marks of HeapInuse (live objects
// plus garbage not yet collected, so it moves with GC pacing) and of the
// live heap as marked by the last GC (runtime/metrics /gc/heap/live:bytes).
func sampleHeap() func() (inuse, live uint64) {
	var mu sync.Mutex
	var peakInuse, peakLive uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	read := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		metrics.Read(samples)
		mu.Lock()
		peakInuse = max(peakInuse, ms.HeapInuse)
		if samples[0].Value.Kind() == metrics.KindUint64 {
			peakLive = max(peakLive, samples[0].Value.Uint64())
		}
		mu.Unlock()
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() (uint64, uint64) {
		read()
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return peakInuse, peakLive
	}
}

// seedBenchEvents COPYs n events, each with one owner, every fourth with
// a participant, and one evidence post, over 1,000 entities.
func seedBenchEvents(b *testing.B, store *db.DB, n int) *exportFixture {
	b.Helper()
	ctx := context.Background()
	const entities = 1000
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	conn, err := store.Pool.Acquire(ctx)
	require.NoError(b, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "ALTER TABLE events DISABLE TRIGGER events_search_trg")
	require.NoError(b, err)
	defer conn.Exec(ctx, "ALTER TABLE events ENABLE TRIGGER events_search_trg") //nolint:errcheck

	_, err = conn.CopyFrom(ctx, pgx.Identifier{"entities"}, []string{"id", "canonical_name", "display_name", "entity_type", "status", "aliases"},
		pgx.CopyFromSlice(entities, func(i int) ([]any, error) {
			return []any{int64(i + 1), fmt.Sprintf("entity-%d", i+1), fmt.Sprintf("Entity %d", i+1), "project", "active", []string{fmt.Sprintf("E%d", i+1)}}, nil
		}))
	require.NoError(b, err)
	summary := strings.Repeat("A structured summary of noteworthy activity. ", 6)
	bullets := []string{"First bullet point about the event", "Second bullet point with more detail", "Third bullet point"}
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"events"},
		[]string{"id", "title", "category", "subcategory", "summary", "bullets", "significance", "latest_evidence_at"},
		pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			var sig any
			if i%2 == 0 {
				sig = float64(i%100) / 10
			}
			return []any{int64(i + 1), fmt.Sprintf("Event %d: partnership announced between two projects", i+1),
				fixtureCategories[i%3], "acquisition", summary, bullets, sig, base.Add(time.Duration(i) * time.Second)}, nil
		}))
	require.NoError(b, err)
	links := n + n/4
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"event_entities"},
		[]string{"event_id", "entity_id", "role", "latest_evidence_at", "category"},
		pgx.CopyFromSlice(links, func(k int) ([]any, error) {
			if k < n {
				return []any{int64(k + 1), int64(k%entities + 1), cryptointel.RoleOwner, base.Add(time.Duration(k) * time.Second), fixtureCategories[k%3]}, nil
			}
			i := (k - n) * 4
			return []any{int64(i + 1), int64((i+7)%entities + 1), cryptointel.RoleParticipant, base.Add(time.Duration(i) * time.Second), fixtureCategories[i%3]}, nil
		}))
	require.NoError(b, err)
	content := strings.Repeat("Source post text backing the event. ", 5)
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"evidence"}, []string{"id", "event_id", "content", "url", "ts"},
		pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			return []any{int64(i + 1), int64(i + 1), content, fmt.Sprintf("https://example.com/posts/%d", i+1), base.Add(time.Duration(i) * time.Second)}, nil
		}))
	require.NoError(b, err)
	_, err = conn.Exec(ctx, "ANALYZE")
	require.NoError(b, err)

	_, key, err := db.CreateAPIKey(ctx, store.Bun, "bench", cryptointel.PlanEnterprise)
	require.NoError(b, err)
	return &exportFixture{base: base, accountID: key.AccountID, apiKeyID: key.ID}
}
