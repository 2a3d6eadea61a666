package rest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
)

// OpenAPIVersion is the version the machine-readable description declares.
const OpenAPIVersion = "1.0.0"

// OpenAPI generates the OpenAPI 3.1 document of routes: every parameter
// with its bounds and default, every response shape (canonical and legacy
// fields), the error responses, the policy of each route as x- extensions
// and the pay-per-request pricing as x-payment-info.
func OpenAPI(routes []Route) map[string]any {
	paths := map[string]any{}
	for i := range routes {
		r := &routes[i]
		item, _ := paths[r.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[r.Path] = item
		}
		item[strings.ToLower(r.Method)] = openAPIOperation(r)
	}
	return map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": map[string]any{
			"title":   "cryptointel API",
			"version": OpenAPIVersion,
			"description": "Crypto entities, radar and signal events, relationships, searches, briefs and " +
				"prediction-market views. Every /v1 route is a fixed GraphQL operation over the same core " +
				"as /graphql. Events carry canonical fields and their legacy aliases together. Limits and " +
				"offsets above their maximum are silently capped; values below the minimum are clamped. " +
				"A duplicated query parameter takes its first value, and a canonical name wins over its alias.",
		},
		"servers":  []any{map[string]any{"url": "/"}},
		"security": []any{map[string]any{"bearerAuth": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": componentSchemas(),
			"securitySchemes": map[string]any{
				"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <API_KEY>"},
			},
			"headers":   openAPIHeaders(),
			"responses": openAPIErrorResponses(),
		},
	}
}

// responseHeaders are documented on every response.
var responseHeaders = []string{
	"X-Request-Id", "X-Api-Surface", "X-Access-Layer", "X-Endpoint-Policy", "X-Credit-Cost",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
	"X-Monthly-Limit", "X-Monthly-Used", "X-Monthly-Remaining", "X-Plan-Tier",
}

func openAPIHeaders() map[string]any {
	desc := map[string]string{
		"X-Request-Id":          "The request id: the client's X-Request-Id when valid, else generated.",
		"X-Api-Surface":         "lookup, query, feed, timeline, replay, brief, delivery, usage or export.",
		"X-Access-Layer":        "evaluation, operational or premium.",
		"X-Endpoint-Policy":     "The route's policy name, for example search or radar.all.",
		"X-Credit-Cost":         "Monthly credits this request costs.",
		"X-RateLimit-Limit":     "Requests allowed per 60-second window (100).",
		"X-RateLimit-Remaining": "Requests left in the current window.",
		"X-RateLimit-Reset":     "Seconds until the window resets.",
		"X-Monthly-Limit":       "Monthly credit allowance of the key's plan.",
		"X-Monthly-Used":        "Credits used this month.",
		"X-Monthly-Remaining":   "Credits left this month.",
		"X-Plan-Tier":           "The key's plan.",
	}
	out := map[string]any{}
	for _, h := range responseHeaders {
		t := "string"
		switch h {
		case "X-Credit-Cost", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
			"X-Monthly-Limit", "X-Monthly-Used", "X-Monthly-Remaining":
			t = "integer"
		}
		out[h] = map[string]any{"description": desc[h], "schema": map[string]any{"type": t}}
	}
	return out
}

func headerRefs() map[string]any {
	out := map[string]any{}
	for _, h := range responseHeaders {
		out[h] = map[string]any{"$ref": "#/components/headers/" + h}
	}
	return out
}

// errorResponses names the reusable error responses by status.
var errorResponses = map[int]struct{ name, desc string }{
	http.StatusBadRequest:            {"BadRequest", "A missing or invalid parameter."},
	http.StatusUnauthorized:          {"Unauthorized", "No or unknown API key."},
	http.StatusPaymentRequired:       {"PaymentRequired", "Payment required (x402 or MPP)."},
	http.StatusForbidden:             {"Forbidden", "The plan does not include the route, or the monthly credit limit is reached."},
	http.StatusNotFound:              {"NotFound", "The resource does not exist."},
	http.StatusConflict:              {"Conflict", "The request conflicts with the current state."},
	http.StatusRequestEntityTooLarge: {"TooLarge", "The request body is too large."},
	http.StatusUnsupportedMediaType:  {"UnsupportedMediaType", "The request body is not application/json."},
	http.StatusTooManyRequests:       {"RateLimited", "Per-minute rate limit exceeded."},
	http.StatusInternalServerError:   {"InternalError", cryptointel.MsgInternal},
	http.StatusServiceUnavailable:    {"Unavailable", "The service is temporarily unavailable."},
}

func openAPIErrorResponses() map[string]any {
	out := map[string]any{}
	for _, e := range errorResponses {
		out[e.name] = map[string]any{
			"description": e.desc,
			"headers":     headerRefs(),
			"content": map[string]any{
				"application/json": map[string]any{"schema": ref("Error")},
			},
		}
	}
	return out
}

// operationID derives a unique id from method and path, for example
// getV1EntitiesIdRelationships.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	upper := true
	for _, r := range path {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			upper = true
			continue
		}
		if upper {
			b.WriteRune(unicode.ToUpper(r))
			upper = false
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func openAPIOperation(r *Route) map[string]any {
	op := map[string]any{
		"operationId": operationID(r.Method, r.Path),
		"summary":     r.Summary,
		"tags":        []any{tagOf(r.Path)},
	}
	if r.Description != "" {
		op["description"] = r.Description
	}
	var params []any
	for i := range r.Params {
		params = append(params, openAPIParams(&r.Params[i])...)
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if r.RequestBody != nil {
		op["requestBody"] = map[string]any{
			"required": true,
			"content":  map[string]any{"application/json": map[string]any{"schema": r.RequestBody}},
		}
	}
	status := r.SuccessStatus
	if status == 0 {
		status = http.StatusOK
	}
	body := r.Response
	if body == nil {
		body = schema{"type": "object"}
	}
	headers := headerRefs()
	contentType := r.ContentType
	if contentType == "" {
		contentType = "application/json"
	}
	streamed := contentType == "text/event-stream"
	if r.Method == http.MethodGet && !streamed {
		headers["ETag"] = map[string]any{
			"description": "Strong validator of the body; send it in If-None-Match to get a 304 while it is unchanged.",
			"schema":      map[string]any{"type": "string"},
		}
	}
	responses := map[string]any{
		strconv.Itoa(status): map[string]any{
			"description": http.StatusText(status),
			"headers":     headers,
			"content":     map[string]any{contentType: map[string]any{"schema": body}},
		},
	}
	if streamed {
		// OpenAPI 3.1 has no schema for the messages of an event stream
		// (3.2's itemSchema): the body is described as text, and the data
		// of its messages in extensions.
		responses[strconv.Itoa(status)].(map[string]any)["content"] = map[string]any{
			contentType: map[string]any{
				"schema": schema{"type": "string", "description": "Server-Sent Events (text/event-stream). " +
					"Each event message has `id` (a cursor) and `data` as x-sse-data-schema; the message that ends a " +
					"stream the server closed has `event: close` and `data` as x-sse-close-schema."},
				"x-sse-data-schema":  body,
				"x-sse-close-schema": ref("StreamClose"),
			},
		}
	}
	if r.Method == http.MethodGet && !streamed {
		responses["304"] = map[string]any{"description": "Not modified: the If-None-Match ETag still matches."}
	}
	errs := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
		http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable}
	if r.Policy.Pricing != nil {
		errs = append(errs, http.StatusPaymentRequired)
	}
	errs = append(errs, r.ErrorStatuses...)
	for _, s := range errs {
		e, ok := errorResponses[s]
		if !ok {
			// A status no response names would drop out of the document
			// unseen (415 did): a programming error, found by every test
			// that builds the document.
			panic(fmt.Sprintf("rest: %s %s lists error status %d, which errorResponses does not name", r.Method, r.Path, s))
		}
		responses[strconv.Itoa(s)] = map[string]any{"$ref": "#/components/responses/" + e.name}
	}
	op["responses"] = responses
	op["x-api-surface"] = r.Policy.Surface
	op["x-access-layer"] = r.Policy.Layer
	op["x-endpoint-policy"] = r.Policy.Name
	op["x-credit-cost"] = r.Policy.CreditCost
	if r.Policy.Feature != "" {
		op["x-plan-feature"] = r.Policy.Feature
	}
	if r.Policy.MinPlan != "" {
		op["x-plan-floor"] = r.Policy.MinPlan
	}
	if pi := paymentInfo(r.Policy.Pricing); pi != nil {
		op["x-payment-info"] = pi
	}
	return op
}

// paymentInfo is the x-payment-info extension of a priced route.
func paymentInfo(pr *access.Pricing) map[string]any {
	if pr == nil {
		return nil
	}
	price := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	info := map[string]any{
		"protocols": []any{"x402", "mpp"},
		"currency":  "USD",
		"mode":      pr.Mode,
	}
	if pr.Mode == "fixed" {
		info["price"] = price(pr.Min)
	} else {
		info["min"] = price(pr.Min)
		info["max"] = price(pr.Max)
		if pr.MaxLimit > 0 {
			info["description"] = "The price grows linearly with `limit`, from min at limit 1 to max at limit " +
				strconv.Itoa(pr.MaxLimit) + " (an absent limit is priced at " + strconv.Itoa(pr.DefaultLimit) + ")."
		}
	}
	return info
}

func tagOf(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	return parts[0]
}

// openAPIParams documents p, and each of its aliases as a parameter of its
// own.
func openAPIParams(p *Param) []any {
	s := paramSchema(p)
	required := p.Required && (p.In == "path" || len(p.Aliases) == 0)
	desc := p.Description
	if p.Required && !required {
		desc += " Required: give `" + p.Name + "` or " + aliasList(p.Aliases) + "."
	}
	main := map[string]any{"name": p.Name, "in": p.In, "required": required, "schema": s}
	if desc != "" {
		main["description"] = desc
	}
	if p.Type == TypeIntegerList || p.Type == TypeStringList {
		main["style"] = "form"
		main["explode"] = false
	}
	out := []any{main}
	for _, a := range p.Aliases {
		alias := map[string]any{"name": a, "in": p.In, "required": false, "schema": s,
			"description": "Alias of `" + p.Name + "`; `" + p.Name + "` wins when both are given."}
		out = append(out, alias)
	}
	return out
}

func aliasList(aliases []string) string {
	q := make([]string, len(aliases))
	for i, a := range aliases {
		q[i] = "`" + a + "`"
	}
	return strings.Join(q, " or ")
}

// paramSchema is the JSON Schema of p's value, with its bounds.
func paramSchema(p *Param) schema {
	var s schema
	switch p.Type {
	case TypeInteger:
		s = schema{"type": "integer"}
		if p.Min != nil {
			s["minimum"] = *p.Min
		}
		if p.Max != nil {
			s["maximum"] = *p.Max
		}
	case TypeBoolean:
		s = schema{"type": "boolean"}
	case TypeDateTime:
		s = schema{"type": "string", "format": "date-time"}
	case TypeIntegerList:
		s = schema{"type": "array", "items": schema{"type": "integer"}, "minItems": 1}
		if p.MaxItems > 0 {
			s["maxItems"] = p.MaxItems
		}
	case TypeStringList:
		items := schema{"type": "string"}
		if len(p.Enum) > 0 {
			items = strEnum(p.Enum...)
		}
		s = schema{"type": "array", "items": items}
	default:
		s = schema{"type": "string"}
		if len(p.Enum) > 0 {
			s = strEnum(p.Enum...)
		}
		if p.Required {
			s["minLength"] = 1
		}
	}
	if p.Default != nil {
		s["default"] = p.Default
	}
	return s
}
