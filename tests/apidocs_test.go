package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/apidocs"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
)

// TestAPIReference opens /docs in headless Chromium: the reference renders
// /openapi.json from the binary's own assets under its strict
// Content-Security-Policy (no request leaves the server, no policy
// violation), lists every route of the document (each operation's summary
// and path), and its "Test Request" client sends a request with the key
// entered on the page and shows the answer. / leads to /docs, and
// /playground links to it. It saves tests/output/apidocs.png.
func TestAPIReference(t *testing.T) {
	t.Parallel()
	s := startObserveServer(t, dbtest.NewURL(t))
	ingested, err := ingest.Write(context.Background(), s.app.DB, strings.NewReader(playgroundFixture()), ingest.Options{})
	require.NoError(t, err)
	require.Empty(t, ingested.Failed, "fixture lines rejected")
	key := playgroundKey(t, s)

	// / redirects to the reference; the page carries its policy.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(s.base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "/docs", resp.Header.Get("Location"))
	resp, err = http.Get(s.base + "/docs")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, apidocs.ContentSecurityPolicy, resp.Header.Get("Content-Security-Policy"))
	resp, err = http.Get(s.base + "/docs/nothing.js")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	// The routes of the document: every operation's method, path and summary.
	resp, err = http.Get(s.base + "/openapi.json")
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]struct {
			Summary string `json:"summary"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	type route struct{ method, path, summary string }
	var routes []route
	for path, ops := range doc.Paths {
		for method, op := range ops {
			routes = append(routes, route{strings.ToUpper(method), path, op.Summary})
		}
	}
	sort.Slice(routes, func(i, j int) bool { return routes[i].path+routes[i].method < routes[j].path+routes[j].method })
	require.Greater(t, len(routes), 20)

	var (
		mu        sync.Mutex
		requests  []string
		consoleMs []string
	)
	_, steps := playgroundBrowser(t, "apidocs-failure.png", func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *runtime.EventConsoleAPICalled:
			for _, a := range ev.Args {
				consoleMs = append(consoleMs, string(a.Value))
			}
		case *runtime.EventExceptionThrown:
			msg := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
			consoleMs = append(consoleMs, msg)
		}
	})
	text := `document.body.innerText`
	require.NoError(t, chromedp.Do(steps,
		chromedp.Navigate(s.base+"/docs"),
		pollPage(text+`.includes('cryptointel API') && `+text+`.includes('Operations')`),
	))
	// Every route is listed: its summary in the navigation, and its path
	// in the page (the reference renders all operations).
	missing := func() []string {
		page, err := chromedp.Run(steps, chromedp.Evaluate[string](`document.body.textContent`))
		require.NoError(t, err)
		var out []string
		for _, r := range routes {
			if !strings.Contains(page, r.summary) || !strings.Contains(page, r.path) {
				out = append(out, r.method+" "+r.path+" ("+r.summary+")")
			}
		}
		return out
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		// The reference renders sections as they come into view.
		chromedp.Run(steps, chromedp.Evaluate[any](`window.scrollBy(0, 4000)`)) //nolint:errcheck
		time.Sleep(200 * time.Millisecond)
	}
	require.Empty(t, missing(), "routes of /openapi.json the reference does not list")
	chromedp.Run(steps, chromedp.Evaluate[any](`window.scrollTo(0, 0)`)) //nolint:errcheck
	savePlaygroundShot(t, steps, "apidocs.png")

	tryIt(t, steps, key)

	// Nothing came from outside the server, and the policy held.
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, requests)
	for _, u := range requests {
		local := strings.HasPrefix(u, s.base+"/") || strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:")
		require.True(t, local, fmt.Sprintf("the page requested %s", u))
	}
	for _, m := range consoleMs {
		require.NotContains(t, m, "Content Security Policy", "the page broke its policy: %s", m)
	}
	summary(t, "apidocs: /docs lists all %d routes of /openapi.json in headless Chromium, from %d local requests", len(routes), len(requests))
}

// tryIt opens the reference's request client ("Test Request") on the
// latest radar events route, enters key as the Bearer token, sends the
// request and checks the route's answer shows in the client.
func tryIt(t *testing.T, steps context.Context, key string) {
	t.Helper()
	// The buttons, inputs and their placeholders, for a failure message.
	const controls = `(() => Array.from(document.querySelectorAll('button, input, [role=button]')).map(el =>
		el.tagName + ' ' + (el.getAttribute('placeholder') || '') + ' ' + (el.getAttribute('aria-label') || '') + ' ' +
		el.textContent.trim().slice(0, 40)).filter(s => s.trim() !== '').join('\n'))()`
	dump := func() string {
		out, _ := chromedp.Run(steps, chromedp.Evaluate[string](controls))
		return out
	}
	// The key goes in the reference's Bearer Token field (Authentication),
	// which its request client shares.
	token := `(() => Array.from(document.querySelectorAll('input, [contenteditable=true]')).find(el =>
		/token/i.test(el.getAttribute('placeholder') || '') || /token/i.test(el.getAttribute('aria-label') || '')) || null)()`
	err := chromedp.Do(steps, chromedp.Poll[chromedp.Void](token+` !== null`, chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err, "no Bearer token field; controls:\n%s", dump())
	_, err = chromedp.Run(steps, chromedp.Evaluate[any](token+`.focus()`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(steps, chromedp.KeyEvent(key)))

	// Go to the route through the navigation, then press its Test Request.
	open := `(() => {
		const b = Array.from(document.querySelectorAll('button')).find(b =>
			b.textContent.includes('Test Request') && b.textContent.includes('get /v1/latest)'));
		if (b) { b.scrollIntoView(); b.click(); return true; }
		const nav = Array.from(document.querySelectorAll('aside a, aside button, nav a, nav button, [role=navigation] a'))
			.find(el => el.textContent.trim().startsWith('Latest radar events'));
		if (nav) nav.click(); else window.scrollBy(0, 2000);
		return false;
	})()`
	err = chromedp.Do(steps, chromedp.Poll[chromedp.Void](open, chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "no Test Request button for GET /v1/latest; controls:\n%s", dump())
	send := `(() => { const b = Array.from(document.querySelectorAll('button')).find(b => /^send/i.test(b.textContent.trim())); if (!b) return false; b.click(); return true; })()`
	err = chromedp.Do(steps, chromedp.Poll[chromedp.Void](send, chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err, "no Send button in the request client; controls:\n%s", dump())
	answered := `document.body.innerText.includes('Foundation funds zero-knowledge research')`
	err = chromedp.Do(steps, chromedp.Poll[chromedp.Void](answered, chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		body, _ := chromedp.Run(steps, chromedp.Evaluate[string](`document.body.innerText.slice(-3000)`))
		require.NoError(t, err, "the client showed no answer of the route; page end:\n%s\ncontrols:\n%s", body, dump())
	}
	savePlaygroundShot(t, steps, "apidocs-test-request.png")
}
