package cryptointel

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Payer turns a 402 into a paid retry: given the x402 v2 offer of the
// PAYMENT-REQUIRED header, it returns the PAYMENT-SIGNATURE header to send
// the request again with (WithPayer).
type Payer interface {
	Pay(ctx context.Context, offer *PaymentOffer) (header string, err error)
}

// PaymentOffer is the x402 v2 PAYMENT-REQUIRED header, decoded.
type PaymentOffer struct {
	X402Version int                   `json:"x402Version"`
	Error       string                `json:"error,omitempty"`
	Resource    map[string]any        `json:"resource,omitempty"`
	Accepts     []PaymentRequirements `json:"accepts"`
}

// PaymentRequirements is one way to pay an x402 v2 offer.
type PaymentRequirements struct {
	Scheme            string         `json:"scheme"`
	Network           string         `json:"network"`
	Amount            string         `json:"amount"`
	Asset             string         `json:"asset"`
	PayTo             string         `json:"payTo"`
	MaxTimeoutSeconds int            `json:"maxTimeoutSeconds"`
	Extra             map[string]any `json:"extra,omitempty"`
}

// ParsePaymentRequired decodes a PAYMENT-REQUIRED header (base64 JSON).
func ParsePaymentRequired(header string) (*PaymentOffer, error) {
	if header == "" {
		return nil, errors.New("the 402 has no PAYMENT-REQUIRED header (x402 v2)")
	}
	raw, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		return nil, fmt.Errorf("PAYMENT-REQUIRED is not base64: %w", err)
	}
	var pr PaymentOffer
	if err := json.Unmarshal(raw, &pr); err != nil {
		return nil, fmt.Errorf("PAYMENT-REQUIRED is not JSON: %w", err)
	}
	if pr.X402Version != 2 || len(pr.Accepts) == 0 {
		return nil, errors.New("PAYMENT-REQUIRED is not an x402 v2 offer")
	}
	return &pr, nil
}

// TypedDataDomain is the EIP-712 domain a payment is signed under: the
// token's name and version (the offer's extra), the chain and the token.
type TypedDataDomain struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	ChainID           int64  `json:"chainId"`
	VerifyingContract string `json:"verifyingContract"`
}

// Authorization is an EIP-3009 transferWithAuthorization message, its
// numbers in decimal strings and nonce in 0x hex, as x402 sends it.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// SignFunc signs an EIP-3009 TransferWithAuthorization under domain (the
// EIP-712 typed data) and returns the 65-byte signature in 0x hex: a wallet,
// a KMS or any secp256k1 signer plugs in here.
type SignFunc func(ctx context.Context, domain TypedDataDomain, auth Authorization) (string, error)

// X402Payer pays with the x402 "exact" scheme on an EVM network: an
// EIP-3009 authorization from From, signed by Sign.
type X402Payer struct {
	From string
	Sign SignFunc
	// MaxAmount refuses an offer above it (in the asset's smallest unit);
	// nil takes any price.
	MaxAmount *big.Int
	// Now defaults to time.Now.
	Now func() time.Time
}

// Pay signs the first exact-scheme EVM requirement of offer.
func (p *X402Payer) Pay(ctx context.Context, offer *PaymentOffer) (string, error) {
	var req *PaymentRequirements
	for i := range offer.Accepts {
		if offer.Accepts[i].Scheme == "exact" && strings.HasPrefix(offer.Accepts[i].Network, "eip155:") {
			req = &offer.Accepts[i]
			break
		}
	}
	if req == nil {
		return "", errors.New("no exact EVM requirement in the offer")
	}
	amount, ok := new(big.Int).SetString(req.Amount, 10)
	if !ok {
		return "", fmt.Errorf("invalid amount %q", req.Amount)
	}
	if p.MaxAmount != nil && amount.Cmp(p.MaxAmount) > 0 {
		return "", fmt.Errorf("the price %s is above the payer's maximum %s", amount, p.MaxAmount)
	}
	chain, err := strconv.ParseInt(strings.TrimPrefix(req.Network, "eip155:"), 10, 64)
	if err != nil {
		return "", fmt.Errorf("invalid network %q", req.Network)
	}
	name, _ := req.Extra["name"].(string)
	version, _ := req.Extra["version"].(string)
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	timeout := req.MaxTimeoutSeconds
	if timeout <= 0 {
		timeout = 60
	}
	var nonce [32]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", err
	}
	t := now().Unix()
	auth := Authorization{
		From: p.From, To: req.PayTo, Value: amount.String(),
		ValidAfter: strconv.FormatInt(t-600, 10), ValidBefore: strconv.FormatInt(t+int64(timeout), 10),
		Nonce: "0x" + hex.EncodeToString(nonce[:]),
	}
	sig, err := p.Sign(ctx, TypedDataDomain{Name: name, Version: version, ChainID: chain, VerifyingContract: req.Asset}, auth)
	if err != nil {
		return "", fmt.Errorf("signing the authorization: %w", err)
	}
	payload := map[string]any{
		"x402Version": 2, "resource": offer.Resource, "accepted": req,
		"payload": map[string]any{"signature": sig, "authorization": auth},
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
