package access_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// readAheadRoute stands in for a graph route: its work is a read (what it
// sees of its caller), which it gives the access layer to run ahead, and
// its handler takes the read ahead when there is one.
type readAheadRoute struct {
	reads    atomic.Int64 // reads run, ahead or not
	outcomes sync.Map     // outcome -> *atomic.Int64
	h        http.Handler

	// slow makes each read take that long; running counts the reads in
	// progress, overlapped those a handler found running.
	slow       time.Duration
	running    atomic.Int64
	overlapped atomic.Int64
}

type readSeen struct {
	Plan    string `json:"plan"`
	Key     int64  `json:"key"`
	Version int64  `json:"version"`
	Ahead   bool   `json:"ahead"`
}

func (rt *readAheadRoute) read(ctx context.Context) readSeen {
	rt.reads.Add(1)
	rt.running.Add(1)
	defer rt.running.Add(-1)
	time.Sleep(rt.slow)
	c, _ := access.CallerFrom(ctx)
	return readSeen{Plan: c.Plan.Name, Key: c.APIKeyID, Version: c.DataVersion}
}

func (rt *readAheadRoute) count(outcome string) int64 {
	v, _ := rt.outcomes.LoadOrStore(outcome, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func newReadAheadRoute(t *testing.T, store *db.DB, now func() time.Time) *readAheadRoute {
	t.Helper()
	rt := &readAheadRoute{}
	rt.serve(access.New(store, access.Config{Now: now, OnReadAhead: rt.report}), searchPolicy)
	return rt
}

func (rt *readAheadRoute) report(o string) {
	v, _ := rt.outcomes.LoadOrStore(o, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// serve makes rt.h the route under svc with policy p.
func (rt *readAheadRoute) serve(svc *access.Service, p access.Policy) {
	inner := svc.Wrap(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.running.Load() != 0 {
			rt.overlapped.Add(1)
		}
		var seen readSeen
		if v, ok := access.ReadAheadResult(r.Context()); ok {
			seen = v.(readSeen)
			seen.Ahead = true
		} else {
			seen = rt.read(r.Context())
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(seen) //nolint:errcheck
	}))
	rt.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := access.WithReadAhead(r.Context(), func(ctx context.Context) (any, func()) { return rt.read(ctx), nil })
		inner.ServeHTTP(w, r.WithContext(ctx))
	})
}

func seenOf(t *testing.T, rec *httptest.ResponseRecorder) readSeen {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var s readSeen
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &s), rec.Body.String())
	return s
}

// A key the door knows as admitted has its request's read run beside its
// metering statement and used once the request is admitted as the caller
// predicted; a caller other than predicted (a new content version, a new
// plan) has it read again; a write is never read ahead.
func TestReadAheadBesideMetering(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	rt := newReadAheadRoute(t, store, func() time.Time { return fixedNow })
	key, keyID := accesstest.NewKey(t, store, cryptointel.PlanPro)
	ctx := context.Background()

	// The door does not know the key yet: read once, by the handler.
	first := seenOf(t, do(rt.h, "GET", "/v1/search?q=x", bearer(key)))
	require.Equal(t, readSeen{Plan: "pro", Key: keyID, Version: first.Version}, first)
	require.Equal(t, int64(1), rt.reads.Load())

	// Known: read ahead, used, and not read again.
	second := seenOf(t, do(rt.h, "GET", "/v1/search?q=x", bearer(key)))
	require.Equal(t, readSeen{Plan: "pro", Key: keyID, Version: first.Version, Ahead: true}, second)
	require.Equal(t, int64(2), rt.reads.Load())
	require.Equal(t, int64(1), rt.count("used"))

	// The content changed since: the read ahead was made at the version
	// the door knew, the request is metered at the new one and read again.
	_, err := store.Pool.Exec(ctx, "UPDATE data_version SET version = version + 1")
	require.NoError(t, err)
	third := seenOf(t, do(rt.h, "GET", "/v1/search?q=x", bearer(key)))
	require.Equal(t, readSeen{Plan: "pro", Key: keyID, Version: first.Version + 1}, third)
	require.Equal(t, int64(4), rt.reads.Load())
	require.Equal(t, int64(1), rt.count("dropped"))

	// The account's plan changed: read again as the new plan.
	_, err = store.Pool.Exec(ctx, "UPDATE accounts SET plan = 'business' WHERE id = (SELECT account_id FROM api_keys WHERE id = $1)", keyID)
	require.NoError(t, err)
	fourth := seenOf(t, do(rt.h, "GET", "/v1/search?q=x", bearer(key)))
	require.Equal(t, readSeen{Plan: "business", Key: keyID, Version: first.Version + 1}, fourth)
	require.Equal(t, int64(6), rt.reads.Load())
	require.Equal(t, int64(2), rt.count("dropped"))

	// A write waits for its admission: only the handler reads.
	rec := do(rt.h, "POST", "/v1/search?q=x", bearer(key))
	require.False(t, seenOf(t, rec).Ahead)
	require.Equal(t, int64(7), rt.reads.Load())
	require.Equal(t, int64(1), rt.count("used"))
	require.Equal(t, int64(2), rt.count("dropped"))
}

// At the edge of a key's window, requests read ahead are served exactly as
// many as the window allows, the others refused with the rate limit's
// answer, never the data; once the door knows the window spent, a
// refused request costs no read.
func TestReadAheadNeverServesARefusedRequest(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	rt := newReadAheadRoute(t, store, func() time.Time { return fixedNow })
	key, _ := accesstest.NewKey(t, store, cryptointel.PlanPro)

	for i := 0; i < 90; i++ {
		seenOf(t, do(rt.h, "GET", "/v1/search?q=x", bearer(key)))
	}
	require.Equal(t, int64(89), rt.count("used"))

	var mu sync.Mutex
	codes := map[int]int{}
	ahead := 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rec := do(rt.h, "GET", "/v1/search?q=x", bearer(key))
			mu.Lock()
			defer mu.Unlock()
			codes[rec.Code]++
			if rec.Code == http.StatusOK && seenOf(t, rec).Ahead {
				ahead++
			}
			if rec.Code == http.StatusTooManyRequests {
				require.Equal(t, "Rate limit exceeded. Maximum 100 requests per 60 seconds.", errorOf(t, rec))
				require.NotContains(t, rec.Body.String(), `"plan"`)
			}
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, map[int]int{200: 10, 429: 54}, codes)
	// Each request read ahead was used by a 200 or dropped; those that
	// started once the door knew the window spent were not read ahead.
	require.Equal(t, int64(89+ahead), rt.count("used"))
	require.LessOrEqual(t, int64(ahead)+rt.count("dropped"), int64(64))
	require.Positive(t, rt.count("dropped"), "no refused request had been read ahead: the edge was not reached")
	reads := rt.reads.Load()

	rec := do(rt.h, "GET", "/v1/search?q=x", bearer(key))
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.Equal(t, reads, rt.reads.Load(), "a refused request read ahead")
}

// A key's last meter result predicts its next for ten minutes, longer than
// the door trusts it to refuse (a minute): a prediction is checked before
// anything is written.
func TestReadAheadPredictsFromTenMinutes(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	var now atomic.Int64
	now.Store(fixedNow.UnixNano())
	rt := newReadAheadRoute(t, store, func() time.Time { return time.Unix(0, now.Load()).UTC() })
	key, _ := accesstest.NewKey(t, store, cryptointel.PlanPro)

	require.False(t, seenOf(t, do(rt.h, "GET", "/v1/search?q=x", bearer(key))).Ahead)
	now.Add(int64(5 * time.Minute))
	require.True(t, seenOf(t, do(rt.h, "GET", "/v1/search?q=x", bearer(key))).Ahead, "last seen 5 minutes ago")
	now.Add(int64(11 * time.Minute))
	require.False(t, seenOf(t, do(rt.h, "GET", "/v1/search?q=x", bearer(key))).Ahead, "last seen 11 minutes ago")
	require.Equal(t, int64(1), rt.count("used"))
}

// A key revoked since the door last saw it admitted, sent with a payment:
// the request is served paid (its handler runs), and the read run ahead as
// the key is over before that handler starts.
func TestReadAheadEndsBeforeARevokedKeysPayment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := &readAheadRoute{}
	svc := access.New(b.store, access.Config{Now: func() time.Time { return fixedNow }, OnReadAhead: rt.report,
		Payment: testPayments(b.fac)})
	rt.serve(svc, pricedPolicy)
	const target = "/v1/signal/latest?limit=50"
	challenge := do(rt.h, "GET", target, nil)
	require.Equal(t, http.StatusPaymentRequired, challenge.Code)

	key, id := accesstest.NewKey(t, b.store, cryptointel.PlanPro)
	require.False(t, seenOf(t, do(rt.h, "GET", target, bearer(key))).Ahead)
	require.True(t, seenOf(t, do(rt.h, "GET", target, bearer(key))).Ahead)

	_, err := b.store.Pool.Exec(context.Background(), "UPDATE api_keys SET revoked_at = now() WHERE id = $1", id)
	require.NoError(t, err)
	rt.slow = 50 * time.Millisecond
	hdr := bearer(key)
	hdr.Set("X-PAYMENT", accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature))
	paid := seenOf(t, do(rt.h, "GET", target, hdr))
	require.False(t, paid.Ahead)
	require.Zero(t, paid.Key, "served paid, not as the key")
	require.Equal(t, int64(1), rt.count("dropped"))
	require.Zero(t, rt.overlapped.Load(), "the handler ran while the read ahead as the revoked key was running")
}
