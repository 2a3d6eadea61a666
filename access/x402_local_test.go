package access_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// forgedX402 is an x402 payment a forger sends: a well-formed exact
// authorization of the right amount to the right recipient, from a random
// address, signed 0x1111….
func forgedX402(t *testing.T, version int, amount string) string {
	t.Helper()
	from, nonce := make([]byte, 20), make([]byte, 32)
	rand.Read(from)  //nolint:errcheck
	rand.Read(nonce) //nolint:errcheck
	auth := map[string]string{
		"from": "0x" + hex.EncodeToString(from), "to": "0x2222222222222222222222222222222222222222", "value": amount,
		"validAfter": "0", "validBefore": "9999999999", "nonce": "0x" + hex.EncodeToString(nonce),
	}
	payload := map[string]any{"x402Version": version, "payload": map[string]any{"signature": "0x" + strings.Repeat("11", 65), "authorization": auth}}
	if version == 1 {
		payload["scheme"], payload["network"] = "exact", "base"
	} else {
		payload["accepted"] = map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": amount,
			"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "payTo": "0x2222222222222222222222222222222222222222",
			"maxTimeoutSeconds": 300, "extra": map[string]any{"name": "USD Coin", "version": "2"}}
	}
	b, _ := json.Marshal(payload)
	return base64.StdEncoding.EncodeToString(b)
}

// TestForgedX402CheckedLocally: x402 payments are checked in Go before
// the replay record or the facilitator is touched. 3,000 forged payments
// (random `from`, signature 0x11…) are refused with x402's reason and
// cause no facilitator call; a payment to another recipient, for another
// amount, expired or not yet valid is refused the same way; a genuine one
// still pays. (Each forged payment once cost a claim, a /verify call and
// a release.)
func TestForgedX402CheckedLocally(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	fac := accesstest.NewFacilitator(t)
	fac.Now = func() time.Time { return fixedNow }
	svc := access.New(store, access.Config{
		Now: func() time.Time { return fixedNow },
		Payment: access.PaymentConfig{
			FacilitatorURL: fac.URL, PayTo: "0x2222222222222222222222222222222222222222",
			PublicURL: "https://api.example.test", MaxFailedPayments: -1, // every forgery is checked
		},
	})
	h := svc.Wrap(pricedPolicy, okHandler)
	challenge := do(h, "GET", "/v1/signal/latest", nil)
	var body struct {
		Accepts []map[string]any `json:"accepts"`
	}
	require.NoError(t, json.Unmarshal(challenge.Body.Bytes(), &body))
	amount := body.Accepts[0]["maxAmountRequired"].(string)
	for i := range 3000 {
		version := 1 + i%2
		header := map[int]string{1: "X-Payment", 2: "Payment-Signature"}[version]
		rec := do(h, "GET", "/v1/signal/latest", http.Header{header: {forgedX402(t, version, amount)}})
		require.Equal(t, http.StatusPaymentRequired, rec.Code, rec.Body.String())
		require.Contains(t, errorOf(t, rec), "Payment verification failed: invalid_exact_evm_signature")
	}
	require.Empty(t, fac.Verifies(), "no forged payment reaches the facilitator")

	for name, c := range map[string]struct {
		p    accesstest.Payment
		want string
	}{
		"underpaid":     {accesstest.Payment{Value: "49999"}, "invalid_exact_evm_authorization_value: the authorization is for 49999, the request costs " + amount + "."},
		"expired":       {accesstest.Payment{ValidBefore: fixedNow.Add(3 * time.Second)}, "invalid_exact_evm_payload_authorization_valid_before"},
		"another payer": {accesstest.Payment{Key: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d", Signature: ""}, ""},
	} {
		rec := do(h, "GET", "/v1/signal/latest", http.Header{"X-Payment": {c.p.X402(t, challenge.Body.Bytes())}})
		if c.want == "" { // a genuine payment by another key pays
			require.Equal(t, http.StatusOK, rec.Code, "%s: %s", name, rec.Body.String())
			continue
		}
		require.Equal(t, http.StatusPaymentRequired, rec.Code, name)
		require.Contains(t, errorOf(t, rec), c.want, name)
	}
	// Another recipient: the payment is re-addressed and signed for real.
	body.Accepts[0]["payTo"] = "0x4444444444444444444444444444444444444444"
	other, _ := json.Marshal(body)
	rec := do(h, "GET", "/v1/signal/latest", http.Header{"X-Payment": {accesstest.X402Payment(t, other, accesstest.GoodSignature)}})
	require.Equal(t, http.StatusPaymentRequired, rec.Code)
	require.Contains(t, errorOf(t, rec), "invalid_exact_evm_recipient_mismatch")
	require.Len(t, fac.Verifies(), 1, "only the genuine payment was verified by the facilitator")
	require.Len(t, fac.Settles(), 1)
}

// TestRefusedPaymentsThrottled: past MaxFailedPayments refused payments in
// a minute, an address's payments are answered 429 with Retry-After,
// unchecked, until the minute ends; so is a payer's from another address.
func TestRefusedPaymentsThrottled(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	fac := accesstest.NewFacilitator(t)
	now := fixedNow
	fac.Now = func() time.Time { return now }
	svc := access.New(store, access.Config{
		Now: func() time.Time { return now },
		Payment: access.PaymentConfig{
			FacilitatorURL: fac.URL, PayTo: "0x2222222222222222222222222222222222222222", PublicURL: "https://api.example.test",
		},
	})
	h := svc.Wrap(pricedPolicy, okHandler)
	challenge := do(h, "GET", "/v1/signal/latest", nil)
	for i := range access.DefaultMaxFailedPayments {
		rec := do(h, "GET", "/v1/signal/latest", http.Header{"X-Payment": {forgedX402(t, 1, "50000")}})
		require.Equal(t, http.StatusPaymentRequired, rec.Code, "refusal %d", i)
	}
	rec := do(h, "GET", "/v1/signal/latest", http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)}})
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	require.Equal(t, "Too many refused payments from your address or payer: at most 30 per minute. Retry in 45 seconds.", errorOf(t, rec))
	require.Equal(t, "45", rec.Header().Get("Retry-After"))
	require.Empty(t, fac.Verifies())

	// The payer's underpaid payments, from another address each.
	from := func(addr string) func(*http.Request) {
		return func(r *http.Request) { r.RemoteAddr = addr }
	}
	for i := range access.DefaultMaxFailedPayments {
		rec := doWith(h, from("198.51.100."+strconv.Itoa(i)+":1"), http.Header{"X-Payment": {accesstest.Payment{Value: "1"}.X402(t, challenge.Body.Bytes())}})
		require.Equal(t, http.StatusPaymentRequired, rec.Code, "refusal %d: %s", i, rec.Body.String())
	}
	rec = doWith(h, from("198.51.100.200:1"), http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)}})
	require.Equal(t, http.StatusTooManyRequests, rec.Code, "the payer is throttled from a fresh address: %s", rec.Body.String())

	// A new minute: the genuine payment pays.
	now = now.Add(time.Minute)
	rec = do(h, "GET", "/v1/signal/latest", http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestRefusedCallNeverVerifiesItsPayment: a request the route layer
// refuses before its work (its parameters did not parse) is answered as
// it is, and its payment, valid as it is, is neither verified nor
// claimed: it still pays for a call that succeeds, once.
func TestRefusedCallNeverVerifiesItsPayment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var calls int
	inner := b.svc.Wrap(pricedPolicy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"limit must be an integer"}`)) //nolint:errcheck
	}))
	refused := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r.WithContext(access.WithRefused(r.Context())))
	})
	challenge := do(b.svc.Wrap(pricedPolicy, okHandler), "GET", "/v1/signal/latest", nil)
	payment := http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.Body.Bytes(), accesstest.GoodSignature)}}
	for range 50 {
		rec := do(refused, "GET", "/v1/signal/latest?limit=x", payment)
		require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
		require.Empty(t, rec.Header().Get("X-PAYMENT-RESPONSE"))
	}
	require.Equal(t, 50, calls)
	require.Empty(t, b.fac.Verifies(), "a refused call's payment is never verified")
	require.Empty(t, b.fac.Settles())
	rec := do(b.svc.Wrap(pricedPolicy, okHandler), "GET", "/v1/signal/latest", payment)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, b.fac.Settles(), 1)
}

// doWith is do of GET /v1/signal/latest with the request altered by alter
// first.
func doWith(h http.Handler, alter func(*http.Request), header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/v1/signal/latest", nil)
	alter(req)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
