package mcp

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/wire"
)

// The common case answered directly: a POST holding one tools/call request
// of a handshake-era protocol version (every version before 2026-07-28;
// stateless, so nothing of a session is involved) runs the same tool call
// as the SDK's handler would, and its JSON-RPC response is written in one
// pass: the structured content, already compact JSON, is copied once
// rather than compacted again at each layer of the SDK's encoding, which
// cost several times the route's own CPU per call (see
// tests/bench/NOTES.md). Everything else — initialize, the lists,
// resources, prompts, batches, the 2026-07-28 protocol, anything the SDK
// would refuse — goes to the SDK's handler. TestFastPathAnswersAsTheSDK
// holds the two answers equal.

// legacyVersions are the handshake-era protocol versions the SDK serves.
var legacyVersions = slices.DeleteFunc(sdk.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })

// fastRequest is a single tools/call request.
type fastRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  *fastParams     `json:"params"`
}

// fastParams are a tools/call's params.
type fastParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      sdk.Meta        `json:"_meta"`
}

// fastTool returns the tool of a request the fast path answers, and the
// request; nil when the SDK's handler should serve it.
func (s *Server) fastTool(r *http.Request, body []byte) (*tool, *fastRequest) {
	if r.Method != http.MethodPost || len(body) == 0 || bytes.TrimSpace(body)[0] != '{' ||
		!bytes.Contains(body, []byte(`"tools/call"`)) {
		return nil, nil
	}
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(legacyVersions, v) {
		return nil, nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" { // the common case, without parsing
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return nil, nil
		}
	}
	accept := strings.Join(r.Header.Values("Accept"), ",")
	if !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
		return nil, nil
	}
	req, ok := readFastRequest(body)
	if !ok || req.JSONRPC != "2.0" || req.Method != "tools/call" || req.Params == nil || !plainID(req.ID) {
		return nil, nil
	}
	t := s.byName[req.Params.Name]
	if t == nil {
		return nil, nil
	}
	return t, req
}

// readFastRequest reads body as a fastRequest, as json.Unmarshal would
// for a request whose members are named exactly, each once: the request's
// members and its params' (name, arguments, _meta) are found in one pass
// over the JSON, with no decoding but of _meta. Anything else — another
// member, a name in another case, a member twice, a params that is not
// an object — is not read (false), and goes to the SDK.
func readFastRequest(body []byte) (*fastRequest, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return nil, false
	}
	req := &fastRequest{}
	var seen [4]bool
	ok := true
	once := func(i int) bool {
		if seen[i] {
			ok = false
		}
		seen[i] = true
		return ok
	}
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "jsonrpc":
			if ok = once(0) && v.Type == gjson.String; ok {
				req.JSONRPC = v.Str
			}
		case "id":
			if ok = once(1); ok {
				req.ID = json.RawMessage(v.Raw)
			}
		case "method":
			if ok = once(2) && v.Type == gjson.String; ok {
				req.Method = v.Str
			}
		case "params":
			if ok = once(3) && v.IsObject(); ok {
				req.Params, ok = readFastParams(v)
			}
		default:
			ok = false
		}
		return ok
	})
	return req, ok
}

// readFastParams reads a tools/call's params object for readFastRequest.
func readFastParams(v gjson.Result) (*fastParams, bool) {
	p := &fastParams{}
	var seen [3]bool
	ok := true
	v.ForEach(func(k, v gjson.Result) bool {
		i := -1
		switch k.Str {
		case "name":
			i = 0
			if ok = v.Type == gjson.String; ok {
				p.Name = v.Str
			}
		case "arguments":
			i = 1
			p.Arguments = json.RawMessage(v.Raw)
		case "_meta":
			i = 2
			ok = json.Unmarshal([]byte(v.Raw), &p.Meta) == nil
		}
		if i < 0 || seen[i] {
			ok = false
		} else {
			seen[i] = true
		}
		return ok
	})
	return p, ok
}

// plainID reports whether id, a JSON value the request was decoded with
// (so valid JSON), is a JSON-RPC request id: a string or a number, which
// its first byte tells.
func plainID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// serveFast runs the call and writes its JSON-RPC response. A call that
// presents a key is not checked up front: its route checks the key as it
// meters the call (one statement instead of two), and a route's 401 is
// answered as the up-front check answers, with HTTP 401 and its
// challenge; a call that reached no route is checked then.
func (s *Server) serveFast(w http.ResponseWriter, r *http.Request, info *requestInfo, t *tool, req *fastRequest) {
	authorization := r.Header.Get("Authorization")
	c := s.runTool(r.Context(), info, authorization, t, req.Params.Arguments, req.Params.Meta)
	switch {
	case c.unauthorized != "":
		s.refuse(w, r, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", c.unauthorized))
		return
	case c.routes == 0:
		if err := s.authenticate(r.Context(), authorization); err != nil {
			s.refuse(w, r, err)
			return
		}
	}
	bp := responseBuffers.Get().(*[]byte)
	b := appendResponse((*bp)[:0], bytes.TrimSpace(req.ID), c)
	// Written whole with its length, as the routes write theirs: not
	// chunked, so the response goes out without a last empty chunk of its
	// own (one write less on the connection).
	h := w.Header()
	h["Cache-Control"] = cacheControl
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(http.StatusOK)
	w.Write(b) //nolint:errcheck // the client went away
	if c.out != nil {
		c.out.release()
	}
	if cap(b) <= maxPooledResponse {
		*bp = b
		responseBuffers.Put(bp)
	}
}

// The fast path's response headers, shared (never modified once set).
var (
	cacheControl    = []string{"no-cache, no-transform"}
	contentTypeJSON = []string{"application/json"}
)

// responseBuffers are the buffers the fast path writes its responses in:
// a response is written once, into a buffer sized by the last ones.
var responseBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxPooledResponse bounds the buffers kept for reuse.
const maxPooledResponse = 4 * MaxResultBytes

// appendResponse appends the JSON-RPC response of a tool call: its result,
// or its error (a *jsonrpc.Error; any other is an internal error).
func appendResponse(b []byte, id json.RawMessage, c toolCall) []byte {
	if c.out != nil && c.err == nil {
		return appendOutput(b, id, c.out)
	}
	return appendResult(b, id, c.res, c.err)
}

// appendOutput appends the JSON-RPC response of a successful call: the
// structured content and the text, each copied once (the text escaped as
// it is copied, unless a reused result has it escaped already).
func appendOutput(b []byte, id json.RawMessage, out *toolOutput) []byte {
	b = appendResultHead(b, id, out.meta)
	b = append(b, `"content":[{"type":"text","text":`...)
	b = append(b, out.textJSON...)
	b = append(b, `}],"structuredContent":`...)
	if out.hint != "" {
		b = appendMember(b, out.structured, "hint", out.hint)
	} else {
		b = append(b, out.structured...)
	}
	return append(b, "}}"...)
}

// appendResult appends the JSON-RPC response of a tool error or a
// JSON-RPC error.
func appendResult(b []byte, id json.RawMessage, res *sdk.CallToolResult, err error) []byte {
	if err != nil {
		b = appendID(b, id)
		e, ok := err.(*jsonrpc.Error)
		if !ok {
			e = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
		}
		b = append(b, `,"error":{"code":`...)
		b = strconv.AppendInt(b, e.Code, 10)
		b = append(b, `,"message":`...)
		b = wire.AppendString(b, e.Message, false)
		if len(e.Data) > 0 {
			b = append(b, `,"data":`...)
			b = append(b, e.Data...)
		}
		return append(b, "}}"...)
	}
	b = appendResultHead(b, id, res.Meta)
	b = append(b, `"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":"text","text":`...)
		b = wire.AppendString(b, c.(*sdk.TextContent).Text, false)
		b = append(b, '}')
	}
	b = append(b, ']')
	if raw, ok := res.StructuredContent.(json.RawMessage); ok && len(raw) > 0 {
		b = append(b, `,"structuredContent":`...)
		b = append(b, raw...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, "}}"...)
}

// appendID appends the start of a JSON-RPC response, up to and with its id.
func appendID(b []byte, id json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	return append(b, id...)
}

// appendResultHead appends the start of a JSON-RPC result, up to its
// content: the id, and the result's _meta when it has one (a paid call's
// settlement).
func appendResultHead(b []byte, id json.RawMessage, meta sdk.Meta) []byte {
	b = appendID(b, id)
	b = append(b, `,"result":{`...)
	if len(meta) > 0 {
		m, _ := json.Marshal(meta)
		b = append(b, `"_meta":`...)
		b = append(b, m...)
		b = append(b, ',')
	}
	return b
}
