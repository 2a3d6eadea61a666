package access

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/eip3009"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/observe"
)

// PaymentConfig configures pay-per-request on priced routes. x402 (v1 and
// v2) is on when FacilitatorURL and PayTo are set; MPP (the "Payment" HTTP
// authentication scheme, method evm, intent charge) is on when PayTo and
// MPPVerifierURL or FacilitatorURL are set. Both protocols carry the same
// signed payment, an EIP-3009 transfer authorization of the token, and both
// settle it through an x402 facilitator (POST /verify and /settle).
type PaymentConfig struct {
	// FacilitatorURL is the x402 facilitator base URL; the service calls
	// POST {FacilitatorURL}/verify and /settle. Empty disables x402.
	FacilitatorURL string
	// PayTo is the address receiving payments.
	PayTo string
	// Network is the chain payments are made on: an x402 v1 name ("base",
	// "base-sepolia") or a CAIP-2 id ("eip155:8453", "eip155:84532").
	// x402 v1 offers are named the v1 way, x402 v2 and MPP offers the
	// CAIP-2 way. Defaults to "base".
	Network string
	// Asset is the token contract, a 6-decimal token with EIP-3009. Prices
	// are in its atomic units (USDC: 1 = 0.000001 USD). Defaults to USDC on
	// Network when the network has a known USDC deployment.
	Asset string
	// AssetName and AssetVersion are the token's EIP-712 domain, which
	// every payment is signed under (x402 `extra.name`/`extra.version`).
	// Default to the known domain of the asset ("USD Coin"/"2" for USDC on
	// Base, "USDC"/"2" on Base Sepolia); required for any other token.
	AssetName, AssetVersion string
	// MaxTimeoutSeconds is the x402 maxTimeoutSeconds (clients sign
	// authorizations valid for that long) and the lifetime of an MPP
	// challenge. Defaults to 300.
	MaxTimeoutSeconds int
	// PublicURL is the service's public base URL (scheme and host) used to
	// name the paid resource. Defaults to the request's scheme and Host.
	PublicURL string
	// MPPVerifierURL is the x402 facilitator MPP payments are verified and
	// settled through, when it is not FacilitatorURL. Empty uses
	// FacilitatorURL.
	MPPVerifierURL string
	// MPPRealm is the MPP challenge realm. Defaults to the host name of
	// PublicURL, or of the request when PublicURL is empty.
	MPPRealm string
	// MPPSecret keys the HMAC that binds challenge ids to their parameters.
	// Set the same value on every replica. Defaults to a random per-process
	// secret (challenges then only verify on the process that issued them).
	MPPSecret string
	// MaxFailedPayments is how many refused payments (malformed, forged,
	// mismatched, expired, replayed or refused by the facilitator) one
	// client address, and one payer, may present per fixed minute; past
	// it, their payments are refused 429 with Retry-After, unchecked,
	// until the minute ends. Defaults to DefaultMaxFailedPayments;
	// negative removes the throttle.
	MaxFailedPayments int
}

// Enabled reports whether c turns payments on (x402, MPP or both): a
// receiving address and a facilitator or verifier.
func (c PaymentConfig) Enabled() bool { return c.enabled() }

// msgFacilitatorUnavailable answers a paid request the facilitator could
// not verify or settle for want of reaching it.
const msgFacilitatorUnavailable = "Payment facilitator unavailable. Please retry shortly."

func (c PaymentConfig) enabled() bool {
	return c.PayTo != "" && (c.FacilitatorURL != "" || c.MPPVerifierURL != "")
}

// resolved returns c with its defaults applied and its network and token
// domain read, or an error naming the setting that is wrong. A
// configuration that enables no protocol is always valid.
func (c PaymentConfig) resolved() (PaymentConfig, paymentNetwork, eip3009.Domain, error) {
	if c.Network == "" {
		c.Network = "base"
	}
	if c.MaxTimeoutSeconds <= 0 {
		c.MaxTimeoutSeconds = 300
	}
	c.FacilitatorURL = strings.TrimRight(c.FacilitatorURL, "/")
	c.MPPVerifierURL = strings.TrimRight(c.MPPVerifierURL, "/")
	if !c.enabled() {
		return c, paymentNetwork{}, eip3009.Domain{}, nil
	}
	network, err := parseNetwork(c.Network)
	if err != nil {
		return c, network, eip3009.Domain{}, fmt.Errorf("invalid PAYMENT_NETWORK: %w", err)
	}
	if c.Asset == "" {
		known := knownAssets[network.chainID]
		if len(known) == 0 {
			return c, network, eip3009.Domain{}, fmt.Errorf("PAYMENT_ASSET is required on %s (no known USDC deployment)", c.Network)
		}
		c.Asset = known[0].address
	}
	if err := checkAddress("PAYMENT_ASSET", c.Asset); err != nil {
		return c, network, eip3009.Domain{}, err
	}
	if err := checkAddress("PAYMENT_PAY_TO", c.PayTo); err != nil {
		return c, network, eip3009.Domain{}, err
	}
	if name, version, ok := KnownAssetDomain(network.chainID, c.Asset); ok {
		if c.AssetName == "" {
			c.AssetName = name
		}
		if c.AssetVersion == "" {
			c.AssetVersion = version
		}
	}
	if c.AssetName == "" || c.AssetVersion == "" {
		return c, network, eip3009.Domain{}, fmt.Errorf("PAYMENT_ASSET_NAME and PAYMENT_ASSET_VERSION are required for token %s on %s: they must be the token's EIP-712 domain name and version", c.Asset, c.Network)
	}
	for setting, u := range map[string]string{"X402_FACILITATOR_URL": c.FacilitatorURL, "MPP_VERIFIER_URL": c.MPPVerifierURL} {
		if pu, err := url.Parse(u); u != "" && (err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "") {
			return c, network, eip3009.Domain{}, fmt.Errorf("invalid %s %q: want an http(s) URL", setting, u)
		}
	}
	c.Asset = common.HexToAddress(c.Asset).Hex()
	c.PayTo = common.HexToAddress(c.PayTo).Hex()
	domain := eip3009.Domain{Name: c.AssetName, Version: c.AssetVersion, ChainID: network.chainID, Contract: common.HexToAddress(c.Asset)}
	return c, network, domain, nil
}

// Validate reports a payment configuration that would take payments nobody
// can make or settle: an unknown network, a malformed address, a token
// whose EIP-712 domain is unknown, a facilitator URL that is not http(s).
func (c PaymentConfig) Validate() error {
	_, _, _, err := c.resolved()
	return err
}

// payments implements x402 and MPP for a Service.
type payments struct {
	s       *Service
	cfg     PaymentConfig
	network paymentNetwork
	domain  eip3009.Domain
	secret  []byte

	// addressFailures and payerFailures throttle refused payments per
	// client address and per payer (PaymentConfig.MaxFailedPayments).
	addressFailures, payerFailures *FailureThrottle
}

// verification is the outcome of checking a request's payment.
type verification struct {
	pay *verifiedPayment // the payment, valid for the price
	// payer is the authorization's `from`, once it parsed.
	payer string
	// refusal is why the payment was refused (a 402).
	refusal string
	// unavailable is the 503's message: a facilitator could not be reached.
	unavailable string
	// wait, when set, is the seconds the payer must wait: it presented too
	// many refused payments (a 429).
	wait int64
	// err is an internal error (the replay record).
	err error
}

func newPayments(s *Service, cfg PaymentConfig) *payments {
	resolved, network, domain, err := cfg.resolved()
	if err != nil {
		// app.New validates first; a library user gets payments off and a log line.
		s.logger.Error("payments disabled: invalid payment configuration", "error", err)
		resolved = PaymentConfig{}
	}
	secret := []byte(resolved.MPPSecret)
	if len(secret) == 0 {
		secret = make([]byte, 32)
		rand.Read(secret) //nolint:errcheck // crypto/rand.Read never fails
	}
	maxFailed := cfg.MaxFailedPayments
	if maxFailed == 0 {
		maxFailed = DefaultMaxFailedPayments
	}
	return &payments{s: s, cfg: resolved, network: network, domain: domain, secret: secret,
		addressFailures: NewFailureThrottle(maxFailed, time.Minute), payerFailures: NewFailureThrottle(maxFailed, time.Minute)}
}

func (pm *payments) x402On() bool { return pm.cfg.FacilitatorURL != "" && pm.cfg.PayTo != "" }
func (pm *payments) mppOn() bool  { return pm.cfg.enabled() }
func (pm *payments) enabled() bool {
	return pm.x402On() || pm.mppOn()
}

// mppFacilitator is the facilitator MPP payments settle through.
func (pm *payments) mppFacilitator() string {
	if pm.cfg.MPPVerifierURL != "" {
		return pm.cfg.MPPVerifierURL
	}
	return pm.cfg.FacilitatorURL
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
	limit := p.DefaultLimit
	if limit <= 0 || limit > p.MaxLimit {
		limit = p.MaxLimit
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

// AmountForCost returns the price of an operation of cost credits in
// "complexity" mode: PerCredit per credit, at least Min, in USDC atomic
// units.
func (p Pricing) AmountForCost(cost int) int64 {
	perCredit := int64(math.Round(p.PerCredit * 1e6))
	return max(int64(math.Round(p.Min*1e6)), perCredit*int64(max(cost, 0)))
}

// Protocol names, as recorded with each payment claim.
const (
	protocolX402 = "x402"
	protocolMPP  = "mpp"
)

// paidRequestKey is the context key of the request's *paidRequest.
type paidRequestKey struct{}

// paidRequest is one request without a key on a priced route. Its payment
// (x402, MPP, or none yet) is verified once the price is known: before the
// route runs on /v1, when the operation's cost is known on /graphql (see
// Charge). It is settled only after a successful response.
type paidRequest struct {
	pm  *payments
	r   *http.Request
	p   Policy
	now time.Time

	mu          sync.Mutex
	priced      bool
	amount      int64
	refusal     string // the 402's reason: the request is not paid
	forbidden   error  // a field a paying caller may not read: refused before pricing
	unavailable string // the 503's message: a facilitator could not be reached
	throttled   int64  // the 429's Retry-After: too many refused payments
	err         error  // an internal error (the replay record)
	pay         *verifiedPayment
}

// verifiedPayment is a payment the facilitator found valid for the price,
// claimed in the replay record, waiting for the response to settle it.
type verifiedPayment struct {
	protocol    string
	claimKey    string
	facilitator string
	// request is the facilitator's {x402Version, paymentPayload,
	// paymentRequirements} for /settle.
	request map[string]any
	// receipt sets the receipt headers of a settled payment.
	receipt func(h http.Header, s settleResponse)
}

// settleResponse is an x402 facilitator's /settle answer.
type settleResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
}

// servePaid handles a request without a key on a priced route: a payment
// (x402 or MPP) or a 402 challenge.
func (s *Service) servePaid(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time) {
	s.setAnonymousHeaders(w.Header(), now, TierPayPerRequest)
	pr := &paidRequest{pm: s.pay, r: r, p: p, now: now}
	ctx := context.WithValue(r.Context(), paidRequestKey{}, pr)
	ctx = s.paidContext(ctx, r, p)
	bw := newBufferedWriter()
	if refusedAhead(ctx) {
		// Its parameters did not parse: answered as it is, free, before
		// any payment is looked at, verified or claimed.
		next.ServeHTTP(bw, r.WithContext(ctx))
	} else if p.CostByComplexity {
		// Priced by Charge once the operation's cost is known; an operation
		// that never gets there (a parse or validation error) is answered
		// as it is, free, and nothing is verified or settled.
		next.ServeHTTP(bw, r.WithContext(ctx))
	} else if pr.authorize(ctx, p.Pricing.Amount(r)) {
		next.ServeHTTP(bw, r.WithContext(ctx))
	}
	pr.finish(ctx, w, bw)
}

// charge prices a /graphql operation of quote q and verifies its payment;
// the first call decides. An operation selecting a field a paying caller
// may not read (one marked @access beyond the evaluation layer) is refused
// forbidden before it is priced: nothing is verified or settled.
func (pr *paidRequest) charge(ctx context.Context, q *quote) error {
	if n := q.unmetPaid(); n != nil {
		plans, _ := pr.pm.s.loadPlans(ctx)
		err := q.forbiddenField(plans, n)
		pr.mu.Lock()
		pr.forbidden = err
		pr.mu.Unlock()
		return err
	}
	pr.mu.Lock()
	priced, paid := pr.priced, pr.pay != nil
	pr.mu.Unlock()
	if !priced {
		paid = pr.authorize(ctx, q.amount(pr.p.Pricing))
	}
	if !paid {
		return cryptointel.Errorf(cryptointel.EPAYMENT, "Payment required.")
	}
	return nil
}

// authorize prices the request at amount and verifies its payment against
// that price: true when the route may run. A client address or payer that
// presented too many refused payments this minute is refused before its
// payment is checked; each refusal counts against both.
func (pr *paidRequest) authorize(ctx context.Context, amount int64) bool {
	pm, r := pr.pm, pr.r
	var v verification
	scheme, cred := authorization(r)
	addr := ClientAddress(r)
	paying := pm.hasX402(r) || (scheme == "payment" && pm.mppOn())
	switch {
	case !paying:
	case pm.addressFailures.Blocked(addr, pr.now) > 0:
		v.wait = pm.addressFailures.Blocked(addr, pr.now)
	case pm.hasX402(r):
		v = pm.verifyX402(ctx, r, pr.p, amount, pr.now)
	default:
		v = pm.verifyMPP(ctx, r, pr.p, amount, pr.now, cred)
	}
	if v.refusal != "" && v.err == nil {
		pm.addressFailures.Fail(addr, pr.now)
		pm.payerFailures.Fail(v.payer, pr.now)
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.priced, pr.amount = true, amount
	pr.pay, pr.refusal, pr.unavailable, pr.throttled, pr.err = v.pay, v.refusal, v.unavailable, v.wait, v.err
	return v.pay != nil
}

// finish answers the request: the challenge when it is not paid, or the
// held response once the payment is settled. A response is served either
// settled or carrying nothing paid for: a request refused before it was
// priced (its parameters, a field the payer may not read) gets its errors
// and nothing is verified; a /v1 request that failed, and a /graphql
// operation the server failed (5xx) or refused after pricing without
// producing data, get their errors without data and the payment's claim
// is released, so the credential may pay for another request. A /graphql
// operation that ran is settled whatever errors its fields raised — it
// cost the work, as it costs a key its credits — and served only once
// settled.
func (pr *paidRequest) finish(ctx context.Context, w http.ResponseWriter, bw *bufferedWriter) {
	pm, r := pr.pm, pr.r
	pr.mu.Lock()
	priced, amount, refusal, unavailable, err, pay, forbidden := pr.priced, pr.amount, pr.refusal, pr.unavailable, pr.err, pr.pay, pr.forbidden
	throttled := pr.throttled
	pr.mu.Unlock()
	switch {
	case err != nil:
		pm.s.internalError(w, r, err)
		return
	case unavailable != "":
		writeError(w, http.StatusServiceUnavailable, unavailable)
		return
	case throttled > 0:
		w.Header().Set("Retry-After", strconv.FormatInt(throttled, 10))
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf(msgPaymentThrottledFmt, pm.addressFailures.max, throttled))
		return
	case !priced:
		if forbidden != nil {
			bw.status = StatusFor(cryptointel.ErrorCode(forbidden))
		}
		if bw.carriesData() {
			// Only an operation that was priced may run: never serve what
			// nobody paid for.
			pm.s.logger.ErrorContext(ctx, "unpriced paid request produced data", "request_id", observe.RequestID(ctx))
			bw.dropData()
		}
		bw.flushTo(w)
		return
	case pay == nil:
		pm.challenge(w, r, pr.p, amount, pr.now, refusal)
		return
	case pr.p.CostByComplexity && (bw.status >= 500 || (bw.status >= 400 && !bw.carriesData())):
		pm.release(ctx, pay)
		bw.dropData()
		bw.flushTo(w) // no settlement for a failed or refused response
		return
	case !pr.p.CostByComplexity && !bw.succeeded():
		pm.release(ctx, pay)
		bw.flushTo(w) // no settlement for a failed response
		return
	}
	var settle settleResponse
	if err := pm.post(ctx, pay.facilitator+"/settle", pay.request, &settle); err != nil {
		// The outcome is unknown: the payment stays claimed (until it
		// expires) so that it can never pay for a second response.
		pm.s.logger.ErrorContext(ctx, "payment settle failed", "protocol", pay.protocol,
			"request_id", observe.RequestID(ctx), "error", err)
		writeError(w, http.StatusServiceUnavailable, msgFacilitatorUnavailable)
		return
	}
	if !settle.Success {
		pm.release(ctx, pay)
		if pay.protocol == protocolX402 {
			setX402Receipt(w.Header(), settle)
		}
		reason := facilitatorReason(settle.ErrorReason, "settlement_failed")
		if pay.protocol == protocolMPP {
			pm.challenge(w, r, pr.p, amount, pr.now, "verification-failed: the payment did not settle: "+reason)
		} else {
			pm.challenge(w, r, pr.p, amount, pr.now, "Payment settlement failed: "+reason)
		}
		return
	}
	if err := pm.s.store.SettlePayment(ctx, pay.claimKey, settle.Transaction); err != nil {
		// The payment is settled and stays claimed; only its state is stale.
		pm.s.logger.ErrorContext(ctx, "recording payment settlement failed", "request_id", observe.RequestID(ctx), "error", err)
	}
	pay.receipt(w.Header(), settle)
	bw.header.Set("Cache-Control", "private")
	bw.flushTo(w)
}

// claim records a payment in the replay record; refusal is set when another
// request holds or used it.
func (pm *payments) claim(ctx context.Context, protocol string, auth *eip3009.Parsed, now time.Time) (key, refusal string, err error) {
	key = fmt.Sprintf("eip3009:%d:%s:%s:0x%x", pm.network.chainID, strings.ToLower(pm.cfg.Asset),
		strings.ToLower(auth.From.Hex()), auth.Nonce)
	// Kept until the authorization expires on chain (and at most a week:
	// the token refuses a used nonce for ever; this record only spares the
	// facilitator the call).
	expires := now.Add(7 * 24 * time.Hour)
	if auth.ValidBefore.IsInt64() && auth.ValidBefore.Int64() < expires.Unix() {
		expires = time.Unix(auth.ValidBefore.Int64(), 0)
	}
	state, err := pm.s.store.ClaimPayment(ctx, key, protocol, expires, now)
	switch {
	case err != nil:
		return "", "", err
	case state == db.PaymentSettled:
		return "", "this payment was already settled for an earlier request; sign a new one", nil
	case state == db.PaymentPending:
		return "", "this payment is in use by another request", nil
	}
	return key, "", nil
}

// release frees the claim of a payment that was not settled, so the client
// may present it again.
func (pm *payments) release(ctx context.Context, pay *verifiedPayment) {
	if err := pm.s.store.ReleasePayment(context.WithoutCancel(ctx), pay.claimKey); err != nil {
		pm.s.logger.ErrorContext(ctx, "releasing payment claim failed", "request_id", observe.RequestID(ctx), "error", err)
	}
}

// facilitatorVerify asks the facilitator at base whether the payment in
// request is valid: "" when it is, else the refusal reason; unavailable is
// set when the facilitator could not answer.
func (pm *payments) facilitatorVerify(ctx context.Context, base string, request map[string]any) (invalid, unavailable string) {
	var verify struct {
		IsValid        bool   `json:"isValid"`
		InvalidReason  string `json:"invalidReason"`
		InvalidMessage string `json:"invalidMessage"`
		Payer          string `json:"payer"`
	}
	if err := pm.post(ctx, base+"/verify", request, &verify); err != nil {
		pm.s.logger.ErrorContext(ctx, "payment verify failed", "request_id", observe.RequestID(ctx), "error", err)
		return "", msgFacilitatorUnavailable
	}
	if verify.IsValid {
		return "", ""
	}
	return facilitatorReason(verify.InvalidReason, "invalid_payment"), ""
}

// facilitatorReason is a facilitator's reason as a client is shown it: its
// first line, at most 200 bytes (x402 reasons are short codes, but a
// facilitator may pass on a whole chain error), or def when empty.
func facilitatorReason(reason, def string) string {
	reason, _, _ = strings.Cut(strings.TrimSpace(reason), "\n")
	if len(reason) > 200 {
		reason = strings.ToValidUTF8(reason[:200], "") + "…"
	}
	if reason == "" {
		return def
	}
	return reason
}

// resourceURL names the paid resource: PublicURL (or the request's scheme
// and host) and the request URI.
func (pm *payments) resourceURL(r *http.Request) string {
	base := pm.cfg.PublicURL
	if base == "" {
		base = RequestOrigin(r)
	}
	return strings.TrimRight(base, "/") + r.URL.RequestURI()
}

// RequestOrigin is the scheme and host a client reached the service at:
// X-Forwarded-Proto (http or https) when a proxy set it, else https over
// TLS and http without, then the Host. The paid resource, the OAuth
// issuer and an export's download link are named from it when no public
// URL is configured.
func RequestOrigin(r *http.Request) string {
	proto := "http"
	if r.TLS != nil {
		proto = "https"
	}
	if fp := r.Header.Get("X-Forwarded-Proto"); fp == "http" || fp == "https" {
		proto = fp
	}
	return proto + "://" + r.Host
}

// realm is the MPP realm: MPPRealm, else the host name of PublicURL or of
// the request.
func (pm *payments) realm(r *http.Request) string {
	if pm.cfg.MPPRealm != "" {
		return pm.cfg.MPPRealm
	}
	host := r.Host
	if u, err := url.Parse(pm.cfg.PublicURL); pm.cfg.PublicURL != "" && err == nil && u.Host != "" {
		host = u.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.Trim(host, "[]")
}

func (pm *payments) description(p Policy) string { return "cryptointel " + p.Name + " (one request)" }

// challenge answers 402 with every enabled payment option at amount: the
// x402 v1 body and the v2 PAYMENT-REQUIRED header, and the MPP
// WWW-Authenticate challenge. reason says why; without one the 402 names
// the header each protocol expects.
func (pm *payments) challenge(w http.ResponseWriter, r *http.Request, p Policy, amount int64, now time.Time, reason string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	v1Reason, v2Reason := reason, reason
	if reason == "" {
		v1Reason, v2Reason = "X-PAYMENT header is required", "PAYMENT-SIGNATURE header is required"
		if !pm.x402On() {
			v1Reason = "Payment required: answer the WWW-Authenticate Payment challenge"
		}
	}
	eb := httperr.NewBody(cryptointel.EPAYMENT, v1Reason, h.Get(observe.RequestIDHeader))
	body := map[string]any{"error": v1Reason, "code": eb.Code, "docUrl": eb.DocURL, "requestId": eb.RequestID}
	if pm.x402On() {
		body["x402Version"] = 1
		body["accepts"] = []x402RequirementsV1{pm.requirementsV1(r, p, amount)}
		v2, _ := json.Marshal(x402PaymentRequired{
			X402Version: 2, Error: v2Reason,
			Resource: x402Resource{URL: pm.resourceURL(r), Description: pm.description(p), MimeType: "application/json"},
			Accepts:  []x402RequirementsV2{pm.requirementsV2(r, p, amount)},
		})
		h.Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString(v2))
	}
	if pm.mppOn() {
		h.Set("WWW-Authenticate", pm.mppChallenge(r, p, amount, now).header())
	}
	writeJSON(w, http.StatusPaymentRequired, body)
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

// errNotBase64 is returned by decodeBase64 for a value that is not base64.
var errNotBase64 = errors.New("not base64")

// decodeBase64 accepts standard or URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	var b []byte
	var err error
	if strings.ContainsAny(s, "-_") {
		b, err = base64.RawURLEncoding.DecodeString(s)
	} else {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, errNotBase64
	}
	return b, nil
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

// carriesData reports whether the held body is a JSON object whose "data"
// member is not null: a GraphQL response that answered something.
func (b *bufferedWriter) carriesData() bool {
	body := bytes.TrimSpace(b.buf.Bytes())
	if len(body) == 0 || body[0] != '{' {
		return len(body) > 0 && b.status < 400 // not JSON: a served body
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return true
	}
	d, ok := m["data"]
	return ok && string(bytes.TrimSpace(d)) != "null"
}

// dropData removes the "data" member of a held JSON object, keeping its
// errors.
func (b *bufferedWriter) dropData() {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b.buf.Bytes(), &m); err != nil {
		b.buf.Reset()
		b.buf.WriteString(`{"errors":[{"message":"internal error","extensions":{"code":"internal"}}]}`)
		return
	}
	if _, ok := m["data"]; !ok {
		return
	}
	delete(m, "data")
	out, _ := json.Marshal(m)
	b.buf.Reset()
	b.buf.Write(out)
	b.header.Del("Content-Length")
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
