package access_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
)

// readCounter wraps okHandler, counting the requests it serves (the reads
// made) and answering the content version its caller carries.
func readCounter(reads *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		c, _ := access.CallerFrom(r.Context())
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"plan": c.Plan.Name, "version": c.DataVersion}}) //nolint:errcheck
	})
}

// TestReadAheadServesOnlyAdmittedRequests: once this process knows a key
// as good, its reads run beside their metering. A request the metering
// then refuses (its month's credits spent meanwhile) is answered with the
// refusal, never with what was read; and a key whose last request was
// refused is not read ahead again.
func TestReadAheadServesOnlyAdmittedRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, keyID := accesstest.NewKey(t, b.store, cryptointel.PlanFree)
	var reads atomic.Int64
	h := b.svc.Wrap(searchPolicy, readCounter(&reads))

	for i, used := range []string{"2", "4"} { // metered then read; then read ahead
		rec := do(h, "GET", "/v1/search", bearer(key))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		requireAccessHeaders(t, rec)
		require.Equal(t, used, rec.Header().Get("X-Monthly-Used"))
		require.Equal(t, strconv.Itoa(99-i), rec.Header().Get("X-RateLimit-Remaining"))
		require.EqualValues(t, i+1, reads.Load())
	}

	// Another process spends the month's credits.
	ctx := context.Background()
	_, err := b.store.Pool.Exec(ctx, `UPDATE account_usage_monthly SET credits = (SELECT monthly_credits FROM plans WHERE name = 'free')
		WHERE account_id = (SELECT account_id FROM api_keys WHERE id = $1)`, keyID)
	require.NoError(t, err)
	rec := do(h, "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, access.MsgQuotaExceeded, errorOf(t, rec))
	requireAccessHeaders(t, rec)
	require.EqualValues(t, 3, reads.Load(), "read ahead, refused, not served")

	rec = do(h, "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.EqualValues(t, 3, reads.Load(), "a key refused last is not read ahead")
}

// TestReadAheadDropsAReadOfAnOlderVersion: content written between a
// key's last metering and this request's: the read made ahead (for the
// version the key last saw) is dropped, and the request read again at the
// version its metering saw.
func TestReadAheadDropsAReadOfAnOlderVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanPro)
	var reads atomic.Int64
	h := b.svc.Wrap(searchPolicy, readCounter(&reads))
	version := func(rec interface{ Bytes() []byte }) int64 {
		var body struct {
			Data struct {
				Version int64 `json:"version"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(rec.Bytes(), &body))
		return body.Data.Version
	}

	rec := do(h, "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusOK, rec.Code)
	before := version(rec.Body)
	_, err := b.store.Pool.Exec(context.Background(), `UPDATE data_version SET version = version + 1`)
	require.NoError(t, err)
	rec = do(h, "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, before+1, version(rec.Body))
	require.Equal(t, "4", rec.Header().Get("X-Monthly-Used"), "charged once")
	require.EqualValues(t, 3, reads.Load(), "read ahead at the old version, then again")

	rec = do(h, "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, before+1, version(rec.Body))
	require.EqualValues(t, 4, reads.Load(), "read ahead and served")
}
