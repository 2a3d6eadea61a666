package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// The tools read the /v1 route table in its published, machine-readable
// form: the OpenAPI document the route table generates (GET
// /openapi.json). A tool argument's type, bounds, default and allowed
// values are those of the route parameter it feeds, its output schema is
// the route's success body, and its price is the route's policy, so none
// of them is written twice.

// openAPI is the part of the /v1 OpenAPI document the tools read.
type openAPI struct {
	Paths      map[string]map[string]*operation `json:"paths"`
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

// operation is one route of the document.
type operation struct {
	Summary     string         `json:"summary"`
	Description string         `json:"description"`
	Parameters  []*parameter   `json:"parameters"`
	Responses   map[string]any `json:"responses"`
	Surface     string         `json:"x-api-surface"`
	Layer       string         `json:"x-access-layer"`
	Policy      string         `json:"x-endpoint-policy"`
	CreditCost  int            `json:"x-credit-cost"`
	Feature     string         `json:"x-plan-feature"`
	PlanFloor   string         `json:"x-plan-floor"`
	PaymentInfo *paymentInfo   `json:"x-payment-info"`
	params      map[string]*parameter
	method      string
	path        string
}

// parameter is one route parameter.
type parameter struct {
	Name        string         `json:"name"`
	In          string         `json:"in"`
	Required    bool           `json:"required"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"schema"`
}

// paymentInfo is a priced route's x-payment-info.
type paymentInfo struct {
	Mode  string `json:"mode"`
	Price string `json:"price"`
	Min   string `json:"min"`
	Max   string `json:"max"`
}

// key is "GET /v1/search".
func (o *operation) key() string { return o.method + " " + o.path }

// parseOpenAPI reads the document and indexes each operation's parameters.
func parseOpenAPI(doc []byte) (*openAPI, error) {
	var d openAPI
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("error reading the /v1 OpenAPI document: %w", err)
	}
	for path, item := range d.Paths {
		for method, op := range item {
			op.method, op.path = strings.ToUpper(method), path
			op.params = map[string]*parameter{}
			for _, p := range op.Parameters {
				op.params[p.Name] = p
			}
		}
	}
	return &d, nil
}

// route returns the operation of "METHOD /path", or an error naming it.
func (d *openAPI) route(key string) (*operation, error) {
	method, path, _ := strings.Cut(key, " ")
	op := d.Paths[path][strings.ToLower(method)]
	if op == nil {
		return nil, fmt.Errorf("no route %s in the /v1 route table", key)
	}
	return op, nil
}

// successSchema is the JSON Schema of op's 200 body.
func (op *operation) successSchema() (map[string]any, error) {
	r, _ := op.Responses["200"].(map[string]any)
	content, _ := r["content"].(map[string]any)
	body, _ := content["application/json"].(map[string]any)
	s, _ := body["schema"].(map[string]any)
	if s == nil {
		return nil, fmt.Errorf("route %s documents no JSON success body", op.key())
	}
	return s, nil
}

// componentRef is the prefix of a reference to a named shape of the
// document; the tools' output schemas carry the shapes they use under
// $defs instead.
const componentRef = "#/components/schemas/"

// copySchema deep-copies a JSON Schema value, rewriting component
// references to $defs references and collecting the names referenced.
func copySchema(v any, refs map[string]bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if s, ok := e.(string); ok && k == "$ref" && strings.HasPrefix(s, componentRef) {
				name := strings.TrimPrefix(s, componentRef)
				refs[name] = true
				out[k] = "#/$defs/" + name
				continue
			}
			out[k] = copySchema(e, refs)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copySchema(e, refs)
		}
		return out
	}
	return v
}

// defsFor returns the component schemas refs name, and those they name in
// turn, as $defs; each is passed through edit.
func (d *openAPI) defsFor(refs map[string]bool, edit func(name string, s map[string]any)) (map[string]any, error) {
	defs := map[string]any{}
	for len(refs) > 0 {
		next := map[string]bool{}
		for name := range refs {
			if _, done := defs[name]; done {
				continue
			}
			c, ok := d.Components.Schemas[name]
			if !ok {
				return nil, fmt.Errorf("schema %s is not in the /v1 OpenAPI document", name)
			}
			s := copySchema(c, next).(map[string]any)
			edit(name, s)
			defs[name] = s
		}
		maps.DeleteFunc(next, func(name string, _ bool) bool { _, done := defs[name]; return done })
		refs = next
	}
	return defs, nil
}
