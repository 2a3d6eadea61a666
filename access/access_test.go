package access_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/observe"
)

// fixedNow is 15.5 seconds into a minute: the window resets in 45 seconds.
var fixedNow = time.Date(2026, 3, 4, 10, 0, 15, 500_000_000, time.UTC) // a Wednesday

var (
	searchPolicy = access.Policy{Surface: "query", Layer: access.LayerEvaluation, Name: "search", CreditCost: 2}
	briefPolicy  = access.Policy{Surface: "brief", Layer: access.LayerOperational, Name: "brief", CreditCost: 5, Feature: access.FeatureBriefs}
	pricedPolicy = access.Policy{Surface: "feed", Layer: access.LayerEvaluation, Name: "signal.latest", CreditCost: 1,
		Pricing: &access.Pricing{Mode: "range", Min: 0.005, Max: 0.125, MaxLimit: 50, DefaultLimit: 10}}
)

type testBundle struct {
	store *db.DB
	svc   *access.Service
	fac   *accesstest.Facilitator
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	store := dbtest.New(t)
	fac := accesstest.NewFacilitator(t)
	svc := access.New(store, access.Config{Now: func() time.Time { return fixedNow }, Payment: testPayments(fac)})
	fac.Now = func() time.Time { return fixedNow }
	return &testBundle{store: store, svc: svc, fac: fac}
}

// testPayments is the payment configuration of setup's service: x402 and
// MPP verified by fac.
func testPayments(fac *accesstest.Facilitator) access.PaymentConfig {
	return access.PaymentConfig{
		FacilitatorURL: fac.URL, MPPVerifierURL: fac.MPPURL(),
		PayTo: "0x2222222222222222222222222222222222222222", MPPSecret: "test-secret",
		PublicURL: "https://api.example.test",
	}
}

// okHandler answers 200 with the caller it sees.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	c, _ := access.CallerFrom(r.Context())
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"plan": c.Plan.Name, "paid": c.Paid, "key": c.APIKeyID}}) //nolint:errcheck
})

// do serves one request. It stands in for the route layer in front of the
// access layer: a `limit` query parameter is attached as the parsed limit
// (access.WithPricedLimit), which is what priced routes are priced from.
func do(h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	if n, err := strconv.Atoi(req.URL.Query().Get("limit")); err == nil {
		req = req.WithContext(access.WithPricedLimit(req.Context(), n))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func bearer(key string) http.Header { return http.Header{"Authorization": {"Bearer " + key}} }

func errorOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return body.Error
}

var accessHeaders = []string{
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Monthly-Limit", "X-Monthly-Used",
	"X-Monthly-Remaining", "X-Credit-Cost", "X-Plan-Tier", "X-Api-Surface", "X-Access-Layer",
	"X-Endpoint-Policy", "X-Request-Id", "RateLimit-Policy", "RateLimit",
}

func requireAccessHeaders(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	for _, h := range accessHeaders {
		require.NotEmpty(t, rec.Header().Get(h), "header %s on a %d response", h, rec.Code)
	}
}

func TestExactlyOneHundredOfThreeHundredAcrossTwoProcesses(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	ctx := context.Background()
	var handlers []http.Handler
	for i := 0; i < 2; i++ { // two "processes": separate pools and services on one database
		store, err := db.Open(ctx, url, db.Options{MaxConns: 8})
		require.NoError(t, err)
		t.Cleanup(func() { store.Close() })
		svc := access.New(store, access.Config{Now: func() time.Time { return fixedNow }})
		handlers = append(handlers, svc.Wrap(searchPolicy, okHandler))
	}
	first, err := db.Open(ctx, url, db.Options{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { first.Close() })
	key, _ := accesstest.NewKey(t, first, cryptointel.PlanPro)

	var mu sync.Mutex
	codes := map[int]int{}
	var tooMany []*httptest.ResponseRecorder
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func(h http.Handler) {
			defer wg.Done()
			<-start
			rec := do(h, "GET", "/v1/search?q=x", bearer(key))
			mu.Lock()
			codes[rec.Code]++
			if rec.Code == http.StatusTooManyRequests {
				tooMany = append(tooMany, rec)
			}
			mu.Unlock()
		}(handlers[i%2])
	}
	close(start)
	wg.Wait()
	require.Equal(t, map[int]int{200: 100, 429: 200}, codes)

	rec := tooMany[0]
	require.Equal(t, "Rate limit exceeded. Maximum 100 requests per 60 seconds.", errorOf(t, rec))
	require.Equal(t, "45", rec.Header().Get("X-RateLimit-Reset"))
	require.Equal(t, "45", rec.Header().Get("Retry-After"))
	require.Equal(t, "0", rec.Header().Get("X-RateLimit-Remaining"))
	require.Equal(t, `"default";r=0;t=45`, rec.Header().Get("RateLimit"))
	requireAccessHeaders(t, rec)

	// Only admitted requests were charged (2 credits each).
	rec = do(handlers[0], "GET", "/v1/search?q=x", bearer(key))
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.Equal(t, "200", rec.Header().Get("X-Monthly-Used"))
}

func TestHeadersOnSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanPro)
	h := b.svc.Wrap(searchPolicy, okHandler)

	rec := do(h, "GET", "/v1/search?q=x", bearer(key))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireAccessHeaders(t, rec)
	want := map[string]string{
		"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "99", "X-RateLimit-Reset": "45",
		"X-Monthly-Limit": "50000", "X-Monthly-Used": "2", "X-Monthly-Remaining": "49998",
		"X-Credit-Cost": "2", "X-Plan-Tier": "pro", "X-Api-Surface": "query", "X-Access-Layer": "evaluation",
		"X-Endpoint-Policy": "search", "RateLimit-Policy": `"default";q=100;w=60`, "RateLimit": `"default";r=99;t=45`,
	}
	for k, v := range want {
		require.Equal(t, v, rec.Header().Get(k), k)
	}
	require.Contains(t, rec.Body.String(), `"plan":"pro"`)
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.svc.Wrap(searchPolicy, okHandler)

	rec := do(h, "GET", "/v1/search", http.Header{"X-Request-Id": {"abc-123_DEF.4"}})
	require.Equal(t, "abc-123_DEF.4", rec.Header().Get("X-Request-Id"))

	for _, bad := range []string{"has space", strings.Repeat("a", 129), "semi;colon"} {
		rec = do(h, "GET", "/v1/search", http.Header{"X-Request-Id": {bad}})
		got := rec.Header().Get("X-Request-Id")
		require.NotEqual(t, bad, got)
		require.True(t, observe.ValidRequestID(got), got)
	}

	// An id assigned outside (observe, the id's one owner) is kept: the
	// handler's context and the response carry the same id.
	var seen string
	outer := observe.Middleware(slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = observe.RequestID(r.Context())
		h.ServeHTTP(w, r)
	}))
	rec = do(outer, "GET", "/v1/search", nil)
	require.NotEmpty(t, seen)
	require.Equal(t, seen, rec.Header().Get("X-Request-Id"))
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.svc.Wrap(searchPolicy, okHandler)

	rec := do(h, "GET", "/v1/search", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, access.MsgMissingKey, errorOf(t, rec))
	requireAccessHeaders(t, rec)
	require.Equal(t, "none", rec.Header().Get("X-Plan-Tier"))

	rec = do(h, "GET", "/v1/search", bearer("ci_not-a-key"))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, access.MsgInvalidKey, errorOf(t, rec))

	// A key sent without its scheme, or under another one, is told so;
	// "Bearer" alone is a missing key.
	for value, want := range map[string]string{
		"ci_not-a-key":       access.MsgBearerMissing,
		"Token ci_not-a-key": access.MsgBearerMissing,
		"Basic dXNlcjpwdw==": access.MsgBearerMissing,
		"Bearer":             access.MsgMissingKey,
		"Bearer   ":          access.MsgMissingKey,
	} {
		rec = do(h, "GET", "/v1/search", http.Header{"Authorization": {value}})
		require.Equal(t, http.StatusUnauthorized, rec.Code, value)
		require.Equal(t, want, errorOf(t, rec), value)
	}

	key, id := accesstest.NewKey(t, b.store, cryptointel.PlanPro)
	_, err := b.store.Bun.NewUpdate().Model((*cryptointel.APIKey)(nil)).Set("revoked_at = now()").Where("id = ?", id).Exec(context.Background())
	require.NoError(t, err)
	rec = do(h, "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, access.MsgRevokedKey, errorOf(t, rec))
}

func TestMonthlyAllowanceAndUsageStillAnswers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanFree) // 1000 credits
	big := searchPolicy
	big.CreditCost = 400
	h := b.svc.Wrap(big, okHandler)
	usage := b.svc.UsageHandler()

	for i := 0; i < 2; i++ {
		require.Equal(t, http.StatusOK, do(h, "GET", "/v1/search", bearer(key)).Code)
	}
	// 800 used: a third 400 would exceed the allowance.
	rec := do(h, "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "API usage limit reached. Please upgrade your plan or contact support.", errorOf(t, rec))
	requireAccessHeaders(t, rec)
	require.Equal(t, "800", rec.Header().Get("X-Monthly-Used"))

	small := searchPolicy
	small.CreditCost = 200
	require.Equal(t, http.StatusOK, do(b.svc.Wrap(small, okHandler), "GET", "/v1/search", bearer(key)).Code)
	// At the allowance exactly: every priced route is refused…
	rec = do(b.svc.Wrap(searchPolicy, okHandler), "GET", "/v1/search", bearer(key))
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, access.MsgQuotaExceeded, errorOf(t, rec))
	require.Equal(t, "0", rec.Header().Get("X-Monthly-Remaining"))

	// …and /v1/usage still answers, consistent with its headers.
	rec = do(usage, "GET", "/v1/usage", bearer(key))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireAccessHeaders(t, rec)
	require.Equal(t, "0", rec.Header().Get("X-Credit-Cost"))
	require.Equal(t, "usage", rec.Header().Get("X-Endpoint-Policy"))
	var got access.UsageResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	// Admitted: 2 + 1 + the usage request itself.
	require.Equal(t, access.UsageData{Today: 4, ThisWeek: 4, ThisMonth: 4,
		Budget:  access.Budget{Limit: 1000, Used: 1000, Remaining: 0},
		Credits: access.PeriodCredits{Today: 1000, ThisWeek: 1000, ThisMonth: 1000},
		Units:   access.UsageUnits{Today: "requests", ThisWeek: "requests", ThisMonth: "requests", Budget: "credits"}}, got.Data)
	require.Equal(t, "1000", rec.Header().Get("X-Monthly-Used"))
	require.Equal(t, "1000", rec.Header().Get("X-Monthly-Limit"))
}

func TestUsageCountsEqualRequestsMade(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanBusiness)
	other, _ := accesstest.NewKey(t, b.store, cryptointel.PlanBusiness)
	h := b.svc.Wrap(searchPolicy, okHandler)
	bad := b.svc.Wrap(searchPolicy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"query parameter is required"}`, http.StatusBadRequest)
	}))
	for i := 0; i < 7; i++ {
		require.Equal(t, http.StatusOK, do(h, "GET", "/v1/search", bearer(key)).Code)
	}
	// A request the route refuses (400) is still an admitted request,
	// counted, but a refusal costs no credits.
	require.Equal(t, http.StatusBadRequest, do(bad, "GET", "/v1/search", bearer(key)).Code)
	require.Equal(t, http.StatusOK, do(h, "GET", "/v1/search", bearer(other)).Code)

	rec := do(b.svc.UsageHandler(), "GET", "/v1/usage", bearer(key))
	require.Equal(t, http.StatusOK, rec.Code)
	var got access.UsageResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	require.Equal(t, access.UsageData{Today: 9, ThisWeek: 9, ThisMonth: 9,
		Budget:  access.Budget{Limit: 500000, Used: 14, Remaining: 499986},
		Credits: access.PeriodCredits{Today: 14, ThisWeek: 14, ThisMonth: 14},
		Units:   access.UsageUnits{Today: "requests", ThisWeek: "requests", ThisMonth: "requests", Budget: "credits"}}, got.Data)
	require.Equal(t, strconv.FormatInt(got.Data.Budget.Used, 10), rec.Header().Get("X-Monthly-Used"))
	require.Equal(t, strconv.FormatInt(got.Data.Budget.Remaining, 10), rec.Header().Get("X-Monthly-Remaining"))
}

func TestPlanGatingPerLayerForEveryPlan(t *testing.T) {
	t.Parallel()
	b := setup(t)
	keys := map[string]string{}
	for _, plan := range []string{cryptointel.PlanFree, cryptointel.PlanPro, cryptointel.PlanBusiness, cryptointel.PlanEnterprise} {
		keys[plan], _ = accesstest.NewKey(t, b.store, plan)
	}
	policies := []struct {
		policy access.Policy
		// allowed lists the plans that may use the route; others get msg.
		allowed []string
		msg     string
	}{
		{searchPolicy, []string{"free", "pro", "business", "enterprise"}, ""},
		{briefPolicy, []string{"pro", "business", "enterprise"}, "This endpoint requires the pro plan or higher."},
		{access.Policy{Surface: "delivery", Layer: access.LayerOperational, Name: "webhooks", Feature: access.FeatureWebhooks, CreditCost: 1},
			[]string{"pro", "business", "enterprise"}, "This endpoint requires the pro plan or higher."},
		{access.Policy{Surface: "brief", Layer: access.LayerOperational, Name: "brief.batch", Feature: access.FeatureBatchBriefs, CreditCost: 10},
			[]string{"business", "enterprise"}, "This endpoint requires the business plan or higher."},
		{access.Policy{Surface: "feed", Layer: access.LayerPremium, Name: "radar.all", Feature: access.FeaturePremiumFeeds, CreditCost: 5},
			[]string{"business", "enterprise"}, "This endpoint requires the business plan or higher."},
		{access.Policy{Surface: "replay", Layer: access.LayerPremium, Name: "replay.global", CreditCost: 5},
			[]string{"business", "enterprise"}, "This endpoint requires the business plan or higher."},
		{access.Policy{Surface: "export", Layer: access.LayerPremium, Name: "export", Feature: access.FeatureExport, MinPlan: cryptointel.PlanEnterprise, CreditCost: 10},
			[]string{"enterprise"}, "This endpoint requires the enterprise plan."},
	}
	for _, tc := range policies {
		h := b.svc.Wrap(tc.policy, okHandler)
		for plan, key := range keys {
			rec := do(h, "GET", "/x", bearer(key))
			requireAccessHeaders(t, rec)
			require.Equal(t, plan, rec.Header().Get("X-Plan-Tier"))
			require.Equal(t, tc.policy.Layer, rec.Header().Get("X-Access-Layer"))
			if contains(tc.allowed, plan) {
				require.Equal(t, http.StatusOK, rec.Code, "%s on %s", plan, tc.policy.Name)
			} else {
				require.Equal(t, http.StatusForbidden, rec.Code, "%s on %s", plan, tc.policy.Name)
				require.Equal(t, tc.msg, errorOf(t, rec))
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestAllow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	free, _ := accesstest.NewKey(t, b.store, cryptointel.PlanFree)
	var err error
	h := b.svc.Wrap(searchPolicy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err = access.Allow(r.Context(), access.LayerPremium, access.FeaturePremiumFeeds)
		require.NoError(t, access.Allow(r.Context(), access.LayerEvaluation, ""))
	}))
	do(h, "GET", "/graphql", bearer(free))
	require.Equal(t, cryptointel.EFORBIDDEN, cryptointel.ErrorCode(err))
	require.Equal(t, "This endpoint requires the business plan or higher.", cryptointel.ErrorMessage(err))

	require.NoError(t, access.Allow(context.Background(), access.LayerPremium, ""))
	paid := access.WithCaller(context.Background(), &access.Caller{Paid: true})
	require.NoError(t, access.Allow(paid, access.LayerEvaluation, ""))
	require.Equal(t, cryptointel.EFORBIDDEN, cryptointel.ErrorCode(access.Allow(paid, access.LayerOperational, access.FeatureBriefs)))
}

func TestPricingFormula(t *testing.T) {
	t.Parallel()
	p := access.Pricing{Mode: "range", Min: 0.005, Max: 0.125, MaxLimit: 50, DefaultLimit: 10}
	require.EqualValues(t, 5000, p.AmountForLimit(1))
	require.EqualValues(t, 125000, p.AmountForLimit(50))
	require.EqualValues(t, 125000, p.AmountForLimit(500)) // capped like the route
	// 5000 + ceil(120000 * 24 / 49)
	require.EqualValues(t, 63776, p.AmountForLimit(25))
	fixed := access.Pricing{Mode: "fixed", Min: 0.05, Max: 0.05}
	require.EqualValues(t, 50000, fixed.AmountForLimit(25))

	req := httptest.NewRequest("GET", "/v1/signal/latest", nil)
	require.Equal(t, p.AmountForLimit(10), p.Amount(req)) // default limit
	req = httptest.NewRequest("GET", "/v1/signal/latest", nil)
	req = req.WithContext(access.WithPricedLimit(req.Context(), -4))
	require.EqualValues(t, 5000, p.Amount(req))
	req = req.WithContext(access.WithPricedLimit(req.Context(), 25))
	require.EqualValues(t, 63776, p.Amount(req))
}

// TestPriceIgnoresTheRawQuery: the price is computed from the limit the
// route layer parsed, never from the raw query string, which the route may
// read differently (`limit=%2025` is served as 25 items, strconv.Atoi fails
// on it).
func TestPriceIgnoresTheRawQuery(t *testing.T) {
	t.Parallel()
	p := access.Pricing{Mode: "range", Min: 0.005, Max: 0.125, MaxLimit: 50, DefaultLimit: 10}
	for _, q := range []string{"limit=50", "limit=%2050", "limit=1"} {
		req := httptest.NewRequest("GET", "/v1/signal/latest?"+q, nil)
		require.Equal(t, p.AmountForLimit(10), p.Amount(req), "%s without a parsed limit is priced at the default", q)
		req = req.WithContext(access.WithPricedLimit(req.Context(), 50))
		require.Equal(t, p.AmountForLimit(50), p.Amount(req), q)
	}
}

func TestPriced402ChallengeAndKeyWins(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.svc.Wrap(pricedPolicy, okHandler)

	rec := do(h, "GET", "/v1/signal/latest?limit=50", nil)
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	requireAccessHeaders(t, rec)
	require.Equal(t, "pay-per-request", rec.Header().Get("X-Plan-Tier"))
	var body struct {
		X402Version int                      `json:"x402Version"`
		Error       string                   `json:"error"`
		Accepts     []map[string]interface{} `json:"accepts"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	require.Equal(t, 1, body.X402Version)
	require.NotEmpty(t, body.Error)
	require.Len(t, body.Accepts, 1)
	acc := body.Accepts[0]
	require.Equal(t, "exact", acc["scheme"])
	require.Equal(t, "base", acc["network"])
	require.Equal(t, "125000", acc["maxAmountRequired"])
	require.Equal(t, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", acc["asset"])
	require.Equal(t, "0x2222222222222222222222222222222222222222", acc["payTo"])
	require.Equal(t, "https://api.example.test/v1/signal/latest?limit=50", acc["resource"])
	require.Equal(t, "application/json", acc["mimeType"])
	require.NotEmpty(t, acc["description"])
	require.EqualValues(t, 300, acc["maxTimeoutSeconds"])
	require.Equal(t, map[string]any{"name": "USD Coin", "version": "2"}, acc["extra"])
	require.NotEmpty(t, rec.Header().Get("PAYMENT-REQUIRED"))
	var v2 struct {
		X402Version int              `json:"x402Version"`
		Error       string           `json:"error"`
		Resource    map[string]any   `json:"resource"`
		Accepts     []map[string]any `json:"accepts"`
	}
	raw, err := base64.StdEncoding.DecodeString(rec.Header().Get("PAYMENT-REQUIRED"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &v2))
	require.Equal(t, 2, v2.X402Version)
	require.Equal(t, "PAYMENT-SIGNATURE header is required", v2.Error)
	require.Equal(t, "X-PAYMENT header is required", body.Error)
	require.Equal(t, "https://api.example.test/v1/signal/latest?limit=50", v2.Resource["url"])
	require.Equal(t, []map[string]any{{
		"scheme": "exact", "network": "eip155:8453", "amount": "125000",
		"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": "0x2222222222222222222222222222222222222222",
		"maxTimeoutSeconds": float64(300), "extra": map[string]any{"name": "USD Coin", "version": "2"},
	}}, v2.Accepts)
	ch := accesstest.ParseChallenge(t, rec.Header().Get("WWW-Authenticate"))
	require.Equal(t, "charge", ch["intent"])
	require.Equal(t, "api.example.test", ch["realm"], "the realm is the public host name")
	require.Equal(t, "evm", ch["method"])
	require.Equal(t, "2026-03-04T10:05:15Z", ch["expires"])
	require.NotEmpty(t, ch["id"])
	reqJSON, err := base64.RawURLEncoding.DecodeString(ch["request"])
	require.NoError(t, err)
	require.Equal(t, `{"amount":"125000","currency":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",`+
		`"description":"cryptointel signal.latest (one request)",`+
		`"methodDetails":{"chainId":8453,"credentialTypes":["authorization"],"decimals":6},`+
		`"recipient":"0x2222222222222222222222222222222222222222"}`, string(reqJSON))

	// A valid key wins over payment: no facilitator call, charged to the key.
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanFree)
	hdr := bearer(key)
	hdr.Set("X-PAYMENT", accesstest.X402Payment(t, rec.Body.Bytes(), accesstest.GoodSignature))
	rec = do(h, "GET", "/v1/signal/latest?limit=50", hdr)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "free", rec.Header().Get("X-Plan-Tier"))
	require.Empty(t, rec.Header().Get("X-PAYMENT-RESPONSE"))
	require.Empty(t, b.fac.Verifies())
}

func TestX402RoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var calls int
	h := b.svc.Wrap(pricedPolicy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		okHandler(w, r)
	}))

	challenge := do(h, "GET", "/v1/signal/latest?limit=25", nil)
	require.Equal(t, http.StatusPaymentRequired, challenge.Code)
	require.Zero(t, calls)

	// A bad signature is refused with a fresh challenge, by the service
	// itself; the route never runs.
	rec := do(h, "GET", "/v1/signal/latest?limit=25", http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), "0xbad")}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Contains(t, rec.Body.String(), "invalid_exact_evm_signature")
	require.Zero(t, calls)
	require.Empty(t, b.fac.Settles())

	// The paid retry.
	rec = do(h, "GET", "/v1/signal/latest?limit=25", http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 1, calls)
	require.Contains(t, rec.Body.String(), `"paid":true`)
	requireAccessHeaders(t, rec)
	receipt, err := base64.StdEncoding.DecodeString(rec.Header().Get("X-PAYMENT-RESPONSE"))
	require.NoError(t, err)
	var settle map[string]any
	require.NoError(t, json.Unmarshal(receipt, &settle))
	require.Equal(t, true, settle["success"])
	require.Equal(t, "0xsettled", settle["transaction"])
	require.Equal(t, "base", settle["network"])
	require.Equal(t, rec.Header().Get("X-PAYMENT-RESPONSE"), rec.Header().Get("PAYMENT-RESPONSE"))

	settles := b.fac.Settles()
	require.Len(t, settles, 1)
	require.EqualValues(t, 1, settles[0]["x402Version"])
	reqs := settles[0]["paymentRequirements"].(map[string]any)
	require.Equal(t, "63776", reqs["maxAmountRequired"])
	require.Len(t, b.fac.Verifies(), 1, "the bad signature was refused before the facilitator")
}

func TestX402V2Headers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.svc.Wrap(pricedPolicy, okHandler)
	challenge := do(h, "GET", "/v1/signal/latest", nil)
	sig := accesstest.X402PaymentV2(t, challenge.Header().Get("PAYMENT-REQUIRED"), accesstest.GoodSignature)

	rec := do(h, "GET", "/v1/signal/latest", http.Header{"Payment-Signature": {sig}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotEmpty(t, rec.Header().Get("PAYMENT-RESPONSE"))
	settles := b.fac.Settles()
	require.Len(t, settles, 1)
	require.EqualValues(t, 2, settles[0]["x402Version"])
	require.Equal(t, strconv.FormatInt(pricedPolicy.Pricing.AmountForLimit(10), 10),
		settles[0]["paymentRequirements"].(map[string]any)["amount"])
}

func TestNoSettlementWhenTheResponseFailed(t *testing.T) {
	t.Parallel()
	failures := map[string]http.HandlerFunc{
		"5xx": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"Internal server error."}`) //nolint:errcheck
		},
		"graphql errors": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"errors":[{"message":"boom"}],"data":null}`) //nolint:errcheck
		},
	}
	for name, handler := range failures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			h := b.svc.Wrap(pricedPolicy, handler)

			// x402
			challenge := do(h, "GET", "/v1/signal/latest", nil)
			rec := do(h, "GET", "/v1/signal/latest", http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)}})
			require.NotEqual(t, http.StatusPaymentRequired, rec.Code)
			require.Empty(t, rec.Header().Get("X-PAYMENT-RESPONSE"))

			// MPP
			rec = do(h, "GET", "/v1/signal/latest", http.Header{"Authorization": {accesstest.MPPCredential(t, challenge.Header().Get("WWW-Authenticate"), accesstest.GoodSignature)}})
			require.NotEqual(t, http.StatusPaymentRequired, rec.Code)
			require.Empty(t, rec.Header().Get("Payment-Receipt"))

			require.Len(t, b.fac.Verifies(), 2)
			require.Empty(t, b.fac.Settles())
		})
	}
}

func TestMPPRoundTrip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var calls int
	h := b.svc.Wrap(pricedPolicy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		okHandler(w, r)
	}))

	challenge := do(h, "GET", "/v1/signal/latest?limit=50", nil)
	require.Equal(t, http.StatusPaymentRequired, challenge.Code)
	www := challenge.Header().Get("WWW-Authenticate")

	// A forged signature is refused by the service itself, with a fresh
	// challenge; the facilitator is not asked.
	rec := do(h, "GET", "/v1/signal/latest?limit=50", http.Header{"Authorization": {accesstest.MPPCredential(t, www, "0x"+strings.Repeat("11", 65))}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Contains(t, errorOf(t, rec), "verification-failed")
	require.NotEmpty(t, rec.Header().Get("WWW-Authenticate"))
	require.Empty(t, b.fac.Verifies())

	// So is a real signature for less than the price.
	rec = do(h, "GET", "/v1/signal/latest?limit=50", http.Header{"Authorization": {accesstest.Payment{Value: "124999"}.MPP(t, www)}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Equal(t, "verification-failed: the authorization is for 124999, the request costs 125000.", errorOf(t, rec))

	// A credential for another amount (limit) does not match the request.
	rec = do(h, "GET", "/v1/signal/latest?limit=1", http.Header{"Authorization": {accesstest.MPPCredential(t, www, accesstest.GoodSignature)}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Contains(t, errorOf(t, rec), "invalid-challenge")

	// A tampered challenge (amount changed) fails the HMAC binding.
	params := accesstest.ParseChallenge(t, www)
	tampered := strings.Replace(www, params["request"], base64.RawURLEncoding.EncodeToString([]byte(`{"amount":"1"}`)), 1)
	rec = do(h, "GET", "/v1/signal/latest?limit=50", http.Header{"Authorization": {accesstest.MPPCredential(t, tampered, "0x00")}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Contains(t, errorOf(t, rec), "invalid-challenge: unknown challenge id")
	require.Zero(t, calls)

	// The paid retry.
	cred := accesstest.MPPCredential(t, www, accesstest.GoodSignature)
	rec = do(h, "GET", "/v1/signal/latest?limit=50", http.Header{"Authorization": {cred}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 1, calls)
	requireAccessHeaders(t, rec)
	raw, err := base64.RawURLEncoding.DecodeString(rec.Header().Get("Payment-Receipt"))
	require.NoError(t, err)
	var receipt map[string]any
	require.NoError(t, json.Unmarshal(raw, &receipt))
	require.Equal(t, map[string]any{
		"status": "success", "method": "evm", "timestamp": "2026-03-04T10:00:15Z", "reference": "0xsettled",
		"challengeId": accesstest.ParseChallenge(t, www)["id"], "chainId": float64(8453),
	}, receipt)
	require.Equal(t, "private", rec.Header().Get("Cache-Control"))
	settles := b.fac.Settles()
	require.Len(t, settles, 1)
	// Settled as an x402 v2 exact payment, as mppx's server settles.
	require.EqualValues(t, 2, settles[0]["x402Version"])
	reqs := settles[0]["paymentRequirements"].(map[string]any)
	require.Equal(t, "125000", reqs["amount"])
	require.Equal(t, "eip155:8453", reqs["network"])
	require.Equal(t, map[string]any{"assetTransferMethod": "eip3009", "name": "USD Coin", "version": "2"}, reqs["extra"])

	// The same credential cannot pay twice.
	rec = do(h, "GET", "/v1/signal/latest?limit=50", http.Header{"Authorization": {cred}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Contains(t, errorOf(t, rec), "already settled")
	require.Equal(t, 1, calls)
	require.Len(t, b.fac.Settles(), 1)
}

func TestPaymentNotOfferedOnUnpricedRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := do(b.svc.Wrap(searchPolicy, okHandler), "GET", "/v1/search", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Empty(t, rec.Header().Get("WWW-Authenticate"))
}

// TestReplayRefusedOnEveryReplica: an x402 or MPP payment pays for one
// response. Presented again — to the same process or to another one on the
// same database — it is refused by the service's own replay record before
// the facilitator is asked, and never settled twice.
func TestReplayRefusedOnEveryReplica(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := access.New(b.store, access.Config{
		Now: func() time.Time { return fixedNow },
		Payment: access.PaymentConfig{
			FacilitatorURL: b.fac.URL, PayTo: "0x2222222222222222222222222222222222222222", MPPSecret: "test-secret",
			PublicURL: "https://api.example.test",
		},
	})
	h, h2 := b.svc.Wrap(pricedPolicy, okHandler), other.Wrap(pricedPolicy, okHandler)
	challenge := do(h, "GET", "/v1/signal/latest", nil)
	for _, c := range []struct {
		header, value, refusal string
	}{
		{"X-Payment", accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature),
			"Payment refused: this payment was already settled for an earlier request; sign a new one."},
		{"Payment-Signature", accesstest.X402PaymentV2(t, challenge.Header().Get("PAYMENT-REQUIRED"), accesstest.GoodSignature),
			"Payment refused: this payment was already settled for an earlier request; sign a new one."},
		{"Authorization", accesstest.MPPCredential(t, challenge.Header().Get("WWW-Authenticate"), accesstest.GoodSignature),
			"invalid-challenge: this payment was already settled for an earlier request; sign a new one."},
	} {
		verifies, settles := len(b.fac.Verifies()), len(b.fac.Settles())
		rec := do(h, "GET", "/v1/signal/latest", http.Header{c.header: {c.value}})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		for _, replay := range []http.Handler{h, h2} {
			rec = do(replay, "GET", "/v1/signal/latest", http.Header{c.header: {c.value}})
			require.Equal(t, http.StatusPaymentRequired, rec.Code)
			require.Equal(t, c.refusal, errorOf(t, rec))
			require.NotContains(t, rec.Body.String(), `"paid"`)
		}
		require.Len(t, b.fac.Verifies(), verifies+1, "a replay never reaches the facilitator")
		require.Len(t, b.fac.Settles(), settles+1)
	}
}

// TestConcurrentUsesOfOnePaymentServeOnce: the same payment sent by many
// requests at once is served and settled once; the others are told it is in
// use (or already used).
func TestConcurrentUsesOfOnePaymentServeOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.svc.Wrap(pricedPolicy, okHandler)
	challenge := do(h, "GET", "/v1/signal/latest", nil)
	payment := accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = do(h, "GET", "/v1/signal/latest", http.Header{"X-Payment": {payment}}).Code
		}()
	}
	wg.Wait()
	var ok int
	for _, c := range codes {
		if c == http.StatusOK {
			ok++
		} else {
			require.Equal(t, http.StatusPaymentRequired, c)
		}
	}
	require.Equal(t, 1, ok, "%v", codes)
	require.Len(t, b.fac.Settles(), 1)
}

// TestFailedSettlementReleasesThePayment: a settlement that fails (a
// reverted transfer) answers 402 and no data; the authorization was not
// used, so the same payment may be presented again, and is then settled
// once.
func TestFailedSettlementReleasesThePayment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.svc.Wrap(pricedPolicy, okHandler)
	challenge := do(h, "GET", "/v1/signal/latest", nil)
	for name, payment := range map[string]http.Header{
		"x402": {"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)}},
		"mpp":  {"Authorization": {accesstest.MPPCredential(t, challenge.Header().Get("WWW-Authenticate"), accesstest.GoodSignature)}},
	} {
		b.fac.FailNextSettle()
		rec := do(h, "GET", "/v1/signal/latest", payment)
		require.Equal(t, http.StatusPaymentRequired, rec.Code, name)
		require.Contains(t, errorOf(t, rec), "invalid_exact_evm_transaction_failed", name)
		require.NotContains(t, rec.Body.String(), `"paid"`, name)
		rec = do(h, "GET", "/v1/signal/latest", payment)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", name, rec.Body.String())
		rec = do(h, "GET", "/v1/signal/latest", payment)
		require.Equal(t, http.StatusPaymentRequired, rec.Code, name)
	}
	require.Len(t, b.fac.Settles(), 4, "one failed and one settled settlement per protocol")
}

// TestMPPAuthorizationCannotBeReplayedAsX402: the replay record keys a
// payment by its authorization (chain, token, payer, nonce), so an MPP
// authorization that paid once cannot pay again dressed as x402 v2.
func TestMPPAuthorizationCannotBeReplayedAsX402(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h := b.svc.Wrap(pricedPolicy, okHandler)
	challenge := do(h, "GET", "/v1/signal/latest", nil)
	cred := accesstest.MPPCredential(t, challenge.Header().Get("WWW-Authenticate"), accesstest.GoodSignature)
	require.Equal(t, http.StatusOK, do(h, "GET", "/v1/signal/latest", http.Header{"Authorization": {cred}}).Code)

	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(cred, "Payment "))
	require.NoError(t, err)
	var c struct {
		Payload map[string]any `json:"payload"`
	}
	require.NoError(t, json.Unmarshal(raw, &c))
	v2raw, err := base64.StdEncoding.DecodeString(challenge.Header().Get("PAYMENT-REQUIRED"))
	require.NoError(t, err)
	var v2 struct {
		Accepts []map[string]any `json:"accepts"`
	}
	require.NoError(t, json.Unmarshal(v2raw, &v2))
	sig := c.Payload["signature"]
	delete(c.Payload, "signature")
	delete(c.Payload, "type")
	payload, _ := json.Marshal(map[string]any{"x402Version": 2, "accepted": v2.Accepts[0],
		"payload": map[string]any{"authorization": c.Payload, "signature": sig}})
	rec := do(h, "GET", "/v1/signal/latest", http.Header{"Payment-Signature": {base64.StdEncoding.EncodeToString(payload)}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Contains(t, errorOf(t, rec), "already settled")
	require.Len(t, b.fac.Settles(), 1)
}

// TestMPPChallengeExpires: a credential for a challenge past its expiry is
// refused as payment-expired, before any facilitator call.
func TestMPPChallengeExpires(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := fixedNow
	svc := access.New(b.store, access.Config{
		Now: func() time.Time { return now },
		Payment: access.PaymentConfig{
			FacilitatorURL: b.fac.URL, PayTo: "0x2222222222222222222222222222222222222222", MPPSecret: "test-secret",
		},
	})
	h := svc.Wrap(pricedPolicy, okHandler)
	challenge := do(h, "GET", "/v1/signal/latest", nil)
	cred := accesstest.MPPCredential(t, challenge.Header().Get("WWW-Authenticate"), accesstest.GoodSignature)
	now = fixedNow.Add(300 * time.Second)
	rec := do(h, "GET", "/v1/signal/latest", http.Header{"Authorization": {cred}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Equal(t, "payment-expired: the challenge has expired; pay the new one.", errorOf(t, rec))
	require.Empty(t, b.fac.Verifies())
}

// TestGraphQLPricedByComplexity: /graphql without a key is priced from the
// parsed operation (its complexity, through Charge), answered with the
// challenge at that price, and served once paid. A request that never runs
// an operation (a parse error) is answered as it is, unpaid.
func TestGraphQLPricedByComplexity(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var ran int
	gql := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("query") == "{" {
			io.WriteString(w, `{"errors":[{"message":"Unexpected <EOF>"}],"data":null}`) //nolint:errcheck
			return
		}
		if err := access.Charge(r.Context(), 30); err != nil {
			io.WriteString(w, `{"errors":[{"message":"`+err.Error()+`"}],"data":null}`) //nolint:errcheck
			return
		}
		ran++
		io.WriteString(w, `{"data":{"entity":{"id":"101"}}}`) //nolint:errcheck
	})
	h := b.svc.Wrap(access.GraphQLPolicy, gql)

	challenge := do(h, "GET", "/graphql?query=%7Bentity%7D", nil)
	require.Equal(t, http.StatusPaymentRequired, challenge.Code)
	var body struct {
		Accepts []map[string]any `json:"accepts"`
	}
	require.NoError(t, json.Unmarshal(challenge.Body.Bytes(), &body))
	require.Equal(t, "30000", body.Accepts[0]["maxAmountRequired"], "30 credits at 0.001 USDC")
	require.Zero(t, ran)

	for _, payment := range []http.Header{
		{"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)}},
		{"Authorization": {accesstest.MPPCredential(t, challenge.Header().Get("WWW-Authenticate"), accesstest.GoodSignature)}},
	} {
		rec := do(h, "GET", "/graphql?query=%7Bentity%7D", payment)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.JSONEq(t, `{"data":{"entity":{"id":"101"}}}`, rec.Body.String())
	}
	require.Equal(t, 2, ran)
	require.Len(t, b.fac.Settles(), 2)

	rec := do(h, "GET", "/graphql?query=%7B", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), "Unexpected <EOF>")
	require.Equal(t, 30000, int(access.GraphQLPolicy.Pricing.AmountForCost(30)))
	require.Equal(t, 5000, int(access.GraphQLPolicy.Pricing.AmountForCost(1)), "at least the minimum")
}

// TestPaymentNetworksAndTokenDomains: PAYMENT_NETWORK takes an x402 v1
// name or a CAIP-2 id; x402 v1 offers name the network the v1 way, x402 v2
// and MPP the CAIP-2 way; the token and its EIP-712 domain default to the
// network's USDC (whose name differs between Base and Base Sepolia).
func TestPaymentNetworksAndTokenDomains(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	for _, c := range []struct {
		network, v1, v2, asset, name string
		chainID                      float64
	}{
		{"base", "base", "eip155:8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USD Coin", 8453},
		{"eip155:8453", "base", "eip155:8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USD Coin", 8453},
		{"base-sepolia", "base-sepolia", "eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", 84532},
		{"eip155:84532", "base-sepolia", "eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", 84532},
	} {
		cfg := access.PaymentConfig{FacilitatorURL: "http://127.0.0.1:1", PayTo: "0x2222222222222222222222222222222222222222", Network: c.network}
		require.NoError(t, cfg.Validate())
		rec := do(access.New(store, access.Config{Payment: cfg}).Wrap(pricedPolicy, okHandler), "GET", "/v1/signal/latest", nil)
		require.Equal(t, http.StatusPaymentRequired, rec.Code)
		var v1 struct {
			Accepts []map[string]any `json:"accepts"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v1))
		require.Equal(t, c.v1, v1.Accepts[0]["network"], c.network)
		require.Equal(t, c.asset, v1.Accepts[0]["asset"], c.network)
		require.Equal(t, map[string]any{"name": c.name, "version": "2"}, v1.Accepts[0]["extra"], c.network)
		raw, err := base64.StdEncoding.DecodeString(rec.Header().Get("PAYMENT-REQUIRED"))
		require.NoError(t, err)
		var v2 struct {
			Accepts []map[string]any `json:"accepts"`
		}
		require.NoError(t, json.Unmarshal(raw, &v2))
		require.Equal(t, c.v2, v2.Accepts[0]["network"], c.network)
		require.Equal(t, map[string]any{"name": c.name, "version": "2"}, v2.Accepts[0]["extra"], c.network)
		reqJSON, err := base64.RawURLEncoding.DecodeString(accesstest.ParseChallenge(t, rec.Header().Get("WWW-Authenticate"))["request"])
		require.NoError(t, err)
		var mpp struct {
			Currency      string         `json:"currency"`
			MethodDetails map[string]any `json:"methodDetails"`
		}
		require.NoError(t, json.Unmarshal(reqJSON, &mpp))
		require.Equal(t, c.asset, mpp.Currency)
		require.Equal(t, map[string]any{"chainId": c.chainID, "credentialTypes": []any{"authorization"}, "decimals": float64(6)}, mpp.MethodDetails)
	}

	for _, c := range []struct {
		cfg  access.PaymentConfig
		want string
	}{
		{access.PaymentConfig{Network: "solana"}, "invalid PAYMENT_NETWORK"},
		{access.PaymentConfig{Network: "eip155:0x1"}, "invalid PAYMENT_NETWORK"},
		{access.PaymentConfig{Network: "eip155:31337"}, "PAYMENT_ASSET is required"},
		{access.PaymentConfig{Network: "eip155:31337", Asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3"}, "PAYMENT_ASSET_NAME and PAYMENT_ASSET_VERSION are required"},
		{access.PaymentConfig{Asset: "0xnot"}, "invalid PAYMENT_ASSET"},
		{access.PaymentConfig{PayTo: "0x2222"}, "invalid PAYMENT_PAY_TO"},
		{access.PaymentConfig{PayTo: "0x5fbDB2315678afecb367f032d93F642f64180aa3"}, "bad EIP-55 checksum"},
		{access.PaymentConfig{FacilitatorURL: "ftp://x"}, "invalid X402_FACILITATOR_URL"},
	} {
		cfg := c.cfg
		if cfg.FacilitatorURL == "" {
			cfg.FacilitatorURL = "http://127.0.0.1:1"
		}
		if cfg.PayTo == "" {
			cfg.PayTo = "0x2222222222222222222222222222222222222222"
		}
		err := cfg.Validate()
		require.Error(t, err, "%+v", c.cfg)
		require.Contains(t, err.Error(), c.want)
	}
	require.NoError(t, access.PaymentConfig{Network: "eip155:31337", Asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
		AssetName: "Test", AssetVersion: "1", FacilitatorURL: "http://127.0.0.1:1", PayTo: "0x2222222222222222222222222222222222222222"}.Validate())
	require.NoError(t, access.PaymentConfig{Network: "solana"}.Validate(), "payments off: nothing to check")
}

func TestParseAuthorization(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"Bearer ci_key":      {"bearer", "ci_key"},
		"Bearer\tci_key":     {"bearer", "ci_key"},
		"bearer \t ci_key  ": {"bearer", "ci_key"},
		"  BEARER   ci_key":  {"bearer", "ci_key"},
		"Payment a, b=c":     {"payment", "a, b=c"},
		"Bearer":             {"bearer", ""},
		"":                   {"", ""},
		"Bearerci_key":       {"bearerci_key", ""},
	} {
		scheme, cred := access.ParseAuthorization(in)
		require.Equal(t, want, [2]string{scheme, cred}, "%q", in)
	}
}

// TestStatusUnreadSetsNoStatusHeaders: a request marked WithStatusUnread
// (an MCP tool's in-process call) gets none of the headers that describe
// its route and its key's standing, and is metered all the same: the next
// request of the key sees the window and the month it took.
func TestStatusUnreadSetsNoStatusHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key, _ := accesstest.NewKey(t, b.store, cryptointel.PlanPro)
	h := b.svc.Wrap(searchPolicy, okHandler)

	req := httptest.NewRequest("GET", "/v1/search?q=x", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req = req.WithContext(access.WithStatusUnread(req.Context()))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"plan":"pro"`)
	for _, name := range accessHeaders {
		if name == "X-Request-Id" {
			require.NotEmpty(t, rec.Header().Get(name))
			continue
		}
		require.Empty(t, rec.Header().Get(name), name)
	}

	rec = do(h, "GET", "/v1/search?q=x", bearer(key))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "98", rec.Header().Get("X-RateLimit-Remaining"), "the unread request took its place in the window")
	require.Equal(t, "4", rec.Header().Get("X-Monthly-Used"), "and its credits")
}
