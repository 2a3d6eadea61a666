package access

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/cryptointel/cryptointel/access/eip3009"
)

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

// x402PaymentRequired is the x402 v2 PAYMENT-REQUIRED header's JSON.
type x402PaymentRequired struct {
	X402Version int                  `json:"x402Version"`
	Error       string               `json:"error"`
	Resource    x402Resource         `json:"resource"`
	Accepts     []x402RequirementsV2 `json:"accepts"`
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

// exactEVMPayload is the exact scheme's EVM payload with an EIP-3009
// authorization (the scheme's other form, Permit2, is not offered).
type exactEVMPayload struct {
	Signature     string                 `json:"signature"`
	Authorization *eip3009.Authorization `json:"authorization"`
}

// extra is the requirements' `extra`: the token's EIP-712 domain, which
// the client signs under.
func (pm *payments) extra() map[string]any {
	return map[string]any{"name": pm.cfg.AssetName, "version": pm.cfg.AssetVersion}
}

func (pm *payments) requirementsV1(r *http.Request, p Policy, amount int64) x402RequirementsV1 {
	return x402RequirementsV1{
		Scheme: "exact", Network: pm.network.v1,
		MaxAmountRequired: strconv.FormatInt(amount, 10),
		Resource:          pm.resourceURL(r), Description: pm.description(p), MimeType: "application/json",
		PayTo: pm.cfg.PayTo, MaxTimeoutSeconds: pm.cfg.MaxTimeoutSeconds, Asset: pm.cfg.Asset, Extra: pm.extra(),
	}
}

func (pm *payments) requirementsV2(r *http.Request, p Policy, amount int64) x402RequirementsV2 {
	return x402RequirementsV2{
		Scheme: "exact", Network: pm.network.caip2(), Amount: strconv.FormatInt(amount, 10),
		Asset: pm.cfg.Asset, PayTo: pm.cfg.PayTo, MaxTimeoutSeconds: pm.cfg.MaxTimeoutSeconds, Extra: pm.extra(),
	}
}

// verifyX402 checks an x402 payment against the requirements at amount —
// in Go first (checkX402: recipient, asset, amount, validity window and
// the EIP-712 signature), so that a forged or mismatched payment costs
// neither a replay-record statement nor a facilitator call — then claims
// it in the replay record and has the facilitator verify it.
func (pm *payments) verifyX402(ctx context.Context, r *http.Request, p Policy, amount int64, now time.Time) verification {
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
		return verification{refusal: "Invalid payment header: expected base64-encoded JSON payment payload."}
	}
	var requirements any
	valueCode := "invalid_exact_evm_authorization_value"
	switch {
	case payload.X402Version == 1:
		req := pm.requirementsV1(r, p, amount)
		if payload.Scheme != req.Scheme || payload.Network != req.Network {
			return verification{refusal: "Unsupported payment scheme or network: this service takes exact payments on " + req.Network + "."}
		}
		requirements = req
	case payload.X402Version == 2 && payload.Accepted != nil:
		req := pm.requirementsV2(r, p, amount)
		a := payload.Accepted
		if a.Scheme != req.Scheme || a.Network != req.Network || a.Amount != req.Amount ||
			!strings.EqualFold(a.PayTo, req.PayTo) || !strings.EqualFold(a.Asset, req.Asset) {
			return verification{refusal: "Payment does not match the payment requirements: it accepts " + Clip(a.Amount) + " on " + Clip(a.Network) +
				", this request costs " + req.Amount + " on " + req.Network + "."}
		}
		requirements = req
		valueCode = "invalid_exact_evm_payload_authorization_value_mismatch"
	default:
		return verification{refusal: "Unsupported x402Version: this service speaks x402 versions 1 and 2."}
	}
	var exact exactEVMPayload
	if err := json.Unmarshal(payload.Payload, &exact); err != nil || exact.Authorization == nil {
		return verification{refusal: "Unsupported payment payload: expected an exact-scheme EIP-3009 authorization and its signature."}
	}
	auth, err := exact.Authorization.Parse()
	if err != nil {
		return verification{refusal: "Invalid payment payload: " + err.Error() + "."}
	}
	v := verification{payer: auth.From.Hex()}
	if v.wait = pm.payerFailures.Blocked(v.payer, now); v.wait > 0 {
		return v
	}
	if v.refusal = pm.checkX402(auth, exact.Signature, amount, valueCode, now); v.refusal != "" {
		return v
	}
	key, used, err := pm.claim(ctx, protocolX402, auth, now)
	if err != nil || used != "" {
		v.refusal, v.err = "Payment refused: "+used+".", err
		return v
	}
	request := map[string]any{"x402Version": payload.X402Version, "paymentPayload": json.RawMessage(b), "paymentRequirements": requirements}
	invalid, unavailable := pm.facilitatorVerify(ctx, pm.cfg.FacilitatorURL, request)
	if invalid != "" || unavailable != "" {
		pm.release(ctx, &verifiedPayment{claimKey: key})
		if invalid != "" {
			v.refusal = "Payment verification failed: " + invalid
		}
		v.unavailable = unavailable
		return v
	}
	v.pay = &verifiedPayment{
		protocol: protocolX402, claimKey: key, facilitator: pm.cfg.FacilitatorURL, request: request,
		receipt: setX402Receipt,
	}
	return v
}

// checkX402 verifies an exact-scheme EIP-3009 authorization as x402's
// facilitator would, without the chain: it pays PayTo exactly amount, its
// window holds now (validBefore at least 6 seconds ahead, as x402 asks),
// and its 65-byte signature recovers to `from` under the token's EIP-712
// domain (which binds the chain and the token contract). It returns ""
// or the refusal, led by x402's reason code. Smart-contract wallet
// signatures (EIP-1271, ERC-6492), which only the chain can check, are
// refused.
func (pm *payments) checkX402(auth *eip3009.Parsed, signature string, amount int64, valueCode string, now time.Time) string {
	const failed = "Payment verification failed: "
	if auth.To != common.HexToAddress(pm.cfg.PayTo) {
		return failed + "invalid_exact_evm_recipient_mismatch: the authorization pays another recipient."
	}
	unix := now.Unix()
	if auth.ValidBefore.Cmp(big.NewInt(unix+6)) < 0 {
		return failed + "invalid_exact_evm_payload_authorization_valid_before: the authorization has expired."
	}
	if auth.ValidAfter.Cmp(big.NewInt(unix)) > 0 {
		return failed + "invalid_exact_evm_payload_authorization_valid_after: the authorization is not valid yet."
	}
	if auth.Value.Cmp(big.NewInt(amount)) != 0 {
		return failed + valueCode + ": the authorization is for " + Clip(auth.Value.String()) + ", the request costs " + strconv.FormatInt(amount, 10) + "."
	}
	signer, err := auth.Recover(pm.domain, signature)
	if err != nil || signer != auth.From {
		return failed + "invalid_exact_evm_signature: the signature is not a 65-byte signature by `from` under the token's EIP-712 domain."
	}
	return ""
}

// setX402Receipt sets the settlement receipt headers of x402 v1
// (X-PAYMENT-RESPONSE) and v2 (PAYMENT-RESPONSE).
func setX402Receipt(h http.Header, s settleResponse) {
	receipt, _ := json.Marshal(s)
	enc := base64.StdEncoding.EncodeToString(receipt)
	h.Set("X-PAYMENT-RESPONSE", enc)
	h.Set("PAYMENT-RESPONSE", enc)
}
