package tests

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/jobs"
)

// exportJobRequest is a valid export body.
func exportJobRequest(since time.Time) map[string]any {
	return map[string]any{"scope": "radar.history", "format": "jsonl", "includeEvidence": true,
		"since": since.UTC().Format(time.RFC3339)}
}

// TestExportBoundsPerAccount: an account holds at most its bound of export
// jobs requested or running — counted under a lock, so concurrent
// requests cannot pass it together — and one more is refused 409; once
// the bytes its jobs of the day wrote reach the daily bound, new jobs are
// refused 429 with Retry-After until the next UTC day; a job whose file
// would pass the bound fails saying so. Refusals cost no credits. (40
// jobs once wrote 1.5 GB in 21 seconds.)
func TestExportBoundsPerAccount(t *testing.T) {
	t.Parallel()
	since := time.Now().Add(-48 * time.Hour)

	t.Run("active jobs", func(t *testing.T) {
		t.Parallel()
		s := startExportServer(t, exportServerOpts{noStart: true}) // jobs stay requested
		s.handlers.MaxActiveJobs = 2
		key, _ := exportEnterpriseKey(t, s.store)
		body, _ := json.Marshal(exportJobRequest(since))
		var used string
		for i := 0; i < 2; i++ {
			status, h, resp := s.do(t, http.MethodPost, "/v1/export/jobs", key, body)
			require.Equal(t, http.StatusCreated, status, "%s", resp)
			used = h.Get("X-Monthly-Used")
		}
		status, h, resp := s.do(t, http.MethodPost, "/v1/export/jobs", key, body)
		require.Equal(t, http.StatusConflict, status, "%s", resp)
		require.JSONEq(t, `{"error":"Too many export jobs in progress: this account has 2 requested or running, and at most 2 may be at a time. Wait for one to complete or fail (GET /v1/export/jobs), then retry."}`, errorOnly(t, resp))
		require.Equal(t, used, h.Get("X-Monthly-Used"), "a refused job costs nothing")

		// Twenty at once from another account: exactly two get through.
		other, _ := exportEnterpriseKey(t, s.store)
		var mu sync.Mutex
		statuses := map[int]int{}
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, _, _ := s.do(t, http.MethodPost, "/v1/export/jobs", other, body)
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		require.Equal(t, map[int]int{http.StatusCreated: 2, http.StatusConflict: 18}, statuses)
	})

	t.Run("bytes per day", func(t *testing.T) {
		t.Parallel()
		s := startExportServer(t, exportServerOpts{})
		exportSeed(t, s.store, since, 40)
		key, _ := exportEnterpriseKey(t, s.store)
		first := s.waitDone(t, key, s.create(t, key, exportJobRequest(since)).ID)
		require.Equal(t, exportjob.StatusCompleted, first.Status)
		require.NotNil(t, first.ByteSize)

		s.handlers.MaxBytesPerDay = *first.ByteSize
		body, _ := json.Marshal(exportJobRequest(since))
		_, listed, _ := s.do(t, http.MethodGet, "/v1/export/jobs", key, nil)
		status, h, resp := s.do(t, http.MethodPost, "/v1/export/jobs", key, body)
		require.Equal(t, http.StatusTooManyRequests, status, "%s", resp)
		require.Contains(t, string(resp), "Daily export volume reached: this account's export jobs created today (UTC) wrote")
		require.Equal(t, listed.Get("X-Monthly-Used"), h.Get("X-Monthly-Used"), "the refusal costs nothing")
		now := s.store.Now().UTC()
		wait := int(math.Ceil(now.Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now).Seconds()))
		got, err := strconv.Atoi(h.Get("Retry-After"))
		require.NoError(t, err)
		require.InDelta(t, wait, got, 1, "Retry-After runs to 00:00 UTC")

		// The next UTC day the account may export again.
		next := now.Add(24 * time.Hour)
		s.now.Store(&next)
		s.create(t, key, exportJobRequest(next.Add(-48*time.Hour)))
	})

	t.Run("a job past the day's volume fails", func(t *testing.T) {
		t.Parallel()
		const bound = 200
		s := startExportServer(t, exportServerOpts{maxBytesPerDay: bound})
		exportSeed(t, s.store, since, 40)
		key, _ := exportEnterpriseKey(t, s.store)
		job := s.waitDone(t, key, s.create(t, key, exportJobRequest(since)).ID)
		require.Equal(t, exportjob.StatusFailed, job.Status)
		require.NotNil(t, job.Error)
		require.Equal(t, fmt.Sprintf(jobs.MsgExportOverDailyVolumeFmt, bound), *job.Error)
	})

	t.Run("failing jobs count against the day", func(t *testing.T) {
		t.Parallel()
		const bound = 200
		s := startExportServer(t, exportServerOpts{maxBytesPerDay: bound})
		s.handlers.MaxBytesPerDay = bound
		exportSeed(t, s.store, since, 40)
		key, _ := exportEnterpriseKey(t, s.store)
		job := s.waitDone(t, key, s.create(t, key, exportJobRequest(since)).ID)
		require.Equal(t, exportjob.StatusFailed, job.Status)
		// The failed job's bytes count: the day is spent, the next job is
		// refused. (Nine jobs failing at the bound once wrote 273 MB
		// against a 30 MB day.)
		body, _ := json.Marshal(exportJobRequest(since))
		status, h, resp := s.do(t, http.MethodPost, "/v1/export/jobs", key, body)
		require.Equal(t, http.StatusTooManyRequests, status, "%s", resp)
		require.Contains(t, string(resp), "Daily export volume reached")
		require.NotEmpty(t, h.Get("Retry-After"))
	})
}
