package tests

import (
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access"
)

// The MCP interop tests drive /mcp with the protocol's own clients, pinned
// in tests/interop/mcp/package-lock.json and installed by `make
// interop-mcp` (make test runs it): the official TypeScript SDK
// (@modelcontextprotocol/sdk) and the MCP Inspector CLI
// (@modelcontextprotocol/inspector, run with --cli), and @x402/core with @x402/evm
// paying per call on the payment tests' local chain.

// mcpInteropDir holds the MCP interop's npm package.
var mcpInteropDir = filepath.Join("interop", "mcp")

func requireMCPInterop(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(mcpInteropDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatalf("%s/node_modules is missing: run `make interop-mcp` (make test does) to install the pinned npm packages", mcpInteropDir)
	}
}

// runMCPClient runs client.mjs with opts and decodes its result.
func runMCPClient(t *testing.T, opts map[string]any, out any) {
	t.Helper()
	requireMCPInterop(t)
	arg, err := json.Marshal(opts)
	require.NoError(t, err)
	cmd := exec.Command("node", "client.mjs", string(arg))
	cmd.Dir = mcpInteropDir
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	b, err := cmd.Output()
	require.NoError(t, err, "client.mjs: %s", stderr.String())
	var fatal struct {
		Fatal string `json:"fatal"`
	}
	require.NoError(t, json.Unmarshal(b, &fatal), "%s", b)
	require.Empty(t, fatal.Fatal, "client.mjs: %s", stderr.String())
	require.NoError(t, json.Unmarshal(b, out), "%s", b)
}

// tsCall is one call's outcome as client.mjs reports it.
type tsCall struct {
	OK *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
		Meta              map[string]any `json:"_meta"`
		Contents          []struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType"`
			Text     string `json:"text"`
		} `json:"contents"`
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	} `json:"ok"`
	Error *struct {
		Code    *int            `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// TestMCPTypeScriptSDK: the official TypeScript SDK connects over
// Streamable HTTP with a key, lists the tools, templates and prompts, and
// calls every tool (its client validates each structured result against
// the tool's outputSchema), reads both resource templates and gets the
// prompts; bad arguments are tool errors and an unknown tool a JSON-RPC
// error, as it reads them.
func TestMCPTypeScriptSDK(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	since := ts(-7 * 24 * time.Hour)
	calls := []map[string]any{
		{"tool": "search_events", "args": map[string]any{"query": "Ethereum", "limit": 3}},
		{"tool": "search_events", "args": map[string]any{"query": "listing", "detail": "full"}},
		{"tool": "resolve_entity", "args": map[string]any{"name": "ETH"}},
		{"tool": "get_entity", "args": map[string]any{"id": 101}},
		{"tool": "list_relationships", "args": map[string]any{"id": 103}},
		{"tool": "entity_timeline", "args": map[string]any{"id": 101, "limit": 2}},
		{"tool": "latest_events", "args": map[string]any{"surface": "signal", "window": "7d", "detail": "full"}},
		{"tool": "latest_events", "args": map[string]any{}},
		{"tool": "top_signals", "args": map[string]any{"since": since}},
		{"tool": "organization_brief", "args": map[string]any{"ids": []int{101}, "since": since}},
		{"tool": "organization_brief", "args": map[string]any{"ids": []int{101, 104}, "since": since, "detail": "full"}},
		{"tool": "signal_history", "args": map[string]any{"id": 101}},
		{"tool": "prediction_markets", "args": map[string]any{"id": 101}},
		{"tool": "usage"},
		{"tool": "search_events", "args": map[string]any{"query": "x", "limit": 99}},
		{"tool": "no_such_tool"},
		{"tool": "search", "args": map[string]any{"query": "Ethereum"}},
		{"tool": "fetch", "args": map[string]any{"id": "5000"}},
	}
	var out struct {
		ServerVersion struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverVersion"`
		Instructions string `json:"instructions"`
		Tools        []struct {
			Name         string         `json:"name"`
			Description  string         `json:"description"`
			OutputSchema map[string]any `json:"outputSchema"`
		} `json:"tools"`
		Templates []struct {
			URITemplate string `json:"uriTemplate"`
		} `json:"templates"`
		Prompts []struct {
			Name string `json:"name"`
		} `json:"prompts"`
		Calls      []tsCall `json:"calls"`
		Resources  []tsCall `json:"resources"`
		GotPrompts []tsCall `json:"gotPrompts"`
	}
	runMCPClient(t, map[string]any{
		"mode": "session", "url": s.base + "/mcp", "key": s.apiKey(t), "calls": calls,
		"resources": []string{"cryptointel://entities/101", "cryptointel://events/5000", "cryptointel://entities/999999"},
		"prompts": []map[string]any{
			{"name": "daily_brief", "args": map[string]any{"watchlist": "Ethereum, SOL"}},
			{"name": "what_happened", "args": map[string]any{"subject": "Uniswap"}},
			{"name": "market_pulse"},
		},
	}, &out)

	require.Equal(t, "cryptointel", out.ServerVersion.Name)
	require.Contains(t, out.Instructions, "resolve_entity")
	var names []string
	for _, tl := range out.Tools {
		names = append(names, tl.Name)
		require.NotEmpty(t, tl.Description)
		require.Equal(t, "object", tl.OutputSchema["type"])
	}
	require.ElementsMatch(t, mcpToolNames, names)
	require.Len(t, out.Templates, 2)
	require.Len(t, out.Prompts, 4)

	for i, c := range out.Calls[:14] {
		require.Nil(t, c.Error, "%v: %+v", calls[i], c.Error)
		require.False(t, c.OK.IsError, "%v: %v", calls[i], c.OK.Content)
		require.NotEmpty(t, c.OK.StructuredContent, "%v", calls[i])
		require.NotEmpty(t, c.OK.Content[0].Text, "%v", calls[i])
	}
	// The TypeScript client got the data the /v1 route serves.
	rest := s.get(t, "/v1/entities/byName?name=ETH")
	got, _ := json.Marshal(out.Calls[2].OK.StructuredContent)
	require.Equal(t, leanExpected(decodeNumbers(t, rest.Body), false), decodeNumbers(t, got))

	capped := out.Calls[14]
	require.Nil(t, capped.Error)
	require.False(t, capped.OK.IsError, "an out-of-range limit is capped, as the route caps it: %v", capped.OK.Content)
	require.EqualValues(t, 20, capped.OK.StructuredContent["limit"])
	unknown := out.Calls[15]
	require.NotNil(t, unknown.Error)
	require.Equal(t, -32602, *unknown.Error.Code)
	require.Contains(t, unknown.Error.Message, "no_such_tool")

	// ChatGPT's deep-research pair, their output validated by the client.
	for _, c := range out.Calls[16:] {
		require.Nil(t, c.Error, "%+v", c.Error)
		require.False(t, c.OK.IsError, "%v", c.OK.Content)
		require.NotEmpty(t, c.OK.StructuredContent)
	}
	require.NotEmpty(t, out.Calls[16].OK.StructuredContent["results"])
	require.Equal(t, "5000", out.Calls[17].OK.StructuredContent["id"])

	entity := out.Resources[0]
	require.Nil(t, entity.Error, "%+v", entity.Error)
	require.Equal(t, "application/json", entity.OK.Contents[0].MIMEType)
	require.Contains(t, entity.OK.Contents[0].Text, `"canonicalName":"Ethereum"`)
	event := out.Resources[1]
	require.Nil(t, event.Error, "%+v", event.Error)
	require.Contains(t, event.OK.Contents[0].Text, `"id":5000`)
	require.Contains(t, event.OK.Contents[0].Text, `"evidence":[`)
	require.NotContains(t, event.OK.Contents[0].Text, `"posts"`, "no legacy aliases")
	missing := out.Resources[2]
	require.NotNil(t, missing.Error)
	require.Contains(t, missing.Error.Message, "Entity not found")

	for _, p := range out.GotPrompts {
		require.Nil(t, p.Error, "%+v", p.Error)
		require.Equal(t, "user", p.OK.Messages[0].Role)
	}
	require.Contains(t, out.GotPrompts[0].OK.Messages[0].Content.Text, "organization_brief")
	require.Contains(t, out.GotPrompts[1].OK.Messages[0].Content.Text, "entity_timeline")
}

// inspectorBin is the MCP Inspector's launcher, pinned in
// tests/interop/mcp: `mcp-inspector --cli` is its command-line client.
var inspectorBin = filepath.Join(mcpInteropDir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")

// inspector runs the MCP Inspector's CLI (mcp-inspector --cli) with args
// and returns its output.
func inspector(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	requireMCPInterop(t)
	launcher, err := filepath.Abs(inspectorBin)
	require.NoError(t, err)
	cmd := exec.Command("node", append([]string{launcher, "--cli"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), append([]string{"HOME=" + cmd.Dir}, env...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	require.NoError(t, err, "inspector %v: %s\n%s", args, stderr.String(), out)
	return out
}

// TestMCPInspectorCLI: the MCP Inspector CLI lists the tools and calls one
// over Streamable HTTP with a key, and does the same over stdio through
// `cryptointel mcp`, the bridge a desktop client launches.
func TestMCPInspectorCLI(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key := s.apiKey(t)
	checkList := func(out []byte) {
		t.Helper()
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(out, &list), "%s", out)
		var names []string
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
		}
		require.ElementsMatch(t, mcpToolNames, names)
	}
	checkCall := func(out []byte) {
		t.Helper()
		var res struct {
			StructuredContent struct {
				Data []struct {
					CanonicalName string `json:"canonicalName"`
				} `json:"data"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
		}
		require.NoError(t, json.Unmarshal(out, &res), "%s", out)
		require.False(t, res.IsError, "%s", out)
		require.Equal(t, "Ethereum", res.StructuredContent.Data[0].CanonicalName, "%s", out)
	}

	auth := "Authorization: Bearer " + key
	checkList(inspector(t, nil, s.base+"/mcp", "--method", "tools/list", "--header", auth))
	checkCall(inspector(t, nil, s.base+"/mcp", "--method", "tools/call", "--tool-name", "resolve_entity",
		"--tool-arg", "name=Ethereum", "--tool-arg", "limit=2", "--header", auth))

	bin := filepath.Join(t.TempDir(), "cryptointel")
	build, err := exec.Command("go", "build", "-o", bin, "../cmd/cryptointel").CombinedOutput()
	require.NoError(t, err, "%s", build)
	// The server's environment, as a desktop client's config gives it.
	env := []string{"-e", "CRYPTOINTEL_URL=" + s.base, "-e", "CRYPTOINTEL_API_KEY=" + key}
	checkList(inspector(t, nil, append(env, "--method", "tools/list", "--", bin, "mcp")...))
	checkCall(inspector(t, nil, append(env, "--method", "tools/call", "--tool-name", "resolve_entity", "--tool-arg", "name=Ethereum", "--", bin, "mcp")...))

	// A wrong key through the bridge: the client reads the server's reason.
	launcher, err := filepath.Abs(inspectorBin)
	require.NoError(t, err)
	cmd := exec.Command("node", launcher, "--cli", "--method", "tools/list", "--", bin, "mcp", "--url", s.base, "--key", "ci_wrong")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+cmd.Dir)
	out, _ := cmd.CombinedOutput()
	require.Contains(t, string(out), access.MsgInvalidKey, "%s", out)
}

// TestMCPPaidWithX402OnChain: an agent without a key pays tool calls with
// x402 over MCP in the transport's v2 shape: the unpaid call is a tool
// result with isError whose structuredContent is the PaymentRequired (and
// its text the same JSON; the MCP TypeScript SDK, having listed the tools,
// validates it against the tool's outputSchema), @x402/core's client with
// @x402/evm's exact scheme signs the payment from it, the SDK carries it
// in params._meta["x402/payment"], x402's own facilitator settles it on
// the local chain (the HTTP payment test's), and the settlement comes back
// in result._meta["x402/payment-response"]. The payee gains exactly the
// routes' prices; a replayed payment is refused, in the same v2 shape, and
// never settled twice.
func TestMCPPaidWithX402OnChain(t *testing.T) {
	t.Parallel()
	e := startPaymentsInterop(t)
	searchPrice := e.price(t, "GET", "/v1/search?query=Ethereum", "")
	latestPrice := e.price(t, "GET", "/v1/latest?limit=5", "")
	start := e.balance(t, e.fac.PayTo)
	settledBefore, _ := e.settlements(t)

	type toolResult struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
		Meta              map[string]any `json:"_meta"`
	}
	var out struct {
		Tools int `json:"tools"`
		Calls []struct {
			Unpaid   *toolResult    `json:"unpaid"`
			Required map[string]any `json:"required"`
			Paid     *toolResult    `json:"paid"`
			Error    *struct {
				Code    int            `json:"code"`
				Message string         `json:"message"`
				Data    map[string]any `json:"data"`
			} `json:"error"`
		} `json:"calls"`
	}
	runMCPClient(t, map[string]any{
		"mode": "pay", "url": e.base + "/mcp/x402", "payerKey": e.fac.PayerKey, "chainId": e.fac.ChainID, "token": e.fac.Token,
		"calls": []map[string]any{
			{"tool": "search_events", "args": map[string]any{"query": "Ethereum"}},
			{"tool": "latest_events", "args": map[string]any{"limit": 5, "window": "30d"}},
			{"tool": "latest_events", "args": map[string]any{"limit": 5, "window": "30d"}, "replay": true},
		},
	}, &out)
	require.Positive(t, out.Tools, "the client listed the tools: it validated every result against its outputSchema")

	for i, price := range []int64{searchPrice, latestPrice} {
		c := out.Calls[i]
		require.Nil(t, c.Error, "%+v", c.Error)
		require.NotNil(t, c.Unpaid, "call %d", i)
		require.True(t, c.Unpaid.IsError, "a payment request is a tool error")
		require.NotNil(t, c.Required, "call %d: no PaymentRequired in structuredContent", i)
		text, _ := json.Marshal(c.Unpaid.StructuredContent)
		require.JSONEq(t, string(text), c.Unpaid.Content[0].Text, "the text is the structured content's JSON")
		require.EqualValues(t, 2, c.Required["x402Version"])
		accepts := c.Required["accepts"].([]any)[0].(map[string]any)
		require.Equal(t, big.NewInt(price).String(), accepts["amount"], "the route's price")
		require.NotNil(t, c.Paid, "call %d", i)
		require.False(t, c.Paid.IsError, "%v", c.Paid.StructuredContent)
		require.NotEmpty(t, c.Paid.StructuredContent["data"])
		settle := c.Paid.Meta["x402/payment-response"].(map[string]any)
		require.Equal(t, true, settle["success"])
		require.True(t, strings.HasPrefix(settle["transaction"].(string), "0x"), "%v", settle)
	}
	replay := out.Calls[2]
	require.Nil(t, replay.Error, "%+v", replay.Error)
	require.NotNil(t, replay.Paid)
	require.True(t, replay.Paid.IsError, "a replayed payment is refused")
	require.Contains(t, replay.Paid.StructuredContent["error"], "already settled")
	require.Nil(t, replay.Paid.Meta["x402/payment-response"], "nothing settled")

	got := new(big.Int).Sub(e.balance(t, e.fac.PayTo), start)
	require.Equal(t, big.NewInt(searchPrice+latestPrice).String(), got.String(), "the payee gained exactly the two prices")
	settled, _ := e.settlements(t)
	require.Equal(t, settledBefore+2, settled)
	summary(t, "MCP x402 interop (transport v2): the TypeScript SDK carried 2 payments signed by @x402/core + @x402/evm, %d atomic units settled on a local chain = the routes' prices; a replay refused", searchPrice+latestPrice)
}
