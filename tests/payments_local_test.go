package tests

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// mcpPost sends one JSON-RPC message to /mcp with header and returns the
// response; without Authorization to /mcp/x402, the door of keyless
// agents paying per call.
func (s *accessServer) mcpPost(t *testing.T, body string, header http.Header) accessResponse {
	t.Helper()
	h := http.Header{"Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-06-18"}}
	for k, v := range header {
		h[k] = v
	}
	path := "/mcp"
	if h.Get("Authorization") == "" {
		path = "/mcp/x402"
	}
	return s.request(t, http.MethodPost, path, body, h)
}

// forgedMCPPayment is an x402 v1 PaymentPayload a forger attaches to a
// tools/call: the right amount to the right recipient, from a random
// address, signed 0x1111….
func forgedMCPPayment(amount string) string {
	from, nonce := make([]byte, 20), make([]byte, 32)
	rand.Read(from)  //nolint:errcheck
	rand.Read(nonce) //nolint:errcheck
	b, _ := json.Marshal(map[string]any{"x402Version": 1, "scheme": "exact", "network": "base",
		"payload": map[string]any{"signature": "0x" + strings.Repeat("11", 65), "authorization": map[string]string{
			"from": "0x" + hex.EncodeToString(from), "to": "0x3333333333333333333333333333333333333333", "value": amount,
			"validAfter": "0", "validBefore": "9999999999", "nonce": "0x" + hex.EncodeToString(nonce)}}})
	return string(b)
}

// TestForgedPaymentsCostNoFacilitatorCall: 3,000 anonymous MCP tool calls
// carrying forged x402 payments (random `from`, signature 0x11…) cause no
// facilitator call: the service refuses each itself (x402's reason), then,
// past the bound of refused payments per minute, refuses the address's
// payments unchecked (429). (They once caused 3,000 /verify calls and
// 3,000 claim/release pairs in 6.7 s.)
func TestForgedPaymentsCostNoFacilitatorCall(t *testing.T) {
	t.Parallel()
	fac := accesstest.NewFacilitator(t)
	s := startAccessServer(t, dbtest.NewURL(t), fac)
	amount := fmt.Sprint(quotedPrice(t, s, "GET", "/v1/search?query=bitcoin&limit=10", ""))
	refused, throttled := 0, 0
	for i := range 3000 {
		call := `{"jsonrpc":"2.0","id":` + fmt.Sprint(i) + `,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"bitcoin","limit":10},"_meta":{"x402/payment":` + forgedMCPPayment(amount) + `}}}`
		r := s.mcpPost(t, call, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		switch body := string(r.body); {
		case strings.Contains(body, "invalid_exact_evm_signature"):
			refused++
		case strings.Contains(body, "Too many refused payments from your address or payer"):
			throttled++
		default:
			t.Fatalf("call %d: %s", i, body)
		}
	}
	require.Empty(t, fac.Verifies(), "no forged payment reaches the facilitator")
	require.Equal(t, access.DefaultMaxFailedPayments, refused)
	require.Equal(t, 3000-access.DefaultMaxFailedPayments, throttled)
	summary(t, "forged payments: 3,000 MCP calls with forged x402 payments, 0 facilitator calls (%d refused by the service's own checks, %d throttled)", refused, throttled)
}

// TestPaymentOnARefusedCallIsNotVerified: a valid payment sent with a /v1
// call whose parameters do not parse is answered 400 without a facilitator
// call, again and again, and is never settled; it still pays, once, for
// the corrected call. (Replayed on a call answering 400, one payment once
// caused about 1,000 /verify calls.)
func TestPaymentOnARefusedCallIsNotVerified(t *testing.T) {
	t.Parallel()
	fac := accesstest.NewFacilitator(t)
	s := startAccessServer(t, dbtest.NewURL(t), fac)
	challenge := s.request(t, "GET", "/v1/latest", "", nil)
	require.Equal(t, http.StatusPaymentRequired, challenge.status)
	payment := http.Header{"X-Payment": {accesstest.X402Payment(t, challenge.body, accesstest.GoodSignature)}}
	for range 100 {
		r := s.request(t, "GET", "/v1/latest?limit=ten", "", payment)
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		require.Contains(t, string(r.body), "limit must be an integer")
		require.Empty(t, r.header.Get("X-PAYMENT-RESPONSE"))
	}
	require.Empty(t, fac.Verifies(), "a refused call's payment is never verified")
	require.Empty(t, fac.Settles())
	r := s.request(t, "GET", "/v1/latest", "", payment)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = s.request(t, "GET", "/v1/latest", "", payment)
	require.Equal(t, http.StatusPaymentRequired, r.status, "%s", r.body)
	require.Len(t, fac.Settles(), 1)
}

// TestBearerMissingIsNeverAskedToPay: with pay-per-request on, a key sent
// without "Bearer " is answered 401 with the documented message on every
// surface — a priced /v1 route, /graphql, the MCP endpoint and its tools —
// never a 402 offer an auto-paying client holding a key would pay.
func TestBearerMissingIsNeverAskedToPay(t *testing.T) {
	t.Parallel()
	fac := accesstest.NewFacilitator(t)
	s := startAccessServer(t, dbtest.NewURL(t), fac)
	key, _ := accesstest.NewKey(t, s.app.DB, "free")
	for _, auth := range []string{key, "Token " + key, "Basic dXNlcjpwdw=="} {
		header := http.Header{"Authorization": {auth}}
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/v1/latest", ""},
			{"GET", "/v1/search?query=bitcoin", ""},
			{"POST", "/graphql", `{"query":"{ __typename }"}`},
			{"POST", "/graphql", `{"query":"{ entity(id: 101) { canonicalName } }"}`},
		} {
			r := s.request(t, c.method, c.path, c.body, header)
			require.Equal(t, http.StatusUnauthorized, r.status, "%s %s with %q: %s", c.method, c.path, auth, r.body)
			require.JSONEq(t, `{"error":"`+access.MsgBearerMissing+`"}`, errorOnly(t, r.body))
			require.Empty(t, r.header.Get("PAYMENT-REQUIRED"))
		}
		for _, call := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"bitcoin"}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		} {
			r := s.mcpPost(t, call, header)
			require.Equal(t, http.StatusUnauthorized, r.status, "/mcp with %q: %s", auth, r.body)
			require.Contains(t, string(r.body), access.MsgBearerMissing)
			require.NotContains(t, string(r.body), "x402")
		}
	}
	require.Empty(t, fac.Verifies())
}
