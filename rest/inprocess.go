package rest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unsafe"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/graph/jsonw"
)

// In-process calls: a caller in this process (the MCP tools) runs a route
// as an HTTP client would, through the same access layer (admission,
// metering, plan gates, prices, payments), the same parameter parsing and
// bounds, the same operation, cache and messages, without what only a
// request off the wire needs: routing by path, the query string parsed
// again, and the frame's encodings (ETag, 304, gzip), which a caller that
// reads the body itself has no use for.

// keyedRoute is a route and its admitted handler.
type keyedRoute struct {
	route   *Route
	handler http.Handler
}

// inProcessQueryKey carries an in-process call's query parameters to
// parseCall, already apart.
type inProcessQueryKey struct{}

// InProcess is what an in-process caller brings to a route call.
type InProcess struct {
	// Header holds the request's credentials and payment as on HTTP
	// (Authorization, PAYMENT-SIGNATURE or X-PAYMENT) and its
	// X-Request-Id and X-Forwarded-Proto.
	Header http.Header
	// Host and RemoteAddr are the outer request's: the address the access
	// layer limits, the host payment offers name.
	Host, RemoteAddr string
	// TLS marks a call whose outer request came over TLS.
	TLS bool
	// Spans asks for Result.Spans.
	Spans bool
	// Lend asks for a body the route computes for the call (no response
	// cache on the way) in a pooled buffer, which the caller hands back
	// with Result.Release once it is done with the body.
	Lend bool
	// StatusUnread says the caller reads none of the headers that describe
	// the route and the key's standing on a success (rate window, month,
	// plan, policy): they are not set (access.WithStatusUnread). Limits,
	// metering and refusals are as ever.
	StatusUnread bool
}

// Result is a route's answer to an in-process call: its status, its marks
// (the headers the access layer and the route set: rate window, credits —
// unless the call said StatusUnread —, payment requirements and
// settlement, Retry-After) and its body (compact JSON: the route's
// envelope, or its error body).
type Result struct {
	Status int
	Marks  http.Header
	Body   []byte
	// Tag is the ETag value (without quotes) of a body served from the
	// response cache: the same tag is the same body, which a caller may
	// use to reuse what it derived from it. "" for a body computed for
	// this call. A tagged Body is the cache's: read it, never modify it.
	Tag string
	// Spans, when the call asked for them (InProcess.Spans) and its graph
	// route computed Body, are the spans in Body of the object elements of
	// the lists nested in its operation's data (the elements of a page's
	// events, of their owners and of their evidence; jsonw.Writer.Spans),
	// as the executor recorded them writing the data, in the order they
	// end; nil otherwise (a body from the response cache or a handler, an
	// error). A reader takes them as hints: an element without one is
	// read from Body.
	Spans []jsonw.Span

	frame *frameState
	// lent marks a Body in a pooled buffer (InProcess.Lend).
	lent bool
}

// Release hands a lent body's buffer back to the pool (InProcess.Lend):
// neither Body nor anything read from it in place may be used afterwards.
// A body not lent is left to the collector.
func (r *Result) Release() {
	if r.lent {
		r.lent = false
		jsonw.Release(r.Body)
		r.Body = nil
	}
}

// Header implements http.ResponseWriter: the marks.
func (r *Result) Header() http.Header { return r.Marks }

// WriteHeader implements http.ResponseWriter.
func (r *Result) WriteHeader(status int) {
	if r.Status == 0 {
		r.Status = status
	}
}

// Write implements http.ResponseWriter.
func (r *Result) Write(p []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	if len(r.Body) == 0 && r.frame != nil && sameBytes(p, r.frame.tagged) {
		// A graph route's body, never modified once built: kept by
		// reference, as the frame keeps it.
		r.Body = p
		return len(p), nil
	}
	r.Body = append(r.Body[:len(r.Body):len(r.Body)], p...) // copied: a writer may reuse p (json.Encoder's pooled buffer)
	return len(p), nil
}

// tlsState marks an in-process request as made over TLS.
var tlsState = &tls.ConnectionState{}

// Call runs the route key ("GET /v1/latest") in process with values, the
// raw values of its parameters by canonical name (path parameters too; ""
// is absent), parsed and bounded by the route exactly as from a query
// string. An unknown route is a 404 result.
func (rt *Router) Call(ctx context.Context, key string, values map[string]string, in InProcess) (res *Result) {
	res = &Result{Marks: http.Header{}}
	kr, ok := rt.byKey[key]
	if !ok {
		writeErrorBody(res, http.StatusNotFound, cryptointel.ENOTFOUND, msgNotFound)
		return res
	}
	route := kr.route
	path := route.Path
	query := url.Values{}
	var pathValues [][2]string
	for name, v := range values {
		if v == "" {
			continue
		}
		if p := route.param(name); p != nil && p.In == "path" {
			path = strings.Replace(path, "{"+name+"}", url.PathEscape(v), 1)
			pathValues = append(pathValues, [2]string{name, v})
			continue
		}
		query[name] = []string{v}
	}
	req := &http.Request{
		Method: route.Method, URL: &url.URL{Path: path, RawQuery: query.Encode()},
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: in.Header, Host: in.Host, RemoteAddr: in.RemoteAddr, RequestURI: path,
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if in.TLS {
		req.TLS = tlsState
	}
	for _, pv := range pathValues {
		req.SetPathValue(pv[0], pv[1])
	}
	ctx = context.WithValue(ctx, inProcessQueryKey{}, query)
	if in.StatusUnread {
		ctx = access.WithStatusUnread(ctx)
	}
	res.frame = &frameState{logger: rt.logger}
	ctx = context.WithValue(ctx, frameKey{}, res.frame)
	var sink *spanSink
	if in.Spans || in.Lend {
		sink = &spanSink{spans: in.Spans, lend: in.Lend}
		ctx = context.WithValue(ctx, spansKey{}, sink)
	}
	req = req.WithContext(ctx)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			// A bug, as the frame answers it: a JSON 500, logged.
			*res = Result{Marks: http.Header{}}
			WriteError(res, req, fmt.Errorf("panic serving %s: %v", path, v))
		}
	}()
	kr.handler.ServeHTTP(res, req)
	if res.Status == 0 {
		res.Status = http.StatusOK
	}
	if res.frame.tag != "" && sameBytes(res.Body, res.frame.tagged) {
		res.Tag = res.frame.tag
	}
	if sink != nil && sameBytes(res.Body, sink.body) {
		res.Spans, res.lent = sink.elements, sink.lent
	}
	res.frame = nil
	return res
}

// sameBytes reports whether a and b are the same bytes in memory (not
// merely equal).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// param returns the route's parameter called name, or nil.
func (r *Route) param(name string) *Param {
	for i := range r.Params {
		if r.Params[i].Name == name {
			return &r.Params[i]
		}
	}
	return nil
}

// spansKey carries an in-process call's spanSink to the route's
// operation (Router.execute).
type spansKey struct{}

// spanSink carries what an in-process call asked of its operation (the
// spans, a lent body) and receives the body it computed with the spans in
// it (Result.Spans) and whether the body is lent.
type spanSink struct {
	spans, lend bool
	body        []byte
	elements    []jsonw.Span
	lent        bool
}
