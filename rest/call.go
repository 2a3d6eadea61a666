// A request to a route becomes a Call: its parameters parsed against the
// route table, then its operation run (graph routes) or its handler
// called, behind the access layer.
package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/httperr"
)

// Parameter types a route may declare.
const (
	TypeString      = "string"
	TypeInteger     = "integer"
	TypeBoolean     = "boolean"
	TypeDateTime    = "date-time"
	TypeIntegerList = "integer-list"
	TypeStringList  = "string-list"
)

// intp returns a pointer to n, for Param bounds.
func intp(n int) *int { return &n }

// parseCall parses r's parameters against rt's declarations and returns the
// call with Values, Given and Vars filled. Parameters are checked in the
// order they are declared, so the first problem reported is the one the
// contract lists first.
//
// Duplicated query parameters: the first occurrence wins, and the canonical
// name wins over its aliases (?q=a&query=b searches for b). An empty value
// counts as absent, except for a boolean given bare (?compact), which is true.
func parseCall(rt *Route, r *http.Request, now time.Time) (*Call, error) {
	c := &Call{
		Route:     rt,
		Request:   r,
		Now:       now,
		Values:    map[string]any{},
		Given:     map[string]bool{},
		Vars:      map[string]any{},
		Operation: rt.Operation,
	}
	for k, v := range rt.Echo {
		c.Values[k] = v
	}
	query, inProcess := r.Context().Value(inProcessQueryKey{}).(url.Values)
	if inProcess {
		// An in-process call's parameters, already apart (Router.Call):
		// only their names are checked.
		for name := range query {
			if err := checkQueryNames(rt, url.QueryEscape(name)); err != nil {
				return nil, err
			}
		}
	} else {
		query = r.URL.Query()
		if err := checkQueryNames(rt, r.URL.RawQuery); err != nil {
			return nil, err
		}
	}
	for i := range rt.Params {
		p := &rt.Params[i]
		raw, present := lookupParam(p, r, query)
		raw = strings.TrimSpace(raw)
		if err := checkRaw(p, raw); err != nil {
			return nil, err
		}
		if raw == "" && !(present && p.Type == TypeBoolean) {
			if p.Required {
				return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: requiredMessage(p)}
			}
			if p.Default != nil {
				c.Values[p.Name] = p.Default
				if p.Var != "" {
					c.Vars[p.Var] = p.Default
				}
			}
			continue
		}
		v, err := parseValue(p, raw, now, !rt.resolverCaps(p))
		if err != nil {
			return nil, err
		}
		c.Values[p.Name] = v
		c.Given[p.Name] = true
		if p.Var != "" {
			c.Vars[p.Var] = v
		}
	}
	return c, nil
}

// MsgQuerySemicolon is the 400 message of a query string holding ';',
// which Go's URL parser would drop with its pair.
const MsgQuerySemicolon = "The query string contains ';': separate parameters with '&', and send a ';' inside a value as %3B."

// CacheBustParam is the query parameter HTTP libraries append to defeat
// caches (jQuery's `cache: false` sends `_=<milliseconds>`). Every route
// accepts and ignores it, so those clients keep working while any other
// undeclared parameter is refused (checkQueryNames).
const CacheBustParam = "_"

// checkQueryNames refuses a query parameter of rawQuery that rt does not
// declare (under its name or an alias), naming the ones it accepts: a
// misspelt parameter (`limt=5`, `type=` for `relationshipType=`) would
// otherwise be ignored and answer with defaults the client did not ask
// for. CacheBustParam is the one undeclared name accepted. The first
// undeclared name in the query's order is reported; a pair whose name does
// not decode is skipped, as url.ParseQuery skips it.
func checkQueryNames(rt *Route, rawQuery string) error {
	if strings.Contains(rawQuery, ";") {
		// Go's URL parser drops a pair holding ';' without a word: say so
		// rather than answer as if it had not been sent.
		return cryptointel.Errorf(cryptointel.EINVALID, "%s", MsgQuerySemicolon)
	}
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		key, _, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(key)
		if err != nil || name == "" || name == CacheBustParam || declaresQueryParam(rt, name) {
			continue
		}
		var known []string
		for _, p := range rt.Params {
			if p.In == "query" {
				known = append(append(known, p.Name), p.Aliases...)
			}
		}
		name = access.Clip(name)
		if len(known) == 0 {
			return cryptointel.Errorf(cryptointel.EINVALID, "unknown parameter %q: %s accepts no query parameters", name, rt.Path)
		}
		return cryptointel.Errorf(cryptointel.EINVALID, "unknown parameter %q: %s accepts %s", name, rt.Path, strings.Join(known, ", "))
	}
	return nil
}

// declaresQueryParam reports whether rt has a query parameter called name
// or aliased so.
func declaresQueryParam(rt *Route, name string) bool {
	for _, p := range rt.Params {
		if p.In == "query" && (p.Name == name || slices.Contains(p.Aliases, name)) {
			return true
		}
	}
	return false
}

// MaxParamBytes bounds the length of one parameter value.
const MaxParamBytes = 2048

// checkRaw refuses a value no parameter accepts: longer than MaxParamBytes,
// not valid UTF-8, or holding a NUL byte (which PostgreSQL text cannot
// store, so it would otherwise fail deep in a query as a 500).
func checkRaw(p *Param, raw string) error {
	switch {
	case len(raw) > MaxParamBytes:
		return cryptointel.Errorf(cryptointel.EINVALID, "%s is too long (at most %d bytes)", p.Name, MaxParamBytes)
	case !utf8.ValidString(raw):
		return cryptointel.Errorf(cryptointel.EINVALID, "%s must be valid UTF-8 text", p.Name)
	case strings.IndexByte(raw, 0) >= 0:
		return cryptointel.Errorf(cryptointel.EINVALID, "%s must not contain NUL bytes", p.Name)
	}
	return nil
}

// lookupParam returns the first value of p under its canonical name, else
// under its first alias present, and whether any of them was present.
func lookupParam(p *Param, r *http.Request, query url.Values) (string, bool) {
	if p.In == "path" {
		v := r.PathValue(p.Name)
		return v, v != ""
	}
	if p.In == "header" {
		v := r.Header.Get(p.Name)
		return v, strings.TrimSpace(v) != ""
	}
	for _, name := range append([]string{p.Name}, p.Aliases...) {
		if vs, ok := query[name]; ok && len(vs) > 0 {
			if strings.TrimSpace(vs[0]) == "" && p.Type != TypeBoolean {
				continue
			}
			return vs[0], true
		}
	}
	return "", false
}

func requiredMessage(p *Param) string {
	if p.RequiredMessage != "" {
		return p.RequiredMessage
	}
	return p.Name + " parameter is required"
}

// resolverCaps reports whether p, a parameter of graph route rt, is capped
// by the resolver of the argument its variable feeds (graph.Bound) rather
// than by parseValue: a bounded parameter that sets a variable of the
// operation the route runs. Its value is carried to the resolver as
// parsed; the body echoes the value the resolver served (execute).
func (rt *Route) resolverCaps(p *Param) bool {
	return rt.Operation != "" && rt.Handler == nil && p.Var != "" && p.Bounds != nil
}

// parseValue parses one present, non-empty raw value of p; a bounded
// integer is capped to its bounds when capped is set (a parameter no
// resolver caps: resolverCaps).
func parseValue(p *Param, raw string, now time.Time, capped bool) (any, error) {
	if p.Parse != nil {
		return p.Parse(raw)
	}
	switch p.Type {
	case TypeInteger:
		n, err := parseInt(p.Name, raw)
		if err != nil {
			return nil, err
		}
		if p.Max == nil && (n == maxInt || n == minInt) {
			// An unbounded integer (an id) is never capped: a value out of
			// the 32-bit range would name another id.
			if err := checkInt32(p.Name, raw); err != nil {
				return nil, err
			}
		}
		if capped && p.Min != nil && p.Max != nil {
			// Capped with the bounds of limits.go it was declared with: a
			// parameter of a handler route (keys, webhook deliveries,
			// exports) or one a Prepare maps itself; no resolver sees it.
			return cryptointel.Bounds{Min: *p.Min, Max: *p.Max}.ClampInt(n), nil
		}
		return n, nil
	case TypeBoolean:
		switch strings.ToLower(raw) {
		case "", "true", "1", "yes":
			return true, nil
		case "false", "0", "no":
			return false, nil
		}
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be a boolean (true or false)", p.Name)
	case TypeDateTime:
		t, err := parseTime(raw)
		if cryptointel.IsInstantRange(err) {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be an instant %s", p.Name, cryptointel.InstantBounds)
		} else if err != nil {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be an ISO 8601 timestamp, for example %s", p.Name, instantExamples(now))
		}
		if p.MaxAge > 0 && t.Before(now.Add(-p.MaxAge)) {
			return nil, p.TooOld
		}
		return t, nil
	case TypeIntegerList:
		var out []int
		for _, item := range strings.Split(raw, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			n, err := parseInt(p.Name, item)
			if err != nil {
				return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be a comma-separated list of integers", p.Name)
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		if p.MaxItems > 0 && len(out) > p.MaxItems {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s accepts at most %d values", p.Name, p.MaxItems)
		}
		return out, nil
	case TypeStringList:
		var out []string
		for _, item := range strings.Split(raw, ",") {
			item = strings.ToLower(strings.TrimSpace(item))
			if item == "" {
				continue
			}
			if len(p.Enum) > 0 && !slices.Contains(p.Enum, item) {
				return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must only contain: %s", p.Name, strings.Join(p.Enum, ", "))
			}
			if !slices.Contains(out, item) {
				out = append(out, item)
			}
		}
		return out, nil
	default: // TypeString
		if len(p.Enum) > 0 {
			for _, e := range p.Enum {
				if strings.EqualFold(e, raw) {
					return e, nil
				}
			}
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be one of: %s", p.Name, strings.Join(p.Enum, ", "))
		}
		return raw, nil
	}
}

// parseInt parses a base-10 integer. Fractions, exponents, NaN and other
// text are an error; a value too large for an int saturates so that caps
// still apply to it.
func parseInt(name, raw string) (int, error) {
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			if strings.HasPrefix(raw, "-") {
				return minInt, nil
			}
			return maxInt, nil
		}
		return 0, cryptointel.Errorf(cryptointel.EINVALID, "%s must be an integer", name)
	}
	if n > maxInt {
		return maxInt, nil
	} else if n < minInt {
		return minInt, nil
	}
	return int(n), nil
}

// checkInt32 refuses a base-10 integer outside the 32-bit range.
func checkInt32(name, raw string) error {
	n, err := strconv.ParseInt(raw, 10, 64)
	switch {
	case (err != nil && !strings.HasPrefix(raw, "-")) || n > maxInt:
		return cryptointel.Errorf(cryptointel.EINVALID, "%s must be at most %d", name, maxInt)
	case err != nil || n < minInt:
		return cryptointel.Errorf(cryptointel.EINVALID, "%s must be at least %d", name, minInt)
	}
	return nil
}

// Integers are bounded to 32 bits, the range of a GraphQL Int.
const (
	maxInt = 1<<31 - 1
	minInt = -1 << 31
)

// parseTime parses a date-time parameter with cryptointel.ParseInstant, the
// one parser and bound of instants. A '+' offset that arrived unescaped in
// a query string (and so decoded as a space) is restored first.
func parseTime(raw string) (time.Time, error) {
	return cryptointel.ParseInstant(strings.ReplaceAll(raw, " ", "+"))
}

// instantExamples shows a client the forms a date-time parameter takes
// with values it can use as they are: the hour a day before now, and that
// day alone (midnight UTC), e.g. "2026-11-19T12:00:00Z or 2026-11-19".
func instantExamples(now time.Time) string {
	t := now.UTC().Add(-24 * time.Hour).Truncate(time.Hour)
	return t.Format(time.RFC3339) + " or " + t.Format(time.DateOnly)
}

// routeHandler is the full handler of one route: its call parsed against
// its params, the access layer (which sets the policy headers), then its
// handler or operation (serveRoute).
func (rt *Router) routeHandler(route *Route) http.Handler {
	admitted := rt.wrap(route.Policy, rt.serveRoute(route))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		admitted.ServeHTTP(w, rt.withParsedCall(route, r))
	})
}

// freeIfNotModified lets the frame give an admitted request's credits back
// should it answer 304 Not Modified (access.NotModified): the client
// already holds the answer; the request still counts in the rate window.
func freeIfNotModified(r *http.Request) {
	if fs, ok := r.Context().Value(frameKey{}).(*frameState); ok {
		ctx := r.Context()
		fs.notModified = func(h http.Header) { access.NotModified(ctx, h) }
	}
}

// serveRoute serves an admitted request: the route's handler, or its
// operation run and its envelope written.
func (rt *Router) serveRoute(route *Route) http.Handler {
	if h := route.Handler; h != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			freeIfNotModified(r)
			// Handlers read their parameters when they need them (callOf),
			// some never: undeclared names are refused here for all.
			err := checkQueryNames(route, r.URL.RawQuery)
			if err == nil {
				err = h(w, r)
			}
			if err != nil {
				WriteError(w, r, err)
			}
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		freeIfNotModified(r)
		cb, ahead, err := readAheadBody(r)
		if !ahead {
			cb, err = rt.runGraph(route, r)
		}
		if err == nil {
			if fs, ok := r.Context().Value(frameKey{}).(*frameState); ok {
				// The body is never modified once built (cached or just
				// computed): the frame keeps it by reference instead of
				// copying it, and reuses its ETag when it has one.
				fs.tag, fs.tagged = cb.tag, cb.body
				if cb.pooled {
					fs.release = cb.body
				}
			}
			writeBody(w, http.StatusOK, cb.body)
			return
		}
		WriteError(w, r, err)
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
// after parsing and defaults: access.WithPricedLimit, whose range price
// saturates at the route's maximum) and never from the raw query string. The parse outcome travels in the context to
// runGraph, or to a handler route's handler (callOf), which report a parse
// error only after the access layer has authenticated and admitted the
// request.
func (rt *Router) withParsedCall(route *Route, r *http.Request) *http.Request {
	c, err := parseCall(route, r, rt.now())
	ctx := context.WithValue(r.Context(), parsedCallKey{}, &parsedCall{call: c, err: err})
	if err != nil {
		// Answered 400 once admitted: a refusal, which costs no credits.
		ctx = access.WithRefused(ctx)
	}
	if err == nil && route.Policy.Pricing != nil {
		if limit, ok := c.Values["limit"].(int); ok {
			ctx = access.WithPricedLimit(ctx, limit)
		}
	}
	if err == nil && route.Handler == nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// A graph route's work is its operation, which writes nothing: the
		// access layer may run it beside the request's metering statement
		// (access.WithReadAhead), as the caller it predicts.
		ctx = access.WithReadAhead(ctx, func(ctx context.Context) (any, func()) {
			cb, err := rt.runGraph(route, r.WithContext(ctx))
			return &aheadBody{cb, err}, func() {
				if cb != nil && cb.pooled {
					jsonw.Release(cb.body)
				}
			}
		})
	}
	return r.WithContext(ctx)
}

// aheadBody is a graph route's body read ahead (access.WithReadAhead), or
// why it was not built.
type aheadBody struct {
	cb  *cachedBody
	err error
}

// readAheadBody returns the body the access layer read ahead for r as the
// caller it admitted, whether there was one to use, and its error (the
// request's answer, as a read after admission would have given it). One
// that was cancelled is not to use: it is read again.
func readAheadBody(r *http.Request) (*cachedBody, bool, error) {
	v, ok := access.ReadAheadResult(r.Context())
	if !ok {
		return nil, false, nil
	}
	a := v.(*aheadBody)
	if errors.Is(a.err, context.Canceled) || errors.Is(a.err, context.DeadlineExceeded) {
		return nil, false, nil
	}
	return a.cb, true, a.err
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
	if rt.cache != nil {
		return rt.cache.get(r.Context(), c, func(ctx context.Context) ([]byte, error) { return rt.execute(ctx, c, false) })
	}
	// No cache keeps the body: when the frame writes it (and gives it back
	// to the pool afterwards), it is built in a pooled buffer.
	fs, _ := r.Context().Value(frameKey{}).(*frameState)
	pooled := fs != nil && fs.pool
	body, err := rt.execute(r.Context(), c, pooled)
	if err != nil {
		return nil, err
	}
	return &cachedBody{body: body, pooled: pooled}, nil
}

// execute runs call c's operation into a pooled buffer and writes its
// body from the marked values, shaped by the operation (shape.go): in a
// buffer of the pool when pooled (the caller gives it back once written),
// else in one of its own.
func (rt *Router) execute(ctx context.Context, c *Call, pooled bool) ([]byte, error) {
	op, ok := rt.ops[c.Operation]
	if !ok {
		return nil, fmt.Errorf("error running %s: unknown operation %q", c.Route.Path, c.Operation)
	}
	sink, _ := ctx.Value(spansKey{}).(*spanSink)
	spans := sink != nil && sink.spans
	w := jsonw.Writer{B: jsonw.Buffer(), Marks: jsonw.Marks(), HTML: true, Marking: true, Elements: spans}
	defer func() { jsonw.Release(w.B); jsonw.ReleaseMarks(w.Marks) }()
	ctx, bounded := graph.WithBounded(ctx)
	if errs := rt.exec.Run(ctx, op.Query, op.Name, c.Vars, &w); len(errs) > 0 {
		return nil, graphError(op.Name, errs)
	}
	// A parameter its resolver capped is echoed (@param) as the resolver
	// served it: the one cap of its value.
	for i := range c.Route.Params {
		p := &c.Route.Params[i]
		if c.Route.resolverCaps(p) {
			if n, ok := bounded.Value(p.Bounds); ok {
				c.Values[p.Name] = n
			}
		}
	}
	sh, ok := rt.shapes[c.Operation]
	if !ok {
		return nil, fmt.Errorf("error running %s: no response shape for operation %q", c.Route.Path, c.Operation)
	}
	// The body copies what it keeps of the data, so the buffer goes back
	// to the pool once it is written.
	d := newData(w.B, w.Marks)
	d.elements, d.copying = w.Spans, spans
	if spans {
		cs := copiesPool.Get().(*[]copied)
		d.copies = (*cs)[:0]
		defer func() { *cs = d.copies[:0]; copiesPool.Put(cs) }()
	}
	// A body lent to an in-process caller is written in a pooled buffer:
	// only when no response cache keeps it (the caller hands it back).
	var into []byte
	if pooled || sink != nil && sink.lend && rt.cache == nil {
		into = jsonw.Buffer()
	}
	body, err := sh.body(c, d, into)
	if err != nil {
		if into != nil {
			jsonw.Release(into)
		}
		return nil, err
	}
	if sink != nil {
		sink.body, sink.lent = body, into != nil
		if spans {
			sink.elements = d.spans()
		}
	}
	return body, nil
}

// graphError turns GraphQL errors into the domain error the status table
// maps: the first error that carries a known code wins; an error without a
// code (a validation failure of a fixed operation, a panic) is internal.
func graphError(opName string, errs gqlerror.List) error {
	for _, e := range errs {
		code, _ := e.Extensions["code"].(string)
		if slices.Contains(httperr.Codes(), code) && code != cryptointel.EINTERNAL {
			return &cryptointel.Error{Code: code, Message: e.Message}
		}
	}
	return fmt.Errorf("error running operation %s: %w", opName, errs)
}
