package tests

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
)

// TestReadAheadAnswersAsBefore: a key's requests after its first have
// their graph route's read run beside the metering statement
// (access.WithReadAhead); what they answer is what a request read after
// its metering answers. The same bytes, ETag and statements (one read
// and one metering statement, never the read twice), a 304 that costs no
// credit, HEAD, and, with the response cache on, a write to the content
// in the very next response even though the read ahead was made at the
// version before it.
func TestReadAheadAnswersAsBefore(t *testing.T) {
	t.Parallel()
	for _, ttl := range []time.Duration{-time.Second, time.Hour} {
		s := startCachingServer(t, ttl)
		key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
		const path = "/v1/latest?limit=5"
		get := func(headers ...string) *restResponse {
			t.Helper()
			r := s.getAs(t, key, path, headers...)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
			return r
		}

		first := get() // the door does not know the key yet
		second := get()
		require.Equal(t, string(first.Body), string(second.Body))
		require.Equal(t, first.Header.Get("ETag"), second.Header.Get("ETag"))
		if ttl < 0 {
			// (The first also loaded the plans.)
			require.Equal(t, 2, second.statements(t), "read once, beside the metering statement")
		}
		require.Equal(t, first.intHeader(t, "X-Monthly-Used")+1, second.intHeader(t, "X-Monthly-Used"))

		notModified := s.getAs(t, key, path, "If-None-Match", second.Header.Get("ETag"))
		require.Equal(t, http.StatusNotModified, notModified.Status)
		require.Equal(t, second.intHeader(t, "X-Monthly-Used"), notModified.intHeader(t, "X-Monthly-Used"), "a 304 costs no credit")
		require.Equal(t, second.intHeader(t, "X-RateLimit-Remaining")-1, notModified.intHeader(t, "X-RateLimit-Remaining"))

		head := s.doAs(t, key, http.MethodHead, path)
		require.Equal(t, http.StatusOK, head.Status)
		require.Empty(t, head.Body)
		require.Equal(t, second.Header.Get("ETag"), head.Header.Get("ETag"))

		_, err := s.store.Pool.Exec(context.Background(), `UPDATE events SET title = title || ' (retitled ahead)'`)
		require.NoError(t, err)
		fresh := get()
		require.Contains(t, string(fresh.Body), "(retitled ahead)", "ttl %s", ttl)
		require.NotEqual(t, second.Header.Get("ETag"), fresh.Header.Get("ETag"))
		again := get()
		require.Equal(t, string(fresh.Body), string(again.Body))
	}
}
