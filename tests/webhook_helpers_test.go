package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/rest"
	"github.com/cryptointel/cryptointel/webhook"
	"github.com/cryptointel/cryptointel/webhookstore"
)

// webhookReceived is one request the receiver got.
type webhookReceived struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// webhookReceiver is a subscriber's HTTPS endpoint on a local httptest TLS
// server. status decides the answer from the request's URL path and how
// many requests that delivery id has had (1-based).
type webhookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []webhookReceived
	perID  map[string]int
	status func(path string, n int) int
}

func newWebhookReceiver(t *testing.T, status func(path string, n int) int) *webhookReceiver {
	t.Helper()
	rc := &webhookReceiver{perID: map[string]int{}, status: status}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		id := r.Header.Get("X-Service-Delivery")
		rc.perID[id]++
		n := rc.perID[id]
		hdr := r.Header.Clone()
		hdr.Set("X-Test-Path", r.URL.Path)
		rc.got = append(rc.got, webhookReceived{Header: hdr, Body: body, At: time.Now()})
		rc.mu.Unlock()
		code := http.StatusOK
		if rc.status != nil {
			code = rc.status(r.URL.Path, n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// all returns every request received.
func (rc *webhookReceiver) all() []webhookReceived {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]webhookReceived(nil), rc.got...)
}

// webhookServerOpts configure startWebhookServer.
type webhookServerOpts struct {
	// workers is the number of River clients (worker processes) on the one
	// database. Defaults to 1.
	workers int
	// pollInterval is the periodic poll. Defaults to one hour, so polls are
	// driven by ingest notifications.
	pollInterval time.Duration
	// status is the receiver's answer.
	status func(path string, n int) int
}

// webhookServer is webhook management served the way the service serves
// it (the /v1 router with the real access layer), River clients working
// the poller and deliveries with the schedule scaled by 0.001, and an HTTPS
// receiver on loopback (allowlisted).
type webhookServer struct {
	store   *db.DB
	url     string
	clients []*river.Client[pgx.Tx]
	recv    *webhookReceiver
}

// webhookTimeScale runs the 15 s / 1 min / 5 min / 30 min schedule in
// 15 ms / 60 ms / 300 ms / 1.8 s.
const webhookTimeScale = 0.001

func startWebhookServer(t *testing.T, opts webhookServerOpts) *webhookServer {
	t.Helper()
	if opts.workers <= 0 {
		opts.workers = 1
	}
	if opts.pollInterval <= 0 {
		opts.pollInterval = time.Hour
	}
	store := dbtest.New(t)
	recv := newWebhookReceiver(t, opts.status)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	guard := &webhook.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	tlsCfg := recv.srv.Client().Transport.(*http.Transport).TLSClientConfig
	cfg := jobs.WebhookConfig{
		Store:        store,
		Logger:       logger,
		TimeScale:    webhookTimeScale,
		PollInterval: opts.pollInterval,
		Guard:        guard,
		HTTPClient:   guard.NewHTTPClient(webhook.ClientOptions{TLSConfig: tlsCfg}),
	}
	// Fetch often so the scaled retries are picked up promptly.
	fastFetch := func(_ *river.Workers, rc *river.Config) error {
		rc.FetchCooldown = 5 * time.Millisecond
		rc.FetchPollInterval = 20 * time.Millisecond
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	s := &webhookServer{store: store, recv: recv}
	for i := 0; i < opts.workers; i++ {
		client, err := jobs.NewClient(store, logger, jobs.WebhookRegistration(cfg), fastFetch)
		require.NoError(t, err)
		require.NoError(t, client.Start(ctx))
		s.clients = append(s.clients, client)
		wg.Add(1)
		go func() {
			defer wg.Done()
			jobs.RunEventListener(ctx, store, client, logger)
		}()
	}
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		for _, c := range s.clients {
			c.StopAndCancel(stopCtx) //nolint:errcheck
		}
	})
	h := &rest.WebhookHandlers{DB: store.Bun, Queue: &jobs.WebhookDispatcher{Store: store, Client: s.clients[0]}, Guard: guard}
	svc := access.New(store, access.Config{Logger: logger})
	router, err := rest.New(rest.Config{Executor: noExecutor{}, Wrap: svc.Wrap, Routes: rest.WebhookRoutes(h), Logger: logger})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/v1/", router)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// do sends a request with key and returns the status and decoded body.
func (s *webhookServer) do(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		case []byte:
			rd = bytes.NewReader(b)
		default:
			raw, err := json.Marshal(b)
			require.NoError(t, err)
			rd = bytes.NewReader(raw)
		}
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return s.send(t, req)
}

func (s *webhookServer) send(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "body: %s", raw)
	return resp.StatusCode, out
}

// create registers a webhook at the receiver (path distinguishes webhooks)
// and returns its id and secret.
func (s *webhookServer) create(t *testing.T, key, path string, types ...string) (int64, string) {
	t.Helper()
	code, body := s.do(t, http.MethodPost, "/v1/webhooks", key, map[string]any{"url": s.recv.srv.URL + path, "event_types": types})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	data := body["data"].(map[string]any)
	return int64(data["id"].(float64)), data["secret"].(string)
}

// ingest applies JSON lines through the ingest path, which notifies the
// poller after committing.
func (s *webhookServer) ingest(t *testing.T, lines ...any) {
	t.Helper()
	var buf bytes.Buffer
	for _, l := range lines {
		b, err := json.Marshal(l)
		require.NoError(t, err)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	sum, err := ingest.Write(context.Background(), s.store, &buf, ingest.Options{})
	require.NoError(t, err)
	require.Zero(t, sum.FailedCount, "%+v", sum.Failed)
}

func whEntityLine(id int64, name string) map[string]any {
	return map[string]any{"kind": "entity", "id": id, "canonicalName": name, "aliases": []string{strings.ToUpper(name[:3])}}
}

func whEventLine(id int64, significance *float64, owners ...int64) map[string]any {
	return map[string]any{
		"kind": "event", "id": id, "title": fmt.Sprintf("Event %d", id), "eventCategory": "partnership",
		"eventSubcategory": "acquisition", "summary": fmt.Sprintf("Summary of %d", id), "bullets": []string{"one", "two"},
		"owners": owners, "participants": []int64{},
		"evidence":     []map[string]any{{"id": id*10 + 1, "content": "post", "url": "https://x.example/p", "timestamp": time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)}},
		"significance": significance,
	}
}

// delivery reads a delivery row.
func (s *webhookServer) delivery(t *testing.T, id string) *webhook.Delivery {
	t.Helper()
	d, _, err := webhookstore.DeliveryForSend(context.Background(), s.store.Bun, id)
	require.NoError(t, err)
	return d
}

// webhookRow reads a webhook row.
func (s *webhookServer) webhookRow(t *testing.T, id int64) *webhook.Webhook {
	t.Helper()
	var h webhook.Webhook
	require.NoError(t, s.store.Bun.NewSelect().Model(&h).Where("id = ?", id).Scan(context.Background()))
	return &h
}

// byDelivery groups received requests by X-Service-Delivery.
func byDelivery(got []webhookReceived) map[string][]webhookReceived {
	out := map[string][]webhookReceived{}
	for _, g := range got {
		id := g.Header.Get("X-Service-Delivery")
		out[id] = append(out[id], g)
	}
	return out
}

// receivedOn returns the requests whose URL path was path. The receiver
// records the path in a header of its own copy.
func (rc *webhookReceiver) receivedOn(path string) []webhookReceived {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []webhookReceived
	for _, g := range rc.got {
		if g.Header.Get("X-Test-Path") == path {
			out = append(out, g)
		}
	}
	return out
}
