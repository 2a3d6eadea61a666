package tests

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
)

// metadataServer is an HTTPS server on loopback serving Client ID
// Metadata Documents (and misbehaving ones) for the tests, and the app
// options that let the service fetch from it: loopback allowed and its
// certificate trusted (OAUTH_METADATA_ALLOW_CIDRS is for development and
// tests only).
type metadataServer struct {
	*httptest.Server
	mu   sync.Mutex
	docs map[string]func(w http.ResponseWriter, r *http.Request)
}

// serve sets the handler of path.
func (m *metadataServer) serve(path string, h func(w http.ResponseWriter, r *http.Request)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.docs[path] = h
}

func newMetadataServer(t *testing.T) *metadataServer {
	t.Helper()
	m := &metadataServer{docs: map[string]func(http.ResponseWriter, *http.Request){}}
	m.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		h, ok := m.docs[r.URL.Path]
		m.mu.Unlock()
		if ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(m.Close)
	return m
}

// appOption lets the app fetch from m.
func (m *metadataServer) appOption(c *app.Config) {
	pool := x509.NewCertPool()
	pool.AddCert(m.Certificate())
	c.OAuthMetadataAllowCIDRs = "127.0.0.0/8"
	c.OAuthMetadataTLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	c.OAuthMetadataTimeout = time.Second
}

// document serves a good metadata document at path for redirect.
func (m *metadataServer) document(path string, redirect string) string {
	id := m.URL + path
	m.serve(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck
			"client_id": id, "client_name": "cryptointel interop", "redirect_uris": []string{redirect},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
			"token_endpoint_auth_method": "none",
		})
	})
	return id
}

// freePort returns a loopback port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// TestOAuthTypeScriptSDKThroughConsentPage: the official TypeScript SDK's
// OAuth client connects to /mcp knowing only its URL — discovery,
// registration (dynamic, then with a Client ID Metadata Document),
// authorization with PKCE through the consent page, which headless
// Chromium fills in and approves as a person would, token exchange — then
// its tool calls are metered to the key's account, it refreshes its
// token (rotated), and it is refused once the key is revoked.
func TestOAuthTypeScriptSDKThroughConsentPage(t *testing.T) {
	requireMCPInterop(t)
	meta := newMetadataServer(t)
	s := startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, restFixture()) }, meta.appOption)
	_, steps := playgroundBrowser(t, "oauth-consent-failure.png", nil)
	t.Cleanup(func() {
		if !t.Failed() {
			summary(t, "oauth: the TypeScript SDK's OAuth client connected by URL alone through the consent page in Chromium, with dynamic registration and with a Client ID Metadata Document; called, refreshed, refused after the key's revocation")
		}
	})
	for _, mode := range []string{"dcr", "cimd"} {
		t.Run(mode, func(t *testing.T) {
			key, keyID := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
			port := freePort(t)
			opts := map[string]any{"url": s.base + "/mcp", "callbackPort": port, "tool": "search_events", "args": map[string]any{"query": "acme"}}
			redirect := "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
			if mode == "cimd" {
				opts["clientMetadataUrl"] = meta.document("/clients/interop.json", redirect)
			}
			arg, err := json.Marshal(opts)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "oauth.mjs", string(arg))
			cmd.Dir = mcpInteropDir
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			defer func() { cmd.Process.Kill(); cmd.Wait() }() //nolint:errcheck
			events := make(chan map[string]any, 8)
			go func() {
				sc := bufio.NewScanner(stdout)
				sc.Buffer(make([]byte, 1<<20), 8<<20)
				for sc.Scan() {
					var ev map[string]any
					if json.Unmarshal(sc.Bytes(), &ev) == nil {
						events <- ev
					}
				}
				close(events)
			}()
			next := func(want string) map[string]any {
				t.Helper()
				select {
				case ev, ok := <-events:
					require.True(t, ok, "the SDK client ended early: %s", stderr.String())
					require.Equal(t, want, ev["event"], "%v\n%s", ev, stderr.String())
					return ev
				case <-ctx.Done():
					t.Fatalf("no %s event: %s", want, stderr.String())
				}
				return nil
			}

			// The SDK discovered the server and registered; a person
			// approves on the consent page.
			auth := next("authorize")
			before := usageOf(t, s, key)
			require.NoError(t, chromedp.Do(steps,
				chromedp.Navigate(auth["url"].(string)),
				chromedp.WaitVisible(chromedp.CSS("#api_key")),
			))
			client, err := chromedp.Run(steps, chromedp.Evaluate[string](`document.getElementById('client-name').textContent`))
			require.NoError(t, err)
			host, err := chromedp.Run(steps, chromedp.Evaluate[string](`document.getElementById('redirect-host').textContent`))
			require.NoError(t, err)
			require.NoError(t, chromedp.Do(steps,
				chromedp.SendKeys(chromedp.CSS("#api_key"), key),
				chromedp.Click(chromedp.CSS("#approve")),
				chromedp.WaitVisible(chromedp.CSS("#done")),
			))
			require.Equal(t, "cryptointel interop", client)
			require.Equal(t, "127.0.0.1:"+strconv.Itoa(port), host)

			ev := next("connected")
			if mode == "cimd" {
				require.Equal(t, opts["clientMetadataUrl"], ev["clientId"])
			} else {
				require.True(t, strings.HasPrefix(ev["clientId"].(string), "client_"), "%v", ev["clientId"])
			}
			require.Contains(t, ev["tools"], "search_events")
			require.NotEqual(t, true, ev["call"].(map[string]any)["isError"], "%v", ev["call"])
			after := usageOf(t, s, key)
			require.Greater(t, after.Credits.Today, before.Credits.Today, "the tool call is metered to the key's account")
			_, err = stdin.Write([]byte("refresh\n")) // the script waits, so after holds the first call alone
			require.NoError(t, err)

			ev = next("refreshed")
			require.Equal(t, true, ev["rotated"])
			require.NotEqual(t, true, ev["call"].(map[string]any)["isError"], "%v", ev["call"])
			require.Greater(t, usageOf(t, s, key).Credits.Today, after.Credits.Today)

			next("waiting")
			_, err = db.RevokeAPIKey(context.Background(), s.store.Bun, db.KeyRevocation{KeyID: keyID})
			require.NoError(t, err)
			time.Sleep(1100 * time.Millisecond) // past the access layer's one-second memory of a token
			_, err = stdin.Write([]byte("revoked\n"))
			require.NoError(t, err)
			for ev := range events {
				if ev["event"] == "authorize" {
					continue // the SDK starts over: a person would have to approve again
				}
				require.Equal(t, "refused", ev["event"], "%v", ev)
				require.Equal(t, true, ev["unauthorized"], "%v", ev)
				return
			}
			t.Fatalf("no refusal: %s", stderr.String())
		})
	}
}
