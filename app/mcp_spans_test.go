package app_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/resolvers"
	"github.com/cryptointel/cryptointel/rest"
)

// TestInProcessSpans: a route called in process that asks for spans gets,
// with its computed body, the spans of the object elements of the lists
// nested in its data — each exactly an object element of a list of the
// body, in the order they end, all of them for a page of events (its
// events, their owners, participants and evidence), and none of the
// elements of a root list (/v1/search's matches, which the body rebuilds).
func TestInProcessSpans(t *testing.T) {
	t.Parallel()
	router := seededRouters(t, 800, rest.CacheConfig{})[0]
	cases := []struct {
		route  string
		values map[string]string
		// all: every element of every list is handed over; else those of
		// the lists below the body's data list's elements.
		all bool
	}{
		{"GET /v1/latest", map[string]string{"limit": "25", "legacy": "false"}, true},
		{"GET /v1/latest", map[string]string{"limit": "5"}, true},
		{"GET /v1/search", map[string]string{"q": "Ethereum", "legacy": "false"}, false},
		{"GET /v1/timeline/byOrganizationId", map[string]string{"id": "101", "limit": "6"}, true},
	}
	for _, c := range cases {
		res := router.Call(context.Background(), c.route, c.values, rest.InProcess{Header: http.Header{}, Spans: true})
		require.Equal(t, http.StatusOK, res.Status, "%s %s", c.route, res.Body)
		require.NotEmpty(t, res.Spans, c.route)
		all, nested := listElements(t, res.Body)
		want := nested
		if c.all {
			want = all
		}
		require.Equal(t, want, res.Spans, "%s: the elements of its nested lists, in the order they end", c.route)
		without := router.Call(context.Background(), c.route, c.values, rest.InProcess{Header: http.Header{}})
		require.Equal(t, string(res.Body), string(without.Body), "%s: the same body", c.route)
		require.Nil(t, without.Spans)
	}
}

// listElements returns the spans of the object elements of every list of
// the compact JSON body, in the order they end, and those below the
// elements of its root member "data".
func listElements(t *testing.T, body []byte) (all, nested []jsonw.Span) {
	t.Helper()
	// walk reads the value at body[i]; root: it is the body, data: it is
	// the root's member "data".
	var walk func(i int, root, data bool) int
	walk = func(i int, root, data bool) int {
		switch body[i] {
		case '{':
			i++
			for body[i] != '}' {
				var key string
				j := i
				for j++; body[j] != '"'; j++ {
					if body[j] == '\\' {
						j++
					}
				}
				require.NoError(t, json.Unmarshal(body[i:j+1], &key))
				i = walk(j+2, false, root && key == "data")
				if body[i] == ',' {
					i++
				}
			}
			return i + 1
		case '[':
			i++
			for body[i] != ']' {
				start := i
				i = walk(i, false, false)
				if body[start] == '{' {
					s := jsonw.Span{Start: int32(start), End: int32(i)}
					all = append(all, s)
					if !data {
						nested = append(nested, s)
					}
				}
				if body[i] == ',' {
					i++
				}
			}
			return i + 1
		case '"':
			for i++; body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
			return i + 1
		}
		for body[i] != ',' && body[i] != '}' && body[i] != ']' {
			i++
		}
		return i
	}
	require.Equal(t, len(body)-1, walk(0, true, false), "compact JSON and its newline")
	return all, nested
}

// TestInProcessLend: a route called in process that asks for a lent body
// gets the very bytes of a body not lent, in a pooled buffer that Release
// hands back (Body is nil after), so that the next lent body may be
// written in it — and is written right. Behind a response cache nothing
// is lent: the cache keeps the body, and Release leaves it.
func TestInProcessLend(t *testing.T) {
	t.Parallel()
	routers := seededRouters(t, 400, rest.CacheConfig{}, rest.CacheConfig{TTL: time.Minute, Entries: 16})
	computed, cached := routers[0], routers[1]
	calls := []struct {
		route  string
		values map[string]string
	}{
		{"GET /v1/latest", map[string]string{"limit": "25", "legacy": "false"}},
		{"GET /v1/search", map[string]string{"q": "Ethereum", "legacy": "false"}},
		{"GET /v1/latest", map[string]string{"limit": "3"}},
	}
	ctx := context.Background()
	for round := range 3 {
		for _, c := range calls {
			want := computed.Call(ctx, c.route, c.values, rest.InProcess{Header: http.Header{}})
			require.Equal(t, http.StatusOK, want.Status, "%s %s", c.route, want.Body)
			lent := computed.Call(ctx, c.route, c.values, rest.InProcess{Header: http.Header{}, Spans: true, Lend: true})
			require.Equal(t, string(want.Body), string(lent.Body), "round %d, %s: the same body, lent", round, c.route)
			require.NotEmpty(t, lent.Spans, c.route)
			lent.Release()
			require.Nil(t, lent.Body, "%s: a lent body is handed back", c.route)
			lent.Release() // twice is once

			kept := cached.Call(ctx, c.route, c.values, rest.InProcess{Header: http.Header{}, Lend: true})
			require.Equal(t, http.StatusOK, kept.Status)
			body := string(kept.Body)
			kept.Release()
			require.Equal(t, body, string(kept.Body), "%s: a body behind the cache is not lent", c.route)
		}
	}
}

// seededRouters are /v1 routers over one database of their own, seeded
// with events demo events at a fixed instant, one per response cache
// configuration given.
func seededRouters(t *testing.T, events int, caches ...rest.CacheConfig) []*rest.Router {
	t.Helper()
	store := dbtest.New(t)
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	store.Now = func() time.Time { return now }
	_, err := demo.Seed(context.Background(), store, demo.Options{Events: events})
	require.NoError(t, err)
	exec := resolvers.NewExecutor(resolvers.Config{Store: store, CursorSecret: "in-process"})
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	routers := make([]*rest.Router, len(caches))
	for i, cache := range caches {
		routers[i], err = rest.New(rest.Config{Executor: exec, Schema: schema, Now: store.Now, Cache: cache})
		require.NoError(t, err)
	}
	return routers
}

// TestFramePooledBodies: behind no response cache, a graph route's body
// is written in a pooled buffer that the frame gives back once it has
// written it. Concurrent requests of routes of different sizes, plain,
// gzipped, HEAD and revalidated, each get their own body whole: a buffer
// given back before its response was written would be written over by
// another request's body.
func TestFramePooledBodies(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(seededRouters(t, 400, rest.CacheConfig{})[0])
	t.Cleanup(srv.Close)
	targets := []string{
		"/v1/latest?limit=25",
		"/v1/latest?limit=3&legacy=false",
		"/v1/search?q=Ethereum",
		"/v1/brief/batch?ids=101,102,103,104,105&since=2026-11-13T00:00:00Z",
		"/v1/entities/byName?name=Solana",
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
	get := func(method, target string, header http.Header) (int, http.Header, []byte) {
		req, err := http.NewRequest(method, srv.URL+target, nil)
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, res.Header, body
	}
	want := map[string][]byte{}
	tags := map[string]string{}
	for _, target := range targets {
		status, h, body := get(http.MethodGet, target, nil)
		require.Equal(t, http.StatusOK, status, "%s: %s", target, body)
		require.NotEmpty(t, h.Get("ETag"), target)
		want[target], tags[target] = body, h.Get("ETag")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*60)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				target := targets[(g+i)%len(targets)]
				switch i % 4 {
				case 0, 1:
					if _, _, body := get(http.MethodGet, target, nil); !bytes.Equal(body, want[target]) {
						errs <- fmt.Sprintf("%s: a body other than its own (%d bytes, want %d)", target, len(body), len(want[target]))
					}
				case 2:
					_, h, gz := get(http.MethodGet, target, http.Header{"Accept-Encoding": {"gzip"}})
					body := gz
					if h.Get("Content-Encoding") == "gzip" {
						zr, err := gzip.NewReader(bytes.NewReader(gz))
						if err == nil {
							body, err = io.ReadAll(zr)
						}
						if err != nil {
							errs <- fmt.Sprintf("%s: gzip: %v", target, err)
							continue
						}
					}
					if !bytes.Equal(body, want[target]) {
						errs <- fmt.Sprintf("%s, gzipped: a body other than its own", target)
					}
				case 3:
					if status, _, _ := get(http.MethodGet, target, http.Header{"If-None-Match": {tags[target]}}); status != http.StatusNotModified {
						errs <- fmt.Sprintf("%s: revalidated: %d", target, status)
					}
					if _, h, _ := get(http.MethodHead, target, nil); h.Get("ETag") != tags[target] {
						errs <- fmt.Sprintf("%s: HEAD: ETag %s, want %s", target, h.Get("ETag"), tags[target])
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
