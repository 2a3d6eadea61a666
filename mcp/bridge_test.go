package mcp

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBridgeKeepsTheKeyOnItsServer: the stdio bridge does not follow a
// redirect to another host (which would carry the key there), and warns
// when the key would travel over plain http to another machine.
func TestBridgeKeepsTheKeyOnItsServer(t *testing.T) {
	var stolen atomic.Value
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)) //nolint:errcheck
	}))
	t.Cleanup(thief.Close)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://files.api.test/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(server.Close)
	// api.test is the server, files.api.test (a subdomain, to which Go's
	// client forwards Authorization on a redirect) the thief.
	hosts := map[string]string{"api.test:80": server.Listener.Addr().String(), "files.api.test:80": thief.Listener.Addr().String()}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, hosts[addr])
	}}}

	var out, warnings bytes.Buffer
	err := Bridge(context.Background(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), &out,
		BridgeConfig{URL: "http://api.test/mcp", Key: "ci_secret", HTTPClient: client, Warnings: &warnings})
	require.NoError(t, err)
	require.Nil(t, stolen.Load(), "the redirect was not followed")
	require.Contains(t, out.String(), `"error"`, "the client is told: %s", out.String())
	require.Contains(t, warnings.String(), "warning: http://api.test/mcp is plain http to another machine: the API key")

	require.Equal(t, "", plainHTTPWarning("http://127.0.0.1:8080/mcp", true))
	require.Equal(t, "", plainHTTPWarning("https://api.example.com/mcp", true))
	require.Contains(t, plainHTTPWarning("http://api.example.com/mcp", true), "warning: http://api.example.com/mcp is plain http to another machine: the API key")
}
