package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/observe"
)

// Executor runs the routes' fixed operations in process, with the
// resolvers, loaders and error presenter /graphql has
// (resolvers.Executor.Run).
type Executor interface {
	// Run runs operationName of query with variables as the route table
	// parsed them (Call.Vars), writing its data into w: the facade's
	// writer, which asks for HTML-safe strings and for the marks its
	// envelopes read (Data). It returns the operation's errors, each with
	// the cryptointel.Error code in extensions.code.
	Run(ctx context.Context, query, operationName string, variables map[string]any, w *jsonw.Writer) gqlerror.List
}

// Config configures the /v1 router.
type Config struct {
	// Executor runs the routes' operations. Required.
	Executor Executor
	// Schema, when set, is used to validate every embedded operation at
	// startup so a mismatch fails fast. Optional.
	Schema *ast.Schema
	// Wrap wraps each route's handler with the access layer (authentication,
	// plan gate, rate window, credits, policy and metering headers).
	// Defaults to the policy headers alone.
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
	shapes  map[string]*shape
	exec    Executor
	wrap    func(access.Policy, http.Handler) http.Handler
	logger  *slog.Logger
	now     func() time.Time
	mux     *http.ServeMux
	openapi []byte
	cache   *responseCache

	stream    *Route
	streamCfg StreamConfig

	// byKey holds each route and its admitted handler by "METHOD /path",
	// for in-process calls (Call).
	byKey map[string]keyedRoute
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
		byKey:  map[string]keyedRoute{},
		shapes: map[string]*shape{},
	}
	if rt.wrap == nil {
		rt.wrap = func(p access.Policy, h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				access.SetPolicyHeaders(w.Header(), p)
				h.ServeHTTP(w, r)
			})
		}
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
// path, a graph route without an operation, an unknown operation or one
// whose response cannot be read from it.
func (rt *Router) checkTable() error {
	seen := map[string]bool{}
	for i := range rt.routes {
		r := &rt.routes[i]
		key := r.Method + " " + r.Path
		if seen[key] {
			return fmt.Errorf("error checking route table: %s declared twice", key)
		}
		seen[key] = true
		for _, p := range r.Params {
			if p.MaxAge > 0 && p.TooOld == nil {
				return fmt.Errorf("error checking route table: %s %s has MaxAge without its TooOld error", key, p.Name)
			}
		}
		if r.Handler != nil {
			if _, ok := rt.ops[r.Operation]; r.Operation != "" && !ok {
				return fmt.Errorf("error checking route table: %s runs unknown operation %q", key, r.Operation)
			}
			continue
		}
		if r.Operation == "" {
			return fmt.Errorf("error checking route table: %s has neither a handler nor an operation", key)
		}
		if _, ok := rt.ops[r.Operation]; !ok {
			return fmt.Errorf("error checking route table: %s runs unknown operation %q", key, r.Operation)
		}
		for _, file := range []string{r.Operation, r.Operation + "_compact"} {
			if _, ok := rt.ops[file]; !ok {
				continue
			}
			s, err := shapeOf(file)
			if err != nil {
				return fmt.Errorf("error checking route table: %s: %w", key, err)
			}
			rt.shapes[file] = s
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

// frame gives every response its request id (observe's: a valid incoming
// X-Request-Id is echoed, anything else replaced, one assigned by
// observe.Middleware kept), logger and encoding (ETag, 304, gzip).
func (rt *Router) frame(next http.Handler) http.Handler {
	return observe.RequestIDs(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs := &frameState{logger: rt.logger, pool: true}
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
			if fs.release != nil {
				jsonw.Release(fs.release) // written: nothing reads it any more
			}
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
			rt.byKey[r.Method+" "+r.Path] = keyedRoute{route: r, handler: handlers[r.Method]}
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
			access.SetPolicyHeaders(w.Header(), access.Policy{Surface: first.Surface, Layer: first.Layer, Name: first.Name})
			w.Header().Set("Allow", allowHeader)
			writeErrorBody(w, http.StatusMethodNotAllowed, cryptointel.EMETHOD, msgMethodNotAllowed)
		}))
	}
	rt.mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		access.SetPolicyHeaders(w.Header(), notFoundPolicy)
		writeErrorBody(w, http.StatusNotFound, cryptointel.ENOTFOUND, msgNotFound)
	}))
}

// notFoundPolicy is reported on a 404 for a path no route serves; such a
// request costs nothing.
var notFoundPolicy = access.Policy{Surface: surfaceLookup, Layer: access.LayerEvaluation, Name: "not_found"}

// frameState is what the frame shares with the handlers below it through
// the request context: the logger, and the body a graph route computed
// ahead (tagged, kept by reference when written whole) with its ETag when
// it has one (a cached response carries its own, so it is not hashed
// again).
type frameState struct {
	logger *slog.Logger
	tag    string
	tagged []byte
	// notModified, set once the access layer admitted the request, gives
	// its credits back when the frame answers 304 (access.NotModified).
	notModified func(http.Header)
	// pool tells a graph route that the frame writes its body and then
	// gives release back to jsonw's pool (an in-process caller keeps the
	// body it is handed, so its frame does not).
	pool    bool
	release []byte
}

type frameKey struct{}

func loggerFrom(ctx context.Context) *slog.Logger {
	if fs, ok := ctx.Value(frameKey{}).(*frameState); ok && fs.logger != nil {
		return fs.logger
	}
	return slog.Default()
}
