package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The MCP tests drive /mcp with the protocol's own clients: the Go SDK's
// client in process (here), the official TypeScript SDK and the MCP
// Inspector CLI (tests/interop/mcp, installed by make test).

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	header http.Header
	base   http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header[k] = v
	}
	base := h.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// mcpSession connects the Go SDK's client to base's /mcp, sending key as
// a Bearer key; without a key ("") to /mcp/x402, the door of keyless
// agents paying per call.
func mcpSession(t *testing.T, base, key string) *sdk.ClientSession {
	t.Helper()
	header := http.Header{}
	if key != "" {
		header.Set("Authorization", "Bearer "+key)
	}
	endpoint := base + "/mcp"
	if key == "" {
		endpoint += "/x402"
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "cryptointel-tests", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: headerTransport{header: header}, Timeout: 60 * time.Second},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and returns its result; a protocol error fails
// the test.
func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := callToolErr(t, cs, name, args, nil)
	require.NoError(t, err, "%s %v", name, args)
	return res
}

// callToolErr calls a tool with meta and returns its result or its
// protocol error.
func callToolErr(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, meta sdk.Meta) (*sdk.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args, Meta: meta})
}

// structured decodes a result's structured content.
func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	require.False(t, res.IsError, "tool error: %s", resultText(res))
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}

// resultText is a result's text content.
func resultText(res *sdk.CallToolResult) string {
	s := ""
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
