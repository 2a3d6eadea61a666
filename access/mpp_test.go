package access

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access/eip3009"
)

// mppVectors are challenges issued by mppx's own Challenge.from and the
// credentials mppx's own EVM client signed for them (testdata/
// mpp_vectors.json, written by tests/interop/payments/mpp-vectors.mjs; see
// that script for how to regenerate them).
type mppVectors struct {
	Secret string `json:"secret"`
	Cases  []struct {
		Name            string `json:"name"`
		ChainID         int64  `json:"chainId"`
		Asset           string `json:"asset"`
		TokenName       string `json:"tokenName"`
		TokenVersion    string `json:"tokenVersion"`
		PayTo           string `json:"payTo"`
		Amount          string `json:"amount"`
		Description     string `json:"description"`
		Realm           string `json:"realm"`
		Expires         string `json:"expires"`
		Now             string `json:"now"`
		WWWAuthenticate string `json:"wwwAuthenticate"`
		Authorization   string `json:"authorization"`
		Payer           string `json:"payer"`
		Nonce           string `json:"nonce"`
		Digest          string `json:"digest"`
	} `json:"cases"`
}

// payerKey signs the altered credentials below: the vectors' payer, the
// well-known development key of hardhat's first account.
const payerKey = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

func loadMPPVectors(t *testing.T) mppVectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/mpp_vectors.json")
	require.NoError(t, err)
	var v mppVectors
	require.NoError(t, json.Unmarshal(raw, &v))
	require.NotEmpty(t, v.Cases)
	return v
}

func vectorParams(t *testing.T, header string) map[string]string {
	t.Helper()
	params := map[string]string{}
	rest, ok := strings.CutPrefix(header, "Payment ")
	require.True(t, ok)
	for _, part := range strings.Split(rest, `", `) {
		k, v, ok := strings.Cut(part, `="`)
		require.True(t, ok, part)
		params[k] = strings.TrimSuffix(v, `"`)
	}
	return params
}

// credential is a decoded credential that a test alters and re-encodes.
type credential struct {
	Challenge map[string]string `json:"challenge"`
	Source    string            `json:"source,omitempty"`
	Payload   map[string]string `json:"payload"`
}

func decodeCredential(t *testing.T, header string) credential {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(header, "Payment "))
	require.NoError(t, err)
	var c credential
	require.NoError(t, json.Unmarshal(raw, &c))
	return c
}

func (c credential) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// resign signs c's payload again (after a test altered it) under d with
// the payer's key, as a client holding the key could.
func (c credential) resign(t *testing.T, d eip3009.Domain, key string) credential {
	t.Helper()
	a := eip3009.Authorization{From: c.Payload["from"], To: c.Payload["to"], Value: c.Payload["value"],
		ValidAfter: c.Payload["validAfter"], ValidBefore: c.Payload["validBefore"], Nonce: c.Payload["nonce"]}
	p, err := a.Parse()
	require.NoError(t, err)
	k, err := eip3009.Key(key)
	require.NoError(t, err)
	sig, err := p.Sign(d, k)
	require.NoError(t, err)
	c.Payload["signature"] = sig
	return c
}

// TestMPPVerifiesMppxCredentials: the service issues, byte for byte, the
// challenge mppx's server issues for the same parameters (the request's
// canonical JSON and the HMAC-bound id), and accepts the credentials mppx's
// client signs for it; every alteration of a credential is refused with its
// problem type.
func TestMPPVerifiesMppxCredentials(t *testing.T) {
	t.Parallel()
	vectors := loadMPPVectors(t)
	for _, v := range vectors.Cases {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			s := &Service{logger: slog.New(slog.DiscardHandler)}
			pm := newPayments(s, PaymentConfig{
				FacilitatorURL: "http://facilitator.invalid", PayTo: v.PayTo, Network: "eip155:" + strconv.FormatInt(v.ChainID, 10),
				Asset: v.Asset, MPPSecret: vectors.Secret, MPPRealm: v.Realm,
			})
			require.True(t, pm.mppOn())
			require.Equal(t, v.TokenName, pm.domain.Name, "the token's EIP-712 name is known for this asset")
			p := Policy{Name: strings.TrimSuffix(strings.TrimPrefix(v.Description, "cryptointel "), " (one request)")}
			amount, err := strconv.ParseInt(v.Amount, 10, 64)
			require.NoError(t, err)

			// The same challenge as mppx's.
			params := vectorParams(t, v.WWWAuthenticate)
			require.Equal(t, params["request"], pm.mppRequest(p, amount), "canonical request JSON")
			expires, err := time.Parse(time.RFC3339, v.Expires)
			require.NoError(t, err)
			ours := pm.mppChallenge(nil, p, amount, expires.Add(-time.Duration(pm.cfg.MaxTimeoutSeconds)*time.Second))
			require.Equal(t, params["id"], ours.ID, "HMAC-bound challenge id")
			require.Equal(t, v.WWWAuthenticate, ours.header())

			now, err := time.Parse(time.RFC3339, v.Now)
			require.NoError(t, err)
			expect := mppExpect{realm: v.Realm, request: params["request"], amount: amount}
			raw := strings.TrimPrefix(v.Authorization, "Payment ")
			auth, cred, refusal := pm.checkMPPCredential(raw, expect, now)
			require.Empty(t, refusal)
			require.Equal(t, v.Payer, auth.From.Hex())
			require.Equal(t, v.Nonce, "0x"+common.Bytes2Hex(auth.Nonce[:]))
			require.Equal(t, v.Digest, auth.Digest(pm.domain).Hex())
			require.Equal(t, params["id"], cred.Challenge.ID)

			domain := pm.domain
			wrongName := domain
			wrongName.Name = map[bool]string{true: "USD Coin", false: "USDC"}[domain.Name == "USDC"]
			otherKey := "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
			vBefore, _ := new(big.Int).SetString(decodeCredential(t, v.Authorization).Payload["validBefore"], 10)
			for _, c := range []struct {
				name  string
				alter func(c credential) credential
				now   time.Time
				other *payments
				want  string
			}{
				{name: "another secret", other: newPayments(s, PaymentConfig{FacilitatorURL: "http://f.invalid", PayTo: v.PayTo,
					Network: "eip155:" + strconv.FormatInt(v.ChainID, 10), Asset: v.Asset, MPPSecret: "other", MPPRealm: v.Realm}),
					want: "invalid-challenge: unknown challenge id"},
				{name: "challenge expired", now: expires, want: "payment-expired: the challenge has expired"},
				{name: "request altered", alter: func(c credential) credential {
					c.Challenge["request"] = pm.mppRequest(p, amount-1)
					return c
				}, want: "invalid-challenge: unknown challenge id"},
				{name: "realm altered", alter: func(c credential) credential { c.Challenge["realm"] = "evil.example"; return c },
					want: "invalid-challenge: unknown challenge id"},
				{name: "payload type", alter: func(c credential) credential { c.Payload["type"] = "transaction"; return c },
					want: "malformed-credential: payload.type"},
				{name: "other recipient", alter: func(c credential) credential {
					c.Payload["to"] = "0x1111111111111111111111111111111111111111"
					return c.resign(t, domain, payerKey)
				}, want: "verification-failed: the authorization pays another recipient"},
				{name: "underpaid", alter: func(c credential) credential {
					c.Payload["value"] = strconv.FormatInt(amount-1, 10)
					return c.resign(t, domain, payerKey)
				}, want: "verification-failed: the authorization is for"},
				{name: "nonce not bound to the challenge", alter: func(c credential) credential {
					c.Payload["nonce"] = "0x" + strings.Repeat("ab", 32)
					return c.resign(t, domain, payerKey)
				}, want: "verification-failed: the authorization's nonce is not bound"},
				{name: "not valid yet", alter: func(c credential) credential {
					c.Payload["validAfter"] = strconv.FormatInt(now.Unix()+60, 10)
					return c.resign(t, domain, payerKey)
				}, want: "verification-failed: the authorization is not valid yet"},
				{name: "authorization expired", alter: func(c credential) credential {
					c.Payload["validBefore"] = strconv.FormatInt(now.Unix(), 10)
					return c.resign(t, domain, payerKey)
				}, want: "payment-expired: the authorization has expired"},
				{name: "signed by another key", alter: func(c credential) credential { return c.resign(t, domain, otherKey) },
					want: "verification-failed: the signature"},
				{name: "signed under the wrong token name", alter: func(c credential) credential { return c.resign(t, wrongName, payerKey) },
					want: "verification-failed: the signature"},
				{name: "signature altered", alter: func(c credential) credential {
					sig := []byte(c.Payload["signature"])
					sig[10] = map[bool]byte{true: 'b', false: 'a'}[sig[10] == 'a']
					c.Payload["signature"] = string(sig)
					return c
				}, want: "verification-failed: the signature"},
				{name: "high-s twin of the signature", alter: func(c credential) credential {
					sig := common.FromHex(c.Payload["signature"])
					s := new(big.Int).SetBytes(sig[32:64])
					s.Sub(crypto.S256().Params().N, s)
					copy(sig[32:64], common.LeftPadBytes(s.Bytes(), 32))
					sig[64] ^= 1 // 27 <-> 28
					c.Payload["signature"] = "0x" + common.Bytes2Hex(sig)
					return c
				}, want: "verification-failed: the signature"},
				{name: "source names another payer", alter: func(c credential) credential {
					c.Source = "did:pkh:eip155:" + strconv.FormatInt(v.ChainID, 10) + ":0x1111111111111111111111111111111111111111"
					return c
				}, want: "verification-failed: source does not name the payer"},
				{name: "source on another chain", alter: func(c credential) credential {
					c.Source = strings.Replace(c.Source, strconv.FormatInt(v.ChainID, 10), "1", 1)
					return c
				}, want: "verification-failed: source does not name the payer"},
				{name: "source absent is fine", alter: func(c credential) credential { c.Source = ""; return c }},
				{name: "lower-case addresses are fine", alter: func(c credential) credential {
					c.Payload["from"] = strings.ToLower(c.Payload["from"])
					c.Payload["to"] = strings.ToLower(c.Payload["to"])
					return c
				}},
				{name: "last second of the window", now: time.Unix(vBefore.Int64()-1, 0).Add(-time.Second)},
			} {
				check := pm
				if c.other != nil {
					check = c.other
				}
				at := now
				if !c.now.IsZero() {
					at = c.now
				}
				cred := decodeCredential(t, v.Authorization)
				if c.alter != nil {
					cred = c.alter(cred)
				}
				_, _, refusal := check.checkMPPCredential(cred.encode(), expect, at)
				if c.want == "" {
					require.Empty(t, refusal, c.name)
				} else {
					require.True(t, strings.HasPrefix(refusal, c.want), "%s: %q", c.name, refusal)
				}
			}
		})
	}
}

// TestMPPMalformedCredentials: what is not a credential is refused as
// malformed, never a panic.
func TestMPPMalformedCredentials(t *testing.T) {
	t.Parallel()
	s := &Service{logger: slog.New(slog.DiscardHandler)}
	pm := newPayments(s, PaymentConfig{FacilitatorURL: "http://f.invalid", PayTo: "0x2222222222222222222222222222222222222222", MPPSecret: "x"})
	for _, raw := range []string{"", "%%%", "bnVsbA", base64.RawURLEncoding.EncodeToString([]byte(`{"challenge":{"id":"x"}}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"challenge":{},"payload":{}}`)), base64.RawURLEncoding.EncodeToString([]byte(`[1,2]`))} {
		_, _, refusal := pm.checkMPPCredential(raw, mppExpect{realm: "r", request: "q", amount: 1}, time.Now())
		require.True(t, strings.HasPrefix(refusal, "malformed-credential") || strings.HasPrefix(refusal, "invalid-challenge"), "%q: %q", raw, refusal)
	}
}

// TestFacilitatorReason: a facilitator's reason reaches the client as one
// short line (x402 v1's facilitator passes a whole chain error on).
func TestFacilitatorReason(t *testing.T) {
	t.Parallel()
	require.Equal(t, "invalid_exact_evm_signature", facilitatorReason("invalid_exact_evm_signature", "x"))
	require.Equal(t, "x", facilitatorReason(" ", "x"))
	require.Equal(t, "Missing or invalid parameters.", facilitatorReason("Missing or invalid parameters.\nDouble check…\n\nEstimate Gas Arguments:", "x"))
	long := facilitatorReason(strings.Repeat("é", 300), "x")
	require.LessOrEqual(t, len(long), 204)
	require.True(t, strings.HasSuffix(long, "…"))
	require.True(t, utf8.ValidString(long))
}
