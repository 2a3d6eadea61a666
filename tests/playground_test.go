package tests

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
)

// chromiumPath is Debian's chromium, which `make chromium` installs.
const chromiumPath = "/usr/bin/chromium"

// playgroundFixture is a small graph for the playground's example query:
// Ethereum, the foundation behind it, and an event the foundation owns.
func playgroundFixture() string {
	day := time.Now().UTC().Add(-2 * time.Hour).Format(time.RFC3339)
	return strings.Join([]string{
		`{"kind":"entity","id":101,"canonicalName":"Ethereum","displayName":"Ethereum","entityType":"project","aliases":["ETH"]}`,
		`{"kind":"entity","id":102,"canonicalName":"Ethereum Foundation","displayName":"Ethereum Foundation","entityType":"foundation","aliases":["EF"]}`,
		`{"kind":"relationship","sourceEntityId":102,"targetEntityId":101,"relationshipType":"FOUNDATION_OF","searchExpand":true}`,
		`{"kind":"event","id":5001,"title":"Foundation funds zero-knowledge research","eventCategory":"funding","eventSubcategory":"grants","summary":"Grants for zk research.","bullets":["Grant round"],"owners":[102],"participants":[101],"evidence":[{"id":9001,"content":"Grants announced","url":"https://example.org/grants","timestamp":"` + day + `"}]}`,
	}, "\n") + "\n"
}

// playgroundKey creates an API key on the enterprise plan for s's database.
func playgroundKey(t *testing.T, s *observeServer) string {
	t.Helper()
	key, _, err := db.CreateAPIKey(context.Background(), s.app.DB.Bun, "playground-test", "enterprise")
	require.NoError(t, err)
	return key
}

// playgroundBrowser starts headless Chromium for a playground test, with
// listener (may be nil) receiving the tab's events from its first command
// on, and returns the tab's context and a context bounding the test's
// steps. On failure it saves what the page showed to
// tests/output/<failureShot>.
func playgroundBrowser(t *testing.T, failureShot string, listener func(ev any)) (tab, steps context.Context) {
	t.Helper()
	if _, err := exec.LookPath(chromiumPath); err != nil {
		t.Fatalf("%s not found: run `make chromium` (make test does) to install Debian's chromium", chromiumPath)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1600, 1000),
	)
	t.Cleanup(cancelAlloc)
	opts := []chromedp.ContextOption{chromedp.WithLogf(t.Logf)}
	if listener != nil {
		opts = append(opts, chromedp.WithListener(listener))
	}
	tab, cancelTab := chromedp.NewContext(allocCtx, opts...)
	t.Cleanup(cancelTab)
	// Start the browser on a context without a deadline (a deadline on the
	// first run would bound the browser's life), then bound the steps.
	require.NoError(t, chromedp.Do(tab))
	steps, cancelSteps := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(cancelSteps)
	// On failure, keep what the browser showed (cleanups run last first:
	// this one before the tab closes).
	t.Cleanup(func() {
		if t.Failed() {
			if png, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err == nil {
				out, _ := filepath.Abs(filepath.Join("output", failureShot))
				if os.MkdirAll(filepath.Dir(out), 0o755) == nil && os.WriteFile(out, png, 0o644) == nil {
					t.Logf("failure screenshot: %s", out)
				}
			}
		}
	})
	return tab, steps
}

// pageText is the JavaScript expression of the visible text of the elements
// selector matches (Monaco draws spaces as no-break spaces).
func pageText(selector string) string {
	return `(() => {
		const els = document.querySelectorAll('` + selector + `');
		return Array.from(els).map(el => el.textContent).join('\n').replace(/\u00a0/g, ' ');
	})()`
}

// pollPage waits until expression is truthy.
func pollPage(expression string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expression, chromedp.WithPollingInterval(100*time.Millisecond))
}

// savePlaygroundShot saves a screenshot to tests/output/<name>.
func savePlaygroundShot(t *testing.T, steps context.Context, name string) {
	t.Helper()
	screenshot, err := chromedp.Run(steps, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	out, err := filepath.Abs(filepath.Join("output", name))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	require.NoError(t, os.WriteFile(out, screenshot, 0o644))
	t.Logf("screenshot: %s", out)
}

// TestPlaygroundRunsExampleQuery opens /playground in headless Chromium,
// enters a key, runs the example query and checks that the result panel
// shows the entities it walks. It saves a screenshot to
// tests/output/playground.png.
func TestPlaygroundRunsExampleQuery(t *testing.T) {
	t.Parallel()
	s := startObserveServer(t, dbtest.NewURL(t))
	summary, err := ingest.Write(context.Background(), s.app.DB, strings.NewReader(playgroundFixture()), ingest.Options{})
	require.NoError(t, err)
	require.Empty(t, summary.Failed, "fixture lines rejected")
	key := playgroundKey(t, s)

	// Record every URL the page requests, from the tab's first command on.
	var (
		mu       sync.Mutex
		requests []string
	)
	_, stepCtx := playgroundBrowser(t, "playground-failure.png", func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, ev.Request.URL)
			mu.Unlock()
		}
	})
	text, poll := pageText, pollPage

	require.NoError(t, chromedp.Do(stepCtx,
		chromedp.Navigate(s.base+"/playground"),
		chromedp.WaitVisible(chromedp.CSS("#api-key")),
		// The query editor opens with the example multi-hop query.
		poll(text(".graphiql-query-editor")+`.includes('resolveEntities')`),
	))
	queryText, err := chromedp.Run(stepCtx, chromedp.Evaluate[string](text(".graphiql-query-editor")))
	require.NoError(t, err)
	require.Contains(t, queryText, `resolveEntities(name: "Ethereum", first: 1)`)
	require.Contains(t, queryText, "relationships(first: 5)")

	require.NoError(t, chromedp.Do(stepCtx, chromedp.SendKeys(chromedp.CSS("#api-key"), key)))
	// Press run; should the press land while GraphiQL is still settling and
	// produce nothing, press again (a query run twice is harmless).
	answered := text(".graphiql-response") + `.includes('"data"') || ` + text(".graphiql-response") + `.includes('"errors"')`
	for attempt := 1; ; attempt++ {
		require.NoError(t, chromedp.Do(stepCtx, chromedp.Click(chromedp.CSS(".graphiql-execute-button"))))
		err := chromedp.Do(stepCtx, chromedp.Poll[chromedp.Void](answered,
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
		if err == nil {
			break
		}
		require.Less(t, attempt, 3, "the result panel stayed empty after %d presses of run: %v", attempt, err)
	}
	result, err := chromedp.Run(stepCtx, chromedp.Evaluate[string](text(".graphiql-response")))
	require.NoError(t, err)
	storedKey, err := chromedp.Run(stepCtx, chromedp.Evaluate[string](`localStorage.getItem('cryptointel.apiKey')`))
	require.NoError(t, err)
	require.Equal(t, key, storedKey, "the key field is kept in localStorage")

	// The result panel shows the entity and the graph walked from it.
	require.NotContains(t, result, `"errors"`, result)
	require.Contains(t, result, `"displayName": "Ethereum"`, result)
	require.Contains(t, result, `"relationshipType": "FOUNDATION_OF"`, result)
	require.Contains(t, result, `"displayName": "Ethereum Foundation"`, result)
	require.Contains(t, result, `Foundation funds zero-knowledge research`, result)

	// The schema docs explorer opens on the root types; then the page is
	// captured with both the docs and the result.
	require.NoError(t, chromedp.Do(stepCtx,
		chromedp.Click(chromedp.CSS(`button[aria-label="Show Documentation Explorer"]`)),
		poll(text(".graphiql-doc-explorer")+`.includes('Query')`),
	))
	savePlaygroundShot(t, stepCtx, "playground.png")

	// The page links to the API reference.
	docsLink, err := chromedp.Run(stepCtx, chromedp.Evaluate[string](`(() => { const a = Array.from(document.querySelectorAll('a')).find(a => a.textContent.trim() === 'API reference'); return a ? a.getAttribute('href') : ''; })()`))
	require.NoError(t, err)
	require.Equal(t, "/docs", docsLink, "/playground links to the API reference")

	// Nothing was loaded from outside the service.
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, requests)
	for _, u := range requests {
		local := strings.HasPrefix(u, s.base+"/") || strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:")
		require.True(t, local, fmt.Sprintf("the page requested %s", u))
	}
}

// TestPlaygroundSubscription opens /playground in headless Chromium on a
// subscription (a ?query= link), runs it with a key, ingests an event and
// checks that the result panel shows it, pushed over graphql-sse. Without a
// link the playground opens a second tab with a live-events subscription.
// It saves a screenshot to tests/output/playground-subscription.png.
func TestPlaygroundSubscription(t *testing.T) {
	t.Parallel()
	s := startObserveServer(t, dbtest.NewURL(t))
	summary, err := ingest.Write(context.Background(), s.app.DB, strings.NewReader(playgroundFixture()), ingest.Options{})
	require.NoError(t, err)
	require.Empty(t, summary.Failed, "fixture lines rejected")
	key := playgroundKey(t, s)
	cursor := streamCursor(t, s.base, key)

	_, stepCtx := playgroundBrowser(t, "playground-subscription-failure.png", nil)
	text, poll := pageText, pollPage

	// Out of the box: a second tab subscribes to live signals.
	require.NoError(t, chromedp.Do(stepCtx,
		chromedp.Navigate(s.base+"/playground"),
		chromedp.WaitVisible(chromedp.CSS("#api-key")),
		poll(text(".graphiql-tab")+`.includes('LiveSignals')`),
	))

	query := `subscription PlaygroundLive { events(after: "` + cursor + `") { id title eventCategory owners { label } } }`
	require.NoError(t, chromedp.Do(stepCtx,
		chromedp.Navigate(s.base+"/playground?query="+url.QueryEscape(query)),
		chromedp.WaitVisible(chromedp.CSS("#api-key")),
		poll(text(".graphiql-query-editor")+`.includes('PlaygroundLive')`),
		chromedp.SendKeys(chromedp.CSS("#api-key"), key),
	))
	// Run until the subscription is open on the server (a press landing
	// while GraphiQL still settles may do nothing).
	for attempt := 1; s.app.Hub.Stats().Subscribers == 0; attempt++ {
		require.NoError(t, chromedp.Do(stepCtx, chromedp.Click(chromedp.CSS(".graphiql-execute-button"))))
		deadline := time.Now().Add(10 * time.Second)
		for s.app.Hub.Stats().Subscribers == 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		require.Less(t, attempt, 3, "the subscription did not open after %d presses of run", attempt)
	}
	ingestVia(t, s.app.DB, map[string]any{
		"kind": "event", "id": 5101, "title": "Playground live event arrives", "eventCategory": "listing",
		"owners": []int64{101}, "evidence": []map[string]any{{"id": 9101, "content": "Listed", "url": "https://example.org/listing",
			"timestamp": time.Now().UTC().Format(time.RFC3339)}},
	})
	require.NoError(t, chromedp.Do(stepCtx, poll(text(".graphiql-response")+`.includes('Playground live event arrives')`)))
	result, err := chromedp.Run(stepCtx, chromedp.Evaluate[string](text(".graphiql-response")))
	require.NoError(t, err)
	require.Contains(t, result, `"id": 5101`, result)
	require.Contains(t, result, `"label": "Ethereum"`, result)
	require.Contains(t, result, `"cursor"`, result)
	require.NotContains(t, result, `"errors"`, result)

	savePlaygroundShot(t, stepCtx, "playground-subscription.png")
}
