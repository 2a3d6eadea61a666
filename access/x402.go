package access

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

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

// verifyX402 checks an x402 payment against the requirements at amount,
// claims it in the replay record and has the facilitator verify it.
func (pm *payments) verifyX402(ctx context.Context, r *http.Request, p Policy, amount int64, now time.Time) (pay *verifiedPayment, refusal, unavailable string, err error) {
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
		return nil, "Invalid payment header: expected base64-encoded JSON payment payload.", "", nil
	}
	var requirements any
	switch {
	case payload.X402Version == 1:
		req := pm.requirementsV1(r, p, amount)
		if payload.Scheme != req.Scheme || payload.Network != req.Network {
			return nil, "Unsupported payment scheme or network: this service takes exact payments on " + req.Network + ".", "", nil
		}
		requirements = req
	case payload.X402Version == 2 && payload.Accepted != nil:
		req := pm.requirementsV2(r, p, amount)
		a := payload.Accepted
		if a.Scheme != req.Scheme || a.Network != req.Network || a.Amount != req.Amount ||
			!strings.EqualFold(a.PayTo, req.PayTo) || !strings.EqualFold(a.Asset, req.Asset) {
			return nil, "Payment does not match the payment requirements: it accepts " + a.Amount + " on " + a.Network +
				", this request costs " + req.Amount + " on " + req.Network + ".", "", nil
		}
		requirements = req
	default:
		return nil, "Unsupported x402Version: this service speaks x402 versions 1 and 2.", "", nil
	}
	var exact exactEVMPayload
	if err := json.Unmarshal(payload.Payload, &exact); err != nil || exact.Authorization == nil {
		return nil, "Unsupported payment payload: expected an exact-scheme EIP-3009 authorization and its signature.", "", nil
	}
	auth, err := exact.Authorization.Parse()
	if err != nil {
		return nil, "Invalid payment payload: " + err.Error() + ".", "", nil
	}
	key, used, err := pm.claim(ctx, protocolX402, auth, now)
	if err != nil || used != "" {
		return nil, "Payment refused: " + used + ".", "", err
	}
	request := map[string]any{"x402Version": payload.X402Version, "paymentPayload": json.RawMessage(b), "paymentRequirements": requirements}
	invalid, unavailable := pm.facilitatorVerify(ctx, pm.cfg.FacilitatorURL, request)
	if invalid != "" || unavailable != "" {
		pm.release(ctx, &verifiedPayment{claimKey: key})
		if invalid != "" {
			return nil, "Payment verification failed: " + invalid, "", nil
		}
		return nil, "", unavailable, nil
	}
	return &verifiedPayment{
		protocol: protocolX402, claimKey: key, facilitator: pm.cfg.FacilitatorURL, request: request,
		receipt: setX402Receipt,
	}, "", "", nil
}

// setX402Receipt sets the settlement receipt headers of x402 v1
// (X-PAYMENT-RESPONSE) and v2 (PAYMENT-RESPONSE).
func setX402Receipt(h http.Header, s settleResponse) {
	receipt, _ := json.Marshal(s)
	enc := base64.StdEncoding.EncodeToString(receipt)
	h.Set("X-PAYMENT-RESPONSE", enc)
	h.Set("PAYMENT-RESPONSE", enc)
}
