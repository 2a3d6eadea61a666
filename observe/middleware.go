package observe

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/httperr"
)

// RequestIDHeader is the header that carries the request id, in and out.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds an incoming request id that is echoed.
const maxRequestIDLen = 128

type requestKey struct{}

// request is the per-request state of the middleware: it is the response
// writer wrapper and the context value at once, so a request costs one
// allocation for it.
type request struct {
	http.ResponseWriter
	id     string
	route  string
	status int
	bytes  int64
	wrote  bool
	// msg, level and attrs name the request's line otherwise (Annotate).
	msg   string
	level slog.Level
	attrs []slog.Attr
}

// WriteHeader records the status.
func (r *request) WriteHeader(status int) {
	if !r.wrote {
		r.status = status
		// 1xx informational responses are not the final status.
		r.wrote = status >= 200
	}
	r.ResponseWriter.WriteHeader(status)
}

// Write records the size of the body.
func (r *request) Write(p []byte) (int, error) {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

// ReadFrom keeps io.Copy's fast path (sendfile) while counting bytes.
func (r *request) ReadFrom(src io.Reader) (int64, error) {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	n, err := io.Copy(r.ResponseWriter, src)
	r.bytes += n
	return n, err
}

// Flush lets streaming handlers flush through the wrapper.
func (r *request) Flush() {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	http.NewResponseController(r.ResponseWriter).Flush() //nolint:errcheck
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *request) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// RequestID returns the id of the request ctx belongs to (Middleware or
// RequestIDs gave it), or "" outside one. Error logs, error presenters and
// the access layer's logs include it; this package is its one owner.
func RequestID(ctx context.Context) string {
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		return r.id
	}
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

type requestIDKey struct{}

// RequestIDs is Middleware's request id alone, for a handler that may also
// be served without Middleware (the /v1 router, the access layer in their
// own tests): a request that has an id keeps it; any other gets one as
// Middleware gives it (assignRequestID).
func RequestIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if RequestID(r.Context()) == "" {
			id := assignRequestID(w, r)
			r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		}
		next.ServeHTTP(w, r)
	})
}

// assignRequestID returns r's id: its X-Request-Id when it is a plausible
// id (ValidRequestID), otherwise a new random one, which then also replaces
// the incoming header. It is set on the response.
func assignRequestID(w http.ResponseWriter, r *http.Request) string {
	id := r.Header.Get(RequestIDHeader)
	if !ValidRequestID(id) {
		id = newRequestID()
		r.Header.Set(RequestIDHeader, id)
	}
	w.Header().Set(RequestIDHeader, id)
	return id
}

// SetRoute names the route that serves the request, for the route label of
// the metrics and the route field of the log line, when a router other than
// the root http.ServeMux picks the handler (the /v1 route table passes its
// pattern, for example "GET /v1/entities/{id}"). Never pass a raw URL.
func SetRoute(ctx context.Context, pattern string) {
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		r.route = pattern
	}
}

// Annotate makes the request's log line the one line of what served it
// (an MCP request that is one tool call: "mcp tool"): the line is named
// msg, logs at least at level, and carries attrs after its own, so that
// the request and what it did are one line rather than two. It reports
// false, changing nothing, outside Middleware.
func Annotate(ctx context.Context, msg string, level slog.Level, attrs ...slog.Attr) bool {
	r, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return false
	}
	r.msg, r.level, r.attrs = msg, level, attrs
	return true
}

// Routed wraps mux so that the pattern it matched reaches Middleware even
// when other middleware between the two replaces the *http.Request. Wrap
// the root mux with it when something sits between Middleware and the mux.
func Routed(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r)
		if req, ok := r.Context().Value(requestKey{}).(*request); ok && req.route == "" {
			req.route = r.Pattern
		}
	})
}

// quietRoutes are probed or scraped often; their requests log at debug
// level so they don't drown the request log.
var quietRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// Middleware returns next wrapped with request ids, metrics and request
// logs:
//
//   - The request id is the incoming X-Request-Id when it is a plausible id
//     (ValidRequestID), otherwise a new random one, which then also replaces
//     the incoming header. It is set on the response, put in the request
//     context (see RequestID; RequestIDs below keeps it) and logged.
//   - Request count and latency are recorded by method, route pattern (never
//     the raw URL: the mux's r.Pattern or SetRoute's, "unmatched" when no
//     route matched) and status.
//   - One JSON log line per request carries request_id, method, route, path
//     (without the query string), status, duration_ms and bytes. Headers are
//     never logged, so neither is Authorization. 5xx log at error level
//     (warning for a failing probe), probes and scrapes at debug, the rest
//     at info. What served the request may make this line its own
//     (Annotate): renamed, with its fields after these.
//   - A panicking handler is answered 500 {"error": "internal server error"}
//     when nothing was written yet, and logged with its request id.
func Middleware(logger *slog.Logger, next http.Handler) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		httpInFlight.Inc()
		defer httpInFlight.Dec()

		req := &request{ResponseWriter: w, id: assignRequestID(w, r)}
		r2 := r.WithContext(context.WithValue(r.Context(), requestKey{}, req))

		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as net/http does
					panic(p)
				}
				logger.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
					slog.String("request_id", req.id), slog.Any("panic", p))
				if !req.wrote {
					req.Header().Set("Content-Type", "application/json")
					req.WriteHeader(http.StatusInternalServerError)
					b, _ := json.Marshal(httperr.NewBody(cryptointel.EINTERNAL, "internal server error", req.id))
					req.Write(b) //nolint:errcheck
				}
			}
			finish(logger, req, r2, start)
		}()
		next.ServeHTTP(req, r2)
	})
}

func finish(logger *slog.Logger, req *request, r *http.Request, start time.Time) {
	elapsed := time.Since(start)
	route := req.route
	if route == "" {
		route = r.Pattern
	}
	route = routeLabel(route)
	status := req.status
	if !req.wrote {
		status = http.StatusOK // net/http answers 200 when a handler writes nothing.
	}
	method := methodLabel(r.Method)
	observeRequest(method, route, status, elapsed)

	level := slog.LevelInfo
	switch quiet := quietRoutes[route]; {
	case status >= 500 && quiet:
		// A failing probe (/readyz while the database is away) repeats
		// every few seconds: a warning, not an error per probe.
		level = slog.LevelWarn
	case status >= 500:
		level = slog.LevelError
	case quiet:
		level = slog.LevelDebug
	}
	msg := "http request"
	if req.msg != "" {
		msg, level = req.msg, max(level, req.level)
	}
	ctx := r.Context()
	if !logger.Enabled(ctx, level) {
		return
	}
	var buf [12]slog.Attr
	attrs := append(buf[:0],
		slog.String("request_id", req.id),
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.Int64("bytes", req.bytes),
	)
	logger.LogAttrs(ctx, level, msg, append(attrs, req.attrs...)...)
}

// RouteUnmatched is the route label of a request no route serves: the
// mux matched no pattern, or its catch-all answered it (SetRoute).
const RouteUnmatched = "unmatched"

// routeLabel turns a mux pattern such as "GET /v1/entities/{id}" into the
// route label "/v1/entities/{id}" (the method is its own label).
func routeLabel(pattern string) string {
	if pattern == "" {
		return RouteUnmatched
	}
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = strings.TrimLeft(pattern[i+1:], " \t")
	}
	return pattern
}

// methodLabel bounds the method label to the standard methods.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// ValidRequestID reports whether id is an acceptable client-supplied
// request id: 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' and '-'.
func ValidRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// newRequestID returns a random 26-character base32 id.
func newRequestID() string {
	return rand.Text()
}
