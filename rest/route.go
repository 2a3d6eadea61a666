// Package rest is the /v1 facade: a route table that turns each legacy route
// into a fixed GraphQL operation (or, for account-owned resources such as
// webhooks and export jobs, a handler), with the contract's limits, headers,
// envelopes and error messages. Route handlers never contain SQL.
package rest

import (
	"net/http"

	"github.com/cryptointel/cryptointel/access"
)

// HandlerFunc handles a route that is not a graph read (webhooks, export
// jobs, usage). It returns an error carrying a db.Error code; the router
// maps codes to statuses in one place and writes {"error": "..."}.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one entry of the route table: the single source of truth for a
// /v1 route's path, parameters, operation, envelope and policy.
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
	// Operation names the embedded GraphQL operation the route runs; empty
	// when Handler is set.
	Operation string
	// Handler serves routes that are not graph reads.
	Handler HandlerFunc
}

// Param declares one parameter of a route.
type Param struct {
	// Name is the canonical parameter name.
	Name string
	// Aliases are other accepted names (q for query, entityName for name…).
	Aliases []string
	// In is "query" or "path".
	In string
	// Type is string, integer, boolean, date-time or integer-list.
	Type string
	// Required marks a parameter that must be present.
	Required bool
	// Description is shown in OpenAPI.
	Description string
}
