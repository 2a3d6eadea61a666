package access

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/cryptointel/cryptointel/access/eip3009"
)

// MPP — the "Payment" HTTP authentication scheme (draft-httpauth-payment),
// method "evm", intent "charge" (draft-evm-charge): the 402 carries a
// challenge whose id is an HMAC of its parameters; the client answers with
// `Authorization: Payment <credential>`, the challenge echoed and an
// EIP-3009 authorization signed for exactly the amount, to the recipient,
// with the nonce keccak256(id ‖ realm). The service checks all of it
// itself, then verifies and settles the authorization through the x402
// facilitator as an x402 v2 exact payment, as mppx's own server does.

const (
	mppMethod = "evm"
	mppIntent = "charge"
)

// mppChallenge is a Payment HTTP authentication challenge.
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
	if c.Description != "" {
		param("description", c.Description, false)
	}
	if c.Expires != "" {
		param("expires", c.Expires, false)
	}
	return b.String()
}

// mppChargeRequest is the evm charge request, its fields in JCS (RFC 8785)
// order so that encoding/json writes the canonical form.
type mppChargeRequest struct {
	Amount        string           `json:"amount"`
	Currency      string           `json:"currency"`
	Description   string           `json:"description,omitempty"`
	MethodDetails mppMethodDetails `json:"methodDetails"`
	Recipient     string           `json:"recipient"`
}

type mppMethodDetails struct {
	ChainID         int64    `json:"chainId"`
	CredentialTypes []string `json:"credentialTypes"`
	Decimals        int      `json:"decimals"`
}

// mppRequest returns the challenge's request for amount: base64url (no
// padding) of its canonical JSON. Clients re-encode the request they parsed
// canonically, so the echo compares equal byte for byte.
func (pm *payments) mppRequest(p Policy, amount int64) string {
	req := mppChargeRequest{
		Amount: strconv.FormatInt(amount, 10), Currency: pm.cfg.Asset, Description: pm.description(p),
		MethodDetails: mppMethodDetails{ChainID: pm.network.chainID, CredentialTypes: []string{"authorization"}, Decimals: 6},
		Recipient:     pm.cfg.PayTo,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(req) //nolint:errcheck // a struct of strings and numbers
	return base64.RawURLEncoding.EncodeToString(bytes.TrimRight(buf.Bytes(), "\n"))
}

// mppID binds a challenge id to its parameters with HMAC-SHA256 over
// realm|method|intent|request|expires|digest|opaque (the scheme's
// recommended stateless binding, the same input mppx's servers use).
func (pm *payments) mppID(c mppChallenge) string {
	mac := hmac.New(sha256.New, pm.secret)
	mac.Write([]byte(strings.Join([]string{c.Realm, c.Method, c.Intent, c.Request, c.Expires, c.Digest, c.Opaque}, "|")))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func (pm *payments) mppChallenge(r *http.Request, p Policy, amount int64, now time.Time) mppChallenge {
	c := mppChallenge{
		Realm: pm.realm(r), Method: mppMethod, Intent: mppIntent,
		Request:     pm.mppRequest(p, amount),
		Expires:     now.UTC().Add(time.Duration(pm.cfg.MaxTimeoutSeconds) * time.Second).Format(time.RFC3339),
		Description: pm.description(p),
	}
	c.ID = pm.mppID(c)
	return c
}

// mppCredential is the decoded `Authorization: Payment` credential.
type mppCredential struct {
	Challenge mppChallenge      `json:"challenge"`
	Source    string            `json:"source,omitempty"`
	Payload   *mppAuthorization `json:"payload"`
}

// mppAuthorization is the evm charge credential's payload.
type mppAuthorization struct {
	Type string `json:"type"`
	eip3009.Authorization
	Signature string `json:"signature"`
}

// mppExpect is what a credential must match: the challenge this service
// would issue for the request now.
type mppExpect struct {
	realm   string
	request string
	amount  int64
}

// checkMPPCredential decodes and verifies a Payment credential against
// expect at now, as draft-evm-charge's Authorization Verification asks:
// the challenge id's HMAC and expiry, the request equal to ours, the
// payload an "authorization" to the recipient for the amount, its nonce
// keccak256(id ‖ realm), its time window around now, its EIP-712 signature
// by `from`, and `source` naming `from` when present. It returns the
// authorization, or the refusal (prefixed with the scheme's problem type).
func (pm *payments) checkMPPCredential(raw string, expect mppExpect, now time.Time) (*eip3009.Parsed, *mppCredential, string) {
	var cred mppCredential
	b, err := decodeBase64(raw)
	if err == nil {
		err = json.Unmarshal(b, &cred)
	}
	if err != nil || cred.Payload == nil || cred.Challenge.ID == "" {
		return nil, nil, "malformed-credential: the Payment credential is not base64url JSON with challenge and payload."
	}
	c := cred.Challenge
	if !hmac.Equal([]byte(c.ID), []byte(pm.mppID(c))) {
		return nil, nil, "invalid-challenge: unknown challenge id (not issued by this service, or altered)."
	}
	if c.Realm != expect.realm || c.Method != mppMethod || c.Intent != mppIntent {
		return nil, nil, "invalid-challenge: the challenge was issued for another realm, method or intent."
	}
	expires, err := time.Parse(time.RFC3339, c.Expires)
	if err != nil || !now.Before(expires) {
		return nil, nil, "payment-expired: the challenge has expired; pay the new one."
	}
	if c.Request != expect.request {
		return nil, nil, "invalid-challenge: the challenge was issued for another resource or amount."
	}
	pl := cred.Payload
	if pl.Type != "authorization" {
		return nil, nil, "malformed-credential: payload.type must be \"authorization\"."
	}
	auth, err := pl.Authorization.Parse()
	if err != nil {
		return nil, nil, "malformed-credential: " + err.Error() + "."
	}
	if auth.To != common.HexToAddress(pm.cfg.PayTo) {
		return nil, nil, "verification-failed: the authorization pays another recipient."
	}
	if auth.Value.Cmp(big.NewInt(expect.amount)) != 0 {
		return nil, nil, fmt.Sprintf("verification-failed: the authorization is for %s, the request costs %d.", auth.Value, expect.amount)
	}
	if want := eip3009.Keccak256([]byte(c.ID + c.Realm)); auth.Nonce != want {
		return nil, nil, "verification-failed: the authorization's nonce is not bound to this challenge (keccak256(id ‖ realm))."
	}
	unix := big.NewInt(now.Unix())
	if auth.ValidAfter.Cmp(unix) > 0 {
		return nil, nil, "verification-failed: the authorization is not valid yet."
	}
	if auth.ValidBefore.Cmp(unix) <= 0 {
		return nil, nil, "payment-expired: the authorization has expired."
	}
	signer, err := auth.Recover(pm.domain, pl.Signature)
	if err != nil || signer != auth.From {
		return nil, nil, "verification-failed: the signature is not from the payer under the token's EIP-712 domain."
	}
	if cred.Source != "" {
		did := "did:pkh:eip155:" + strconv.FormatInt(pm.network.chainID, 10) + ":"
		addr, ok := strings.CutPrefix(cred.Source, did)
		if !ok || !strings.EqualFold(addr, auth.From.Hex()) {
			return nil, nil, "verification-failed: source does not name the payer (" + did + "<from>)."
		}
	}
	return auth, &cred, ""
}

// verifyMPP checks a Payment credential, claims its authorization in the
// replay record and has the facilitator verify it.
func (pm *payments) verifyMPP(ctx context.Context, r *http.Request, p Policy, amount int64, now time.Time, raw string) verification {
	expect := mppExpect{realm: pm.realm(r), request: pm.mppRequest(p, amount), amount: amount}
	auth, cred, refusal := pm.checkMPPCredential(raw, expect, now)
	if refusal != "" {
		v := verification{refusal: refusal}
		if auth != nil {
			v.payer = auth.From.Hex()
		}
		return v
	}
	v := verification{payer: auth.From.Hex()}
	if v.wait = pm.payerFailures.Blocked(v.payer, now); v.wait > 0 {
		return v
	}
	key, used, err := pm.claim(ctx, protocolMPP, auth, now)
	if err != nil || used != "" {
		v.refusal, v.err = "invalid-challenge: "+used+".", err
		return v
	}
	// As mppx's server does: the authorization as an x402 v2 exact payment.
	requirements := map[string]any{
		"scheme": "exact", "network": pm.network.caip2(), "amount": strconv.FormatInt(amount, 10),
		"asset": pm.cfg.Asset, "payTo": pm.cfg.PayTo, "maxTimeoutSeconds": pm.cfg.MaxTimeoutSeconds,
		"extra": map[string]any{"assetTransferMethod": "eip3009", "name": pm.cfg.AssetName, "version": pm.cfg.AssetVersion},
	}
	request := map[string]any{
		"x402Version": 2,
		"paymentPayload": map[string]any{
			"x402Version": 2, "accepted": requirements,
			"payload": map[string]any{"authorization": cred.Payload.Authorization, "signature": cred.Payload.Signature},
		},
		"paymentRequirements": requirements,
	}
	facilitator := pm.mppFacilitator()
	invalid, unavailable := pm.facilitatorVerify(ctx, facilitator, request)
	if invalid != "" || unavailable != "" {
		pm.release(ctx, &verifiedPayment{claimKey: key})
		if invalid != "" {
			v.refusal = "verification-failed: the facilitator refused the authorization: " + invalid
		}
		v.unavailable = unavailable
		return v
	}
	challengeID, chainID := cred.Challenge.ID, pm.network.chainID
	v.pay = &verifiedPayment{
		protocol: protocolMPP, claimKey: key, facilitator: facilitator, request: request,
		receipt: func(h http.Header, s settleResponse) {
			receipt, _ := json.Marshal(map[string]any{
				"method": mppMethod, "status": "success", "reference": s.Transaction,
				"timestamp": now.UTC().Format(time.RFC3339), "challengeId": challengeID, "chainId": chainID,
			})
			h.Set("Payment-Receipt", base64.RawURLEncoding.EncodeToString(receipt))
		},
	}
	return v
}
