package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/observe"
)

// Executor runs a GraphQL operation in process, the way the /graphql
// endpoint would: same resolvers, loaders and error presenter. Errors carry
// the cryptointel.Error code in extensions.code.
type Executor interface {
	Execute(ctx context.Context, query, operationName string, variables map[string]any) *graphql.Response
}

// Config configures the /v1 router.
type Config struct {
	// Executor runs the routes' operations. Required.
	Executor Executor
	// Schema, when set, is used to validate every embedded operation at
	// startup so a mismatch fails fast. Optional.
	Schema *ast.Schema
	// Wrap wraps each route's handler with the access layer (authentication,
	// plan gate, rate window, credits, metering headers). Defaults to no
	// wrapping.
	Wrap func(access.Policy, http.Handler) http.Handler
	// Routes are extra routes served beside the graph reads (usage,
	// webhooks, export jobs); they are part of the table, the OpenAPI
	// document and the header policy like every other route.
	Routes []Route
	// Logger logs internal errors with their request id. Defaults to
	// slog.Default().
	Logger *slog.Logger
	// Now returns the current time for since windows. Defaults to time.Now.
	Now func() time.Time
	// Cache configures the response cache of the graph-read routes; the
	// zero value disables it.
	Cache CacheConfig
	// Stream configures GET /v1/stream; without Stream.Subscribe the route
	// is not served.
	Stream StreamConfig
}

// Router serves every /v1 route of the table and /openapi.json.
type Router struct {
	routes  []Route
	ops     map[string]*operation
	exec    Executor
	wrap    func(access.Policy, http.Handler) http.Handler
	logger  *slog.Logger
	now     func() time.Time
	mux     *http.ServeMux
	openapi []byte
	cache   *responseCache

	stream    *Route
	streamCfg StreamConfig
}

// New builds the router: it loads and checks every embedded operation (and
// validates it against cfg.Schema when set), checks the table, and
// generates the OpenAPI document. Any problem is returned, so the service
// fails at startup rather than on a request.
func New(cfg Config) (*Router, error) {
	if cfg.Executor == nil {
		return nil, errors.New("error building /v1 router: no executor")
	}
	rt := &Router{
		routes: append(Routes(), cfg.Routes...),
		exec:   cfg.Executor,
		wrap:   cfg.Wrap,
		logger: cfg.Logger,
		now:    cfg.Now,
		mux:    http.NewServeMux(),
		cache:  newResponseCache(cfg.Cache),
	}
	if rt.wrap == nil {
		rt.wrap = func(_ access.Policy, h http.Handler) http.Handler { return h }
	}
	if rt.logger == nil {
		rt.logger = slog.Default()
	}
	if rt.now == nil {
		rt.now = time.Now
	}
	if cfg.Stream.Subscribe != nil {
		rt.streamCfg = cfg.Stream
		if rt.streamCfg.Heartbeat <= 0 {
			rt.streamCfg.Heartbeat = 15 * time.Second
		}
		if rt.streamCfg.WriteTimeout <= 0 {
			rt.streamCfg.WriteTimeout = 30 * time.Second
		}
		rt.routes = append(rt.routes, rt.streamRoute())
		rt.stream = &rt.routes[len(rt.routes)-1]
	}
	ops, err := loadOperations(cfg.Schema)
	if err != nil {
		return nil, fmt.Errorf("error loading /v1 operations: %w", err)
	}
	rt.ops = ops
	if err := rt.checkTable(); err != nil {
		return nil, err
	}
	rt.openapi, err = json.MarshalIndent(OpenAPI(rt.routes), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("error encoding OpenAPI document: %w", err)
	}
	rt.buildMux()
	return rt, nil
}

// checkTable rejects a table that cannot be served: duplicate method and
// path, a graph route without an operation or envelope, an unknown
// operation.
func (rt *Router) checkTable() error {
	seen := map[string]bool{}
	for i := range rt.routes {
		r := &rt.routes[i]
		key := r.Method + " " + r.Path
		if seen[key] {
			return fmt.Errorf("error checking route table: %s declared twice", key)
		}
		seen[key] = true
		if r.Handler != nil {
			if _, ok := rt.ops[r.Operation]; r.Operation != "" && !ok {
				return fmt.Errorf("error checking route table: %s runs unknown operation %q", key, r.Operation)
			}
			continue
		}
		if r.Operation == "" || r.Envelope == nil {
			return fmt.Errorf("error checking route table: %s has neither a handler nor an operation and envelope", key)
		}
		if _, ok := rt.ops[r.Operation]; !ok {
			return fmt.Errorf("error checking route table: %s runs unknown operation %q", key, r.Operation)
		}
	}
	return nil
}

// Routes returns the router's full table, extra routes included.
func (rt *Router) Routes() []Route { return rt.routes }

// OpenAPI returns the generated OpenAPI 3.1 document.
func (rt *Router) OpenAPI() []byte { return rt.openapi }

// OpenAPIHandler serves the OpenAPI document (GET /openapi.json).
func (rt *Router) OpenAPIHandler() http.Handler {
	return rt.frame(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(rt.openapi) //nolint:errcheck
	}))
}

// ServeHTTP serves a /v1 request.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.frame(observe.Routed(rt.mux)).ServeHTTP(w, r)
}

// frame gives every response its request id (the access layer's rule: a
// valid incoming X-Request-Id is echoed, anything else replaced), logger
// and encoding (ETag, 304, gzip).
func (rt *Router) frame(next http.Handler) http.Handler {
	return access.RequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs := &frameState{logger: rt.logger}
		r = r.WithContext(context.WithValue(r.Context(), frameKey{}, fs))
		ew := newEncodingWriter(w, r)
		ew.state = fs
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler || ew.passthrough {
					panic(v)
				}
				// A bug, never the client's doing: answer a JSON 500 (the
				// panic is logged with the request id) instead of dropping
				// the connection.
				ew.reset()
				WriteError(ew, r, fmt.Errorf("panic serving %s: %v", r.URL.Path, v))
			}
			ew.finish()
		}()
		next.ServeHTTP(ew, r)
	}))
}

// buildMux registers one dispatcher per path: it picks the route by
// method (HEAD is served as GET) and answers a JSON 405 with Allow
// otherwise. Any other /v1 path is a JSON 404.
func (rt *Router) buildMux() {
	byPath := map[string][]*Route{}
	var paths []string
	for i := range rt.routes {
		r := &rt.routes[i]
		if _, ok := byPath[r.Path]; !ok {
			paths = append(paths, r.Path)
		}
		byPath[r.Path] = append(byPath[r.Path], r)
	}
	for _, path := range paths {
		routes := byPath[path]
		handlers := map[string]http.Handler{}
		var allow []string
		for _, r := range routes {
			handlers[r.Method] = rt.routeHandler(r)
			allow = append(allow, r.Method)
			if r.Method == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
		slices.Sort(allow)
		allowHeader := strings.Join(allow, ", ")
		first := routes[0].Policy
		rt.mux.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			method := r.Method
			if method == http.MethodHead {
				method = http.MethodGet
			}
			if h, ok := handlers[method]; ok {
				h.ServeHTTP(w, r)
				return
			}
			setPolicyHeaders(w, access.Policy{Surface: first.Surface, Layer: first.Layer, Name: first.Name})
			w.Header().Set("Allow", allowHeader)
			writeJSON(w, http.StatusMethodNotAllowed, ErrorBody{Error: msgMethodNotAllowed})
		}))
	}
	rt.mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setPolicyHeaders(w, notFoundPolicy)
		writeJSON(w, http.StatusNotFound, ErrorBody{Error: msgNotFound})
	}))
}

// notFoundPolicy is reported on a 404 for a path no route serves; such a
// request costs nothing.
var notFoundPolicy = access.Policy{Surface: surfaceLookup, Layer: access.LayerEvaluation, Name: "not_found"}

// setPolicyHeaders writes the route-table headers of p.
func setPolicyHeaders(w http.ResponseWriter, p access.Policy) {
	h := w.Header()
	h.Set("X-Api-Surface", p.Surface)
	h.Set("X-Access-Layer", p.Layer)
	h.Set("X-Endpoint-Policy", p.Name)
	h.Set("X-Credit-Cost", strconv.Itoa(p.CreditCost))
}

// routeHandler is the full handler of one route: policy headers, then the
// access layer, then the route's handler or operation.
func (rt *Router) routeHandler(route *Route) http.Handler {
	var inner http.Handler
	if route.Handler != nil {
		h := route.Handler
		inner = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				WriteError(w, r, err)
			}
		})
	} else {
		inner = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cb, err := rt.runGraph(route, r)
			if err != nil {
				WriteError(w, r, err)
				return
			}
			if fs, ok := r.Context().Value(frameKey{}).(*frameState); ok && cb.tag != "" {
				fs.tag, fs.tagged = cb.tag, cb.body
			}
			writeBody(w, http.StatusOK, cb.body)
		})
	}
	wrapped := rt.wrap(route.Policy, inner)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setPolicyHeaders(w, route.Policy)
		wrapped.ServeHTTP(w, rt.withParsedCall(route, r))
	})
}

// parsedCall is a graph route's call as parsed before the access layer
// runs, or why it did not parse.
type parsedCall struct {
	call *Call
	err  error
}

type parsedCallKey struct{}

// withParsedCall parses r against route before the access layer runs, so
// that a priced route is priced from the call it will serve (its `limit`
// after parsing, defaults and caps: access.WithPricedLimit) and never from
// the raw query string. The parse outcome travels in the context to
// runGraph, or to a handler route's handler (callOf), which report a parse
// error only after the access layer has authenticated and admitted the
// request.
func (rt *Router) withParsedCall(route *Route, r *http.Request) *http.Request {
	c, err := parseCall(route, r, rt.now())
	ctx := context.WithValue(r.Context(), parsedCallKey{}, &parsedCall{call: c, err: err})
	if err == nil && route.Policy.Pricing != nil {
		if limit, ok := c.Values["limit"].(int); ok {
			ctx = access.WithPricedLimit(ctx, limit)
		}
	}
	return r.WithContext(ctx)
}

// callOf returns the call a handler route's request was parsed into by
// the route's declared params, or the first parameter error. Handlers ask
// for it after their own checks (the caller's account), so those come
// first.
func callOf(r *http.Request) (*Call, error) {
	pc, ok := r.Context().Value(parsedCallKey{}).(*parsedCall)
	if !ok {
		return nil, fmt.Errorf("error reading parameters: the request was not parsed by its route")
	}
	if pc.err != nil {
		return nil, pc.err
	}
	return pc.call, nil
}

// runGraph parses the request against the route and returns the encoded
// response: from the response cache when it holds it, otherwise by running
// the operation and building the envelope.
func (rt *Router) runGraph(route *Route, r *http.Request) (*cachedBody, error) {
	var c *Call
	var err error
	if pc, ok := r.Context().Value(parsedCallKey{}).(*parsedCall); ok {
		c, err = pc.call, pc.err
		if c != nil {
			c.Request = r
		}
	} else {
		c, err = parseCall(route, r, rt.now())
	}
	if err != nil {
		return nil, err
	}
	if route.Prepare != nil {
		if err := route.Prepare(c); err != nil {
			return nil, err
		}
	}
	compute := func(ctx context.Context) ([]byte, error) { return rt.execute(ctx, c) }
	if rt.cache != nil {
		return rt.cache.get(r.Context(), c, compute)
	}
	body, err := compute(r.Context())
	if err != nil {
		return nil, err
	}
	return &cachedBody{body: body}, nil
}

// execute runs call c's operation, builds its envelope and encodes it.
func (rt *Router) execute(ctx context.Context, c *Call) ([]byte, error) {
	op, ok := rt.ops[c.Operation]
	if !ok {
		return nil, fmt.Errorf("error running %s: unknown operation %q", c.Route.Path, c.Operation)
	}
	vars, err := jsonVariables(c.Vars)
	if err != nil {
		return nil, err
	}
	resp := rt.exec.Execute(ctx, op.Query, op.Name, vars)
	if resp == nil {
		return nil, fmt.Errorf("error running %s: no response", op.Name)
	}
	if len(resp.Errors) > 0 {
		return nil, graphError(op.Name, resp.Errors)
	}
	data, err := withLegacyAliases(resp.Data)
	if err != nil {
		return nil, fmt.Errorf("error adding legacy aliases to %s: %w", op.Name, err)
	}
	env, err := c.Route.Envelope(c, data)
	if err != nil {
		return nil, err
	}
	body, err := encodeJSON(env)
	if err != nil {
		return nil, fmt.Errorf("error encoding %s response: %w", c.Route.Path, err)
	}
	return body, nil
}

// jsonVariables round-trips vars through JSON (numbers as json.Number), so
// the executor sees exactly what the /graphql transport would give it.
func jsonVariables(vars map[string]any) (map[string]any, error) {
	b, err := json.Marshal(vars)
	if err != nil {
		return nil, fmt.Errorf("error encoding variables: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("error decoding variables: %w", err)
	}
	return out, nil
}

// graphError turns GraphQL errors into the domain error the status table
// maps: the first error that carries a known code wins; an error without a
// code (a validation failure of a fixed operation, a panic) is internal.
func graphError(opName string, errs gqlerror.List) error {
	for _, e := range errs {
		code, _ := e.Extensions["code"].(string)
		if _, ok := statusByCode[code]; ok && code != cryptointel.EINTERNAL {
			return &cryptointel.Error{Code: code, Message: e.Message}
		}
	}
	return fmt.Errorf("error running operation %s: %w", opName, errs)
}

// frameState is what the frame shares with the handlers below it through
// the request context: the logger, and the ETag of a body computed ahead
// (a cached response carries its own, so it is not hashed again).
type frameState struct {
	logger *slog.Logger
	tag    string
	tagged []byte
}

type frameKey struct{}

// RequestID returns the id of ctx's request (echoed from a valid
// X-Request-Id header, else generated), as the access layer assigns it.
func RequestID(ctx context.Context) string { return access.RequestIDFrom(ctx) }

func loggerFrom(ctx context.Context) *slog.Logger {
	if fs, ok := ctx.Value(frameKey{}).(*frameState); ok && fs.logger != nil {
		return fs.logger
	}
	return slog.Default()
}
