package mcp

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/cryptointel/cryptointel/access"
)

// Messages of a request refused at the /mcp door for where it comes from.
const (
	// MsgOriginForbidden is the 403 message of a browser request from a
	// foreign origin (the MCP transport's Origin check, against DNS
	// rebinding).
	MsgOriginForbidden = "Origin not allowed: /mcp answers browser requests only from this service's own origin and the hosts in MCP_ALLOWED_ORIGINS."
	// MsgHostForbidden is the 403 message of a request to a server
	// listening on a loopback address that names another host (a DNS
	// rebinding).
	MsgHostForbidden = "Host not allowed: a server listening on a loopback address answers only requests addressed to localhost."
)

// checkOrigin applies the MCP transport's rule against DNS rebinding: a
// request carrying Origin must come from the service's own origin (its
// host is the request's Host) or a host matching one of allowed (path.Match
// host patterns, case-insensitive); on a server listening on a loopback
// address, the request's Host, and its Origin's, must be loopback names
// too, unless allowed. A request without Origin (not from a browser)
// passes the Origin check. It returns the refusal's message, or "".
func checkOrigin(r *http.Request, allowed []string) string {
	loopback := false
	switch a := r.Context().Value(http.LocalAddrContextKey).(type) {
	case *net.TCPAddr: // read as it is, not printed and parsed again
		loopback = a.IP.IsLoopback()
	case net.Addr:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			loopback = ap.Addr().IsLoopback()
		}
	}
	if loopback && !loopbackHost(r.Host) && !matches(allowed, r.Host) {
		return MsgHostForbidden
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return MsgOriginForbidden
	}
	host := strings.ToLower(u.Host)
	switch {
	case matches(allowed, host):
		return ""
	case host != strings.ToLower(r.Host):
		return MsgOriginForbidden
	case loopback && !loopbackHost(host):
		return MsgOriginForbidden
	}
	return ""
}

// matches reports whether host matches one of the patterns.
func matches(patterns []string, host string) bool {
	host = strings.ToLower(host)
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(strings.TrimSpace(p)), host); ok {
			return true
		}
	}
	return false
}

// loopbackHost reports whether a Host value (with or without port) names
// the local machine: localhost or a loopback address.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(strings.ToLower(host), "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// msgInvalidParams replaces a protocol library's invalid-params message
// that quotes the client's params or names Go types.
const msgInvalidParams = "Invalid params: params must be a JSON object as the method's schema describes."

// maxErrorMessage bounds the message of a JSON-RPC error the SDK wrote.
const maxErrorMessage = 256

// Messages of a body the SDK could not take as a message.
const (
	msgParseError     = "Parse error: the body is not JSON."
	msgInvalidRequest = "Invalid Request: the body is not a JSON-RPC 2.0 message or batch of messages."
)

// messageID is the id of body when it is one JSON-RPC message whose id is
// a number or a short string (nil otherwise, answered as null), and its
// method.
func messageID(body []byte) (json.RawMessage, string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil, ""
	}
	var v any
	if len(m.ID) == 0 || len(m.ID) > 66 || json.Unmarshal(m.ID, &v) != nil {
		return nil, m.Method
	}
	switch v.(type) {
	case float64, string:
		return m.ID, m.Method
	}
	return nil, m.Method
}

// codeServerError is JSON-RPC's first implementation-defined server error,
// the code of a transport refusal that is not about the message.
const codeServerError = -32000

// plainErrors holds the SDK handler's response and rewrites its JSON-RPC
// errors before they go out: a message quoting the client's input at full
// size (the SDK echoes unparseable params whole) or naming Go types is
// replaced or cut, so no error is larger than its bound.
//
// The SDK refuses what it cannot take as a message (a body that is not
// JSON or not JSON-RPC, a method other than POST, an Accept header
// without both media types) with http.Error: a line of plain text.
// Those go out as JSON-RPC error objects (id null) with the same status
// and message, as the protocol's reference server answers them, so that a
// client reads every answer of /mcp as JSON: -32700 for a body that is not
// JSON, -32601 with the message's id for a method the server does not
// have, -32600 for another 400, -32000 otherwise.
type plainErrors struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
	// request is the request's body.
	request []byte
}

func (p *plainErrors) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

func (p *plainErrors) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return p.buf.Write(b)
}

// finish writes the held response, its errors rewritten.
func (p *plainErrors) finish() {
	body := p.buf.Bytes()
	if p.status == 0 {
		p.status = http.StatusOK
	}
	if p.status >= 400 && strings.HasPrefix(p.Header().Get("Content-Type"), "text/plain") {
		code, msg := int64(codeServerError), strings.TrimSpace(string(body))
		var id json.RawMessage
		if p.status == http.StatusBadRequest {
			switch {
			case !json.Valid(p.request):
				code, msg = jsonrpc.CodeParseError, msgParseError
			case strings.HasPrefix(msg, "malformed payload"):
				// The SDK's reason names its decoder's Go types.
				code, msg = jsonrpc.CodeInvalidRequest, msgInvalidRequest
			case strings.HasPrefix(msg, "JSON RPC not handled"):
				// A method the server does not have: the message's own
				// error, answering its id.
				var method string
				id, method = messageID(p.request)
				code, msg = jsonrpc.CodeMethodNotFound, "Method not found: "+strconv.Quote(access.Clip(method))
			default:
				code = jsonrpc.CodeInvalidRequest
			}
		}
		p.Header().Del("Content-Length")
		p.Header().Del("X-Content-Type-Options")
		writeRPCErrorID(p.ResponseWriter, p.status, id, code, access.Clip(msg))
		return
	}
	if bytes.Contains(body, []byte(`"error"`)) && strings.HasPrefix(p.Header().Get("Content-Type"), "application/json") {
		if out, ok := rewriteErrors(body); ok {
			body = out
			p.Header().Del("Content-Length")
		}
	}
	p.ResponseWriter.WriteHeader(p.status)
	p.ResponseWriter.Write(body) //nolint:errcheck
}

// rewriteErrors rewrites the error messages of a JSON-RPC response or
// batch; ok is false when nothing changed.
func rewriteErrors(body []byte) ([]byte, bool) {
	trimmed := bytes.TrimSpace(body)
	var msgs []map[string]json.RawMessage
	batch := len(trimmed) > 0 && trimmed[0] == '['
	if batch {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return nil, false
		}
	} else {
		var m map[string]json.RawMessage
		if json.Unmarshal(trimmed, &m) != nil {
			return nil, false
		}
		msgs = []map[string]json.RawMessage{m}
	}
	changed := false
	for _, m := range msgs {
		raw, ok := m["error"]
		if !ok {
			continue
		}
		var e struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		}
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		msg := e.Message
		if e.Code == -32602 && (len(msg) > maxErrorMessage || strings.Contains(msg, "unmarshal") || strings.Contains(msg, "Go value")) {
			msg = msgInvalidParams
		} else if len(msg) > maxErrorMessage {
			msg = access.Clip(msg)
		}
		invalidData := e.Code == -32602 && len(e.Data) > maxErrorMessage
		if msg == e.Message && !invalidData {
			continue
		}
		e.Message = msg
		if invalidData {
			e.Data = nil // a refusal of the params may quote them; others (402 requirements) are the server's
		}
		m["error"], _ = json.Marshal(e)
		changed = true
	}
	if !changed {
		return nil, false
	}
	var out []byte
	if batch {
		out, _ = json.Marshal(msgs)
	} else {
		out, _ = json.Marshal(msgs[0])
	}
	return out, true
}
