// Package rest is the /v1 facade: a route table that turns each legacy route
// into a fixed GraphQL operation (or, for account-owned resources such as
// webhooks and export jobs, a handler), with the contract's limits, headers,
// envelopes and error messages. Route handlers never contain SQL.
package rest

import (
	"net/http"
	"sort"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
)

// HandlerFunc handles a route that is not a graph read (webhooks, export
// jobs, usage). It returns an error carrying a cryptointel.Error code; the router
// maps codes to statuses in one place and writes {"error": "..."}.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one entry of the route table: the single source of truth for a
// /v1 route's path, parameters, operation and policy. A graph route's body
// is its operation's data, shaped by the operation itself (shape.go).
type Route struct {
	// Method is the HTTP method.
	Method string
	// Path is the net/http pattern path, for example
	// "/v1/entities/{id}/relationships".
	Path string
	// Summary is the one-line description used in OpenAPI.
	Summary string
	// Policy is what the access layer enforces and reports in headers.
	Policy access.Policy
	// Params declares the query and path parameters.
	Params []Param
	// Echo are values the route writes for its operation's @param fields
	// that are not request parameters (the surface a feed reads), by field
	// name. A @param field that names neither a parameter of the route nor
	// an Echo is left out of the route's body and schema, so routes that
	// differ only by an echoed value share one operation.
	Echo map[string]any
	// Operation names the embedded GraphQL operation the route runs; empty
	// when Handler is set, unless the handler runs it itself (GET
	// /v1/stream).
	Operation string
	// Handler serves routes that are not graph reads.
	Handler HandlerFunc

	// Description is the longer OpenAPI description (semantics, defaults,
	// decisions such as "sort wins over mode").
	Description string
	// Prepare, when set, runs after the parameters are parsed and before the
	// operation executes: it sets variables that parameters cannot express
	// directly, may pick another embedded operation (compact mode), and may
	// reject combinations with a *cryptointel.Error.
	Prepare func(c *Call) error
	// Response is the JSON Schema (OpenAPI 3.1 dialect) of the success body;
	// nil documents a generic object. For a text/event-stream route it is
	// the schema of each message's data. A graph route's is derived from
	// its operation (Routes, shape.go); a handler route's from the Go type
	// its handler encodes (handled, goSchemaOf in goschema.go).
	Response map[string]any
	// ContentType is the media type of the success body. Defaults to
	// application/json.
	ContentType string
	// SuccessStatus is the status of a successful response, documented in
	// OpenAPI. Defaults to 200.
	SuccessStatus int
	// ErrorStatuses lists the error statuses the route documents beyond the
	// ones every route has (400, 401, 402 when priced, 403, 429, 500, 503).
	ErrorStatuses []int
	// RequestBody is the JSON Schema of a JSON request body, documented in
	// OpenAPI; nil when the route takes none.
	RequestBody map[string]any
}

// Param declares one parameter of a route.
type Param struct {
	// Name is the canonical parameter name.
	Name string
	// Aliases are other accepted names (q for query, entityName for name…).
	Aliases []string
	// In is "query", "path" or "header".
	In string
	// Type is string, integer, boolean, date-time, integer-list or
	// string-list (both lists comma-separated).
	Type string
	// Required marks a parameter that must be present.
	Required bool
	// Description is shown in OpenAPI.
	Description string

	// Default is the value used when the parameter is absent (an int,
	// string or bool matching Type); nil for none.
	Default any
	// Min and Max bound an integer: a value above Max is silently capped, a
	// value below Min is clamped to Min. Nil for no bound.
	Min, Max *int
	// Bounds are the bounds of limits.go an integer was declared with
	// (boundedParam). On a graph route a parameter that sets a variable is
	// capped by the resolver of the argument it feeds (graph.Bound), not
	// here: the body echoes the value that cap served. Any other bounded
	// parameter is capped by parseValue.
	Bounds *cryptointel.Bounds
	// Enum lists the accepted values of a string (or of each item of a
	// string-list); any other value is a 400.
	Enum []string
	// MaxItems bounds a list parameter; zero for no bound.
	MaxItems int
	// MaxAge bounds a date-time to the recent past: a value older than
	// now-MaxAge is a 400 with TooOld (cryptointel.SinceTooOld). Zero for
	// no bound.
	MaxAge time.Duration
	// TooOld is the error of a value older than MaxAge.
	TooOld *cryptointel.Error
	// Var is the GraphQL variable the parsed value feeds; empty when the
	// route's Prepare uses the value itself.
	Var string
	// RequiredMessage is the exact 400 message when a required parameter is
	// missing. Defaults to "<name> parameter is required".
	RequiredMessage string
	// Parse, when set, replaces the parsing of Type for a present,
	// non-empty value; it returns a *cryptointel.Error for a bad value.
	Parse func(raw string) (any, error)
}

// Call is one request to a graph-read route while it is being served: the
// parsed parameters, the variables and the operation that will run.
type Call struct {
	// Route is the route being served.
	Route *Route
	// Request is the HTTP request.
	Request *http.Request
	// Now is the request time, used for default and bounded windows.
	Now time.Time
	// Values holds every parsed parameter by canonical name, defaults
	// applied: int, string, bool, time.Time, []int or []string.
	Values map[string]any
	// Given tells which parameters the client sent.
	Given map[string]bool
	// Vars are the GraphQL variables of the operation, in the parsed
	// values' own types (int, string, bool, time.Time, []int, []string):
	// the executor takes them as they are, with no JSON round trip.
	Vars map[string]any
	// Operation is the embedded operation that will run. Defaults to
	// Route.Operation.
	Operation string
}

// Int returns the int parameter name (zero when absent).
func (c *Call) Int(name string) int { v, _ := c.Values[name].(int); return v }

// String returns the string parameter name ("" when absent).
func (c *Call) String(name string) string { v, _ := c.Values[name].(string); return v }

// Bool returns the boolean parameter name (false when absent).
func (c *Call) Bool(name string) bool { v, _ := c.Values[name].(bool); return v }

// Time returns the date-time parameter name and whether it is set.
func (c *Call) Time(name string) (time.Time, bool) {
	v, ok := c.Values[name].(time.Time)
	return v, ok
}

// writes says whether the route writes a @param field named name: one of
// its parameters or an Echo.
func (r *Route) writes(name string) bool {
	if r == nil {
		return false
	}
	_, echo := r.Echo[name]
	return echo || declared(r.Params, name)
}

// echoed is the route's parameters followed by its Echo values as string
// parameters: the members a @param field may name.
func (r *Route) echoed() []Param {
	if len(r.Echo) == 0 {
		return r.Params
	}
	out := append([]Param(nil), r.Params...)
	names := make([]string, 0, len(r.Echo))
	for k := range r.Echo {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, Param{Name: k, Type: TypeString})
	}
	return out
}

// declared says whether params has one named name.
func declared(params []Param, name string) bool {
	for i := range params {
		if params[i].Name == name {
			return true
		}
	}
	return false
}
