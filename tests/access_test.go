package tests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// accessNow pins the service clock 20 seconds into a minute, so the rate
// window cannot roll during a test and resets in 40 seconds.
var accessNow = time.Date(2026, 11, 18, 9, 30, 20, 0, time.UTC)

// accessServer is a running service (app.New + Serve on a loopback port)
// with payments pointed at a local fake facilitator.
type accessServer struct {
	app  *app.App
	base string
	fac  *accesstest.Facilitator
}

func startAccessServer(t *testing.T, databaseURL string, fac *accesstest.Facilitator) *accessServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Config{
		DatabaseURL:        databaseURL,
		DBMaxConns:         8,
		Logger:             testLogger(t),
		ShutdownTimeout:    15 * time.Second,
		X402FacilitatorURL: fac.URL,
		MPPVerifierURL:     fac.MPPURL(),
		MPPSecret:          "access-test-secret",
		PaymentPayTo:       "0x3333333333333333333333333333333333333333",
	})
	require.NoError(t, err)
	a.DB.Now = func() time.Time { return accessNow }
	fac.Now = func() time.Time { return accessNow }
	return &accessServer{app: a, base: serveApp(t, ctx, cancel, a), fac: fac}
}

// serveApp serves a on a loopback port until the test ends (then cancels
// ctx, waits for a clean stop and closes a) and returns its base URL.
func serveApp(t *testing.T, ctx context.Context, cancel context.CancelFunc, a *app.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		a.Close() //nolint:errcheck
	})
	return "http://" + ln.Addr().String()
}

type accessResponse struct {
	status int
	header http.Header
	body   []byte
}

func (s *accessServer) request(t testing.TB, method, path, body string, header http.Header) accessResponse {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return accessResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

func keyHeader(key string) http.Header { return http.Header{"Authorization": {"Bearer " + key}} }

var everyAccessHeader = []string{
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Monthly-Limit", "X-Monthly-Used",
	"X-Monthly-Remaining", "X-Credit-Cost", "X-Plan-Tier", "X-Api-Surface", "X-Access-Layer",
	"X-Endpoint-Policy", "X-Request-Id", "RateLimit-Policy", "RateLimit",
}

func requireEveryAccessHeader(t *testing.T, r accessResponse) {
	t.Helper()
	for _, h := range everyAccessHeader {
		require.NotEmpty(t, r.header.Get(h), "%s missing on a %d response: %s", h, r.status, r.body)
	}
}

// TestAccessRateWindowAcrossTwoServers runs two servers (two processes'
// worth of pools and access layers) on one database: of 300 concurrent
// requests with one key, exactly 100 pass.
func TestAccessRateWindowAcrossTwoServers(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	fac := accesstest.NewFacilitator(t)
	servers := []*accessServer{startAccessServer(t, url, fac), startAccessServer(t, url, fac)}
	key, _ := accesstest.NewKey(t, servers[0].app.DB, cryptointel.PlanPro)

	var mu sync.Mutex
	codes := map[int]int{}
	var sample accessResponse
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func(s *accessServer) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := s.request(t, "GET", "/v1/usage", "", keyHeader(key))
			mu.Lock()
			defer mu.Unlock()
			codes[r.status]++
			if r.status == http.StatusTooManyRequests {
				sample = r
			}
		}(servers[i%2])
	}
	wg.Wait()
	require.Equal(t, map[int]int{200: 100, 429: 200}, codes)

	var body struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(sample.body, &body))
	require.Equal(t, "Rate limit exceeded. Maximum 100 requests per 60 seconds.", body.Error)
	require.Equal(t, "40", sample.header.Get("X-RateLimit-Reset"))
	require.Equal(t, "40", sample.header.Get("Retry-After"))
	requireEveryAccessHeader(t, sample)
}

// TestAccessUsageAndHeadersOnRealRoutes checks the headers on /v1 and
// /graphql responses, GraphQL's extensions.cost, plan gating on a premium
// route, and that /v1/usage counts what was made.
func TestAccessUsageAndHeadersOnRealRoutes(t *testing.T) {
	t.Parallel()
	s := startAccessServer(t, dbtest.NewURL(t), accesstest.NewFacilitator(t))
	key, _ := accesstest.NewKey(t, s.app.DB, cryptointel.PlanFree)

	r := s.request(t, "GET", "/v1/radar/all?since="+accessNow.Add(-time.Hour).Format(time.RFC3339), "", keyHeader(key))
	require.Equal(t, http.StatusForbidden, r.status, string(r.body))
	require.Contains(t, string(r.body), "This endpoint requires the business plan or higher.")
	requireEveryAccessHeader(t, r)
	require.Equal(t, "premium", r.header.Get("X-Access-Layer"))

	r = s.request(t, "POST", "/graphql", `{"query":"{ __typename }"}`, keyHeader(key))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	requireEveryAccessHeader(t, r)
	require.Equal(t, "graphql", r.header.Get("X-Api-Surface"))
	var gql struct {
		Extensions map[string]any `json:"extensions"`
	}
	require.NoError(t, json.Unmarshal(r.body, &gql))
	require.Contains(t, gql.Extensions, "cost")
	require.Equal(t, r.header.Get("X-Credit-Cost"), jsonNumber(gql.Extensions["cost"]))

	r = s.request(t, "GET", "/v1/usage", "", keyHeader(key))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	requireEveryAccessHeader(t, r)
	var usage struct {
		Data struct {
			Today, ThisWeek, ThisMonth int64
			Budget                     struct{ Limit, Used, Remaining int64 }
		}
	}
	require.NoError(t, json.Unmarshal(r.body, &usage))
	// The graphql request and this one; the refused premium request is not admitted.
	require.EqualValues(t, 2, usage.Data.Today)
	require.EqualValues(t, 2, usage.Data.ThisWeek)
	require.EqualValues(t, 2, usage.Data.ThisMonth)
	require.EqualValues(t, 1000, usage.Data.Budget.Limit)
	require.Equal(t, r.header.Get("X-Monthly-Used"), jsonNumber(usage.Data.Budget.Used))
	require.Equal(t, r.header.Get("X-Monthly-Remaining"), jsonNumber(usage.Data.Budget.Remaining))

	r = s.request(t, "GET", "/v1/usage", "", nil)
	require.Equal(t, http.StatusUnauthorized, r.status)
	requireEveryAccessHeader(t, r)
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAccessPayPerRequestOnRealRoute pays for priced /v1 routes without a
// key, with x402 and with MPP, through the fake facilitator: a route that
// answers 200 is settled and receipted, one that answers 404 is not.
func TestAccessPayPerRequestOnRealRoute(t *testing.T) {
	t.Parallel()
	fac := accesstest.NewFacilitator(t)
	s := startAccessServer(t, dbtest.NewURL(t), fac)
	const search = "/v1/search?q=bitcoin"           // 200 on an empty database
	const missing = "/v1/entities/byTopName?name=x" // 404 on an empty database

	challenge := s.request(t, "GET", search, "", nil)
	require.Equal(t, http.StatusPaymentRequired, challenge.status, string(challenge.body))
	requireEveryAccessHeader(t, challenge)
	var body struct {
		X402Version int              `json:"x402Version"`
		Accepts     []map[string]any `json:"accepts"`
	}
	require.NoError(t, json.Unmarshal(challenge.body, &body))
	require.Equal(t, 1, body.X402Version)
	require.Equal(t, "50000", body.Accepts[0]["maxAmountRequired"]) // fixed 0.05 USDC
	require.True(t, strings.HasPrefix(challenge.header.Get("WWW-Authenticate"), "Payment "))

	// x402: paid retry, settled, receipt header.
	paid := s.request(t, "GET", search, "", http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.body, accesstest.GoodSignature)}})
	require.Equal(t, http.StatusOK, paid.status, string(paid.body))
	requireEveryAccessHeader(t, paid)
	require.Equal(t, "pay-per-request", paid.header.Get("X-Plan-Tier"))
	raw, err := base64.StdEncoding.DecodeString(paid.header.Get("X-PAYMENT-RESPONSE"))
	require.NoError(t, err)
	require.Contains(t, string(raw), `"success":true`)
	require.Len(t, fac.Settles(), 1)

	// MPP: paid retry, settled, Payment-Receipt.
	mpp := s.request(t, "GET", search, "", http.Header{"Authorization": {accesstest.MPPCredential(t, challenge.header.Get("WWW-Authenticate"), accesstest.GoodSignature)}})
	require.Equal(t, http.StatusOK, mpp.status, string(mpp.body))
	require.NotEmpty(t, mpp.header.Get("Payment-Receipt"))
	require.Len(t, fac.Settles(), 2)

	// A failed response is not settled, with either protocol.
	challenge = s.request(t, "GET", missing, "", nil)
	require.Equal(t, http.StatusPaymentRequired, challenge.status)
	r := s.request(t, "GET", missing, "", http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.body, accesstest.GoodSignature)}})
	require.Equal(t, http.StatusNotFound, r.status, string(r.body))
	require.Empty(t, r.header.Get("X-PAYMENT-RESPONSE"))
	r = s.request(t, "GET", missing, "", http.Header{"Authorization": {accesstest.MPPCredential(t, challenge.header.Get("WWW-Authenticate"), accesstest.GoodSignature)}})
	require.Equal(t, http.StatusNotFound, r.status, string(r.body))
	require.Empty(t, r.header.Get("Payment-Receipt"))
	require.Len(t, fac.Settles(), 2)
	require.Len(t, fac.Verifies(), 4)
}

// TestAccessPricedFromTheParsedCall: a priced route is priced from the
// call the route serves — its `limit` after parsing, defaults and caps —
// never from the raw query string. `limit=%2025` is trimmed and served as
// 25 items, so it costs what limit=25 costs, with x402 and with MPP alike.
func TestAccessPricedFromTheParsedCall(t *testing.T) {
	t.Parallel()
	fac := accesstest.NewFacilitator(t)
	s := startAccessServer(t, dbtest.NewURL(t), fac)
	// /v1/latest: range price 0.005–0.125 USDC over limit 1–25, default 10.
	const at25, at10 = "125000", "50000"
	for _, c := range []struct{ query, want string }{
		{"limit=25", at25},
		{"limit=%2025", at25},      // " 25": trimmed by the route
		{"limit=+25", at25},        // '+' decodes to a space
		{"limit=25%20", at25},      // trailing space
		{"limit=99999", at25},      // capped at 25
		{"limit=25&limit=x", at25}, // first occurrence wins
		{"limit=", at10},           // empty is absent
		{"", at10},
	} {
		path := "/v1/latest?" + c.query
		challenge := s.request(t, "GET", path, "", nil)
		require.Equal(t, http.StatusPaymentRequired, challenge.status, string(challenge.body))
		var body struct {
			Accepts []map[string]any `json:"accepts"`
		}
		require.NoError(t, json.Unmarshal(challenge.body, &body))
		require.Equal(t, c.want, body.Accepts[0]["maxAmountRequired"], "x402 price of %s", path)
		params := accesstest.ParseChallenge(t, challenge.header.Get("WWW-Authenticate"))
		raw, err := base64.RawURLEncoding.DecodeString(params["request"])
		require.NoError(t, err)
		require.Contains(t, string(raw), `"amount":"`+c.want+`"`, "MPP price of %s", path)
	}

	// The paid request is settled at the price of what it was served.
	path := "/v1/latest?limit=%2025"
	challenge := s.request(t, "GET", path, "", nil)
	paid := s.request(t, "GET", path, "", http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.body, accesstest.GoodSignature)}})
	require.Equal(t, http.StatusOK, paid.status, string(paid.body))
	require.Contains(t, string(paid.body), `"limit":25`)
	settles := fac.Settles()
	require.Len(t, settles, 1)
	require.Equal(t, at25, settles[0]["paymentRequirements"].(map[string]any)["maxAmountRequired"])
}

// TestAccessGraphQLCostAfterCaps: a list of ids over the 25-id cap is
// refused before anything is loaded, so it is charged the field alone, not
// the fan-out it would have had (entities(ids:[…400]) once cost 801
// credits, briefs(ids:[…1000]) 10,001, for an error).
func TestAccessGraphQLCostAfterCaps(t *testing.T) {
	t.Parallel()
	s := startAccessServer(t, dbtest.NewURL(t), accesstest.NewFacilitator(t))
	key, _ := accesstest.NewKey(t, s.app.DB, cryptointel.PlanEnterprise)
	ids := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = strconv.Itoa(i + 1)
		}
		return strings.Join(parts, ",")
	}
	since := accessNow.Add(-24 * time.Hour).Format(time.RFC3339)
	for _, c := range []struct {
		name, query string
		cost        int
		refused     bool
	}{
		{"entities over the cap", "{ entities(ids: [" + ids(400) + "]) { id canonicalName } }", 1, true},
		{"briefs over the cap", `{ briefs(ids: [` + ids(1000) + `], since: "` + since + `") { label organizationId } }`, 1, true},
		{"entities at the cap", "{ entities(ids: [" + ids(25) + "]) { id canonicalName } }", 25*2 + 1, false},
		{"briefs at the cap", `{ briefs(ids: [` + ids(25) + `], since: "` + since + `", first: 2) { label organizationId } }`, 25*2*2 + 1, false},
	} {
		before := s.request(t, "GET", "/v1/usage", "", keyHeader(key))
		require.Equal(t, http.StatusOK, before.status)
		body, err := json.Marshal(map[string]string{"query": c.query})
		require.NoError(t, err)
		r := s.request(t, "POST", "/graphql", string(body), keyHeader(key))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		var resp struct {
			Errors     []map[string]any `json:"errors"`
			Extensions map[string]any   `json:"extensions"`
		}
		require.NoError(t, json.Unmarshal(r.body, &resp))
		require.Equal(t, c.refused, len(resp.Errors) > 0, "%s: %s", c.name, r.body)
		require.Equal(t, strconv.Itoa(c.cost), jsonNumber(resp.Extensions["cost"]), c.name)
		require.Equal(t, strconv.Itoa(c.cost), r.header.Get("X-Credit-Cost"), c.name)
		used := func(h http.Header) int {
			n, err := strconv.Atoi(h.Get("X-Monthly-Used"))
			require.NoError(t, err)
			return n
		}
		// The usage request before costs 0 credits.
		require.Equal(t, used(before.header)+c.cost, used(r.header), c.name)
	}
}
