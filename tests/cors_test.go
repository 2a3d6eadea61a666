package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/ingest"
)

// startCORSServer serves the whole app with CORS_ALLOWED_ORIGINS set to
// origins and a cursor secret (which signs stream tickets).
func startCORSServer(t *testing.T, origins ...string) *observeServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Config{
		DatabaseURL:        dbtest.NewURL(t),
		Logger:             testLogger(t),
		ShutdownTimeout:    15 * time.Second,
		CursorSecret:       "cors-test-cursor-secret-0123456789abcdef",
		CORSAllowedOrigins: origins,
	})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		a.Close() //nolint:errcheck
	})
	summary, err := ingest.Write(context.Background(), a.DB, strings.NewReader(playgroundFixture()), ingest.Options{})
	require.NoError(t, err)
	require.Empty(t, summary.Failed, "fixture lines rejected")
	return &observeServer{app: a, base: "http://" + ln.Addr().String()}
}

// corsDo sends method path with the headers given as name, value pairs.
func corsDo(t *testing.T, base, method, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestCORSAndStreamTickets: an allowed origin's preflight is answered 204
// without a key and without credits, its responses name it in
// Access-Control-Allow-Origin (with Vary: Origin) and expose the
// rate-limit, credit and request-id headers; another origin gets none of
// it. A ticket minted with the key opens exactly its stream URL, as the
// key (metered as the key), and nothing else.
func TestCORSAndStreamTickets(t *testing.T) {
	t.Parallel()
	const page = "http://dashboard.example.test:3000"
	s := startCORSServer(t, page)
	key := playgroundKey(t, s)

	for _, path := range []string{"/v1/latest", "/graphql", "/v1/stream"} {
		resp, body := corsDo(t, s.base, http.MethodOptions, path, "Origin", page,
			"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization, last-event-id")
		require.Equal(t, http.StatusNoContent, resp.StatusCode, "%s: %s", path, body)
		require.Equal(t, page, resp.Header.Get("Access-Control-Allow-Origin"), path)
		require.Contains(t, resp.Header.Values("Vary"), "Origin", path)
		for _, h := range []string{"Authorization", "Content-Type", "Last-Event-ID"} {
			require.Contains(t, resp.Header.Get("Access-Control-Allow-Headers"), h, path)
		}
		require.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "POST", path)
		require.Empty(t, resp.Header.Get("X-Monthly-Used"), "%s: a preflight reaches no access layer", path)
	}
	// Another origin: no CORS answer, so its browser refuses.
	resp, _ := corsDo(t, s.base, http.MethodOptions, "/v1/latest", "Origin", "http://evil.example.test",
		"Access-Control-Request-Method", "GET")
	require.NotEqual(t, http.StatusNoContent, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))

	resp, body := corsDo(t, s.base, http.MethodGet, "/v1/latest", "Origin", page, "Authorization", "Bearer "+key)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Equal(t, page, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, resp.Header.Values("Vary"), "Origin")
	exposed := resp.Header.Get("Access-Control-Expose-Headers")
	for _, h := range []string{"X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After",
		"X-Monthly-Limit", "X-Monthly-Used", "X-Monthly-Remaining", "X-Credit-Cost", "X-Plan-Tier"} {
		require.Contains(t, exposed, h)
	}
	used := resp.Header.Get("X-Monthly-Used")
	// An error too is readable by the page.
	resp, _ = corsDo(t, s.base, http.MethodGet, "/v1/latest", "Origin", page)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, page, resp.Header.Get("Access-Control-Allow-Origin"))

	// Preflights cost nothing: the month's credits are where they were.
	resp, _ = corsDo(t, s.base, http.MethodGet, "/v1/usage", "Authorization", "Bearer "+key)
	require.Equal(t, used, resp.Header.Get("X-Monthly-Used"))

	// A ticket for one stream URL.
	mint := func(path, query string) map[string]any {
		resp, body := corsDo(t, s.base, http.MethodPost, "/v1/stream/tickets?path="+url.QueryEscape(path)+"&query="+url.QueryEscape(query),
			"Authorization", "Bearer "+key, "Origin", page)
		require.Equal(t, http.StatusCreated, resp.StatusCode, string(body))
		require.Equal(t, page, resp.Header.Get("Access-Control-Allow-Origin"))
		var out struct{ Data map[string]any }
		require.NoError(t, json.Unmarshal(body, &out))
		return out.Data
	}
	ticket := mint("/v1/stream", "surface=signal&legacy=false")
	target := ticket["url"].(string)
	require.NotContains(t, target, key, "the key is never in the URL")
	require.Contains(t, target, "ticket=")
	c, status, body := openSSE(t, s.base, target, "", "Origin", page)
	require.Equal(t, http.StatusOK, status, string(body))
	require.NotNil(t, c)
	c.close()

	// The same stream with its parameters in another order: the same URL.
	tk := url.QueryEscape(ticket["ticket"].(string))
	_, status, _ = openSSE(t, s.base, "/v1/stream?legacy=false&surface=signal&ticket="+tk, "")
	require.Equal(t, http.StatusOK, status)
	// Another query, another route, a forged ticket: 401, with its code.
	for _, path := range []string{
		"/v1/stream?surface=radar&legacy=false&ticket=" + tk,
		"/v1/stream?surface=signal&ticket=" + tk,
		"/v1/stream?surface=signal&legacy=false&ticket=" + tk + "x",
		"/v1/stream?surface=signal&legacy=false&ticket=" + strings.Replace(tk, "e", "f", 1),
	} {
		_, status, body := openSSE(t, s.base, path, "")
		require.Equal(t, http.StatusUnauthorized, status, path)
		var e httperr.Body
		require.NoError(t, json.Unmarshal(body, &e))
		require.Equal(t, access.MsgInvalidTicket, e.Error, path)
		require.Equal(t, cryptointel.EUNAUTHORIZED, e.Code, path)
	}
	// graphql-sse with a ticket for /graphql: the subscription runs as the key.
	gt := mint("/graphql", "")
	cursor := streamCursor(t, s.base, key)
	sub, err := json.Marshal(map[string]any{"query": `subscription { events(after: "` + cursor + `") { id title } }`})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.base+gt["url"].(string), strings.NewReader(string(sub)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Origin", page)
	gresp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, gresp.StatusCode)
	require.Equal(t, page, gresp.Header.Get("Access-Control-Allow-Origin"))
	require.Eventually(t, func() bool { return s.app.Hub.Stats().Subscribers > 0 }, 10*time.Second, 20*time.Millisecond)
	gresp.Body.Close()
	// The /graphql ticket is no credential for a plain query.
	req, err = http.NewRequest(http.MethodPost, s.base+gt["url"].(string), strings.NewReader(`{"query":"{ streamCursor }"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	gresp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	gresp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, gresp.StatusCode)

	// A ticket opens streams only, never a plain route.
	resp, _ = corsDo(t, s.base, http.MethodGet, "/v1/latest?ticket="+tk)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	// Only stream routes get tickets; a ticket needs a key.
	resp, body = corsDo(t, s.base, http.MethodPost, "/v1/stream/tickets?path=/v1/latest", "Authorization", "Bearer "+key)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
	resp, _ = corsDo(t, s.base, http.MethodPost, "/v1/stream/tickets?path=/v1/stream")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestBrowserCrossOriginFeedAndStream: in headless Chromium, a page served
// on another origin (a second loopback port, allowed by
// CORS_ALLOWED_ORIGINS) reads a feed with fetch() and its rate-limit and
// credit headers, mints a stream ticket, opens /v1/stream with an
// EventSource and receives a live event as it is ingested.
func TestBrowserCrossOriginFeedAndStream(t *testing.T) {
	t.Parallel()
	pageSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, corsPage) //nolint:errcheck
	}))
	t.Cleanup(pageSrv.Close)
	s := startCORSServer(t, pageSrv.URL)
	key := playgroundKey(t, s)
	require.NotEqual(t, pageSrv.URL, s.base, "the page is on another origin")

	_, steps := playgroundBrowser(t, "cors-failure.png", nil)
	require.NoError(t, chromedp.Do(steps, chromedp.Navigate(pageSrv.URL+"/")))
	started, err := chromedp.Run(steps, chromedp.Evaluate[bool](fmt.Sprintf("run(%q, %q), true", s.base, key)))
	require.NoError(t, err)
	require.True(t, started)
	require.NoError(t, chromedp.Do(steps, pollPage(`window.out.open === true || !!window.out.failed`)))
	out, err := chromedp.Run(steps, chromedp.Evaluate[map[string]any](`window.out`))
	require.NoError(t, err)
	require.Nil(t, out["failed"], "%v", out)
	require.EqualValues(t, 200, out["status"], "%v", out)
	require.NotEmpty(t, out["remaining"], "X-RateLimit-Remaining is readable: %v", out)
	require.NotEmpty(t, out["monthlyUsed"], "X-Monthly-Used is readable: %v", out)
	require.NotEmpty(t, out["requestId"], "X-Request-Id is readable: %v", out)
	require.NotEmpty(t, out["feedCount"], "%v", out)
	require.NotContains(t, out["streamUrl"], key, "the key is never in the stream URL")

	ingestVia(t, s.app.DB, map[string]any{
		"kind": "event", "id": 5201, "title": "Cross-origin live event arrives", "eventCategory": "listing",
		"owners": []int64{101}, "evidence": []map[string]any{{"id": 9201, "content": "Listed", "url": "https://example.org/listing",
			"timestamp": time.Now().UTC().Format(time.RFC3339)}},
	})
	require.NoError(t, chromedp.Do(steps, pollPage(`window.out.events.some(e => e.title === 'Cross-origin live event arrives')`)))
	out, err = chromedp.Run(steps, chromedp.Evaluate[map[string]any](`window.out`))
	require.NoError(t, err)
	events := out["events"].([]any)
	require.EqualValues(t, 5201, events[len(events)-1].(map[string]any)["id"], "%v", out)
}

// corsPage is the other origin's page: run(base, key) reads /v1/latest
// with fetch(), mints a ticket for /v1/stream and opens it with an
// EventSource; window.out gathers what the page could read.
const corsPage = `<!doctype html>
<html><head><title>dashboard</title></head><body><pre id="log"></pre>
<script>
window.out = {events: []};
async function run(base, key) {
  try {
    const auth = {Authorization: 'Bearer ' + key};
    const feed = await fetch(base + '/v1/latest?limit=5', {headers: auth});
    out.status = feed.status;
    out.remaining = feed.headers.get('X-RateLimit-Remaining');
    out.monthlyUsed = feed.headers.get('X-Monthly-Used');
    out.requestId = feed.headers.get('X-Request-Id');
    out.feedCount = (await feed.json()).data.length;
    const minted = await fetch(base + '/v1/stream/tickets?path=/v1/stream&query=' + encodeURIComponent('surface=radar'),
      {method: 'POST', headers: auth});
    if (minted.status !== 201) { out.failed = 'mint ' + minted.status + ' ' + await minted.text(); return; }
    const ticket = (await minted.json()).data;
    out.streamUrl = ticket.url;
    const es = new EventSource(base + ticket.url);
    es.onopen = () => { out.open = true; };
    es.onmessage = (m) => { if (m.data) out.events.push(JSON.parse(m.data)); };
    es.onerror = () => { if (!out.open) out.failed = 'EventSource error before open'; };
  } catch (e) {
    out.failed = String(e);
  }
}
</script></body></html>`
