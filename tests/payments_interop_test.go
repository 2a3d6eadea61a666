package tests

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access/eip3009"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// The payment interop tests pay the service with the protocols' own client
// SDKs from npm — x402-fetch (x402 v1), @x402/fetch with @x402/evm (x402
// v2) and mppx (MPP, method evm, intent charge) — through x402's own
// facilitator code (@x402/core's x402Facilitator with @x402/evm's exact
// scheme) settling on a local EVM chain (ganache, chain id 84532) where an
// EIP-3009 token is deployed. The packages are pinned in
// tests/interop/payments/package-lock.json and installed by `make
// interop-payments`, which `make test` runs first.

// paymentsDir holds the interop's npm package.
var paymentsDir = filepath.Join("interop", "payments")

// paymentsEnv is a running facilitator and chain, and the service taking
// payments through them.
type paymentsEnv struct {
	fac struct {
		URL          string `json:"url"`
		ChainID      int64  `json:"chainId"`
		Token        string `json:"token"`
		TokenName    string `json:"tokenName"`
		TokenVersion string `json:"tokenVersion"`
		Payer        string `json:"payer"`
		PayerKey     string `json:"payerKey"`
		PayTo        string `json:"payTo"`
	}
	base string
	// offset shifts the service's clock (to expire MPP challenges).
	offset atomic.Int64

	// clients is client.mjs, taking one payment per line.
	clients struct {
		mu     sync.Mutex
		in     io.WriteCloser
		out    *bufio.Reader
		stderr *syncBuffer
	}
}

// startNode runs `node script` in paymentsDir; closing the returned
// standard input ends it (it is killed 10 seconds later otherwise).
func startNode(t *testing.T, script string) (io.WriteCloser, *bufio.Reader, *syncBuffer) {
	t.Helper()
	cmd := exec.Command("node", script)
	cmd.Dir = paymentsDir
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill() //nolint:errcheck
			<-done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", script, stderr.String())
		}
	})
	return stdin, bufio.NewReader(stdout), stderr
}

func startPaymentsInterop(t *testing.T) *paymentsEnv {
	t.Helper()
	if _, err := os.Stat(filepath.Join(paymentsDir, "node_modules", "@x402", "core")); err != nil {
		t.Fatalf("%s/node_modules is missing: run `make interop-payments` (make test does) to install the pinned npm packages", paymentsDir)
	}
	e := &paymentsEnv{}

	// The facilitator and its chain: one node process. The clients: another.
	_, facOut, facErr := startNode(t, "facilitator.mjs")
	e.clients.in, e.clients.out, e.clients.stderr = startNode(t, "client.mjs")
	ready := make(chan error, 1)
	go func() {
		line, err := facOut.ReadString('\n')
		if err == nil {
			err = json.Unmarshal([]byte(line), &e.fac)
		}
		ready <- err
		io.Copy(io.Discard, facOut) //nolint:errcheck
	}()
	select {
	case err := <-ready:
		require.NoError(t, err, "facilitator: %s", facErr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("the facilitator did not start in 90s: %s", facErr.String())
	}

	// The service: payments on the local chain's token, whose EIP-712
	// domain is not a known USDC's, so it is configured.
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Config{
		DatabaseURL:         dbtest.NewURL(t),
		DBMaxConns:          8,
		Logger:              testLogger(t),
		ShutdownTimeout:     15 * time.Second,
		X402FacilitatorURL:  e.fac.URL,
		MPPSecret:           "interop-secret",
		PaymentPayTo:        e.fac.PayTo,
		PaymentNetwork:      "base-sepolia",
		PaymentAsset:        e.fac.Token,
		PaymentAssetName:    e.fac.TokenName,
		PaymentAssetVersion: e.fac.TokenVersion,
	})
	require.NoError(t, err)
	a.DB.Now = func() time.Time { return time.Now().Add(time.Duration(e.offset.Load())) }
	ingestLines(t, a.DB, restFixture())
	e.base = serveApp(t, ctx, cancel, a)
	return e
}

// clientResult is what client.mjs reports.
type clientResult struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Error   string            `json:"error"`
	Sent    []struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"sent"`
}

// payment returns the payment header the SDK sent last: its name and value.
func (r clientResult) payment(t *testing.T) (string, string) {
	t.Helper()
	for i := len(r.Sent) - 1; i >= 0; i-- {
		h := r.Sent[i].Headers
		for _, name := range []string{"x-payment", "payment-signature"} {
			if v := h[name]; v != "" {
				return name, v
			}
		}
		if v := h["authorization"]; strings.HasPrefix(v, "Payment ") {
			return "authorization", v
		}
	}
	t.Fatalf("the client sent no payment: %+v", r.Sent)
	return "", ""
}

// pay runs one SDK client against path; opts may add "tamper" or "dryRun".
func (e *paymentsEnv) pay(t *testing.T, client, method, path, body string, opts map[string]any) clientResult {
	t.Helper()
	o := map[string]any{
		"client": client, "url": e.base + path, "method": method, "payerKey": e.fac.PayerKey,
		"chainId": e.fac.ChainID, "token": e.fac.Token, "tokenName": e.fac.TokenName, "tokenVersion": e.fac.TokenVersion,
	}
	if body != "" {
		o["body"] = body
	}
	for k, v := range opts {
		o[k] = v
	}
	arg, _ := json.Marshal(o)
	e.clients.mu.Lock()
	defer e.clients.mu.Unlock()
	_, err := e.clients.in.Write(append(arg, '\n'))
	require.NoError(t, err)
	line, err := e.clients.out.ReadString('\n')
	require.NoError(t, err, "client.mjs: %s", e.clients.stderr.String())
	var res clientResult
	require.NoError(t, json.Unmarshal([]byte(line), &res), "%s", line)
	require.Empty(t, res.Error, "the %s client failed", client)
	return res
}

// send makes one request with the given headers, as a client replaying or
// altering a credential would.
func (e *paymentsEnv) send(t *testing.T, method, path, body string, header http.Header) accessResponse {
	t.Helper()
	s := &accessServer{base: e.base}
	return s.request(t, method, path, body, header)
}

func (e *paymentsEnv) facGet(t *testing.T, path string, out any) {
	t.Helper()
	resp, err := http.Get(e.fac.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
}

// balance is addr's token balance on the chain.
func (e *paymentsEnv) balance(t *testing.T, addr string) *big.Int {
	t.Helper()
	var b struct {
		Balance string `json:"balance"`
	}
	e.facGet(t, "/test/balance?address="+addr, &b)
	n, ok := new(big.Int).SetString(b.Balance, 10)
	require.True(t, ok, b.Balance)
	return n
}

// settlements counts the facilitator's settlements: succeeded and failed.
func (e *paymentsEnv) settlements(t *testing.T) (int, int) {
	t.Helper()
	var s struct {
		Settled int `json:"settled"`
		Failed  int `json:"failed"`
	}
	e.facGet(t, "/test/settlements", &s)
	return s.Settled, s.Failed
}

// price reads the price of a request from its 402 (x402 v1 body).
func (e *paymentsEnv) price(t *testing.T, method, path, body string) int64 {
	t.Helper()
	return quotedPrice(t, &accessServer{base: e.base}, method, path, body)
}

// requireRefused checks a 402 that carries no data, a fresh offer and, in
// its error, reason.
func requireRefused(t *testing.T, status int, header map[string]string, body, reason string) {
	t.Helper()
	require.Equal(t, http.StatusPaymentRequired, status, "%s", body)
	require.NotContains(t, body, `"data"`)
	require.NotContains(t, body, "canonicalName")
	var b struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &b), body)
	require.Contains(t, b.Error, reason)
	require.NotEmpty(t, header["www-authenticate"]+header["Www-Authenticate"], "a fresh MPP challenge")
}

func lowerHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return out
}

// resignX402 returns an x402 payment header (v1 or v2, base64 JSON) with its
// authorization altered by alter and signed again by the payer, as a client
// holding the key could.
func (e *paymentsEnv) resignX402(t *testing.T, header string, alter func(a *eip3009.Authorization)) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(header)
	require.NoError(t, err)
	var p map[string]any
	require.NoError(t, json.Unmarshal(raw, &p))
	inner := p["payload"].(map[string]any)
	ab, _ := json.Marshal(inner["authorization"])
	var a eip3009.Authorization
	require.NoError(t, json.Unmarshal(ab, &a))
	alter(&a)
	inner["authorization"] = a
	inner["signature"] = e.sign(t, a)
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}

func (e *paymentsEnv) sign(t *testing.T, a eip3009.Authorization) string {
	t.Helper()
	parsed, err := a.Parse()
	require.NoError(t, err)
	key, err := eip3009.Key(e.fac.PayerKey)
	require.NoError(t, err)
	token, err := eip3009.ParseAddress(e.fac.Token)
	require.NoError(t, err)
	sig, err := parsed.Sign(eip3009.Domain{Name: e.fac.TokenName, Version: e.fac.TokenVersion, ChainID: e.fac.ChainID, Contract: token}, key)
	require.NoError(t, err)
	return sig
}

// forge flips one hex digit of the signature in a payment header.
func forge(t *testing.T, name, value string) string {
	t.Helper()
	flip := func(sig string) string {
		b := []byte(sig)
		i := len(b) / 2
		b[i] = map[bool]byte{true: '1', false: '0'}[b[i] == '0']
		return string(b)
	}
	if name == "authorization" {
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(value, "Payment "))
		require.NoError(t, err)
		var c map[string]any
		require.NoError(t, json.Unmarshal(raw, &c))
		pl := c["payload"].(map[string]any)
		pl["signature"] = flip(pl["signature"].(string))
		b, _ := json.Marshal(c)
		return "Payment " + base64.RawURLEncoding.EncodeToString(b)
	}
	raw, err := base64.StdEncoding.DecodeString(value)
	require.NoError(t, err)
	var p map[string]any
	require.NoError(t, json.Unmarshal(raw, &p))
	inner := p["payload"].(map[string]any)
	inner["signature"] = flip(inner["signature"].(string))
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}

// TestPaymentsWithTheProtocolsOwnClients: each protocol's own client pays
// for a /v1 request and a /graphql request, settled on chain by x402's own
// facilitator: the payee's balance rises by exactly the prices of the
// responses served. Forged, replayed, expired and underpaid credentials of
// each protocol, and a payment whose settlement reverts on chain, get a 402
// with the reason and no data, and are never settled twice.
func TestPaymentsWithTheProtocolsOwnClients(t *testing.T) {
	t.Parallel()
	e := startPaymentsInterop(t)
	const route = "/v1/entities/byTopName?name=Ethereum"
	const gqlBody = `{"query":"{ entity(id: 101) { canonicalName relationships(first: 2) { relationshipType relatedEntity { canonicalName } } } }"}`
	routePrice := e.price(t, "GET", route, "")
	gqlPrice := e.price(t, "POST", "/graphql", gqlBody)
	require.EqualValues(t, 5000, routePrice, "byTopName: fixed 0.005 USDC")
	require.Greater(t, gqlPrice, int64(5000), "/graphql is priced by the operation's complexity")

	start := e.balance(t, e.fac.PayTo)
	payerStart := e.balance(t, e.fac.Payer)
	var charged int64 // what the service should have been paid
	var served int    // paid responses served
	requireBalance := func(what string) {
		t.Helper()
		got := new(big.Int).Sub(e.balance(t, e.fac.PayTo), start)
		require.Equal(t, big.NewInt(charged).String(), got.String(), "payee balance after %s", what)
		settled, _ := e.settlements(t)
		require.Equal(t, served, settled, "settlements after %s", what)
	}

	for _, client := range []string{"x402-fetch", "x402-v2", "mppx"} {
		t.Run(client, func(t *testing.T) {
			// A /v1 request, paid.
			res := e.pay(t, client, "GET", route, "", nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Contains(t, res.Body, `"Ethereum"`)
			require.Equal(t, "private", res.Headers["cache-control"])
			switch client {
			case "mppx":
				raw, err := base64.RawURLEncoding.DecodeString(res.Headers["payment-receipt"])
				require.NoError(t, err)
				var receipt map[string]any
				require.NoError(t, json.Unmarshal(raw, &receipt))
				require.Equal(t, "success", receipt["status"])
				require.Equal(t, "evm", receipt["method"])
				require.EqualValues(t, e.fac.ChainID, receipt["chainId"])
				require.NotEmpty(t, receipt["challengeId"])
				require.True(t, strings.HasPrefix(receipt["reference"].(string), "0x"), "the settlement transaction")
			default:
				raw, err := base64.StdEncoding.DecodeString(res.Headers["payment-response"])
				require.NoError(t, err)
				var settle map[string]any
				require.NoError(t, json.Unmarshal(raw, &settle))
				require.Equal(t, true, settle["success"])
				require.True(t, strings.HasPrefix(settle["transaction"].(string), "0x"))
			}
			charged += routePrice
			served++
			requireBalance("a paid /v1 request")
			paidName, paidValue := res.payment(t)
			require.Equal(t, map[string]string{
				"x402-fetch": "x-payment",
				"x402-v2":    "payment-signature", // the v2 client pays the v2 offer
				"mppx":       "authorization",     // mppx pays the MPP challenge
			}[client], paidName)

			// A /graphql request, paid.
			res = e.pay(t, client, "POST", "/graphql", gqlBody, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.JSONEq(t, `{"data":{"entity":{"canonicalName":"Ethereum","relationships":[{"relationshipType":"FOUNDATION_OF","relatedEntity":{"canonicalName":"Ethereum Foundation"}}]}}}`,
				stripExtensions(t, res.Body))
			charged += gqlPrice
			served++
			requireBalance("a paid /graphql request")

			// Replayed: the credential that paid is refused, on /v1 and
			// /graphql alike, by the service's replay record.
			r := e.send(t, "GET", route, "", http.Header{paidName: {paidValue}})
			requireRefused(t, r.status, lowerHeaders(r.header), string(r.body), "already settled")
			r = e.send(t, "POST", "/graphql", gqlBody, http.Header{paidName: {paidValue}})
			require.Equal(t, http.StatusPaymentRequired, r.status, "%s", r.body)
			require.NotContains(t, string(r.body), "canonicalName")
			requireBalance("replays")

			// Forged: a valid credential the SDK signed (held back unsent),
			// its signature altered.
			dry := e.pay(t, client, "GET", route, "", map[string]any{"dryRun": true})
			name, value := dry.payment(t)
			r = e.send(t, "GET", route, "", http.Header{name: {forge(t, name, value)}})
			wantForged := "invalid_exact_evm_signature"
			if client == "mppx" {
				wantForged = "verification-failed: the signature"
			}
			requireRefused(t, r.status, lowerHeaders(r.header), string(r.body), wantForged)
			requireBalance("a forged credential")
			// The genuine credential was not burnt by the forgery.
			r = e.send(t, "GET", route, "", http.Header{name: {value}})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			charged += routePrice
			served++
			requireBalance("the genuine credential")

			// Expired.
			dry = e.pay(t, client, "GET", route, "", map[string]any{"dryRun": true})
			name, value = dry.payment(t)
			if client == "mppx" {
				e.offset.Store(int64(301 * time.Second)) // past the challenge's expiry
				r = e.send(t, "GET", route, "", http.Header{name: {value}})
				e.offset.Store(0)
				requireRefused(t, r.status, lowerHeaders(r.header), string(r.body), "payment-expired")
			} else {
				expired := e.resignX402(t, value, func(a *eip3009.Authorization) {
					a.ValidBefore = strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)
				})
				r = e.send(t, "GET", route, "", http.Header{name: {expired}})
				requireRefused(t, r.status, lowerHeaders(r.header), string(r.body), "invalid_exact_evm_payload_authorization_valid_before")
			}
			requireBalance("an expired credential")

			// Underpaid: the SDK shown half the price signs for half.
			res = e.pay(t, client, "GET", route, "", map[string]any{"tamper": "underpay"})
			want := map[string]string{
				"x402-fetch": "invalid_exact_evm_authorization_value",
				"x402-v2":    "Payment does not match the payment requirements",
				"mppx":       "invalid-challenge",
			}[client]
			requireRefused(t, res.Status, res.Headers, res.Body, want)
			requireBalance("an underpaid credential")

			// A settlement that reverts on chain (the token paused around
			// it): 402, no data, nothing moved; the same credential, not
			// used on chain, then pays once, and only once.
			dry = e.pay(t, client, "GET", route, "", map[string]any{"dryRun": true})
			name, value = dry.payment(t)
			resp, err := http.Post(e.fac.URL+"/test/revert-next-settle", "application/json", nil)
			require.NoError(t, err)
			resp.Body.Close()
			_, failedBefore := e.settlements(t)
			r = e.send(t, "GET", route, "", http.Header{name: {value}})
			// (x402 v1's facilitator passes the chain's error on as its
			// reason, v2's a code.)
			requireRefused(t, r.status, lowerHeaders(r.header), string(r.body), map[bool]string{
				true:  "verification-failed: the payment did not settle: invalid_exact_evm_transaction_failed",
				false: "Payment settlement failed: "}[client == "mppx"])
			_, failed := e.settlements(t)
			require.Equal(t, failedBefore+1, failed, "the settlement was attempted and failed")
			requireBalance("a reverted settlement")
			r = e.send(t, "GET", route, "", http.Header{name: {value}})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			charged += routePrice
			served++
			requireBalance("the retried credential")
			r = e.send(t, "GET", route, "", http.Header{name: {value}})
			requireRefused(t, r.status, lowerHeaders(r.header), string(r.body), "already settled")
			requireBalance("its replay")
		})
	}
	spent := new(big.Int).Sub(payerStart, e.balance(t, e.fac.Payer))
	require.Equal(t, big.NewInt(charged).String(), spent.String(), "the payer paid exactly what was served")
	summary(t, "payments interop: 3 clients (x402-fetch, @x402/fetch v2, mppx) paid %d responses on a local chain, %d atomic units settled = the prices served; forged, replayed, expired, underpaid and reverted payments: 0 served, 0 settled twice",
		served, charged)
}

// stripExtensions drops a GraphQL response's extensions (the cost).
func stripExtensions(t *testing.T, body string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	delete(m, "extensions")
	b, _ := json.Marshal(m)
	return string(b)
}
