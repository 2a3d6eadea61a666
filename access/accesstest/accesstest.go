// Package accesstest helps test code behind the access layer: API keys for a
// plan, and a local fake payment facilitator that speaks the x402 facilitator
// API (POST /verify, /settle) and the MPP facilitator API (POST /mpp/verify,
// /mpp/settle), with client-side helpers that answer a 402 like a paying
// client would.
package accesstest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel/db"
)

var keySeq atomic.Int64

// NewKey creates an account on plan with one API key and returns the
// plaintext key and the key's id.
func NewKey(t testing.TB, store *db.DB, plan string) (string, int64) {
	t.Helper()
	name := fmt.Sprintf("accesstest-%s-%d-%d", plan, time.Now().UnixNano(), keySeq.Add(1))
	key, row, err := db.CreateAPIKey(context.Background(), store.Bun, name, plan)
	if err != nil {
		t.Fatalf("accesstest: creating key: %v", err)
	}
	return key, row.ID
}

// GoodSignature is the x402 payload signature and MPP proof the fake
// facilitator accepts; any other value is refused as invalid.
const GoodSignature = "0xgood"

// Facilitator is a fake payment facilitator on a local httptest server.
// Its x402 base URL is URL; its MPP base URL is URL + "/mpp".
type Facilitator struct {
	// URL is the server's base URL.
	URL string

	mu       sync.Mutex
	verifies []map[string]any
	settles  []map[string]any
	failNext bool
}

// NewFacilitator starts a fake facilitator, closed when t ends.
func NewFacilitator(t testing.TB) *Facilitator {
	f := &Facilitator{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /verify", f.x402Verify)
	mux.HandleFunc("POST /settle", f.x402Settle)
	mux.HandleFunc("POST /mpp/verify", f.mppVerify)
	mux.HandleFunc("POST /mpp/settle", f.mppSettle)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// MPPURL is the MPP verifier base URL.
func (f *Facilitator) MPPURL() string { return f.URL + "/mpp" }

// Verifies returns the bodies of the verify calls received (x402 and MPP).
func (f *Facilitator) Verifies() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.verifies...)
}

// Settles returns the bodies of the settle calls received (x402 and MPP).
func (f *Facilitator) Settles() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.settles...)
}

// FailNextSettle makes the next settlement fail.
func (f *Facilitator) FailNextSettle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = true
}

func (f *Facilitator) record(list *[]map[string]any, r *http.Request) (map[string]any, error) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return nil, err
	}
	f.mu.Lock()
	*list = append(*list, body)
	f.mu.Unlock()
	return body, nil
}

func (f *Facilitator) takeFail() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := f.failNext
	f.failNext = false
	return fail
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}

// x402Check validates a facilitator request {x402Version, paymentPayload,
// paymentRequirements} the way the exact scheme does, minus the chain: the
// payload must name the required scheme and network, authorize at least the
// required amount to payTo, and carry GoodSignature.
func x402Check(body map[string]any) (payer, reason string) {
	payload, _ := body["paymentPayload"].(map[string]any)
	reqs, _ := body["paymentRequirements"].(map[string]any)
	if payload == nil || reqs == nil {
		return "", "invalid_payload"
	}
	scheme, network := payload["scheme"], payload["network"]
	if acc, ok := payload["accepted"].(map[string]any); ok { // v2
		scheme, network = acc["scheme"], acc["network"]
	}
	if scheme != reqs["scheme"] {
		return "", "invalid_scheme"
	}
	if network != reqs["network"] {
		return "", "invalid_network"
	}
	inner, _ := payload["payload"].(map[string]any)
	auth, _ := inner["authorization"].(map[string]any)
	if inner == nil || auth == nil {
		return "", "invalid_payload"
	}
	required, _ := reqs["maxAmountRequired"].(string)
	if required == "" {
		required, _ = reqs["amount"].(string)
	}
	value, _ := auth["value"].(string)
	if len(value) < len(required) || len(value) == len(required) && value < required {
		return "", "invalid_exact_evm_payload_authorization_value"
	}
	if !strings.EqualFold(fmt.Sprint(auth["to"]), fmt.Sprint(reqs["payTo"])) {
		return "", "invalid_exact_evm_payload_recipient_mismatch"
	}
	if inner["signature"] != GoodSignature {
		return "", "invalid_exact_evm_payload_signature"
	}
	from, _ := auth["from"].(string)
	return from, ""
}

func (f *Facilitator) x402Verify(w http.ResponseWriter, r *http.Request) {
	body, err := f.record(&f.verifies, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	payer, reason := x402Check(body)
	if reason != "" {
		writeJSON(w, map[string]any{"isValid": false, "invalidReason": reason})
		return
	}
	writeJSON(w, map[string]any{"isValid": true, "payer": payer})
}

func (f *Facilitator) x402Settle(w http.ResponseWriter, r *http.Request) {
	body, err := f.record(&f.settles, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	reqs, _ := body["paymentRequirements"].(map[string]any)
	payer, reason := x402Check(body)
	if reason == "" && f.takeFail() {
		reason = "unexpected_settle_error"
	}
	if reason != "" {
		writeJSON(w, map[string]any{"success": false, "errorReason": reason, "transaction": "", "network": reqs["network"]})
		return
	}
	writeJSON(w, map[string]any{"success": true, "payer": payer, "transaction": "0xsettled", "network": reqs["network"]})
}

func mppCheck(body map[string]any) string {
	cred, _ := body["credential"].(map[string]any)
	payload, _ := cred["payload"].(map[string]any)
	if payload == nil {
		return "invalid_payload"
	}
	if payload["proof"] != GoodSignature {
		return "invalid_signature"
	}
	return ""
}

func (f *Facilitator) mppVerify(w http.ResponseWriter, r *http.Request) {
	body, err := f.record(&f.verifies, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ch, _ := body["challenge"].(map[string]any)
	if code := mppCheck(body); code != "" {
		writeJSON(w, map[string]any{"valid": false, "method": ch["method"], "error": map[string]any{"code": code, "detail": "Signature verification failed."}})
		return
	}
	writeJSON(w, map[string]any{"valid": true, "method": ch["method"]})
}

func (f *Facilitator) mppSettle(w http.ResponseWriter, r *http.Request) {
	body, err := f.record(&f.settles, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if code := mppCheck(body); code != "" || f.takeFail() {
		writeJSON(w, map[string]any{"settled": false, "error": map[string]any{"code": "settlement_failed", "detail": "Transaction reverted."}})
		return
	}
	writeJSON(w, map[string]any{"settled": true, "reference": "0xmppref", "amount": body["amount"], "timestamp": "2026-03-04T10:00:00Z"})
}

// X402Payment answers a 402 body (x402 v1) like a paying client: it picks
// the first requirement and returns the X-PAYMENT header value, an exact-
// scheme payload authorizing the required amount with signature.
func X402Payment(t testing.TB, body []byte, signature string) string {
	t.Helper()
	var resp struct {
		X402Version int              `json:"x402Version"`
		Accepts     []map[string]any `json:"accepts"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Accepts) == 0 {
		t.Fatalf("accesstest: not an x402 402 body: %s", body)
	}
	req := resp.Accepts[0]
	payload := map[string]any{
		"x402Version": 1, "scheme": req["scheme"], "network": req["network"],
		"payload": map[string]any{
			"signature": signature,
			"authorization": map[string]any{
				"from": "0x1111111111111111111111111111111111111111", "to": req["payTo"],
				"value": req["maxAmountRequired"], "validAfter": "0", "validBefore": "9999999999",
				"nonce": "0x" + strings.Repeat("ab", 32),
			},
		},
	}
	b, _ := json.Marshal(payload)
	return base64.StdEncoding.EncodeToString(b)
}

// X402PaymentV2 answers the PAYMENT-REQUIRED header (x402 v2) like a paying
// client and returns the PAYMENT-SIGNATURE header value.
func X402PaymentV2(t testing.TB, paymentRequired string, signature string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(paymentRequired)
	if err != nil {
		t.Fatalf("accesstest: PAYMENT-REQUIRED is not base64: %v", err)
	}
	var resp struct {
		Resource map[string]any   `json:"resource"`
		Accepts  []map[string]any `json:"accepts"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil || len(resp.Accepts) == 0 {
		t.Fatalf("accesstest: not an x402 v2 PAYMENT-REQUIRED: %s", raw)
	}
	acc := resp.Accepts[0]
	payload := map[string]any{
		"x402Version": 2, "resource": resp.Resource, "accepted": acc,
		"payload": map[string]any{
			"signature": signature,
			"authorization": map[string]any{
				"from": "0x1111111111111111111111111111111111111111", "to": acc["payTo"],
				"value": acc["amount"], "validAfter": "0", "validBefore": "9999999999",
				"nonce": "0x" + strings.Repeat("cd", 32),
			},
		},
	}
	b, _ := json.Marshal(payload)
	return base64.StdEncoding.EncodeToString(b)
}

var authParam = regexp.MustCompile(`([a-z]+)="((?:[^"\\]|\\.)*)"`)

// ParseChallenge parses a `WWW-Authenticate: Payment …` value into its
// parameters.
func ParseChallenge(t testing.TB, header string) map[string]string {
	t.Helper()
	if !strings.HasPrefix(header, "Payment ") {
		t.Fatalf("accesstest: not a Payment challenge: %q", header)
	}
	params := map[string]string{}
	for _, m := range authParam.FindAllStringSubmatch(header, -1) {
		params[m[1]] = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[2])
	}
	return params
}

// MPPCredential answers a Payment challenge like a paying client and returns
// the Authorization header value: "Payment " and the base64url credential
// echoing the challenge, with proof as the payload.
func MPPCredential(t testing.TB, wwwAuthenticate, proof string) string {
	t.Helper()
	params := ParseChallenge(t, wwwAuthenticate)
	challenge := map[string]string{}
	for _, k := range []string{"id", "realm", "method", "intent", "request", "expires", "description", "digest", "opaque"} {
		if v, ok := params[k]; ok {
			challenge[k] = v
		}
	}
	b, _ := json.Marshal(map[string]any{
		"challenge": challenge,
		"source":    "did:key:z6MkTestPayer",
		"payload":   map[string]any{"proof": proof},
	})
	return "Payment " + base64.RawURLEncoding.EncodeToString(b)
}
