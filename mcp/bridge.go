package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// The stdio bridge: for a desktop client that only launches MCP servers as
// local processes, `cryptointel mcp` reads JSON-RPC messages from standard
// input, one per line, posts each to a remote server's /mcp with the key,
// and writes the answers to standard output, one per line. Messages pass
// through unchanged, so a payment in params._meta and its settlement in
// result._meta do too.

// BridgeConfig configures Bridge.
type BridgeConfig struct {
	// URL is the server's MCP endpoint, for example
	// https://api.example.com/mcp; a URL without a path gets /mcp.
	// Required.
	URL string
	// Key is the API key, sent as a Bearer key; empty sends none: the
	// bridge then talks to /mcp/x402 instead of /mcp (the server must
	// take payments per call; /mcp asks a client without a credential to
	// authorize with OAuth).
	Key string
	// HTTPClient makes the requests. Defaults to a client with a 2-minute
	// timeout.
	HTTPClient *http.Client
	// UserAgent is sent with every request. Defaults to
	// "cryptointel-mcp-bridge".
	UserAgent string
	// Warnings receives the bridge's warnings (a key sent over plain
	// http:// to a host that is not this machine). Defaults to os.Stderr.
	Warnings io.Writer
}

// Bridge relays messages between in and out and the server until in ends
// (then waits for the answers in flight) or ctx is done. A request the
// server refuses at the HTTP level (a wrong key: 401) or that cannot reach
// it is answered on out with a JSON-RPC error carrying the server's
// message, so the client shows why.
func Bridge(ctx context.Context, in io.Reader, out io.Writer, cfg BridgeConfig) error {
	endpoint, err := bridgeEndpoint(cfg.URL)
	if err != nil {
		return err
	}
	if cfg.Key == "" {
		endpoint = keylessEndpoint(endpoint)
	}
	b := &bridge{cfg: cfg, endpoint: endpoint, out: out}
	client := http.Client{Timeout: 2 * time.Minute}
	if cfg.HTTPClient != nil {
		client = *cfg.HTTPClient
	}
	// The key goes to the configured server only: a redirect to another
	// host, or from https to http, is not followed.
	client.CheckRedirect = sameServerRedirect
	b.client = &client
	if warn := plainHTTPWarning(endpoint, cfg.Key != ""); warn != "" {
		w := cfg.Warnings
		if w == nil {
			w = os.Stderr
		}
		fmt.Fprintln(w, warn) //nolint:errcheck
	}
	if b.cfg.UserAgent == "" {
		b.cfg.UserAgent = "cryptointel-mcp-bridge"
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), MaxBodyBytes+1)
	var wg sync.WaitGroup
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		msg := append([]byte(nil), line...)
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(msg, &head) != nil {
			b.write(rpcError(nil, -32700, "Parse error: a line of standard input is not a JSON-RPC message"))
			continue
		}
		if head.Method == "initialize" {
			// Everything after initialize needs its negotiated version: post
			// it alone.
			b.post(ctx, msg, head.ID)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.post(ctx, msg, head.ID)
		}()
		if ctx.Err() != nil {
			break
		}
	}
	wg.Wait()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("error reading standard input: %w", err)
	}
	return nil
}

// keylessEndpoint is the endpoint of a bridge without a key: /mcp/x402
// for /mcp.
func keylessEndpoint(endpoint string) string {
	if strings.HasSuffix(endpoint, "/mcp") {
		return endpoint + "/x402"
	}
	return endpoint
}

// bridgeEndpoint returns the /mcp URL of u.
func bridgeEndpoint(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return "", fmt.Errorf("invalid server URL %q: want http(s)://host[:port][/mcp]", u)
	}
	if pu.Path == "" || pu.Path == "/" {
		pu.Path = "/mcp"
	}
	return pu.String(), nil
}

// sameServerRedirect follows a redirect only to the scheme and host of
// the request it answers, so the key is never sent elsewhere.
func sameServerRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if !strings.EqualFold(req.URL.Host, first.Host) || (first.Scheme == "https" && req.URL.Scheme != "https") {
		return fmt.Errorf("refusing to follow a redirect from %s to %s: the key is sent only to the configured server", first.Host, req.URL.Host)
	}
	return nil
}

// plainHTTPWarning is the warning for an endpoint that would carry the
// key (or payments) in clear: an http:// URL whose host is not this
// machine; "" otherwise.
func plainHTTPWarning(endpoint string, key bool) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" {
		return ""
	}
	host := strings.Trim(strings.ToLower(u.Hostname()), "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return ""
	}
	if a, err := netip.ParseAddr(host); err == nil && a.IsLoopback() {
		return ""
	}
	what := "payments"
	if key {
		what = "the API key"
	}
	return "warning: " + u.Redacted() + " is plain http to another machine: " + what + " and every answer travel unencrypted; use https://"
}

type bridge struct {
	cfg      BridgeConfig
	endpoint string
	client   *http.Client
	out      io.Writer

	mu      sync.Mutex // guards out and version
	version string     // the protocol version initialize negotiated
}

// post sends one message and writes what comes back.
func (b *bridge) post(ctx context.Context, msg []byte, id json.RawMessage) {
	call := len(id) > 0 && string(id) != "null"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.endpoint, bytes.NewReader(msg))
	if err != nil {
		b.answer(call, id, -32603, "cannot build the request: "+err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("User-Agent", b.cfg.UserAgent)
	if b.cfg.Key != "" {
		req.Header.Set("Authorization", "Bearer "+b.cfg.Key)
	}
	b.mu.Lock()
	if b.version != "" {
		req.Header.Set("MCP-Protocol-Version", b.version)
	}
	b.mu.Unlock()
	resp, err := b.client.Do(req)
	if err != nil {
		b.answer(call, id, -32000, "cannot reach the cryptointel server: "+err.Error())
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		b.answer(call, id, -32000, "error reading the server's answer: "+err.Error())
		return
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
	case strings.HasPrefix(ct, "text/event-stream"):
		for _, data := range sseData(body) {
			b.relay(data)
		}
	case isJSONRPC(body):
		b.relay(body)
	default:
		msg := strings.TrimSpace(string(body))
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		b.answer(call, id, -32001, fmt.Sprintf("the cryptointel server answered %d: %s", resp.StatusCode, msg))
	}
}

// relay writes one message from the server, noting the negotiated
// protocol version of an initialize result.
func (b *bridge) relay(msg []byte) {
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &r) == nil && r.Result.ProtocolVersion != "" {
		b.mu.Lock()
		b.version = r.Result.ProtocolVersion
		b.mu.Unlock()
	}
	b.write(msg)
}

// answer writes a JSON-RPC error for a call (a notification gets none).
func (b *bridge) answer(call bool, id json.RawMessage, code int, msg string) {
	if call {
		b.write(rpcError(id, code, msg))
	}
}

// write writes one message on one line.
func (b *bridge) write(msg []byte) {
	var buf bytes.Buffer
	if json.Compact(&buf, msg) != nil {
		return
	}
	buf.WriteByte('\n')
	b.mu.Lock()
	defer b.mu.Unlock()
	b.out.Write(buf.Bytes()) //nolint:errcheck // the client went away: nothing to tell it
}

// rpcError is a JSON-RPC error response.
func rpcError(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}

// isJSONRPC reports whether body is a JSON-RPC message (or a batch).
func isJSONRPC(body []byte) bool {
	body = bytes.TrimSpace(body)
	return len(body) > 0 && (body[0] == '{' || body[0] == '[') && bytes.Contains(body, []byte(`"jsonrpc"`))
}

// sseData returns the data of each event of a text/event-stream body.
func sseData(body []byte) [][]byte {
	var out [][]byte
	var cur []byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if len(cur) > 0 {
				cur = append(cur, '\n')
			}
			cur = append(cur, d...)
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
