package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/webhook"
)

// TestLocalLoop is the local loop a newcomer runs: demo keys that a rerun
// reuses, a demo server whose /healthz names its version, `webhooks listen`
// registering a loopback http:// receiver on it (demo mode), `demo emit`
// ingesting a new signal, and the listener receiving its delivery, checking
// both signatures and forwarding it; on exit the webhook is deleted.
func TestLocalLoop(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	ctx := context.Background()
	_, _, err := b.run(t, ctx, "", "migrate")
	require.NoError(t, err)
	_, _, err = b.run(t, ctx, "", "seed", "--demo", "--events", "200")
	require.NoError(t, err)

	// Demo keys: one per plan, labelled; the second run prints the same.
	file := filepath.Join(t.TempDir(), "demo-keys.json")
	out, stderr, err := b.run(t, ctx, "", "keys", "ensure-demo", "--file", file)
	require.NoError(t, err)
	require.Contains(t, stderr, "created 4 keys")
	keys := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[1], "ci_") {
			keys[f[0]] = f[1]
		}
	}
	require.Len(t, keys, 4, out)
	again, stderr, err := b.run(t, ctx, "", "keys", "ensure-demo", "--file", file)
	require.NoError(t, err)
	require.Equal(t, out, again)
	require.Contains(t, stderr, "reused the 4 keys")
	list, _, err := b.run(t, ctx, "", "keys", "list", "--json")
	require.NoError(t, err)
	var listed []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(list), &listed))
	require.Len(t, listed, 4, "ensure-demo multiplied keys")
	// A revoked demo key is replaced, the others kept.
	_, _, err = b.run(t, ctx, "", "keys", "revoke", "1")
	require.NoError(t, err)
	third, stderr, err := b.run(t, ctx, "", "keys", "ensure-demo", "--file", file)
	require.NoError(t, err)
	require.Contains(t, stderr, "created free")
	require.NotEqual(t, out, third)
	require.Contains(t, third, keys["enterprise"])
	key := keys["enterprise"]

	// The demo server.
	b.env["ADDR"] = "127.0.0.1:0"
	b.env["WEBHOOK_POLL_INTERVAL"] = "1s"
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	serveLog := &syncBuffer{}
	go func() {
		m := NewMain()
		m.Stdout, m.Stderr = io.Discard, serveLog
		m.Getenv = func(k string) string { return b.env[k] }
		m.OnListen = func(a net.Addr) { addrc <- a }
		err := m.Run(serveCtx, []string{"serve", "--demo", "--shutdown-timeout", "5s"})
		done <- errors.Join(err, m.Close())
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("serve stopped early: %v", err)
	}
	require.Contains(t, serveLog.String(), "demo mode: webhooks may be registered for http:// receivers on loopback")
	resp, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	health, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.JSONEq(t, `{"status":"ok","version":"dev"}`, string(health))

	// The app the listener forwards to.
	var mu sync.Mutex
	var forwarded []*http.Request
	var forwardedBody [][]byte
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		forwarded, forwardedBody = append(forwarded, r), append(forwardedBody, body)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer app.Close()

	listenCtx, stopListen := context.WithCancel(ctx)
	defer stopListen()
	listenOut := &syncBuffer{}
	listenDone := make(chan error, 1)
	go func() {
		m := NewMain()
		m.Stdout, m.Stderr = listenOut, listenOut
		m.Getenv = func(k string) string { return b.env[k] }
		err := m.Run(listenCtx, []string{"webhooks", "listen", "--url", base, "--key", key, "--forward-to", app.URL + "/hooks"})
		listenDone <- errors.Join(err, m.Close())
	}()
	require.Eventually(t, func() bool { return strings.Contains(listenOut.String(), "ready: waiting for deliveries") },
		30*time.Second, 50*time.Millisecond, "listen output:\n%s", listenOut)
	var secret string
	for _, line := range strings.Split(listenOut.String(), "\n") {
		if s, ok := strings.CutPrefix(line, "signing secret: "); ok {
			secret = s
		}
	}
	require.True(t, strings.HasPrefix(secret, webhook.SecretPrefix), listenOut.String())

	out, _, err = b.run(t, ctx, "", "demo", "emit", "--json")
	require.NoError(t, err)
	var ev struct {
		ID           int64    `json:"id"`
		Title        string   `json:"title"`
		Significance *float64 `json:"significance"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ev), out)
	require.NotEmpty(t, ev.Title)
	require.NotNil(t, ev.Significance, "emit makes a signal by default")

	want := "event " + strconv.FormatInt(ev.ID, 10) + " "
	require.Eventually(t, func() bool { return strings.Contains(listenOut.String(), want) },
		60*time.Second, 100*time.Millisecond, "no delivery of event %d; listen output:\n%s", ev.ID, listenOut)
	var line string
	for _, l := range strings.Split(listenOut.String(), "\n") {
		if strings.Contains(l, want) {
			line = l
		}
	}
	require.Contains(t, line, "signature ok")
	require.Contains(t, line, app.URL+"/hooks 204")
	mu.Lock()
	require.NotEmpty(t, forwarded)
	fr, fb := forwarded[len(forwarded)-1], forwardedBody[len(forwardedBody)-1]
	mu.Unlock()
	require.True(t, webhook.Verify(secret, fb, fr.Header.Get(jobs.HeaderSignature)), "forwarded body and signature unchanged")
	require.Contains(t, string(fb), ev.Title)

	// Stopping the listener deletes its webhook.
	stopListen()
	select {
	case err := <-listenDone:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("listen did not stop")
	}
	require.Regexp(t, `webhook \d+ deleted`, listenOut.String())
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/webhooks", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	hooks, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.JSONEq(t, `{"data":[]}`, string(hooks))
	stop()
	<-done
}

// TestCheckAddr: the address check make run runs first fails on a taken
// port with the ADDR= to use instead, and passes on a free one.
func TestCheckAddr(t *testing.T) {
	t.Parallel()
	b := &cliBundle{env: map[string]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, _, err = b.run(t, context.Background(), "", "demo", "check-addr", ln.Addr().String())
	require.ErrorContains(t, err, "already in use")
	require.ErrorContains(t, err, "make run ADDR=127.0.0.1:8081")
	_, _, err = b.run(t, context.Background(), "", "demo", "check-addr", "127.0.0.1:0")
	require.NoError(t, err)
}

// TestClientEnv: a client command's --url and --key win over
// CRYPTOINTEL_URL and CRYPTOINTEL_API_KEY, which fill what a flag left out.
func TestClientEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CRYPTOINTEL_URL": "http://env.example", "CRYPTOINTEL_API_KEY": "ci_env"}
	m := &Main{Getenv: func(k string) string { return env[k] }}

	url, key := "", ""
	m.clientEnv(&url, &key)
	require.Equal(t, "http://env.example", url)
	require.Equal(t, "ci_env", key)

	url, key = "http://flag.example", "ci_flag"
	m.clientEnv(&url, &key)
	require.Equal(t, "http://flag.example", url)
	require.Equal(t, "ci_flag", key)
}
