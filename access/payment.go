package access

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PaymentConfig configures pay-per-request on priced routes. x402 is on
// when FacilitatorURL and PayTo are set; MPP (the "Payment" HTTP
// authentication scheme) is on when MPPVerifierURL and PayTo are set.
type PaymentConfig struct {
	// FacilitatorURL is the x402 facilitator base URL; the service calls
	// POST {FacilitatorURL}/verify and /settle. Empty disables x402.
	FacilitatorURL string
	// PayTo is the address receiving payments.
	PayTo string
	// Network is the x402 network name. Defaults to "base".
	Network string
	// Asset is the token contract address. Defaults to USDC on Base
	// (0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913). Prices are in USDC atomic
	// units (6 decimals).
	Asset string
	// AssetName and AssetVersion are the token's EIP-712 domain, sent in
	// x402 `extra`. Default to "USD Coin" and "2".
	AssetName, AssetVersion string
	// MaxTimeoutSeconds is the x402 maxTimeoutSeconds and the lifetime of an
	// MPP challenge. Defaults to 300.
	MaxTimeoutSeconds int
	// PublicURL is the service's public base URL (scheme and host) used to
	// name the paid resource. Defaults to the request's scheme and Host.
	PublicURL string
	// MPPVerifierURL is the MPP verifier (facilitator) base URL; the
	// service calls POST {MPPVerifierURL}/verify and /settle. Empty disables
	// MPP.
	MPPVerifierURL string
	// MPPRealm is the challenge realm. Defaults to "cryptointel".
	MPPRealm string
	// MPPMethod is the payment method identifier. Defaults to "evm".
	MPPMethod string
	// MPPSecret keys the HMAC that binds challenge ids to their parameters.
	// Set the same value on every replica. Defaults to a random per-process
	// secret (challenges then only verify on the process that issued them).
	MPPSecret string
}

// payments implements x402 and MPP for a Service.
type payments struct {
	s      *Service
	cfg    PaymentConfig
	secret []byte

	mu   sync.Mutex
	used map[string]time.Time // MPP challenge ids being or already paid, until they expire
}

func newPayments(s *Service, cfg PaymentConfig) *payments {
	if cfg.Network == "" {
		cfg.Network = "base"
	}
	if cfg.Asset == "" {
		cfg.Asset = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	}
	if cfg.AssetName == "" {
		cfg.AssetName = "USD Coin"
	}
	if cfg.AssetVersion == "" {
		cfg.AssetVersion = "2"
	}
	if cfg.MaxTimeoutSeconds <= 0 {
		cfg.MaxTimeoutSeconds = 300
	}
	if cfg.MPPRealm == "" {
		cfg.MPPRealm = "cryptointel"
	}
	if cfg.MPPMethod == "" {
		cfg.MPPMethod = "evm"
	}
	cfg.FacilitatorURL = strings.TrimRight(cfg.FacilitatorURL, "/")
	cfg.MPPVerifierURL = strings.TrimRight(cfg.MPPVerifierURL, "/")
	secret := []byte(cfg.MPPSecret)
	if len(secret) == 0 {
		secret = make([]byte, 32)
		rand.Read(secret) //nolint:errcheck // crypto/rand.Read never fails
	}
	return &payments{s: s, cfg: cfg, secret: secret, used: map[string]time.Time{}}
}

func (pm *payments) x402On() bool { return pm.cfg.FacilitatorURL != "" && pm.cfg.PayTo != "" }
func (pm *payments) mppOn() bool  { return pm.cfg.MPPVerifierURL != "" && pm.cfg.PayTo != "" }
func (pm *payments) enabled() bool {
	return pm.x402On() || pm.mppOn()
}

func (pm *payments) hasX402(r *http.Request) bool {
	return pm.x402On() && (r.Header.Get("X-PAYMENT") != "" || r.Header.Get("PAYMENT-SIGNATURE") != "")
}

// Amount returns the price of a request to a route priced by p, in USDC
// atomic units (see Pricing for the formula): the limit the route layer
// parsed (PricedLimit), or the route's default when it attached none. The
// raw query string is never read here.
func (p Pricing) Amount(r *http.Request) int64 {
	if limit, ok := PricedLimit(r.Context()); ok {
		return p.AmountForLimit(limit)
	}
	maxLimit := p.MaxLimit
	if maxLimit <= 0 {
		maxLimit = 50
	}
	limit := p.DefaultLimit
	if limit <= 0 || limit > maxLimit {
		limit = maxLimit
	}
	return p.AmountForLimit(limit)
}

// AmountForLimit returns the price for a request of limit items, in USDC
// atomic units.
func (p Pricing) AmountForLimit(limit int) int64 {
	minA := int64(math.Round(p.Min * 1e6))
	maxA := int64(math.Round(p.Max * 1e6))
	maxLimit := p.MaxLimit
	if p.Mode != "range" || maxLimit <= 1 || maxA <= minA {
		return minA
	}
	limit = max(1, min(limit, maxLimit))
	span := maxA - minA
	steps := int64(maxLimit - 1)
	// ceil(span * (limit-1) / steps) in integers.
	return minA + (span*int64(limit-1)+steps-1)/steps
}

// servePaid handles a request without a key on a priced route: a payment
// (x402 or MPP) or a 402 challenge.
func (s *Service) servePaid(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time) {
	pm := s.pay
	s.setAnonymousHeaders(w.Header(), now, TierPayPerRequest)
	scheme, cred := authorization(r)
	switch {
	case pm.hasX402(r):
		pm.serveX402(w, r, p, next, now)
	case scheme == "payment" && pm.mppOn():
		pm.serveMPP(w, r, p, next, now, cred)
	default:
		pm.challenge(w, r, p, now, "X-PAYMENT header is required")
	}
}

// x402RequirementsV1 is an x402 v1 PaymentRequirements object.
type x402RequirementsV1 struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	MaxAmountRequired string         `json:"maxAmountRequired"`
	Resource          string         `json:"resource"`
	Description       string         `json:"description"`
	MimeType          string         `json:"mimeType"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int            `json:"maxTimeoutSeconds"`
	Asset             string         `json:"asset"`
	Extra             map[string]any `json:"extra"`
}

// x402RequirementsV2 is an x402 v2 PaymentRequirements object.
type x402RequirementsV2 struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	Amount            string         `json:"amount"`
	Asset             string         `json:"asset"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int            `json:"maxTimeoutSeconds"`
	Extra             map[string]any `json:"extra"`
}

type x402Resource struct {
	URL         string `json:"url"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType"`
}

// x402Payload is the decoded X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2)
// header.
type x402Payload struct {
	X402Version int                 `json:"x402Version"`
	Scheme      string              `json:"scheme,omitempty"`
	Network     string              `json:"network,omitempty"`
	Accepted    *x402RequirementsV2 `json:"accepted,omitempty"`
	Payload     json.RawMessage     `json:"payload"`
}

func (pm *payments) resourceURL(r *http.Request) string {
	base := pm.cfg.PublicURL
	if base == "" {
		proto := "http"
		if r.TLS != nil {
			proto = "https"
		}
		if fp := r.Header.Get("X-Forwarded-Proto"); fp == "http" || fp == "https" {
			proto = fp
		}
		base = proto + "://" + r.Host
	}
	return strings.TrimRight(base, "/") + r.URL.RequestURI()
}

func (pm *payments) description(p Policy) string { return "cryptointel " + p.Name + " (one request)" }

func (pm *payments) extra() map[string]any {
	return map[string]any{"name": pm.cfg.AssetName, "version": pm.cfg.AssetVersion}
}

func (pm *payments) requirementsV1(r *http.Request, p Policy) x402RequirementsV1 {
	return x402RequirementsV1{
		Scheme: "exact", Network: pm.cfg.Network,
		MaxAmountRequired: strconv.FormatInt(p.Pricing.Amount(r), 10),
		Resource:          pm.resourceURL(r), Description: pm.description(p), MimeType: "application/json",
		PayTo: pm.cfg.PayTo, MaxTimeoutSeconds: pm.cfg.MaxTimeoutSeconds, Asset: pm.cfg.Asset, Extra: pm.extra(),
	}
}

func (pm *payments) requirementsV2(r *http.Request, p Policy) x402RequirementsV2 {
	return x402RequirementsV2{
		Scheme: "exact", Network: pm.cfg.Network, Amount: strconv.FormatInt(p.Pricing.Amount(r), 10),
		Asset: pm.cfg.Asset, PayTo: pm.cfg.PayTo, MaxTimeoutSeconds: pm.cfg.MaxTimeoutSeconds, Extra: pm.extra(),
	}
}

// challenge answers 402 with every enabled payment option: the x402 v1
// body (and the v2 PAYMENT-REQUIRED header) and the MPP WWW-Authenticate
// challenge.
func (pm *payments) challenge(w http.ResponseWriter, r *http.Request, p Policy, now time.Time, reason string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	body := map[string]any{"error": reason}
	if pm.x402On() {
		body["x402Version"] = 1
		body["accepts"] = []x402RequirementsV1{pm.requirementsV1(r, p)}
		v2, _ := json.Marshal(map[string]any{
			"x402Version": 2,
			"error":       reason,
			"resource":    x402Resource{URL: pm.resourceURL(r), Description: pm.description(p), MimeType: "application/json"},
			"accepts":     []x402RequirementsV2{pm.requirementsV2(r, p)},
		})
		h.Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString(v2))
	}
	if pm.mppOn() {
		h.Set("WWW-Authenticate", pm.mppChallenge(r, p, now).header())
	}
	writeJSON(w, http.StatusPaymentRequired, body)
}

// serveX402 verifies an x402 payment, runs next, and settles only when next
// succeeded.
func (pm *payments) serveX402(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time) {
	raw := r.Header.Get("X-PAYMENT")
	if raw == "" {
		raw = r.Header.Get("PAYMENT-SIGNATURE") // x402 v2 header
	}
	var payload x402Payload
	b, err := decodeBase64(raw)
	if err == nil {
		err = json.Unmarshal(b, &payload)
	}
	if err != nil || len(payload.Payload) == 0 {
		pm.challenge(w, r, p, now, "Invalid payment header: expected base64-encoded JSON payment payload.")
		return
	}
	var requirements any
	switch {
	case payload.X402Version == 1:
		req := pm.requirementsV1(r, p)
		if payload.Scheme != req.Scheme || payload.Network != req.Network {
			pm.challenge(w, r, p, now, "Unsupported payment scheme or network.")
			return
		}
		requirements = req
	case payload.X402Version == 2 && payload.Accepted != nil:
		req := pm.requirementsV2(r, p)
		a := payload.Accepted
		if a.Scheme != req.Scheme || a.Network != req.Network || a.Amount != req.Amount ||
			a.PayTo != req.PayTo || !strings.EqualFold(a.Asset, req.Asset) {
			pm.challenge(w, r, p, now, "Payment does not match the payment requirements.")
			return
		}
		requirements = req
	default:
		pm.challenge(w, r, p, now, "Unsupported x402Version.")
		return
	}
	var payloadJSON json.RawMessage = b
	reqBody := map[string]any{"x402Version": payload.X402Version, "paymentPayload": payloadJSON, "paymentRequirements": requirements}

	var verify struct {
		IsValid       bool   `json:"isValid"`
		InvalidReason string `json:"invalidReason"`
		Payer         string `json:"payer"`
	}
	if err := pm.post(r.Context(), pm.cfg.FacilitatorURL+"/verify", reqBody, &verify); err != nil {
		pm.s.logger.ErrorContext(r.Context(), "x402 verify failed", "request_id", RequestIDFrom(r.Context()), "error", err)
		writeError(w, http.StatusServiceUnavailable, "Payment facilitator unavailable. Please retry shortly.")
		return
	}
	if !verify.IsValid {
		reason := verify.InvalidReason
		if reason == "" {
			reason = "invalid_payment"
		}
		pm.challenge(w, r, p, now, "Payment verification failed: "+reason)
		return
	}

	bw := newBufferedWriter()
	ctx := WithCaller(r.Context(), &Caller{Paid: true})
	next.ServeHTTP(bw, r.WithContext(ctx))
	if !bw.succeeded() {
		bw.flushTo(w) // no settlement for a failed response
		return
	}

	var settle struct {
		Success     bool   `json:"success"`
		ErrorReason string `json:"errorReason,omitempty"`
		Payer       string `json:"payer,omitempty"`
		Transaction string `json:"transaction"`
		Network     string `json:"network"`
	}
	if err := pm.post(r.Context(), pm.cfg.FacilitatorURL+"/settle", reqBody, &settle); err != nil {
		pm.s.logger.ErrorContext(r.Context(), "x402 settle failed", "request_id", RequestIDFrom(r.Context()), "error", err)
		writeError(w, http.StatusServiceUnavailable, "Payment facilitator unavailable. Please retry shortly.")
		return
	}
	receipt, _ := json.Marshal(settle)
	enc := base64.StdEncoding.EncodeToString(receipt)
	w.Header().Set("X-PAYMENT-RESPONSE", enc)
	w.Header().Set("PAYMENT-RESPONSE", enc)
	if !settle.Success {
		reason := settle.ErrorReason
		if reason == "" {
			reason = "settlement_failed"
		}
		pm.challenge(w, r, p, now, "Payment settlement failed: "+reason)
		return
	}
	bw.flushTo(w)
}

// mppChallenge is a Payment HTTP authentication challenge (MPP).
type mppChallenge struct {
	ID          string `json:"id"`
	Realm       string `json:"realm"`
	Method      string `json:"method"`
	Intent      string `json:"intent"`
	Request     string `json:"request"`
	Expires     string `json:"expires,omitempty"`
	Digest      string `json:"digest,omitempty"`
	Opaque      string `json:"opaque,omitempty"`
	Description string `json:"description,omitempty"`
}

// header renders the challenge as a WWW-Authenticate value.
func (c mppChallenge) header() string {
	var b strings.Builder
	b.WriteString("Payment ")
	param := func(k, v string, first bool) {
		if !first {
			b.WriteString(", ")
		}
		b.WriteString(k + `="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`)
	}
	param("id", c.ID, true)
	param("realm", c.Realm, false)
	param("method", c.Method, false)
	param("intent", c.Intent, false)
	param("request", c.Request, false)
	if c.Expires != "" {
		param("expires", c.Expires, false)
	}
	if c.Description != "" {
		param("description", c.Description, false)
	}
	return b.String()
}

// mppRequest returns the base64url (no padding) JCS JSON "charge" request
// for r: amount in atomic units, currency (the token), recipient.
func (pm *payments) mppRequest(r *http.Request, p Policy) string {
	req := map[string]any{
		"amount":        strconv.FormatInt(p.Pricing.Amount(r), 10),
		"currency":      pm.cfg.Asset,
		"recipient":     pm.cfg.PayTo,
		"description":   pm.description(p),
		"methodDetails": map[string]any{"network": pm.cfg.Network},
	}
	// encoding/json sorts map keys and, without HTML escaping, writes
	// string-only objects exactly as JCS (RFC 8785) does.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(req) //nolint:errcheck
	return base64.RawURLEncoding.EncodeToString(bytes.TrimRight(buf.Bytes(), "\n"))
}

// mppID binds a challenge id to its parameters with HMAC-SHA256 (the
// scheme's recommended stateless binding).
func (pm *payments) mppID(c mppChallenge) string {
	mac := hmac.New(sha256.New, pm.secret)
	mac.Write([]byte(strings.Join([]string{c.Realm, c.Method, c.Intent, c.Request, c.Expires, c.Digest, c.Opaque}, "|")))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (pm *payments) mppChallenge(r *http.Request, p Policy, now time.Time) mppChallenge {
	c := mppChallenge{
		Realm: pm.cfg.MPPRealm, Method: pm.cfg.MPPMethod, Intent: "charge",
		Request:     pm.mppRequest(r, p),
		Expires:     now.UTC().Add(time.Duration(pm.cfg.MaxTimeoutSeconds) * time.Second).Format(time.RFC3339),
		Description: pm.description(p),
	}
	c.ID = pm.mppID(c)
	return c
}

// mppCredential is the decoded `Authorization: Payment` credential.
type mppCredential struct {
	Challenge mppChallenge    `json:"challenge"`
	Source    string          `json:"source,omitempty"`
	Payload   json.RawMessage `json:"payload"`
}

// serveMPP verifies a Payment credential, runs next, and settles only when
// next succeeded, answering with Payment-Receipt.
func (pm *payments) serveMPP(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time, raw string) {
	var cred mppCredential
	var credJSON json.RawMessage
	b, err := decodeBase64(raw)
	if err == nil {
		err = json.Unmarshal(b, &cred)
		credJSON = b
	}
	if err != nil || len(cred.Payload) == 0 || cred.Challenge.ID == "" {
		pm.challenge(w, r, p, now, "malformed-credential: the Payment credential is not base64url JSON with challenge and payload.")
		return
	}
	c := cred.Challenge
	if !hmac.Equal([]byte(c.ID), []byte(pm.mppID(c))) || c.Realm != pm.cfg.MPPRealm ||
		c.Method != pm.cfg.MPPMethod || c.Intent != "charge" {
		pm.challenge(w, r, p, now, "invalid-challenge: unknown challenge id.")
		return
	}
	if c.Request != pm.mppRequest(r, p) {
		pm.challenge(w, r, p, now, "invalid-challenge: the challenge was issued for another resource or amount.")
		return
	}
	expires, err := time.Parse(time.RFC3339, c.Expires)
	if err != nil || !now.Before(expires) {
		pm.challenge(w, r, p, now, "payment-expired: the challenge has expired.")
		return
	}
	if !pm.claim(c.ID, expires, now) {
		pm.challenge(w, r, p, now, "invalid-challenge: the challenge was already used.")
		return
	}
	settled := false
	defer func() {
		if !settled {
			pm.release(c.ID)
		}
	}()

	var verify struct {
		Valid  bool   `json:"valid"`
		Method string `json:"method"`
		Error  *struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"error"`
	}
	body := map[string]any{"challenge": c, "credential": credJSON}
	if err := pm.post(r.Context(), pm.cfg.MPPVerifierURL+"/verify", body, &verify); err != nil {
		pm.s.logger.ErrorContext(r.Context(), "mpp verify failed", "request_id", RequestIDFrom(r.Context()), "error", err)
		writeError(w, http.StatusServiceUnavailable, "Payment verifier unavailable. Please retry shortly.")
		return
	}
	if !verify.Valid {
		detail := "proof invalid"
		if verify.Error != nil && verify.Error.Detail != "" {
			detail = verify.Error.Detail
		}
		pm.challenge(w, r, p, now, "verification-failed: "+detail)
		return
	}

	bw := newBufferedWriter()
	ctx := WithCaller(r.Context(), &Caller{Paid: true})
	next.ServeHTTP(bw, r.WithContext(ctx))
	if !bw.succeeded() {
		bw.flushTo(w) // no settlement for a failed response
		return
	}

	var settle struct {
		Settled   bool   `json:"settled"`
		Reference string `json:"reference"`
		Amount    string `json:"amount"`
		Timestamp string `json:"timestamp"`
		Error     *struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"error"`
	}
	body["amount"] = strconv.FormatInt(p.Pricing.Amount(r), 10)
	if err := pm.post(r.Context(), pm.cfg.MPPVerifierURL+"/settle", body, &settle); err != nil {
		pm.s.logger.ErrorContext(r.Context(), "mpp settle failed", "request_id", RequestIDFrom(r.Context()), "error", err)
		writeError(w, http.StatusServiceUnavailable, "Payment verifier unavailable. Please retry shortly.")
		return
	}
	if !settle.Settled {
		detail := "settlement failed"
		if settle.Error != nil && settle.Error.Detail != "" {
			detail = settle.Error.Detail
		}
		pm.challenge(w, r, p, now, "verification-failed: "+detail)
		return
	}
	settled = true
	ts := settle.Timestamp
	if ts == "" {
		ts = now.UTC().Format(time.RFC3339)
	}
	receipt, _ := json.Marshal(map[string]string{
		"status": "success", "method": c.Method, "timestamp": ts, "reference": settle.Reference,
	})
	w.Header().Set("Payment-Receipt", base64.RawURLEncoding.EncodeToString(receipt))
	bw.flushTo(w)
}

// claim marks an MPP challenge id as in use so a credential serves one
// request; false when it already is. Ids are forgotten once expired. This
// guards one process; across replicas, the verifier's settlement
// (idempotent per challenge id) is what stops a second charge.
func (pm *payments) claim(id string, expires, now time.Time) bool {
	pm.mu.Lock()
	defer pm.mu.Unlock()
	for k, exp := range pm.used {
		if !now.Before(exp) {
			delete(pm.used, k)
		}
	}
	if _, ok := pm.used[id]; ok {
		return false
	}
	pm.used[id] = expires
	return true
}

// release forgets a claimed id whose request was not paid, so the client
// may retry with the same credential.
func (pm *payments) release(id string) {
	pm.mu.Lock()
	defer pm.mu.Unlock()
	delete(pm.used, id)
}

// post sends body as JSON to url and decodes a 200 response into out.
func (pm *payments) post(ctx context.Context, url string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("error encoding payment request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("error building payment request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := pm.s.client.Do(req)
	if err != nil {
		return fmt.Errorf("error calling %s: %w", url, err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("error reading %s response: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("error calling %s: status %d: %s", url, resp.StatusCode, bytes.TrimSpace(rb))
	}
	if err := json.Unmarshal(rb, out); err != nil {
		return fmt.Errorf("error decoding %s response: %w", url, err)
	}
	return nil
}

// decodeBase64 accepts standard or URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// bufferedWriter holds a response until the payment is settled.
type bufferedWriter struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func newBufferedWriter() *bufferedWriter { return &bufferedWriter{header: http.Header{}} }

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.buf.Write(p)
}

// succeeded reports whether the response is a success worth paying for: a
// 2xx status and, for a JSON body, no top-level GraphQL "errors".
func (b *bufferedWriter) succeeded() bool {
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	if status < 200 || status > 299 {
		return false
	}
	body := bytes.TrimSpace(b.buf.Bytes())
	if len(body) == 0 || body[0] != '{' {
		return true
	}
	var gql struct {
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &gql); err != nil {
		return true
	}
	return len(gql.Errors) == 0
}

// flushTo copies the held response to w; the access headers already on w
// stay.
func (b *bufferedWriter) flushTo(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range b.header {
		h[k] = v
	}
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(b.buf.Bytes()) //nolint:errcheck
}
