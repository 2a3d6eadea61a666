package tests

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/mcp"
)

// mcpInitialize is an initialize request.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// mcpPost posts a raw body to /mcp with the given headers (Accept as a
// client sends it unless given).
func mcpPost(t *testing.T, base, body string, header http.Header) (int, http.Header, []byte) {
	t.Helper()
	h := http.Header{"Accept": {"application/json, text/event-stream"}}
	for k, v := range header {
		h[k] = v
	}
	r := (&accessServer{base: base}).request(t, http.MethodPost, "/mcp", body, h)
	return r.status, r.header, r.body
}

// usageOf reads a key's /v1/usage data.
func usageOf(t *testing.T, s *restServer, key string) access.UsageData {
	t.Helper()
	r := s.doAs(t, key, http.MethodGet, "/v1/usage")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var u access.UsageResponse
	require.NoError(t, json.Unmarshal(r.Body, &u))
	return u.Data
}

// TestMCPAccessAsOnHTTP: /mcp takes keys as /v1 does. A missing, unknown
// or revoked key is 401 with a Bearer challenge and the access layer's
// message, before anything is charged. initialize, the list requests and
// notifications are free but count in the rate window; each tool call
// counts and costs exactly what its routes do (get_entity: both of its
// routes). Plan gates, the rate window and their refusals are tool errors
// with the REST messages; over the window a list is refused 429.
func TestMCPAccessAsOnHTTP(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)

	status, header, body := mcpPost(t, s.base, mcpInitialize, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	challenge := `Bearer realm="cryptointel", resource_metadata="` + s.base + `/.well-known/oauth-protected-resource/mcp", scope="data"`
	require.Equal(t, challenge, header.Get("WWW-Authenticate"))
	require.JSONEq(t, `{"error":"`+mcp.MsgCredentialRequired+`"}`, errorOnly(t, body))

	status, header, body = mcpPost(t, s.base, mcpInitialize, http.Header{"Authorization": {"Bearer ci_not-a-key"}})
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, challenge+`, error="invalid_token", error_description="`+access.MsgInvalidKey+`"`, header.Get("WWW-Authenticate"))
	require.JSONEq(t, `{"error":"`+access.MsgInvalidKey+`"}`, errorOnly(t, body))

	revoked, revokedID := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	_, err := s.store.Pool.Exec(context.Background(), `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, revokedID)
	require.NoError(t, err)
	status, _, body = mcpPost(t, s.base, mcpInitialize, http.Header{"Authorization": {"Bearer " + revoked}})
	require.Equal(t, http.StatusUnauthorized, status)
	require.JSONEq(t, `{"error":"`+access.MsgRevokedKey+`"}`, errorOnly(t, body))

	// A tools/call alone (answered without the SDK's session machinery) is
	// refused the same way, whether its arguments are good or not.
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"x"}}}`
	bad := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search_events","arguments":{"limit":0}}}`
	for _, c := range []struct{ body, key, msg string }{
		{call, "ci_not-a-key", access.MsgInvalidKey}, {bad, "ci_not-a-key", access.MsgInvalidKey},
		{call, revoked, access.MsgRevokedKey}, {bad, revoked, access.MsgRevokedKey}, {call, "", mcp.MsgCredentialRequired},
	} {
		header := http.Header{}
		if c.key != "" {
			header.Set("Authorization", "Bearer "+c.key)
		}
		status, h, body := mcpPost(t, s.base, c.body, header)
		require.Equal(t, http.StatusUnauthorized, status, "%s %s", c.key, body)
		require.Contains(t, h.Get("WWW-Authenticate"), `Bearer realm="cryptointel"`)
		require.JSONEq(t, `{"error":"`+c.msg+`"}`, errorOnly(t, body))
	}

	// The Go SDK's client cannot connect with a wrong key.
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	_, err = client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: s.base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{header: http.Header{"Authorization": {"Bearer ci_wrong"}}}}}, nil)
	require.Error(t, err)

	// Free requests, then metered calls: usage moves by exactly the routes'.
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	cs := mcpSession(t, s.base, key)
	listTools(t, cs)
	_, err = cs.ListPrompts(t.Context(), nil)
	require.NoError(t, err)
	_, err = cs.ListResourceTemplates(t.Context(), nil)
	require.NoError(t, err)
	u := usageOf(t, s, key)
	require.EqualValues(t, 1, u.Today, "initialize and the lists are not usage: only this usage request is")
	require.EqualValues(t, 0, u.Budget.Used)

	structured(t, callTool(t, cs, "search_events", map[string]any{"query": "Ethereum"})) // 1 request, 1 credit
	structured(t, callTool(t, cs, "get_entity", map[string]any{"id": 101}))              // 2 requests, 2 credits
	mine := structured(t, callTool(t, cs, "usage", nil))                                 // 1 request, 0 credits
	data := mine["data"].(map[string]any)
	require.EqualValues(t, 5, data["today"], "the usage request, search, get_entity's two routes and this call")
	require.EqualValues(t, 3, data["budget"].(map[string]any)["used"])
	u = usageOf(t, s, key)
	require.EqualValues(t, 6, u.Today)
	require.EqualValues(t, 3, u.Budget.Used)

	// Plan gates: the REST message, as a tool error.
	free, _ := accesstest.NewKey(t, s.store, cryptointel.PlanFree)
	rest := s.doAs(t, free, http.MethodGet, "/v1/brief?id=101&since="+ts(-24*3600e9))
	require.Equal(t, http.StatusForbidden, rest.Status)
	res := callTool(t, mcpSession(t, s.base, free), "organization_brief", map[string]any{"ids": []int{101}, "since": ts(-24 * 3600e9)})
	require.True(t, res.IsError)
	require.Equal(t, rest.Error(t), resultText(res))
	requireToolErrorCode(t, res, cryptointel.EFORBIDDEN)

	// The rate window counts tool calls as the routes' requests, and the
	// session's initialize and initialized notification; over it, the
	// REST 429 message and when to retry. A list is refused too.
	limited, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	lcs := mcpSession(t, s.base, limited)
	calls := 0
	for res = callTool(t, lcs, "top_signals", map[string]any{"limit": 1}); !res.IsError; res = callTool(t, lcs, "top_signals", map[string]any{"limit": 1}) {
		calls++
		require.Less(t, calls, access.DefaultRateLimit, "the session's own requests count")
	}
	require.GreaterOrEqual(t, calls, access.DefaultRateLimit-2)
	require.Equal(t, access.MsgRateLimited, res.Content[0].(*sdk.TextContent).Text)
	require.Contains(t, res.Content[1].(*sdk.TextContent).Text, "Retry after ")
	requireToolErrorCode(t, res, cryptointel.ERATELIMIT)
	_, err = lcs.ListTools(t.Context(), nil)
	require.Error(t, err, "over the window, a list is refused")

	// A route's own refusal: its exact message.
	rest = s.get(t, "/v1/entities/byId?id=999999")
	res = callTool(t, cs, "get_entity", map[string]any{"id": 999999})
	require.True(t, res.IsError)
	require.Equal(t, rest.Error(t), resultText(res))
	rest = s.get(t, "/v1/search?query=x&since=yesterday")
	res = callTool(t, cs, "search_events", map[string]any{"query": "x", "since": "yesterday"})
	require.True(t, res.IsError)
	require.Equal(t, rest.Error(t), resultText(res))
	e := requireToolErrorCode(t, res, cryptointel.EINVALID)
	require.Equal(t, "since", e["param"])
}

// requireToolErrorCode asserts that a tool error carries the route's error
// body in _meta, with code, and returns it.
func requireToolErrorCode(t *testing.T, res *sdk.CallToolResult, code string) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res.Meta[mcp.MetaError])
	require.NoError(t, err)
	var e map[string]any
	require.NoError(t, json.Unmarshal(raw, &e), "%s", raw)
	require.Equal(t, code, e["code"], "%s", raw)
	require.Equal(t, httperr.DocURL(code), e["docUrl"])
	require.Equal(t, res.Content[0].(*sdk.TextContent).Text, e["error"])
	return e
}

// TestMCPBadInput: wrong argument types, unknown and missing arguments,
// out-of-range values, an unknown tool, malformed and oversized requests:
// each a clear error (a tool error for arguments, free; a JSON-RPC or HTTP
// error for the protocol), never a 5xx or an internal message.
func TestMCPBadInput(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key := s.apiKey(t)
	cs := mcpSession(t, s.base, key)
	before := usageOf(t, s, key)
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"search_events", map[string]any{}, `missing required argument "query"`},
		{"search_events", map[string]any{"query": 5}, "query must be a string"},
		{"search_events", map[string]any{"query": ""}, "query must not be empty"},
		{"search_events", map[string]any{"query": "x", "limit": "ten"}, "limit must be an integer"},
		{"search_events", map[string]any{"query": "x", "limit": 2.5}, "limit must be an integer"},
		{"search_events", map[string]any{"query": "x", "q": "y"}, `unknown argument "q": search_events takes only query, limit, since, from, to, sort, category, entity, surface, collapse, facets, cursor, detail`},
		{"search_events", map[string]any{"query": "x", "detail": "everything"}, "detail must be one of: summary, full"},
		{"latest_events", map[string]any{"sort": "best"}, "sort must be one of: significance, recency"},
		{"organization_brief", map[string]any{"ids": []int{}, "since": ts(0)}, "ids must have at least one item"},
		{"organization_brief", map[string]any{"ids": make([]int, 26), "since": ts(0)}, "ids must have at most 25 items"},
		{"organization_brief", map[string]any{"ids": []any{"a"}, "since": ts(0)}, "ids items must be an integer"},
		{"organization_brief", map[string]any{"ids": []int{101}}, `missing required argument "since"`},
		{"usage", map[string]any{"x": 1}, `unknown argument "x": usage takes no arguments`},
		{"get_entity", []int{1}, "arguments must be a JSON object"},
	} {
		ctx := t.Context()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		require.NoError(t, err, "%s %v: a tool error, not a protocol error", c.tool, c.args)
		require.True(t, res.IsError, "%s %v", c.tool, c.args)
		require.Equal(t, c.want, resultText(res), "%s %v", c.tool, c.args)
	}
	after := usageOf(t, s, key)
	require.Equal(t, before.Budget.Used, after.Budget.Used, "arguments refused by the schema cost nothing")

	_, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	require.EqualValues(t, jsonrpc.CodeInvalidParams, rpcErr.Code)
	require.Contains(t, rpcErr.Message, `unknown tool "no_such_tool"`)

	auth := http.Header{"Authorization": {"Bearer " + key}}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"` + strings.Repeat("a", mcp.MaxBodyBytes) + `"}}}`
	for _, c := range []struct {
		name   string
		method string
		body   string
		header http.Header
		status int
		want   string
	}{
		{"oversized", http.MethodPost, big, nil, http.StatusRequestEntityTooLarge, `{"error":"request body too large (max 1 MB)"}`},
		{"oversized, chunked", http.MethodPost, big, http.Header{"X-Chunked": {"1"}}, http.StatusRequestEntityTooLarge, `{"error":"request body too large (max 1 MB)"}`},
		{"not JSON", http.MethodPost, `{"jsonrpc":`, nil, http.StatusBadRequest, ""},
		{"not JSON-RPC", http.MethodPost, `[1,2]`, nil, http.StatusBadRequest, ""},
		{"empty batch", http.MethodPost, `[]`, nil, http.StatusBadRequest, ""},
		{"wrong media type", http.MethodPost, mcpInitialize, http.Header{"Content-Type": {"text/plain"}}, http.StatusUnsupportedMediaType, ""},
		{"not accepting JSON and SSE", http.MethodPost, mcpInitialize, http.Header{"Accept": {"text/html"}}, http.StatusBadRequest, ""},
		{"GET", http.MethodGet, "", nil, http.StatusMethodNotAllowed, ""},
		{"DELETE", http.MethodDelete, "", nil, http.StatusMethodNotAllowed, ""},
		{"unknown method", http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"tools/destroy","params":{}}`, nil, http.StatusBadRequest, ""},
	} {
		var bodyReader io.Reader = strings.NewReader(c.body)
		if c.header.Get("X-Chunked") != "" {
			bodyReader = io.MultiReader(bytes.NewReader([]byte(c.body))) // no length: sent chunked
		}
		req, err := http.NewRequest(c.method, s.base+"/mcp", bodyReader)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range auth {
			req.Header[k] = v
		}
		for k, v := range c.header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, c.name)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, c.status, resp.StatusCode, "%s: %s", c.name, b)
		require.Less(t, resp.StatusCode, 500, c.name)
		require.NotContains(t, strings.ToLower(string(b)), "internal", c.name)
		require.NotContains(t, string(b), "goroutine", c.name)
		if c.want != "" {
			require.JSONEq(t, c.want, errorOnly(t, b), c.name)
		}
		// What the protocol library refuses before a message is read is a
		// JSON-RPC error (id null) too, as the reference server answers:
		// -32700 for a body that is not JSON, -32600 for one that is no
		// message, -32601 (with the message's id) for a method the server
		// does not have, -32000 for the transport's other refusals.
		if wantCode, ok := map[string]int64{"not JSON": -32700, "not JSON-RPC": -32600, "empty batch": -32600, "wrong media type": -32000,
			"not accepting JSON and SSE": -32600, "GET": -32000, "DELETE": -32000, "unknown method": -32601}[c.name]; ok {
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"), "%s: %s", c.name, b)
			var rpc struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(b, &rpc), "%s: %s", c.name, b)
			require.Equal(t, "2.0", rpc.JSONRPC, c.name)
			wantID := "null"
			if c.name == "unknown method" {
				wantID = "3" // the message's own error
			}
			require.Equal(t, wantID, string(rpc.ID), c.name)
			require.Equal(t, wantCode, rpc.Error.Code, "%s: %s", c.name, b)
			require.NotEmpty(t, rpc.Error.Message, c.name)
			require.NotContains(t, rpc.Error.Message, "Go value", c.name)
			require.NotContains(t, rpc.Error.Message, "unmarshal", c.name)
			if c.name == "unknown method" {
				require.Equal(t, `Method not found: "tools/destroy"`, rpc.Error.Message)
			}
		}
	}
}

// TestMCPPayPerCall: with pay-per-request on, a client without a key may
// connect and list, each tool priced in its _meta; a priced tool answers,
// as x402's MCP transport v2 says, a tool result with isError whose
// structured content is the x402 v2 PaymentRequired (the route's price,
// the tool as the resource) and whose text is the same JSON; the payment
// in params._meta["x402/payment"] runs the call, settled in
// result._meta["x402/payment-response"]; replayed, it is refused by the
// route's replay record, in the same shape. An x402 v1 payload keeps the
// v1 shape: a refusal is a JSON-RPC error 402. An unpriced tool says a
// key is missing, as the route does. A wrong key is still 401.
func TestMCPPayPerCall(t *testing.T) {
	t.Parallel()
	fac := accesstest.NewFacilitator(t)
	s := startAccessServer(t, dbtest.NewURL(t), fac)

	status, _, _ := mcpPost(t, s.base, mcpInitialize, http.Header{"Authorization": {"Bearer ci_wrong"}})
	require.Equal(t, http.StatusUnauthorized, status)

	cs := mcpSession(t, s.base, "")
	tools := listTools(t, cs)
	price, _ := json.Marshal(tools["search_events"].Meta[mcp.MetaPrice])
	require.JSONEq(t, `{"calls":"one","routes":[{"route":"GET /v1/search","credits":1,
		"x402":{"currency":"USD","mode":"fixed","price":"0.050000"}}]}`, string(price), "priced before the call")
	price, _ = json.Marshal(tools["get_entity"].Meta[mcp.MetaPrice])
	require.JSONEq(t, `{"calls":"all","routes":[{"route":"GET /v1/entities/byId","credits":1},
		{"route":"GET /v1/entities/{id}/relationships","credits":1}]}`, string(price))

	// paymentRequired reads a v2 payment-required result.
	paymentRequired := func(res *sdk.CallToolResult, err error) map[string]any {
		t.Helper()
		require.NoError(t, err, "x402 v2: a tool result, not a JSON-RPC error")
		require.True(t, res.IsError)
		raw, _ := json.Marshal(res.StructuredContent)
		require.JSONEq(t, string(raw), resultText(res), "the text is the structured content's JSON")
		var required map[string]any
		require.NoError(t, json.Unmarshal(raw, &required))
		require.EqualValues(t, 2, required["x402Version"])
		return required
	}
	required := paymentRequired(callToolErr(t, cs, "search_events", map[string]any{"query": "bitcoin"}, nil))
	require.Equal(t, "mcp://tool/search_events", required["resource"].(map[string]any)["url"])
	require.Contains(t, required["error"], "Payment required")
	accepts := required["accepts"].([]any)[0].(map[string]any)
	require.Equal(t, "50000", accepts["amount"], "the search route's fixed 0.05 USDC")

	// Priced like the route: by the limit served.
	latest := paymentRequired(callToolErr(t, cs, "latest_events", map[string]any{"limit": 1}, nil))
	routePrice := s.request(t, "GET", "/v1/latest?limit=1", "", nil)
	v2, _ := base64.StdEncoding.DecodeString(routePrice.header.Get("PAYMENT-REQUIRED"))
	var routeRequired map[string]any
	require.NoError(t, json.Unmarshal(v2, &routeRequired))
	require.Equal(t, routeRequired["accepts"], latest["accepts"], "the route's requirements")

	// Paid.
	searchRequired, _ := json.Marshal(required)
	payHeader := accesstest.Payment{}.X402V2(t, base64.StdEncoding.EncodeToString(searchRequired))
	rawPayload, _ := base64.StdEncoding.DecodeString(payHeader)
	var payload map[string]any
	require.NoError(t, json.Unmarshal(rawPayload, &payload))
	res, err := callToolErr(t, cs, "search_events", map[string]any{"query": "bitcoin"}, sdk.Meta{mcp.MetaPayment: payload})
	require.NoError(t, err)
	structured(t, res)
	settle, _ := json.Marshal(res.Meta[mcp.MetaPaymentResponse])
	require.Contains(t, string(settle), `"success":true`)
	require.Len(t, fac.Settles(), 1)

	// Replayed: the replay record refuses it, nothing is settled twice.
	replayed := paymentRequired(callToolErr(t, cs, "search_events", map[string]any{"query": "bitcoin"}, sdk.Meta{mcp.MetaPayment: payload}))
	require.Contains(t, replayed["error"], "already settled")
	require.Len(t, fac.Settles(), 1)

	// An x402 v1 payload (signed from the route's v1 402 body) pays too,
	// and its refusal keeps the v1 shape: a JSON-RPC error 402.
	v1Body := s.request(t, "GET", "/v1/search?query=bitcoin", "", nil)
	require.Equal(t, http.StatusPaymentRequired, v1Body.status)
	rawV1, _ := base64.StdEncoding.DecodeString(accesstest.Payment{}.X402(t, v1Body.body))
	var payloadV1 map[string]any
	require.NoError(t, json.Unmarshal(rawV1, &payloadV1))
	res, err = callToolErr(t, cs, "search_events", map[string]any{"query": "bitcoin"}, sdk.Meta{mcp.MetaPayment: payloadV1})
	require.NoError(t, err)
	structured(t, res)
	require.Len(t, fac.Settles(), 2)
	_, err = callToolErr(t, cs, "search_events", map[string]any{"query": "bitcoin"}, sdk.Meta{mcp.MetaPayment: payloadV1})
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	require.EqualValues(t, mcp.CodePaymentRequired, rpcErr.Code)
	require.Contains(t, rpcErr.Message, "already settled")
	require.Len(t, fac.Settles(), 2)

	// Malformed payment: invalid params.
	_, err = callToolErr(t, cs, "search_events", map[string]any{"query": "bitcoin"}, sdk.Meta{mcp.MetaPayment: "not a payload"})
	require.ErrorAs(t, err, &rpcErr)
	require.EqualValues(t, jsonrpc.CodeInvalidParams, rpcErr.Code)

	// Unpriced tool, no key: the route's 401 message.
	res, err = callToolErr(t, cs, "get_entity", map[string]any{"id": 1}, nil)
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, access.MsgMissingKey, resultText(res))
}

// TestMCPPromptsFollowThePlan: the daily_brief prompt only suggests what
// the caller's plan allows: the batch brief to plans with batch briefs, a
// brief per id to plans with briefs only, and timelines to plans without
// briefs (a free key calling organization_brief is refused). Without a key
// it names the batch brief, as for any plan.
func TestMCPPromptsFollowThePlan(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	prompt := func(key string) string {
		t.Helper()
		cs := mcpSession(t, s.base, key)
		res, err := cs.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: "daily_brief", Arguments: map[string]string{"watchlist": "Ethereum, SOL"}})
		require.NoError(t, err)
		require.Len(t, res.Messages, 1)
		return res.Messages[0].Content.(*sdk.TextContent).Text
	}
	cases := []struct {
		plan        string
		want, avoid []string
	}{
		{cryptointel.PlanFree, []string{"entity_timeline for each id", "top_signals"}, []string{"organization_brief"}},
		{cryptointel.PlanPro, []string{"organization_brief for each id, one id per call"}, []string{"once with all the ids"}},
		{cryptointel.PlanBusiness, []string{"organization_brief once with all the ids"}, []string{"one id per call"}},
		{cryptointel.PlanEnterprise, []string{"organization_brief once with all the ids"}, []string{"one id per call"}},
	}
	for _, c := range cases {
		key, _ := accesstest.NewKey(t, s.store, c.plan)
		text := prompt(key)
		for _, w := range c.want {
			require.Contains(t, text, w, "%s: %s", c.plan, text)
		}
		for _, a := range c.avoid {
			require.NotContains(t, text, a, "%s: %s", c.plan, text)
		}
	}
	// The free plan really is refused the brief the prompt leaves out.
	free, _ := accesstest.NewKey(t, s.store, cryptointel.PlanFree)
	res, err := callToolErr(t, mcpSession(t, s.base, free), "organization_brief", map[string]any{"ids": []int{101}}, nil)
	require.NoError(t, err)
	require.True(t, res.IsError, "a free key's organization_brief must be refused")
}
