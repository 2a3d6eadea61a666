// Package accesstest helps test code behind the access layer: API keys for a
// plan; a local payment facilitator that speaks the x402 facilitator API
// (POST /verify, /settle) and checks payments as x402's exact scheme does,
// signatures included, with an in-memory ledger of used authorizations in
// place of the chain; and client-side helpers that answer a 402 like a
// paying client would, with real EIP-3009 signatures by a test key.
//
// The protocols' own clients and facilitator, on a local chain, are
// exercised by the interop tests (tests/payments_interop_test.go).
package accesstest

import (
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/eip3009"
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

// PayerKey is the key the payment helpers sign with: the well-known
// development key of hardhat's and anvil's first account. It holds nothing
// anywhere that matters.
const PayerKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

// PayerAddress is PayerKey's address.
const PayerAddress = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

// GoodSignature asks the payment helpers for a real signature by PayerKey.
// Any other signature argument is sent verbatim, as a forger would.
const GoodSignature = "0xgood"

// Facilitator is a local x402 facilitator on an httptest server. It
// verifies a payment as x402's exact scheme does — scheme, network,
// recipient, exact amount, validity window, the EIP-712 signature under the
// requirements' token domain, and that the authorization's nonce is unused
// — and settles it by recording the nonce as used, as the token would.
type Facilitator struct {
	// URL is the server's base URL.
	URL string
	// Now is the facilitator's clock for authorization windows. Defaults
	// to time.Now; set it before the first request.
	Now func() time.Time

	mu       sync.Mutex
	verifies []map[string]any
	settles  []map[string]any
	used     map[string]bool // payer|nonce of settled authorizations
	failNext bool
}

// NewFacilitator starts a facilitator, closed when t ends.
func NewFacilitator(t testing.TB) *Facilitator {
	f := &Facilitator{Now: time.Now, used: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /verify", f.verify)
	mux.HandleFunc("POST /settle", f.settle)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// MPPURL is the facilitator URL MPP payments settle through: the same
// server (MPP payments are settled as x402 v2 exact payments).
func (f *Facilitator) MPPURL() string { return f.URL }

// Verifies returns the bodies of the verify calls received.
func (f *Facilitator) Verifies() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.verifies...)
}

// Settles returns the bodies of the settle calls received, failed ones
// included.
func (f *Facilitator) Settles() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.settles...)
}

// FailNextSettle makes the next settlement fail, as a reverted transaction
// does: the authorization stays unused.
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

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) //nolint:errcheck
}

// check validates a facilitator request {x402Version, paymentPayload,
// paymentRequirements}; it returns the payer, the ledger key of the
// authorization and "" or x402's reason for refusing it.
func (f *Facilitator) check(body map[string]any) (payer, usedKey, reason string) {
	var req struct {
		PaymentPayload struct {
			X402Version int            `json:"x402Version"`
			Scheme      string         `json:"scheme"`
			Network     string         `json:"network"`
			Accepted    map[string]any `json:"accepted"`
			Payload     struct {
				Signature     string                `json:"signature"`
				Authorization eip3009.Authorization `json:"authorization"`
			} `json:"payload"`
		} `json:"paymentPayload"`
		PaymentRequirements struct {
			Scheme            string            `json:"scheme"`
			Network           string            `json:"network"`
			Amount            string            `json:"amount"`
			MaxAmountRequired string            `json:"maxAmountRequired"`
			Asset             string            `json:"asset"`
			PayTo             string            `json:"payTo"`
			Extra             map[string]string `json:"extra"`
		} `json:"paymentRequirements"`
	}
	b, _ := json.Marshal(body)
	if err := json.Unmarshal(b, &req); err != nil {
		return "", "", "invalid_payload"
	}
	pp, reqs := req.PaymentPayload, req.PaymentRequirements
	scheme, network := pp.Scheme, pp.Network
	if pp.Accepted != nil { // v2
		scheme, _ = pp.Accepted["scheme"].(string)
		network, _ = pp.Accepted["network"].(string)
	}
	if scheme != "exact" || reqs.Scheme != "exact" {
		return "", "", "invalid_exact_evm_scheme"
	}
	if network != reqs.Network {
		return "", "", "invalid_exact_evm_network_mismatch"
	}
	chainID, ok := access.NetworkChainID(reqs.Network)
	if !ok {
		return "", "", "invalid_network"
	}
	if reqs.Extra["name"] == "" || reqs.Extra["version"] == "" {
		return "", "", "invalid_exact_evm_missing_eip712_domain"
	}
	auth, err := pp.Payload.Authorization.Parse()
	if err != nil {
		return "", "", "invalid_payload"
	}
	payer = auth.From.Hex()
	asset, err := eip3009.ParseAddress(reqs.Asset)
	if err != nil {
		return payer, "", "invalid_payload"
	}
	domain := eip3009.Domain{Name: reqs.Extra["name"], Version: reqs.Extra["version"], ChainID: chainID, Contract: asset}
	if signer, err := auth.Recover(domain, pp.Payload.Signature); err != nil || signer != auth.From {
		return payer, "", "invalid_exact_evm_signature"
	}
	if !strings.EqualFold(auth.To.Hex(), reqs.PayTo) {
		return payer, "", "invalid_exact_evm_recipient_mismatch"
	}
	now := f.Now().Unix()
	if auth.ValidBefore.Cmp(big.NewInt(now+6)) < 0 {
		return payer, "", "invalid_exact_evm_payload_authorization_valid_before"
	}
	if auth.ValidAfter.Cmp(big.NewInt(now)) > 0 {
		return payer, "", "invalid_exact_evm_payload_authorization_valid_after"
	}
	required := reqs.Amount
	if required == "" {
		required = reqs.MaxAmountRequired
	}
	if auth.Value.String() != required {
		return payer, "", "invalid_exact_evm_payload_authorization_value_mismatch"
	}
	usedKey = fmt.Sprintf("%d|%s|%s|%x", chainID, strings.ToLower(asset.Hex()), strings.ToLower(payer), auth.Nonce)
	f.mu.Lock()
	used := f.used[usedKey]
	f.mu.Unlock()
	if used {
		return payer, "", "invalid_exact_evm_nonce_already_used"
	}
	return payer, usedKey, ""
}

func (f *Facilitator) verify(w http.ResponseWriter, r *http.Request) {
	body, err := f.record(&f.verifies, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	payer, _, reason := f.check(body)
	if reason != "" {
		writeJSON(w, map[string]any{"isValid": false, "invalidReason": reason, "payer": payer})
		return
	}
	writeJSON(w, map[string]any{"isValid": true, "payer": payer})
}

func (f *Facilitator) settle(w http.ResponseWriter, r *http.Request) {
	body, err := f.record(&f.settles, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	network, _ := body["paymentRequirements"].(map[string]any)["network"].(string)
	payer, usedKey, reason := f.check(body)
	f.mu.Lock()
	if reason == "" && f.failNext {
		reason = "invalid_exact_evm_transaction_failed"
	}
	f.failNext = false
	if reason == "" {
		f.used[usedKey] = true
	}
	f.mu.Unlock()
	if reason != "" {
		writeJSON(w, map[string]any{"success": false, "errorReason": reason, "transaction": "", "network": network, "payer": payer})
		return
	}
	writeJSON(w, map[string]any{"success": true, "payer": payer, "transaction": "0xsettled", "network": network})
}

// Payment is how a test client pays. The zero value pays correctly with
// PayerKey; each field alters one thing, as a forger, a replayer or a buggy
// client would.
type Payment struct {
	// Key is the hex private key signing the authorization. Defaults to
	// PayerKey.
	Key string
	// Signature, when set, is sent instead of a real signature.
	Signature string
	// Value, when set, is the authorized amount instead of the price.
	Value string
	// ValidBefore, when set, ends the authorization's window instead of
	// the default (far ahead for x402, the challenge's expiry for MPP).
	ValidBefore time.Time
	// DomainName and DomainVersion are the EIP-712 domain MPP payments are
	// signed under (an MPP challenge does not carry it). Default to the
	// token's known domain (access.KnownAssetDomain).
	DomainName, DomainVersion string
}

// sign fills a.Nonce if empty and returns the signature a paying client
// would send for a under d.
func (p Payment) sign(t testing.TB, d eip3009.Domain, a *eip3009.Authorization) string {
	t.Helper()
	if p.Signature != "" && p.Signature != GoodSignature {
		return p.Signature
	}
	parsed, err := a.Parse()
	if err != nil {
		t.Fatalf("accesstest: authorization: %v", err)
	}
	sig, err := parsed.Sign(d, p.key(t))
	if err != nil {
		t.Fatalf("accesstest: %v", err)
	}
	return sig
}

func (p Payment) key(t testing.TB) *ecdsa.PrivateKey {
	hexKey := p.Key
	if hexKey == "" {
		hexKey = PayerKey
	}
	k, err := eip3009.Key(hexKey)
	if err != nil {
		t.Fatalf("accesstest: bad key: %v", err)
	}
	return k
}

func (p Payment) authorization(t testing.TB, to, value string, validBefore time.Time, nonce string) *eip3009.Authorization {
	if p.Value != "" {
		value = p.Value
	}
	if !p.ValidBefore.IsZero() {
		validBefore = p.ValidBefore
	}
	return &eip3009.Authorization{
		From: eip3009.Address(p.key(t)).Hex(), To: to, Value: value,
		ValidAfter: "0", ValidBefore: strconv.FormatInt(validBefore.Unix(), 10), Nonce: nonce,
	}
}

var nonceSeq atomic.Int64

// freshNonce is a nonce no other payment of this process uses (x402
// clients pick 32 random bytes).
func freshNonce() string {
	n := eip3009.Keccak256([]byte(fmt.Sprintf("accesstest-%d-%d", time.Now().UnixNano(), nonceSeq.Add(1))))
	return n.Hex()
}

// farFuture is the validBefore of x402 test payments.
var farFuture = time.Unix(9999999999, 0)

func domainOf(t testing.TB, network, asset string, extra map[string]any) eip3009.Domain {
	t.Helper()
	chainID, ok := access.NetworkChainID(network)
	if !ok {
		t.Fatalf("accesstest: unknown network %q", network)
	}
	name, _ := extra["name"].(string)
	version, _ := extra["version"].(string)
	addr, err := eip3009.ParseAddress(asset)
	if err != nil {
		t.Fatalf("accesstest: asset %q: %v", asset, err)
	}
	return eip3009.Domain{Name: name, Version: version, ChainID: chainID, Contract: addr}
}

// X402 answers a 402 body (x402 v1) like a paying client: it takes the
// first requirement and returns the X-PAYMENT header value, an exact-scheme
// payload with a signed EIP-3009 authorization of the required amount.
func (p Payment) X402(t testing.TB, body []byte) string {
	t.Helper()
	var resp struct {
		Accepts []map[string]any `json:"accepts"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Accepts) == 0 {
		t.Fatalf("accesstest: not an x402 402 body: %s", body)
	}
	req := resp.Accepts[0]
	network, _ := req["network"].(string)
	asset, _ := req["asset"].(string)
	extra, _ := req["extra"].(map[string]any)
	auth := p.authorization(t, fmt.Sprint(req["payTo"]), fmt.Sprint(req["maxAmountRequired"]), farFuture, freshNonce())
	payload := map[string]any{
		"x402Version": 1, "scheme": req["scheme"], "network": network,
		"payload": map[string]any{"signature": p.sign(t, domainOf(t, network, asset, extra), auth), "authorization": auth},
	}
	b, _ := json.Marshal(payload)
	return base64.StdEncoding.EncodeToString(b)
}

// X402V2 answers the PAYMENT-REQUIRED header (x402 v2) like a paying
// client and returns the PAYMENT-SIGNATURE header value.
func (p Payment) X402V2(t testing.TB, paymentRequired string) string {
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
	network, _ := acc["network"].(string)
	asset, _ := acc["asset"].(string)
	extra, _ := acc["extra"].(map[string]any)
	auth := p.authorization(t, fmt.Sprint(acc["payTo"]), fmt.Sprint(acc["amount"]), farFuture, freshNonce())
	payload := map[string]any{
		"x402Version": 2, "resource": resp.Resource, "accepted": acc,
		"payload": map[string]any{"signature": p.sign(t, domainOf(t, network, asset, extra), auth), "authorization": auth},
	}
	b, _ := json.Marshal(payload)
	return base64.StdEncoding.EncodeToString(b)
}

// MPP answers a `WWW-Authenticate: Payment` challenge (method evm, intent
// charge) like mppx's client and returns the Authorization header value:
// the challenge echoed, an EIP-3009 authorization of the amount to the
// recipient with nonce keccak256(id ‖ realm), valid until the challenge
// expires, and the source DID.
func (p Payment) MPP(t testing.TB, wwwAuthenticate string) string {
	t.Helper()
	params := ParseChallenge(t, wwwAuthenticate)
	challenge := map[string]string{}
	for _, k := range []string{"id", "realm", "method", "intent", "request", "expires", "description", "digest", "opaque"} {
		if v, ok := params[k]; ok {
			challenge[k] = v
		}
	}
	reqJSON, err := base64.RawURLEncoding.DecodeString(params["request"])
	if err != nil {
		t.Fatalf("accesstest: challenge request is not base64url: %v", err)
	}
	var req struct {
		Amount        string `json:"amount"`
		Currency      string `json:"currency"`
		Recipient     string `json:"recipient"`
		MethodDetails struct {
			ChainID int64 `json:"chainId"`
		} `json:"methodDetails"`
	}
	json.Unmarshal(reqJSON, &req) //nolint:errcheck // a tampered request signs for what it says
	name, version := p.DomainName, p.DomainVersion
	if name == "" {
		name, version, _ = access.KnownAssetDomain(req.MethodDetails.ChainID, req.Currency)
	}
	asset, _ := eip3009.ParseAddress(req.Currency)
	domain := eip3009.Domain{Name: name, Version: version, ChainID: req.MethodDetails.ChainID, Contract: asset}
	expires, err := time.Parse(time.RFC3339, params["expires"])
	if err != nil {
		expires = time.Now().Add(5 * time.Minute)
	}
	nonce := eip3009.Keccak256([]byte(params["id"] + params["realm"])).Hex()
	auth := p.authorization(t, req.Recipient, req.Amount, expires, nonce)
	b, _ := json.Marshal(map[string]any{
		"challenge": challenge,
		"source":    fmt.Sprintf("did:pkh:eip155:%d:%s", req.MethodDetails.ChainID, auth.From),
		"payload": map[string]any{
			"type": "authorization", "from": auth.From, "to": auth.To, "value": auth.Value,
			"validAfter": auth.ValidAfter, "validBefore": auth.ValidBefore, "nonce": auth.Nonce,
			"signature": p.sign(t, domain, auth),
		},
	})
	return "Payment " + base64.RawURLEncoding.EncodeToString(b)
}

// X402Payment is Payment{Signature: signature}.X402: GoodSignature signs
// for real, anything else is sent as a forged signature.
func X402Payment(t testing.TB, body []byte, signature string) string {
	t.Helper()
	return Payment{Signature: signature}.X402(t, body)
}

// X402PaymentV2 is Payment{Signature: signature}.X402V2.
func X402PaymentV2(t testing.TB, paymentRequired string, signature string) string {
	t.Helper()
	return Payment{Signature: signature}.X402V2(t, paymentRequired)
}

// MPPCredential is Payment{Signature: signature}.MPP.
func MPPCredential(t testing.TB, wwwAuthenticate, signature string) string {
	t.Helper()
	return Payment{Signature: signature}.MPP(t, wwwAuthenticate)
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
