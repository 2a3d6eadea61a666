package mcp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/observe"
	"github.com/cryptointel/cryptointel/wire"
)

// The x402 MCP transport's metadata keys and error code.
const (
	// MetaPayment is the params._meta key of an x402 PaymentPayload.
	MetaPayment = "x402/payment"
	// MetaPaymentResponse is the result._meta key of the settlement.
	MetaPaymentResponse = "x402/payment-response"
	// CodePaymentRequired is the JSON-RPC error code of a call that needs a
	// payment (or whose payment was refused).
	CodePaymentRequired = 402
)

// legacyParam is the /v1 routes' query parameter that, false, leaves the
// legacy aliases out of every event of the response: the lean shape the
// tools return.
const legacyParam = "legacy"

// tlsState marks an in-process route call as made over TLS when the /mcp
// request was (the route's payment offers name an https resource).
var tlsState = &tls.ConnectionState{}

// msgPaymentRequired is the 402's reason when the call carried no payment.
const msgPaymentRequired = `Payment required: pay with x402 in params._meta["x402/payment"] (or send an API key)`

// routeResponse is a route's answer to an in-process call.
type routeResponse struct {
	status int
	header http.Header
	body   []byte
	tag    string // the body's ETag when the response cache served it
	// spans are the spans in body of its nested lists' elements
	// (RouteAnswer.Spans), nil when it has none.
	spans []jsonw.Span
	// release hands a lent body back (RouteAnswer.Release), nil for one
	// that is not lent.
	release func()
}

// Header implements http.ResponseWriter.
func (r *routeResponse) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter.
func (r *routeResponse) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// Write implements http.ResponseWriter.
func (r *routeResponse) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, p...)
	return len(p), nil
}

// message is the route's {"error": "..."} message.
func (r *routeResponse) message() string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(r.body, &e) != nil || e.Error == "" {
		return http.StatusText(r.status)
	}
	return e.Error
}

// payment is the x402 payment a call carries, as the route's header, and
// its x402 version.
type payment struct {
	header, value string
	version       int
}

// paymentOf reads params._meta["x402/payment"]: a PaymentPayload object
// becomes the route's X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (v2)
// header, base64 JSON as on HTTP. Absent is nil; anything else is a
// JSON-RPC invalid-params error, as the transport specifies.
func paymentOf(meta sdk.Meta) (*payment, error) {
	v, ok := meta[MetaPayment]
	if !ok || v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	var p struct {
		X402Version *int `json:"x402Version"`
	}
	if err != nil || !bytes.HasPrefix(raw, []byte("{")) || json.Unmarshal(raw, &p) != nil || p.X402Version == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: `Invalid parameters: malformed payment payload in _meta["x402/payment"]: expected an x402 PaymentPayload object`}
	}
	header := "PAYMENT-SIGNATURE"
	if *p.X402Version == 1 {
		header = "X-PAYMENT"
	}
	return &payment{header: header, value: base64.StdEncoding.EncodeToString(raw), version: *p.X402Version}, nil
}

// do runs one route call in process, as the caller: its Authorization,
// the request id of the /mcp request, and its payment. A route whose
// events carry legacy aliases is asked for the lean shape (legacyParam):
// its operation leaves them out, so neither the executor nor the lean
// pass spends anything on them.
func (s *Server) do(ctx context.Context, info *requestInfo, authorization string, op *operation, params map[string]string, pay *payment) *routeResponse {
	if s.cfg.Call != nil {
		return s.call(ctx, info, authorization, op, params, pay)
	}
	path := op.path
	q := url.Values{}
	if p := op.params[legacyParam]; p != nil && p.In == "query" {
		q.Set(legacyParam, "false")
	}
	for name, v := range params {
		if v == "" {
			continue
		}
		if p := op.params[name]; p != nil && p.In == "path" {
			path = strings.Replace(path, "{"+name+"}", url.PathEscape(v), 1)
			continue
		}
		q.Set(name, v)
	}
	target := path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	return s.serve(ctx, info, authorization, op.method, target, nil, pay)
}

// call runs one route call through Config.Call: no request written, the
// parameters handed over as they are.
func (s *Server) call(ctx context.Context, info *requestInfo, authorization string, op *operation, params map[string]string, pay *payment) *routeResponse {
	values := params
	if p := op.params[legacyParam]; p != nil && p.In == "query" {
		values = make(map[string]string, len(params)+1)
		for k, v := range params {
			values[k] = v
		}
		values[legacyParam] = "false"
	}
	// The first three names are canonical already: set as they are.
	header := make(http.Header, 4)
	if authorization != "" {
		header["Authorization"] = []string{authorization}
	}
	if info.requestID != "" {
		header["X-Request-Id"] = []string{info.requestID}
	}
	if info.proto != "" {
		header["X-Forwarded-Proto"] = []string{info.proto}
	}
	if pay != nil {
		header.Set(pay.header, pay.value)
	}
	a := s.cfg.Call(ctx, op.key(), values, header, info.host, info.remoteAddr, info.tls)
	return &routeResponse{status: a.Status, header: a.Marks, body: a.Body, tag: a.Tag, spans: a.Spans, release: a.Release}
}

// serve sends one request to the API in process.
func (s *Server) serve(ctx context.Context, info *requestInfo, authorization, method, target string, body []byte, pay *payment) *routeResponse {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return &routeResponse{status: http.StatusBadRequest, body: []byte(`{"error":"invalid request"}`)}
	}
	req.Host, req.RemoteAddr = info.host, info.remoteAddr
	if info.tls {
		req.TLS = tlsState
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if info.requestID != "" {
		req.Header.Set("X-Request-Id", info.requestID)
	}
	if info.proto != "" {
		req.Header.Set("X-Forwarded-Proto", info.proto)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if pay != nil {
		req.Header.Set(pay.header, pay.value)
	}
	res := &routeResponse{header: http.Header{}}
	s.cfg.API.ServeHTTP(res, req)
	if res.status == 0 {
		res.status = http.StatusOK
	}
	return res
}

// toolHandler serves tools/call for t through the SDK.
func (s *Server) toolHandler(t *tool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		ctx, info, cancel := callContext(ctx)
		defer cancel()
		authorization := ""
		if req.Extra != nil {
			authorization = req.Extra.Header.Get("Authorization")
		}
		c := s.runTool(ctx, info, authorization, t, req.Params.Arguments, req.Params.Meta)
		return c.result(), c.err
	}
}

// toolCall is the outcome of one tool call.
type toolCall struct {
	res     *sdk.CallToolResult // a tool error
	out     *toolOutput         // a success
	err     error               // a JSON-RPC error
	outcome string              // as logs and metrics name it
	routes  int                 // the route calls made
	// unauthorized is the message of a route that refused the key (401).
	unauthorized string
}

// toolOutput is a successful call's result as the fast path writes it:
// the structured content and the text, each written once.
type toolOutput struct {
	// structured is the structured content (compact JSON) but for its
	// last member, hint (when not ""): a body read in place stays the
	// route's, and the hint is added as the response is written.
	structured []byte
	hint       string
	// textJSON is the text content as a JSON string, quotes included:
	// as the response carries it.
	textJSON []byte
	meta     sdk.Meta // the settlement of a paid call
	// buffer is the pooled buffer textJSON was written in, nil when it
	// was not or the output is kept for reuse (release).
	buffer *[]byte
	// lent hands back the route's body the output reads in place (a body
	// lent by its route, RouteAnswer.Release), nil when there is none or
	// the output is kept for reuse (release).
	lent func()
}

// structuredJSON is the whole structured content, the hint included.
func (o *toolOutput) structuredJSON() []byte {
	if o.hint == "" {
		return o.structured
	}
	return withMember(o.structured, "hint", o.hint)
}

// result is the call's result as the SDK takes it.
func (c toolCall) result() *sdk.CallToolResult {
	if c.out == nil {
		return c.res
	}
	res := &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: unquote(c.out.textJSON)}},
		StructuredContent: json.RawMessage(c.out.structuredJSON()),
	}
	if c.out.meta != nil {
		res.Meta = c.out.meta
	}
	return res
}

// runTool makes one tool call and writes its log line and metrics. When
// the call is its request's only message, its line is the request's: the
// request's log line is named "mcp tool" and carries the call's fields,
// one line where there would be two.
func (s *Server) runTool(ctx context.Context, info *requestInfo, authorization string, t *tool, arguments json.RawMessage, meta sdk.Meta) toolCall {
	start := time.Now()
	c := s.callTool(ctx, info, authorization, t, arguments, meta)
	if c.routes == 0 {
		s.countRefused(ctx, info, authorization, &c)
	}
	size := 0
	if c.out != nil {
		size = len(c.out.structured) + len(c.out.hint) + len(c.out.textJSON)
	} else if c.res != nil {
		if b, ok := c.res.StructuredContent.(json.RawMessage); ok {
			size = len(b)
		}
		for _, content := range c.res.Content {
			if tc, ok := content.(*sdk.TextContent); ok {
				size += len(tc.Text)
			}
		}
	}
	d := time.Since(start)
	if info.single {
		observe.MCPCall("tool", t.def.Name, c.outcome, d)
		level := slog.LevelInfo
		if c.outcome == outcomeError {
			level = slog.LevelError
		}
		if observe.Annotate(info.ctx, "mcp tool", level, slog.String("tool", t.def.Name),
			slog.String("key_prefix", keyPrefix(authorization)), slog.String("outcome", c.outcome)) {
			return c
		}
		s.logLine(ctx, info, "tool", t.def.Name, authorization, c.outcome, size, d)
		return c
	}
	s.logCall(ctx, info, "tool", t.def.Name, authorization, c.outcome, size, d)
	return c
}

// countRefused counts a call refused before any route (its arguments or
// payment payload): with a key, one request in the key's rate window (one
// statement, or none when the window is known spent), which may refuse it
// instead; without one, against the client address's limit.
func (s *Server) countRefused(ctx context.Context, info *requestInfo, authorization string, c *toolCall) {
	var err error
	if _, key := splitBearer(authorization); key != "" {
		if s.cfg.Count != nil {
			err = s.cfg.Count(ctx, authorization)
		}
	} else if s.cfg.AdmitAnonymous != nil {
		host, _, serr := net.SplitHostPort(info.remoteAddr)
		if serr != nil {
			host = info.remoteAddr
		}
		err = s.cfg.AdmitAnonymous(host)
	}
	switch cryptointel.ErrorCode(err) {
	case "":
	case cryptointel.EUNAUTHORIZED:
		*c = toolCall{res: toolError(cryptointel.ErrorMessage(err)), outcome: outcomeRefused, unauthorized: cryptointel.ErrorMessage(err)}
	case cryptointel.ERATELIMIT:
		*c = toolCall{res: toolError(cryptointel.ErrorMessage(err)), outcome: outcomeRefused}
	default:
		*c = toolCall{err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cryptointel.ErrorMessage(err)}, outcome: outcomeError}
	}
}

// callTool checks the arguments, makes the tool's route calls and turns
// their answers into the tool's result.
func (s *Server) callTool(ctx context.Context, info *requestInfo, authorization string, t *tool, arguments json.RawMessage, meta sdk.Meta) toolCall {
	a, err := parseArgs(t.def.Name, t.args, arguments)
	if err != nil {
		return toolCall{res: toolError(err.Error()), outcome: outcomeInvalid}
	}
	pay, err := paymentOf(meta)
	if err != nil {
		return toolCall{err: err, outcome: outcomeInvalid}
	}
	if _, key := splitBearer(authorization); key != "" && s.cfg.SpentWindow != nil && s.cfg.RateLimitMessage != nil {
		if after, spent := s.cfg.SpentWindow(ctx, authorization); spent {
			// The route's answer, without its statement.
			res := &routeResponse{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {strconv.Itoa(after)}}}
			res.body, _ = json.Marshal(map[string]string{"error": s.cfg.RateLimitMessage()})
			return toolCall{res: routeError(res), outcome: outcomeRefused, routes: 1}
		}
	}
	var (
		bodies     [][]byte
		tag        string // the single body's tag, when the response cache served it
		spans      []jsonw.Span
		settlement json.RawMessage
		refused    *toolCall
		lent       func() // hands a route's body back (routeResponse.release): read as it is, not by a tool's own Read
	)
	// answered takes the answer of the call's n-th read: false, with
	// refused set, when it is not a success.
	answered := func(res *routeResponse, body []byte, n int) bool {
		switch res.status {
		case http.StatusOK:
		case http.StatusPaymentRequired:
			refused = &toolCall{outcome: outcomePaymentRequired, routes: n}
			if pay != nil && pay.version == 1 {
				refused.err = paymentRequired(t, res, true)
			} else {
				refused.res = paymentRequiredResult(t, res, pay != nil)
			}
			return false
		default:
			refused = &toolCall{res: routeError(res), outcome: outcomeOf(res.status), routes: n}
			if res.status == http.StatusUnauthorized {
				refused.unauthorized = res.message()
			}
			return false
		}
		if v := res.header.Get("PAYMENT-RESPONSE"); v != "" {
			settlement = decodeReceipt(v)
		}
		bodies = append(bodies, body)
		tag, spans = res.tag, res.spans
		return true
	}
	if t.def.Read != nil {
		res, body := t.def.Read(s, ctx, info, authorization, a, pay)
		if !answered(res, body, 1) {
			return *refused
		}
	} else {
		calls := t.plan(a)
		for i, c := range calls {
			res := s.do(ctx, info, authorization, t.routes[c.route], c.params, pay)
			if !answered(res, res.body, i+1) {
				return *refused
			}
			lent = res.release
		}
	}
	// A result made from a body the response cache served is made once
	// for every call with the same arguments that gets that body.
	key := ""
	if tag != "" && settlement == nil && len(bodies) == 1 && t.def.Compose == nil {
		key = memoKey(t.def.Name, tag, arguments)
		if out, ok := s.results.Get(key); ok {
			return toolCall{out: out, outcome: outcomeOK, routes: 1}
		}
	}
	if len(bodies) != 1 {
		spans = nil
	}
	out := s.output(t, a, bodies, spans)
	if settlement != nil {
		out.meta = sdk.Meta{MetaPaymentResponse: settlement}
	}
	if key != "" {
		out.buffer = nil // reused: its text stays its own
		s.results.Add(key, out)
	} else if lent != nil && len(bodies) == 1 && t.def.Compose == nil {
		out.lent = lent // the body the output reads in place, handed back once written
	}
	return toolCall{out: out, outcome: outcomeOK, routes: len(bodies)}
}

// output turns the bodies of a call's routes into its result in one pass
// over each body (lean.go): the structured content with the hint as its
// last member, and the text rendered in the same pass, the hint as its
// last line.
func (s *Server) output(t *tool, a args, bodies [][]byte, spans []jsonw.Span) *toolOutput {
	summary := t.def.Detail && a.detail() == DetailSummary
	var (
		lean leanResult
		buf  *[]byte // the text's buffer, from textBuffers
	)
	if t.def.Compose == nil {
		buf = textBuffers.Get().(*[]byte)
		lean, _ = walkInto(bodies[0], summary, true, *buf, spans)
	} else {
		for i, b := range bodies {
			bodies[i] = leanBody(b, summary)
		}
		lean = leanResult{body: t.def.Compose(a, bodies)}
		lean.text = render(lean.body)
	}
	// A result without events has its JSON as its text: with the hint
	// member when it is a route's body, followed by a hint line when it
	// was composed or cut.
	hintLine := t.def.Compose != nil
	b, cut := bound(lean.body, MaxResultBytes)
	if cut != "" {
		lean = leanResult{body: b, text: render(b)}
		hintLine = true
	}
	hint := ""
	if t.def.Hint != nil {
		hint = t.def.Hint(a, lean)
	}
	if cut != "" {
		hint = strings.TrimSpace(cut + " " + hint)
	}
	if summary && hint == "" && hasEvents(lean.body) {
		hint = `Events are in summary form: call again with detail="full" for their bullets, owners, participants and evidence.`
	}
	out := &toolOutput{structured: bytes.TrimSpace(lean.body), hint: hint}
	if len(out.structured) < 2 || out.structured[len(out.structured)-1] != '}' {
		out.structured, out.hint = out.structuredJSON(), "" // not an object: no hint member
	}
	switch {
	case lean.text != nil && !t.def.JSONText:
		text := lean.quoted
		if text == nil {
			text = append(append(make([]byte, 0, len(lean.text)+len(hint)+16), '"'), lean.text...)
		} else if buf != nil {
			out.buffer, buf = buf, nil // the text is in it
		}
		if hint != "" {
			text = append(appendEscaped(append(text, "hint: "...), hint), nl...)
		}
		out.textJSON = append(trimNewlines(text), '"')
	case hintLine && !t.def.JSONText:
		text := lean.body
		if hint != "" {
			text = append(append(append(text[:len(text):len(text)], "hint: "...), hint...), '\n')
		}
		out.textJSON = wire.AppendString(nil, unsafeString(bytes.TrimRight(text, "\n")), false)
	default:
		out.textJSON = wire.AppendString(nil, unsafeString(out.structuredJSON()), false)
	}
	if buf != nil {
		textBuffers.Put(buf) // the text is elsewhere
	}
	return out
}

// textBuffers are the buffers the lean pass writes texts in. A result
// written once (a call answered on the fast path, not reused) hands its
// buffer back once its response is written (toolOutput.release).
var textBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// maxPooledText bounds the text buffers kept for reuse.
const maxPooledText = MaxResultBytes

// release hands the text's buffer back for the next call's text, and the
// route's body back to its route when it was lent: the output must not be
// read after.
func (o *toolOutput) release() {
	if o.lent != nil {
		o.lent()
		o.lent, o.structured = nil, nil
	}
	if o.buffer == nil || cap(o.textJSON) > maxPooledText {
		return
	}
	*o.buffer = o.textJSON[:0]
	textBuffers.Put(o.buffer)
	o.buffer, o.textJSON = nil, nil
}

// plan returns the tool's route calls for a.
func (t *tool) plan(a args) []routeCall {
	if t.def.Plan != nil {
		return t.def.Plan(a)
	}
	names := make([]string, len(t.args))
	for i, s := range t.args {
		names[i] = s.name
	}
	return []routeCall{{route: t.def.Routes[0], params: a.params(names...)}}
}

// MetaError is the _meta member of a tool error that holds the route's
// error body: its code (a row of docs/api/errors.md, as on /v1 and in
// GraphQL's extensions.code), the parameter at fault, the link to the
// code's row and the request id.
const MetaError = "cryptointel/error"

// toolError is a tool result reporting msg: an error the agent reads, with
// the error body a program reads in _meta (MetaError).
func toolError(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: msg}},
		Meta: sdk.Meta{MetaError: httperr.NewBody(cryptointel.EINVALID, msg, "")}}
}

// routeError is the tool error of a route's refusal: its exact message,
// and when to retry after a 429; _meta holds the route's error body.
func routeError(res *routeResponse) *sdk.CallToolResult {
	r := toolError(res.message())
	var body httperr.Body
	if json.Unmarshal(res.body, &body) != nil || body.Code == "" {
		body = httperr.NewBody(httperr.CodeForStatus(res.status, res.message()), res.message(), res.header.Get(observe.RequestIDHeader))
	}
	r.Meta[MetaError] = body
	if after := res.header.Get("Retry-After"); after != "" && res.status == http.StatusTooManyRequests {
		r.Content = append(r.Content, &sdk.TextContent{Text: "Retry after " + after + " seconds."})
	}
	return r
}

// paymentRequired is the JSON-RPC 402 error of a route's 402, the shape
// of x402's MCP transport v1 (a call paid with an x402 v1 payload, and
// resources/read): the error's data is paymentRequiredData.
func paymentRequired(t *tool, res *routeResponse, paid bool) error {
	msg, data, _ := paymentRequiredData(t, res, paid)
	if settlement := res.header.Get("X-PAYMENT-RESPONSE"); settlement != "" {
		var d map[string]any
		json.Unmarshal(data, &d) //nolint:errcheck // built just above
		d[MetaPaymentResponse] = decodeReceipt(settlement)
		data, _ = json.Marshal(d)
	}
	return &jsonrpc.Error{Code: CodePaymentRequired, Message: msg, Data: data}
}

// paymentRequiredResult is the tool result of a route's 402 in x402's MCP
// transport v2: isError, the PaymentRequired as structured content and its
// JSON as the text, a failed settlement in
// _meta["x402/payment-response"], and the error body in
// _meta["cryptointel/error"] like every tool error.
func paymentRequiredResult(t *tool, res *routeResponse, paid bool) *sdk.CallToolResult {
	msg, data, _ := paymentRequiredData(t, res, paid)
	meta := sdk.Meta{MetaError: httperr.NewBody(cryptointel.EPAYMENT, msg, res.header.Get(observe.RequestIDHeader))}
	if settlement := res.header.Get("X-PAYMENT-RESPONSE"); settlement != "" {
		meta[MetaPaymentResponse] = decodeReceipt(settlement)
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(data)}},
		StructuredContent: json.RawMessage(data), Meta: meta}
}

// paymentRequiredData is the x402 v2 PaymentRequired of a route's 402
// (its PAYMENT-REQUIRED header) naming the tool as the resource, with the
// reason: its message and JSON.
func paymentRequiredData(t *tool, res *routeResponse, paid bool) (string, []byte, error) {
	data := map[string]any{}
	if raw, err := base64.StdEncoding.DecodeString(res.header.Get("PAYMENT-REQUIRED")); err == nil {
		json.Unmarshal(raw, &data) //nolint:errcheck // an empty object says no x402 offer
	}
	if _, ok := data["x402Version"]; !ok {
		data = map[string]any{"x402Version": 2, "accepts": []any{}}
	}
	resource, _ := data["resource"].(map[string]any)
	if resource == nil {
		resource = map[string]any{"mimeType": "application/json"}
	}
	resource["url"] = "mcp://tool/" + t.def.Name
	resource["description"] = "cryptointel " + t.def.Name + " (one call)"
	data["resource"] = resource
	msg := res.message()
	if !paid {
		msg = msgPaymentRequired
	}
	data["error"] = msg
	b, err := json.Marshal(data)
	return msg, b, err
}

// decodeReceipt decodes a base64 JSON settlement header.
func decodeReceipt(v string) json.RawMessage {
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil || !json.Valid(raw) {
		return nil
	}
	return raw
}
