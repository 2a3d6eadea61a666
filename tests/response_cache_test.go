package tests

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
)

// getAs is get with the API key key.
func (s *restServer) getAs(t testing.TB, key, path string, headers ...string) *restResponse {
	t.Helper()
	return s.doAs(t, key, http.MethodGet, path, headers...)
}

// statements is the response's X-Statement-Count.
func (r *restResponse) statements(t testing.TB) int {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get(app.StatementCountHeader))
	require.NoError(t, err, "X-Statement-Count %q", r.Header.Get(app.StatementCountHeader))
	return n
}

func (r *restResponse) intHeader(t testing.TB, name string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(r.Header.Get(name), 10, 64)
	require.NoError(t, err, "%s %q", name, r.Header.Get(name))
	return n
}

// startCachingServer is startRESTServer with statement counts reported and
// a response cache whose entries outlive the test, so only content, plan
// and parameters decide between a hit and a miss (the clock is pinned).
func startCachingServer(t *testing.T, ttl time.Duration) *restServer {
	t.Helper()
	return startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, restFixture()) }, func(c *app.Config) {
		c.StatementCountHeader = true
		c.ResponseCacheTTL = ttl
	})
}

// TestResponseCache shows what the response cache of the /v1 graph reads
// keeps and what it may not change: an identical request is answered with
// the same bytes and ETag for its metering statement alone, yet is metered
// and rate-limited like any other; other parameters and other plans are
// computed apart; and a committed write to the content, from anywhere, is
// in the very next response.
func TestResponseCache(t *testing.T) {
	t.Parallel()
	s := startCachingServer(t, time.Hour)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	const path = "/v1/latest?limit=5"
	made := 0
	get := func(path string, headers ...string) *restResponse {
		t.Helper()
		made++
		r := s.getAs(t, key, path, headers...)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		return r
	}

	first := get(path)
	require.Greater(t, first.statements(t), 1, "the first request runs the operation")
	second := get(path)
	require.Equal(t, 1, second.statements(t), "an identical request costs its metering statement only")
	require.Equal(t, first.Body, second.Body)
	require.NotEmpty(t, first.Header.Get("ETag"))
	require.Equal(t, first.Header.Get("ETag"), second.Header.Get("ETag"))
	require.Equal(t, first.intHeader(t, "X-RateLimit-Remaining")-1, second.intHeader(t, "X-RateLimit-Remaining"),
		"a cached response still counts in the rate window")
	require.Equal(t, first.intHeader(t, "X-Monthly-Used")+1, second.intHeader(t, "X-Monthly-Used"),
		"a cached response is still metered")
	require.NotEqual(t, first.Header.Get("X-Request-Id"), second.Header.Get("X-Request-Id"))

	notModified := s.getAs(t, key, path, "If-None-Match", first.Header.Get("ETag"))
	made++
	require.Equal(t, http.StatusNotModified, notModified.Status)
	require.Equal(t, second.intHeader(t, "X-RateLimit-Remaining")-1, notModified.intHeader(t, "X-RateLimit-Remaining"),
		"a 304 still counts in the rate window")
	require.Equal(t, second.intHeader(t, "X-Monthly-Used"), notModified.intHeader(t, "X-Monthly-Used"),
		"a 304 costs no credit")
	zipped := get(path, "Accept-Encoding", "gzip")
	require.Equal(t, second.intHeader(t, "X-Monthly-Used")+1, zipped.intHeader(t, "X-Monthly-Used"),
		"the 304 before was not charged")
	require.Equal(t, "gzip", zipped.Header.Get("Content-Encoding"))
	zr, err := gzip.NewReader(bytes.NewReader(zipped.Body))
	require.NoError(t, err)
	unzipped, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, first.Body, unzipped)

	other := get("/v1/latest?limit=6")
	require.Greater(t, other.statements(t), 1, "other parameters are computed apart")
	require.NotEqual(t, first.Body, other.Body)

	proKey, _ := accesstest.NewKey(t, s.store, cryptointel.PlanPro)
	pro := s.getAs(t, proKey, path)
	require.Equal(t, http.StatusOK, pro.Status)
	require.Greater(t, pro.statements(t), 1, "another plan is computed apart")
	require.Equal(t, 1, s.getAs(t, proKey, path).statements(t))

	// A committed write, here through ingest, is in the next response.
	ingestLines(t, s.store, []string{eventLine(fixtureEvent{
		ID: 6000, At: restNow.Add(-time.Minute), Owner: entSolana, Category: "listing",
	})})
	fresh := get(path)
	require.Greater(t, fresh.statements(t), 1, "new content is computed afresh")
	require.Contains(t, string(fresh.Body), "Event 6000 about listing")
	require.NotEqual(t, first.Header.Get("ETag"), fresh.Header.Get("ETag"))
	require.Equal(t, 1, get(path).statements(t))

	// So is any committed SQL write to a content table.
	_, err = s.store.Pool.Exec(context.Background(), `UPDATE events SET title = 'Retitled listing' WHERE id = 6000`)
	require.NoError(t, err)
	retitled := get(path)
	require.Contains(t, string(retitled.Body), "Retitled listing")

	usage := s.getAs(t, key, "/v1/usage")
	made++
	require.Equal(t, http.StatusOK, usage.Status, string(usage.Body))
	var u struct{ Data struct{ Today int64 } }
	require.NoError(t, json.Unmarshal(usage.Body, &u))
	require.EqualValues(t, made, u.Data.Today, "every request, cached or not, is in the key's usage")
}

// TestResponseCacheDisabled: with a negative TTL every request runs its
// operation.
func TestResponseCacheDisabled(t *testing.T) {
	t.Parallel()
	s := startCachingServer(t, -time.Second)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	for i := 0; i < 2; i++ {
		r := s.getAs(t, key, "/v1/latest?limit=5")
		require.Equal(t, http.StatusOK, r.Status)
		require.Greater(t, r.statements(t), 1, "request %d", i)
	}
}
