package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/ingest"
)

// restNow is the fixed clock of the /v1 tests: the service's Now is pinned
// to it, and the fixture's times are relative to it, so responses (and
// golden files) are stable.
var restNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// restServer is a running service with the /v1 fixture loaded.
type restServer struct {
	app  *app.App
	base string

	mu    sync.Mutex
	key   string
	uses  int
	plan  string
	store *db.DB
}

// startRESTServer starts app.New + Serve on a random loopback port over a
// fresh database holding restFixture, with the clock pinned to restNow.
func startRESTServer(t *testing.T) *restServer {
	t.Helper()
	return startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, restFixture()) })
}

// startRESTServerWith is startRESTServer with load filling the database
// (after the clock is pinned, before the server starts), and opts changing
// the configuration.
func startRESTServerWith(t *testing.T, load func(store *db.DB), opts ...func(*app.Config)) *restServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := app.Config{
		DatabaseURL:     dbtest.NewURL(t),
		Logger:          testLogger(t),
		ShutdownTimeout: 15 * time.Second,
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	a, err := app.New(ctx, cfg)
	require.NoError(t, err)
	a.DB.Now = func() time.Time { return restNow }
	load(a.DB)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		a.Close() //nolint:errcheck
	})
	return &restServer{app: a, base: "http://" + ln.Addr().String(), plan: cryptointel.PlanEnterprise, store: a.DB}
}

// dbIngestDefaults are the ingest options of the tests.
var dbIngestDefaults = ingest.Options{}

// ingestLines loads JSONL records through the ingest path.
func ingestLines(t testing.TB, store *db.DB, lines []string) {
	t.Helper()
	sum, err := ingest.Write(context.Background(), store, strings.NewReader(strings.Join(lines, "\n")+"\n"), ingest.Options{})
	require.NoError(t, err)
	require.Zero(t, sum.FailedCount, "fixture lines failed: %+v", sum.Failed)
}

// ingestVia ingests records (marshaled to JSON lines) through store.
func ingestVia(t *testing.T, store *db.DB, lines ...any) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		raw, err := json.Marshal(l)
		require.NoError(t, err)
		b.Write(raw)
		b.WriteByte('\n')
	}
	sum, err := ingest.Write(context.Background(), store, strings.NewReader(b.String()), ingest.Options{})
	require.NoError(t, err)
	require.Zero(t, sum.FailedCount, "%+v", sum.Failed)
}

// apiKey returns an enterprise key, a fresh one every 80 requests so the
// per-minute rate window never interferes with a test.
func (s *restServer) apiKey(t testing.TB) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == "" || s.uses >= 80 {
		s.key, _ = accesstest.NewKey(t, s.store, s.plan)
		s.uses = 0
	}
	s.uses++
	return s.key
}

// restResponse is a response read whole.
type restResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r *restResponse) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m), "body: %s", r.Body)
	return m
}

// Error returns the error message of an error body.
func (r *restResponse) Error(t testing.TB) string {
	t.Helper()
	m := r.JSON(t)
	msg, ok := m["error"].(string)
	require.True(t, ok, "no error string in %s", r.Body)
	return msg
}

// do sends a request with an API key and the given extra headers
// (name, value pairs), without transparent decompression.
func (s *restServer) do(t testing.TB, method, path string, headers ...string) *restResponse {
	t.Helper()
	return s.doAs(t, s.apiKey(t), method, path, headers...)
}

// doAs is do with the API key key.
func (s *restServer) doAs(t testing.TB, key, method, path string, headers ...string) *restResponse {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &restResponse{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// get is do with GET.
func (s *restServer) get(t testing.TB, path string, headers ...string) *restResponse {
	t.Helper()
	return s.do(t, http.MethodGet, path, headers...)
}

// ts formats a time relative to restNow as the API accepts it.
func ts(offset time.Duration) string { return restNow.Add(offset).UTC().Format(time.RFC3339) }

// Fixture ids.
const (
	entEthereum   = 101
	entFoundation = 102
	entSolana     = 103
	entUniswap    = 104
	entSEC        = 105
	entLonely     = 106 // no events, no relationships, no markets
	fixtureEvents = 40
)

// fixtureEvent describes one generated fixture event.
type fixtureEvent struct {
	ID           int64
	At           time.Time
	Owner        int64
	Participants []int64
	Category     string
	Significance *float64
	ContentType  *string
}

// fixtureEvents returns the generated events: fixtureEvents events every 3
// hours back from restNow (even ones are signals), cycling owners and
// categories, some classified as research or media; plus three older
// events at 10, 20 and 40 days.
func fixtureEventList() []fixtureEvent {
	owners := []int64{entEthereum, entSolana, entUniswap}
	categories := []string{"partnership", "funding", "listing", "technology"}
	var out []fixtureEvent
	for i := 0; i < fixtureEvents; i++ {
		e := fixtureEvent{
			ID:       int64(5000 + i),
			At:       restNow.Add(-time.Duration(i)*3*time.Hour - 10*time.Minute),
			Owner:    owners[i%len(owners)],
			Category: categories[i%len(categories)],
		}
		if i%2 == 0 {
			s := float64(i%9) + 0.5
			e.Significance = &s
		}
		if i%3 == 0 {
			e.Participants = []int64{entFoundation}
		}
		switch {
		case i%5 == 0:
			ct := cryptointel.ContentResearch
			e.ContentType = &ct
		case i%7 == 0:
			ct := cryptointel.ContentMedia
			e.ContentType = &ct
		}
		out = append(out, e)
	}
	for j, age := range []time.Duration{10 * 24 * time.Hour, 20 * 24 * time.Hour, 40 * 24 * time.Hour} {
		s := 9.9
		out = append(out, fixtureEvent{
			ID: int64(5900 + j), At: restNow.Add(-age), Owner: entEthereum,
			Category: "analysis", Significance: &s,
		})
	}
	return out
}

// eventLine renders an ingest line for e.
func eventLine(e fixtureEvent) string {
	rec := map[string]any{
		"kind":             ingest.KindEvent,
		"id":               e.ID,
		"title":            fmt.Sprintf("Event %d about %s", e.ID, e.Category),
		"eventCategory":    e.Category,
		"eventSubcategory": "sub_" + e.Category,
		"summary":          fmt.Sprintf("Summary of event %d.", e.ID),
		"bullets":          []string{fmt.Sprintf("First point of %d", e.ID), "Second point"},
		"owners":           []int64{e.Owner},
		"participants":     append([]int64{}, e.Participants...),
		"evidence": []map[string]any{
			{"id": e.ID*10 + 1, "content": fmt.Sprintf("Post one on %d", e.ID), "url": fmt.Sprintf("https://example.org/%d/1", e.ID), "timestamp": e.At.Add(-time.Hour)},
			{"id": e.ID*10 + 2, "content": fmt.Sprintf("Post two on %d", e.ID), "url": fmt.Sprintf("https://example.org/%d/2", e.ID), "timestamp": e.At},
		},
		"significance": e.Significance,
		"contentType":  e.ContentType,
	}
	b, _ := json.Marshal(rec)
	return string(b)
}

// restFixture is the data every /v1 test starts from.
func restFixture() []string {
	lines := []string{
		`{"kind":"entity","id":101,"canonicalName":"Ethereum","displayName":"Ethereum","entityType":"project","status":"active","aliases":["ETH","Ether"]}`,
		`{"kind":"entity","id":102,"canonicalName":"Ethereum Foundation","entityType":"foundation","aliases":["EF"]}`,
		`{"kind":"entity","id":103,"canonicalName":"Solana","aliases":["SOL"]}`,
		`{"kind":"entity","id":104,"canonicalName":"Uniswap","aliases":["UNI"]}`,
		`{"kind":"entity","id":105,"canonicalName":"Securities and Exchange Commission","displayName":"SEC","entityType":"government_institution","aliases":["SEC"]}`,
		`{"kind":"entity","id":106,"canonicalName":"Lonely Protocol","aliases":[]}`,
		`{"kind":"relationship","sourceEntityId":102,"targetEntityId":101,"relationshipType":"FOUNDATION_OF","status":"active","searchExpand":true}`,
		`{"kind":"relationship","sourceEntityId":105,"targetEntityId":103,"relationshipType":"REGULATES","status":"active","searchExpand":false}`,
		`{"kind":"reference","id":7002,"entityId":101,"referenceType":"website","title":"ethereum.org","url":"https://ethereum.org"}`,
		`{"kind":"market","id":8001,"entityId":101,"question":"Will ETH close above 5k?","url":"https://markets.example/8001","outcomes":["Yes","No"],"probability":0.42,"volume":125000.5,"closesAt":"2026-12-31T00:00:00Z","subevents":[{"id":8101,"label":"ETF flows","type":"catalyst","normalizedTitle":"eth etf flows","injectedSummary":"Flows rising","posts":[{"id":8201,"content":"Inflows up","date":"2026-11-19T12:00:00Z"},{"id":8202,"content":"More inflows","date":"2026-11-20T11:00:00Z"}]}]}`,
	}
	for _, e := range fixtureEventList() {
		lines = append(lines, eventLine(e))
	}
	return lines
}
