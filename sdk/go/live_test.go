package cryptointel

// Tests against a live server: tests/sdk_test.go in the service's
// repository starts one, its database seeded by the demo seeder (`seed
// --demo`), and runs `go test` here with its address and keys in the
// environment (CRYPTOINTEL_*). Without them the tests skip. The ids,
// names and categories they call with are found in the demo data at run
// time (demoFacts), and every wait has a deadline (testCtx), so a test
// fails in seconds when what it waits for never comes.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type liveEnv struct {
	base, control, admin, payer string
	keys                        map[string]string
	demo                        demoFacts
}

// demoFacts is what the tests call with, read from the live demo data:
// of the owners of the newest events, the one owning the most of them
// whose timeline holds more than ten events (to page through), its
// canonical name, another owner and a category of its events.
type demoFacts struct {
	id, other int
	name      string
	category  string
}

var (
	factsOnce sync.Once
	facts     demoFacts
	factsErr  error
)

// discover reads demoFacts from the server with plain HTTP.
func discover(base, key string) (demoFacts, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	get := func(path string, out any) error {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
		return json.Unmarshal(body, out)
	}
	var latest struct {
		Data []struct {
			EventCategory string `json:"eventCategory"`
			Owners        []struct {
				ID int `json:"id"`
			} `json:"owners"`
		} `json:"data"`
	}
	if err := get("/v1/latest?limit=50&legacy=false", &latest); err != nil {
		return demoFacts{}, err
	}
	count := map[int]int{}
	category := map[int]string{}
	var owners []int
	for _, ev := range latest.Data {
		for _, o := range ev.Owners {
			if count[o.ID]++; count[o.ID] == 1 {
				owners = append(owners, o.ID)
				category[o.ID] = ev.EventCategory
			}
		}
	}
	slices.SortStableFunc(owners, func(a, b int) int { return count[b] - count[a] })
	var f demoFacts
	for _, id := range owners {
		var timeline struct {
			Data       []json.RawMessage `json:"data"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := get(fmt.Sprintf("/v1/timeline/byOrganizationId?id=%d&limit=10&legacy=false", id), &timeline); err != nil {
			return demoFacts{}, err
		}
		if len(timeline.Data) == 10 && timeline.NextCursor != nil {
			f.id, f.category = id, category[id]
			break
		}
	}
	for _, id := range owners {
		if id != f.id {
			f.other = id
			break
		}
	}
	if f.id == 0 || f.other == 0 {
		return demoFacts{}, fmt.Errorf("no owner of the newest demo events has more than ten events, or they name fewer than two owners: %v", count)
	}
	var entity struct {
		Data struct {
			CanonicalName string `json:"canonicalName"`
		} `json:"data"`
	}
	if err := get(fmt.Sprintf("/v1/entities/byId?id=%d", f.id), &entity); err != nil {
		return demoFacts{}, err
	}
	f.name = entity.Data.CanonicalName
	return f, nil
}

// testCtx bounds a test's waits: it ends after d, or when the test does.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func live(t *testing.T) liveEnv {
	t.Helper()
	e := liveEnv{base: os.Getenv("CRYPTOINTEL_BASE_URL"), control: os.Getenv("CRYPTOINTEL_CONTROL_URL"),
		admin: os.Getenv("CRYPTOINTEL_ADMIN_TOKEN"), payer: os.Getenv("CRYPTOINTEL_PAYER"), keys: map[string]string{}}
	if e.base == "" {
		t.Skip("CRYPTOINTEL_BASE_URL is not set: tests/sdk_go_test.go runs these against a live server")
	}
	for _, p := range []string{"FREE", "PRO", "ENTERPRISE", "BURN"} {
		e.keys[p] = os.Getenv("CRYPTOINTEL_KEY_" + p)
	}
	factsOnce.Do(func() { facts, factsErr = discover(e.base, e.keys["ENTERPRISE"]) })
	if factsErr != nil {
		t.Fatalf("reading the demo data: %v", factsErr)
	}
	e.demo = facts
	return e
}

func ptr[T any](v T) *T { return &v }

// recorder remembers the method and path of every request sent.
type recorder struct {
	mu   sync.Mutex
	seen []string
	urls []*url.URL
	next http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Method+" "+req.URL.Path)
	r.urls = append(r.urls, req.URL)
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// must returns v, or panics with err (which fails the running test).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return m
}

// webhookReceiver collects deliveries: raw body and headers.
type delivery struct {
	body   []byte
	header http.Header
}

func startReceiver(t *testing.T) (string, chan delivery) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan delivery, 16)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- delivery{b, r.Header.Clone()}
	})}
	go srv.Serve(ln) //nolint:errcheck
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/hook", ch
}

// TestEveryRoute calls every /v1 route of the document once, through the
// generated methods, and checks each answered a success.
func TestEveryRoute(t *testing.T) {
	e := live(t)
	rec := &recorder{next: http.DefaultTransport}
	c := must(New(e.base, WithAPIKey(e.keys["ENTERPRISE"]), WithHTTP(&http.Client{Transport: rec, Timeout: 30 * time.Second})))
	ctx := testCtx(t, 2*time.Minute)
	d := e.demo
	since := time.Now().Add(-6 * 24 * time.Hour)
	ok := func(name string, _ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	r1, err := c.GetV1BriefWithResponse(ctx, &GetV1BriefParams{Id: d.id, Since: since})
	ok("brief", r1, err)
	if r1.JSON200 == nil {
		t.Fatal("brief: no typed result")
	}
	r2, err := c.GetV1BriefBatchWithResponse(ctx, &GetV1BriefBatchParams{Ids: []int{d.id, d.other}, Since: since})
	ok("brief batch", r2, err)
	r3, err := c.GetV1CategoriesAllWithResponse(ctx)
	ok("categories", r3, err)
	r4, err := c.GetV1EntitiesByIdWithResponse(ctx, &GetV1EntitiesByIdParams{Id: d.id})
	ok("entity", r4, err)
	if r4.JSON200.Data.CanonicalName != d.name {
		t.Fatalf("entity %d: %+v, want %q", d.id, r4.JSON200.Data, d.name)
	}
	r5, err := c.GetV1EntitiesByNameWithResponse(ctx, &GetV1EntitiesByNameParams{Name: ptr(d.name)})
	ok("byName", r5, err)
	r6, err := c.GetV1EntitiesByTopNameWithResponse(ctx, &GetV1EntitiesByTopNameParams{Name: ptr(d.name)})
	ok("byTopName", r6, err)
	r7, err := c.GetV1EntitiesIdMediaWithResponse(ctx, d.id, &GetV1EntitiesIdMediaParams{})
	ok("media", r7, err)
	r8, err := c.GetV1EntitiesIdReferencesWithResponse(ctx, d.id)
	ok("references", r8, err)
	r9, err := c.GetV1EntitiesIdRelationshipsWithResponse(ctx, d.id, &GetV1EntitiesIdRelationshipsParams{})
	ok("relationships", r9, err)
	r10, err := c.GetV1EntitiesIdResearchWithResponse(ctx, d.id, &GetV1EntitiesIdResearchParams{})
	ok("research", r10, err)
	r11, err := c.PostV1ExportJobsWithResponse(ctx, PostV1ExportJobsJSONRequestBody{Scope: "organizations.registry", Format: "jsonl"})
	ok("export create", r11, err)
	job := decode(t, r11.Body)["data"].(map[string]any)
	r12, err := c.GetV1ExportJobsWithResponse(ctx, &GetV1ExportJobsParams{})
	ok("export list", r12, err)
	r13, err := c.GetV1ExportJobsIdWithResponse(ctx, fmt.Sprint(job["id"]))
	ok("export get", r13, err)
	r14, err := c.GetV1KeysWithResponse(ctx, &GetV1KeysParams{})
	ok("keys", r14, err)
	r15, err := c.PostV1KeysWithResponse(ctx, &PostV1KeysParams{Surfaces: []PostV1KeysParamsSurfaces{"lookup"}})
	ok("key create", r15, err)
	newKey := decode(t, r15.Body)["data"].(map[string]any)
	keyID := int(newKey["id"].(float64))
	r16, err := c.GetV1KeysAuditWithResponse(ctx, &GetV1KeysAuditParams{})
	ok("key audit", r16, err)
	r17, err := c.PostV1KeysIdRotateWithResponse(ctx, keyID, &PostV1KeysIdRotateParams{})
	ok("key rotate", r17, err)
	rotated := decode(t, r17.Body)["data"].(map[string]any)
	r18, err := c.DeleteV1KeysIdWithResponse(ctx, int(rotated["id"].(float64)), &DeleteV1KeysIdParams{Reason: ptr("test")})
	ok("key revoke", r18, err)
	r19, err := c.GetV1LatestWithResponse(ctx, &GetV1LatestParams{Limit: ptr(3)})
	ok("latest", r19, err)
	if len(r19.JSON200.Data) == 0 {
		t.Fatal("latest: no events")
	}
	lean, err := r19.JSON200.Data[0].Lean()
	if err != nil || lean.Title == "" {
		t.Fatalf("latest: lean event %+v: %v", lean, err)
	}
	if bytes.Contains(r19.Body, []byte(`"globalSummary"`)) {
		t.Fatal("the default shape is the lean one: no legacy aliases")
	}
	r20, err := c.GetV1OrganizationsAllWithResponse(ctx, &GetV1OrganizationsAllParams{})
	ok("orgs", r20, err)
	r21, err := c.GetV1OrganizationsByOrganizationIdWithResponse(ctx, &GetV1OrganizationsByOrganizationIdParams{Id: d.id})
	ok("org", r21, err)
	r22, err := c.GetV1OrganizationsByOrganizationNameWithResponse(ctx, &GetV1OrganizationsByOrganizationNameParams{Name: ptr(d.name)})
	ok("org by name", r22, err)
	r23, err := c.GetV1OrganizationsIdSignalHistoryWithResponse(ctx, d.id, &GetV1OrganizationsIdSignalHistoryParams{})
	ok("signal history", r23, err)
	r24, err := c.GetV1PmarketAllWithResponse(ctx, &GetV1PmarketAllParams{})
	ok("pmarket", r24, err)
	r25, err := c.GetV1PmarketByOrganizationIdWithResponse(ctx, &GetV1PmarketByOrganizationIdParams{Id: d.id})
	ok("pmarket org", r25, err)
	r26, err := c.GetV1RadarAllWithResponse(ctx, &GetV1RadarAllParams{Since: since})
	ok("radar all", r26, err)
	r27, err := c.GetV1RadarByCategoryWithResponse(ctx, &GetV1RadarByCategoryParams{Category: d.category})
	ok("radar cat", r27, err)
	r28, err := c.GetV1RadarByOrganizationIdWithResponse(ctx, &GetV1RadarByOrganizationIdParams{Id: d.id})
	ok("radar org", r28, err)
	r29, err := c.GetV1ReplayGlobalWithResponse(ctx, &GetV1ReplayGlobalParams{Since: since})
	ok("replay", r29, err)
	r30, err := c.GetV1SearchWithResponse(ctx, &GetV1SearchParams{Query: ptr(d.name)})
	ok("search", r30, err)
	r31, err := c.GetV1SignalAllWithResponse(ctx, &GetV1SignalAllParams{Since: since})
	ok("signal all", r31, err)
	r32, err := c.GetV1SignalByCategoryWithResponse(ctx, &GetV1SignalByCategoryParams{Category: d.category})
	ok("signal cat", r32, err)
	r33, err := c.GetV1SignalByOrganizationIdWithResponse(ctx, &GetV1SignalByOrganizationIdParams{Id: d.id})
	ok("signal org", r33, err)
	r34, err := c.GetV1SignalLatestWithResponse(ctx, &GetV1SignalLatestParams{})
	ok("signal latest", r34, err)
	r35, err := c.GetV1SignalTopWithResponse(ctx, &GetV1SignalTopParams{})
	ok("signal top", r35, err)
	r36, err := c.PostV1StreamTicketsWithResponse(ctx, &PostV1StreamTicketsParams{Path: "/v1/stream"})
	ok("ticket", r36, err)
	r37, err := c.GetV1TimelineByOrganizationIdWithResponse(ctx, &GetV1TimelineByOrganizationIdParams{Id: d.id})
	ok("timeline", r37, err)
	r38, err := c.GetV1UsageWithResponse(ctx)
	ok("usage", r38, err)
	// The stream: open it, read its starting point, stop.
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	for range c.Stream(sctx, GetV1StreamParams{}) {
		break
	}
	cancel()
	// Webhooks, from creation to deletion.
	hookURL, got := startReceiver(t)
	r39, err := c.PostV1WebhooksWithResponse(ctx, PostV1WebhooksJSONRequestBody{Url: hookURL,
		EventTypes: []PostV1WebhooksJSONBodyEventTypes{PostV1WebhooksJSONBodyEventTypesSignal}})
	ok("webhook create", r39, err)
	if r39.JSON201 == nil || r39.JSON201.Data.Secret == nil {
		t.Fatalf("webhook create: no typed result with the secret: %s", r39.Body)
	}
	id := r39.JSON201.Data.Id
	r40, err := c.GetV1WebhooksWithResponse(ctx)
	ok("webhook list", r40, err)
	r41, err := c.PatchV1WebhooksIdWithResponse(ctx, id, PatchV1WebhooksIdJSONRequestBody{
		EventTypes: &[]PatchV1WebhooksIdJSONBodyEventTypes{PatchV1WebhooksIdJSONBodyEventTypesRadar, PatchV1WebhooksIdJSONBodyEventTypesSignal}})
	ok("webhook update", r41, err)
	if r41.JSON200 == nil || len(r41.JSON200.Data.EventTypes) != 2 {
		t.Fatalf("webhook update: %s", r41.Body)
	}
	r42, err := c.PostV1WebhooksIdRotateSecretWithResponse(ctx, id)
	ok("webhook rotate", r42, err)
	r43, err := c.PostV1WebhooksIdTestWithResponse(ctx, id)
	ok("webhook test", r43, err)
	if r43.JSON202 == nil || r43.JSON202.Data.EventType != WebhookDeliveryEventTypePing {
		t.Fatalf("webhook test: no typed delivery: %s", r43.Body)
	}
	select {
	case <-got:
	case <-ctx.Done():
		t.Fatal("the test ping was not delivered in time")
	}
	var deliveryID string
	for i := 0; i < 50 && deliveryID == ""; i++ {
		r44, err := c.GetV1WebhooksIdWithResponse(ctx, id, &GetV1WebhooksIdParams{})
		ok("webhook get", r44, err)
		data := decode(t, r44.Body)["data"].(map[string]any)
		if ds, _ := data["deliveries"].([]any); len(ds) > 0 && ds[0].(map[string]any)["status"] == "succeeded" {
			deliveryID = fmt.Sprint(ds[0].(map[string]any)["id"])
		}
		if deliveryID == "" {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if deliveryID == "" {
		t.Fatal("the webhook shows no delivery")
	}
	r45, err := c.PostV1WebhooksIdDeliveriesDeliveryIdRedeliverWithResponse(ctx, id, deliveryID)
	ok("redeliver", r45, err)
	r46, err := c.DeleteV1WebhooksIdWithResponse(ctx, id)
	ok("webhook delete", r46, err)

	// Every route of the document was called.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range Routes {
		found := false
		for _, s := range rec.seen {
			m, p, _ := strings.Cut(s, " ")
			if m == r.Method && pathMatches(r.Path, p) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("route %s %s was not called", r.Method, r.Path)
		}
	}
	if c.LastMeta().RequestID == "" || c.LastMeta().RateLimit == 0 {
		t.Errorf("LastMeta is empty: %+v", c.LastMeta())
	}
}

// TestCursorWalk walks /v1/timeline/byOrganizationId of the demo entity:
// three pages of three give the nine events one page of nine gives, each
// once and in order, the later pages asked with the previous cursor and
// the first page's since; a walk of a window the pages end in stops at
// its null cursor with what one page of the window holds.
func TestCursorWalk(t *testing.T) {
	e := live(t)
	rec := &recorder{next: http.DefaultTransport}
	c := must(New(e.base, WithAPIKey(e.keys["ENTERPRISE"]), WithHTTP(&http.Client{Transport: rec, Timeout: 30 * time.Second})))
	ctx := testCtx(t, time.Minute)
	id := e.demo.id
	ids := func(evs []Event) []int {
		out := make([]int, len(evs))
		for i, ev := range evs {
			out[i] = must(ev.Lean()).Id
		}
		return out
	}
	// The reference: one page of nine.
	one := must(c.GetV1TimelineByOrganizationIdWithResponse(ctx, &GetV1TimelineByOrganizationIdParams{Id: id, Limit: ptr(9)}))
	if len(one.JSON200.Data) != 9 || one.JSON200.NextCursor == nil {
		t.Fatalf("entity %d has %d events in its timeline, want more than 9", id, len(one.JSON200.Data))
	}
	want := ids(one.JSON200.Data)
	rec.seen, rec.urls = nil, nil
	var got []int
	seen := map[int]bool{}
	for ev, err := range c.TimelineItems(ctx, GetV1TimelineByOrganizationIdParams{Id: id, Limit: ptr(3)}) {
		if err != nil {
			t.Fatal(err)
		}
		l := must(ev.Lean())
		if seen[l.Id] {
			t.Fatalf("event %d twice", l.Id)
		}
		seen[l.Id] = true
		if got = append(got, l.Id); len(got) == 9 {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("three pages of three: %v, one page of nine: %v", got, want)
	}
	if len(rec.urls) != 3 {
		t.Fatalf("%d pages, want 3: %v", len(rec.urls), rec.seen)
	}
	// Pages after the first carry the previous cursor and the first page's since.
	since := one.JSON200.Since
	for i, u := range rec.urls {
		q := u.Query()
		if i == 0 {
			if q.Has("cursor") {
				t.Fatalf("page 1 sent a cursor: %s", u)
			}
			continue
		}
		if q.Get("cursor") == "" {
			t.Fatalf("page %d: %s: no cursor", i+1, u)
		}
		if since == nil { // the route's window is unbounded: nothing to keep
			if q.Has("since") {
				t.Fatalf("page %d: %s: a since the first page did not have", i+1, u)
			}
			continue
		}
		if got, err := time.Parse(time.RFC3339Nano, q.Get("since")); err != nil || !got.Equal(*since) {
			t.Fatalf("page %d: since %q, the walk's is %s", i+1, q.Get("since"), since)
		}
	}

	// A window ending after a few pages: from the fifth newest event on.
	from := must(one.JSON200.Data[4].Lean()).LatestEvidenceTimestamp
	whole := must(c.GetV1TimelineByOrganizationIdWithResponse(ctx, &GetV1TimelineByOrganizationIdParams{Id: id, Since: &from, Limit: ptr(50)}))
	if n := len(whole.JSON200.Data); n < 5 || whole.JSON200.NextCursor != nil {
		t.Fatalf("the window from %s: %d events in one page, next cursor %v", from, n, whole.JSON200.NextCursor)
	}
	rec.seen, rec.urls = nil, nil
	got = got[:0]
	for ev, err := range c.TimelineItems(ctx, GetV1TimelineByOrganizationIdParams{Id: id, Since: &from, Limit: ptr(2)}) {
		if err != nil {
			t.Fatal(err)
		}
		if got = append(got, must(ev.Lean()).Id); len(got) > 50 {
			t.Fatal("the walk does not stop")
		}
	}
	if want := ids(whole.JSON200.Data); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the walk to its end: %v, one page: %v", got, want)
	}
	if n := (len(got) + 1) / 2; len(rec.urls) < n || len(rec.urls) > n+1 {
		t.Fatalf("%d pages of two for %d events", len(rec.urls), len(got))
	}
}

// TestTypedErrors: 400, 401, 403, 404 and 413 each come back as an
// *APIError of its kind, with the server's message, code and request id,
// and none is retried.
func TestTypedErrors(t *testing.T) {
	e := live(t)
	ctx := testCtx(t, time.Minute)
	c := must(New(e.base, WithAPIKey(e.keys["ENTERPRISE"])))
	check := func(err error, kind error, status int) {
		t.Helper()
		var ae *APIError
		if !errors.As(err, &ae) || !errors.Is(err, kind) || ae.StatusCode != status {
			t.Fatalf("want a %d %v, got %v", status, kind, err)
		}
		if ae.Message == "" || ae.Code == "" || ae.RequestID == "" {
			t.Fatalf("incomplete error: %+v", ae)
		}
		if ae.Meta.Attempts != 1 {
			t.Fatalf("a %d was sent %d times: never retried", status, ae.Meta.Attempts)
		}
	}
	_, err := c.GetV1LatestWithResponse(ctx, &GetV1LatestParams{Limit: ptr(3)}, func(_ context.Context, r *http.Request) error {
		q := r.URL.Query()
		q.Set("bogus", "1")
		r.URL.RawQuery = q.Encode()
		return nil
	})
	check(err, ErrBadRequest, 400)
	bad := must(New(e.base, WithAPIKey("ci_not_a_key")))
	_, err = bad.GetV1LatestWithResponse(ctx, &GetV1LatestParams{})
	check(err, ErrUnauthorized, 401)
	free := must(New(e.base, WithAPIKey(e.keys["FREE"])))
	_, err = free.GetV1BriefWithResponse(ctx, &GetV1BriefParams{Id: e.demo.id, Since: time.Now()})
	check(err, ErrForbidden, 403)
	_, err = c.GetV1EntitiesByIdWithResponse(ctx, &GetV1EntitiesByIdParams{Id: 99999999})
	check(err, ErrNotFound, 404)
	big := strings.Repeat("x", 2<<20)
	_, err = c.PostV1WebhooksWithResponse(ctx, PostV1WebhooksJSONRequestBody{Url: big})
	check(err, ErrTooLarge, 413)
}

// TestRetryAfter: a 429 is waited for as its Retry-After says, then
// retried, and succeeds.
func TestRetryAfter(t *testing.T) {
	e := live(t)
	ctx := testCtx(t, time.Minute)
	noRetry := must(New(e.base, WithAPIKey(e.keys["BURN"]), WithRetry(RetryPolicy{})))
	var err error
	for i := 0; i < 200; i++ {
		if _, err = noRetry.GetV1UsageWithResponse(ctx); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrRateLimited) {
		t.Fatalf("the window never refused: %v", err)
	}
	// Bring the end of the window close, then call with retries on.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.control+"/clock/window-end?in=3", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var waited []time.Duration
	c := must(New(e.base, WithAPIKey(e.keys["BURN"])))
	c.sleep = func(ctx context.Context, d time.Duration) error {
		waited = append(waited, d)
		return sleepCtx(ctx, d)
	}
	r := must(c.GetV1UsageWithResponse(ctx))
	if r.JSON200 == nil || c.LastMeta().Attempts < 2 {
		t.Fatalf("want a success after a retry, got %+v", c.LastMeta())
	}
	if len(waited) == 0 || waited[0] < time.Second || waited[0] > 4*time.Second {
		t.Fatalf("waits %v: want the Retry-After (1 to 4 s)", waited)
	}
}

// cutter is a dialer whose connections a test can cut.
type cutter struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (c *cutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		c.mu.Lock()
		c.conns = append(c.conns, conn)
		c.mu.Unlock()
	}
	return conn, err
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

func ingest(t *testing.T, ctx context.Context, e liveEnv, ids ...int) {
	t.Helper()
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, `{"kind":"event","id":%d,"title":"Streamed event %d","eventCategory":"funding","owners":[%d],"evidence":[{"id":%d,"content":"x","url":"https://example.org/%d","timestamp":%q}],"significance":5}`+"\n",
			id, id, e.demo.id, id, id, time.Now().UTC().Format(time.RFC3339))
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/admin/ingest", strings.NewReader(b.String()))
	req.Header.Set("Authorization", "Bearer "+e.admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("ingest: %d %s", resp.StatusCode, body)
	}
}

// TestStreamResume: events pushed before and after the connection is cut
// arrive once each, in order.
func TestStreamResume(t *testing.T) {
	e := live(t)
	cut := &cutter{}
	c := must(New(e.base, WithAPIKey(e.keys["PRO"]), WithHTTP(&http.Client{Transport: &http.Transport{DialContext: cut.dial}})))
	ctx := testCtx(t, time.Minute)
	base := 7100000 + int(time.Now().Unix()%1000)*10
	var got []int
	// Follow from the cursor of "now": events ingested next are pushed.
	var now struct {
		StreamCursor string `json:"streamCursor"`
	}
	if err := c.Query(ctx, `{ streamCursor }`, nil, &now); err != nil {
		t.Fatal(err)
	}
	ingest(t, ctx, e, base+1, base+2, base+3)
	for ev, err := range c.Stream(ctx, GetV1StreamParams{OrganizationId: ptr(e.demo.id), Cursor: &now.StreamCursor}) {
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			ID int `json:"id"`
		}
		json.Unmarshal(ev.Data, &d) //nolint:errcheck
		if d.ID < base {
			continue
		}
		got = append(got, d.ID)
		if len(got) == 2 {
			cut.cut() // the connection drops after the second event
			ingest(t, ctx, e, base+4, base+5)
		}
		if len(got) == 5 {
			break
		}
	}
	want := []int{base + 1, base + 2, base + 3, base + 4, base + 5}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestSubscriptionResume: a GraphQL subscription's results pushed before
// and after its connection is cut arrive once each, in order, each with
// its cursor.
func TestSubscriptionResume(t *testing.T) {
	e := live(t)
	cut := &cutter{}
	c := must(New(e.base, WithAPIKey(e.keys["PRO"]), WithHTTP(&http.Client{Transport: &http.Transport{DialContext: cut.dial}})))
	ctx := testCtx(t, time.Minute)
	base := 7500000 + int(time.Now().Unix()%1000)*10
	var now struct {
		StreamCursor string `json:"streamCursor"`
	}
	if err := c.Query(ctx, `{ streamCursor }`, nil, &now); err != nil {
		t.Fatal(err)
	}
	ingest(t, ctx, e, base+1, base+2, base+3)
	const doc = `subscription($after: String, $entityId: Int) { events(after: $after, entityId: $entityId) { id title } }`
	var got []int
	for m, err := range c.Subscribe(ctx, doc, map[string]any{"after": now.StreamCursor, "entityId": e.demo.id}) {
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Events struct {
				ID    int    `json:"id"`
				Title string `json:"title"`
			} `json:"events"`
		}
		if err := json.Unmarshal(m.Data, &d); err != nil || m.Cursor == "" {
			t.Fatalf("result %s, cursor %q: %v", m.Data, m.Cursor, err)
		}
		if d.Events.ID < base {
			continue
		}
		got = append(got, d.Events.ID)
		if len(got) == 2 {
			cut.cut() // the connection drops after the second result
			ingest(t, ctx, e, base+4, base+5)
		}
		if len(got) == 5 {
			break
		}
	}
	want := []int{base + 1, base + 2, base + 3, base + 4, base + 5}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A document the server refuses is a GraphQLError, not a reconnect.
	var ge *GraphQLError
	for _, err := range c.Subscribe(ctx, `subscription { nope }`, nil) {
		if !errors.As(err, &ge) {
			t.Fatalf("want a GraphQLError, got %v", err)
		}
	}
	if ge == nil {
		t.Fatal("a refused document yielded nothing")
	}
}

// TestWebhookVerify: a real delivery verifies; the same with one byte of
// its body changed, or another secret, does not.
func TestWebhookVerify(t *testing.T) {
	e := live(t)
	ctx := testCtx(t, time.Minute)
	c := must(New(e.base, WithAPIKey(e.keys["ENTERPRISE"])))
	hookURL, got := startReceiver(t)
	r := must(c.PostV1WebhooksWithResponse(ctx, PostV1WebhooksJSONRequestBody{Url: hookURL,
		EventTypes: []PostV1WebhooksJSONBodyEventTypes{PostV1WebhooksJSONBodyEventTypesSignal}}))
	secret := *r.JSON201.Data.Secret
	must(c.PostV1WebhooksIdTestWithResponse(ctx, r.JSON201.Data.Id))
	var d delivery
	select {
	case d = <-got:
	case <-ctx.Done():
		t.Fatal("no delivery in time")
	}
	if err := VerifyWebhook(secret, d.body, d.header, 0); err != nil {
		t.Fatalf("a genuine delivery: %v", err)
	}
	tampered := bytes.Clone(d.body)
	tampered[len(tampered)/2] ^= 1
	if err := VerifyWebhook(secret, tampered, d.header, 0); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("a tampered body verified: %v", err)
	}
	if err := VerifyWebhook(secret+"x", d.body, d.header, 0); !errors.Is(err, ErrInvalidSignature) {
		t.Fatalf("another secret verified: %v", err)
	}
}

// TestPaidRequest: without a key, a priced route answers 402; the payer
// signs the x402 v2 offer and the retry is served, settled on the chain.
func TestPaidRequest(t *testing.T) {
	e := live(t)
	if e.payer == "" {
		t.Fatal("CRYPTOINTEL_PAYER is not set: the server takes no payments")
	}
	ctx := testCtx(t, time.Minute)
	unpaid := must(New(e.base))
	_, err := unpaid.GetV1EntitiesByTopNameWithResponse(ctx, &GetV1EntitiesByTopNameParams{Name: ptr(e.demo.name)})
	if !errors.Is(err, ErrPaymentRequired) {
		t.Fatalf("want a 402, got %v", err)
	}
	signer := func(ctx context.Context, d TypedDataDomain, a Authorization) (string, error) {
		b, _ := json.Marshal(map[string]any{"domain": d, "authorization": a})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.control+"/sign", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var out struct{ Signature string }
		return out.Signature, json.NewDecoder(resp.Body).Decode(&out)
	}
	c := must(New(e.base, WithPayer(&X402Payer{From: e.payer, Sign: signer})))
	r, err := c.GetV1EntitiesByTopNameWithResponse(ctx, &GetV1EntitiesByTopNameParams{Name: ptr(e.demo.name)})
	if err != nil {
		t.Fatal(err)
	}
	if r.JSON200 == nil || r.HTTPResponse.Header.Get("PAYMENT-RESPONSE") == "" {
		t.Fatalf("want a paid 200 with PAYMENT-RESPONSE, got %d %v", r.StatusCode(), r.HTTPResponse.Header)
	}
}

// TestGraphQLQuery: the query helper decodes data and returns errors.
func TestGraphQLQuery(t *testing.T) {
	e := live(t)
	c := must(New(e.base, WithAPIKey(e.keys["ENTERPRISE"])))
	ctx := testCtx(t, time.Minute)
	var out struct {
		Entity struct{ CanonicalName string } `json:"entity"`
	}
	if err := c.Query(ctx, `query($id: Int!) { entity(id: $id) { canonicalName } }`, map[string]any{"id": e.demo.id}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Entity.CanonicalName != e.demo.name {
		t.Fatalf("%+v", out)
	}
	var ge *GraphQLError
	if err := c.Query(ctx, `{ nope }`, nil, &out); !errors.As(err, &ge) {
		t.Fatalf("want a GraphQLError, got %v", err)
	}
	// The typed function genqlient generated from queries.graphql.
	typed, err := EntityGraph(ctx, c.GraphQL(), e.demo.id, 3)
	if err != nil {
		t.Fatal(err)
	}
	if typed.Entity.CanonicalName != e.demo.name || len(typed.Entity.Relationships) == 0 {
		t.Fatalf("%+v", typed)
	}
}
