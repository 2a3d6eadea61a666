package access_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestKeyShareOfThePool: one key runs at most KeyShare requests at once
// (each of which may hold a database connection); more wait in its queue
// (four times the share) and run as places free; past the queue a request
// is refused at once with 429, Retry-After: 1 and the message. Another key
// is not held up by the first one's flood.
func TestKeyShareOfThePool(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	const share = 3
	svc := access.New(store, access.Config{Now: func() time.Time { return fixedNow }, KeyShare: share, RateLimit: 1000})
	flood, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
	other, _ := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)

	var running, most atomic.Int32
	release := make(chan struct{})
	h := svc.Wrap(searchPolicy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+flood {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			<-release
			running.Add(-1)
		}
		okHandler(w, r)
	}))

	// The share runs, the queue waits.
	const queued = 4 * share
	codes := make(chan int, share+queued)
	var wg sync.WaitGroup
	for range share + queued {
		wg.Go(func() { codes <- do(h, "GET", "/v1/search?q=x", bearer(flood)).Code })
	}
	require.Eventually(t, func() bool { return running.Load() == share }, 10*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // give the queue a chance to jump the share: it must not
	require.EqualValues(t, share, running.Load())

	// Past the queue: refused at once.
	rec := do(h, "GET", "/v1/search?q=x", bearer(flood))
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	require.Equal(t, "1", rec.Header().Get("Retry-After"))
	require.Equal(t, fmt.Sprintf(access.MsgKeyBusyFmt, share), errorOf(t, rec))

	// Another key is served meanwhile.
	require.Equal(t, http.StatusOK, do(h, "GET", "/v1/search?q=x", bearer(other)).Code)

	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		require.Equal(t, http.StatusOK, c)
	}
	require.EqualValues(t, share, most.Load(), "never more than the share at once")
}
