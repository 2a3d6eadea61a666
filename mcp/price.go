package mcp

import (
	"strconv"

	"github.com/cryptointel/cryptointel/access"
)

// MetaPrice is the _meta member of each tool in tools/list that says what
// a call costs before it is made: the credits of each route it runs and,
// for a route payable per call without a key, its x402 price.
const MetaPrice = "cryptointel/price"

// toolPrice is a tool's MetaPrice.
type toolPrice struct {
	// Calls is "one" when a call runs one of the routes (chosen by its
	// arguments), "all" when it runs each of them in turn (and costs their
	// sum).
	Calls  string       `json:"calls"`
	Routes []routePrice `json:"routes"`
}

// routePrice is what one route of a tool costs.
type routePrice struct {
	Route string `json:"route"`
	// Credits is the route's credits a call, or "complexity" for a
	// /graphql read (the operation's complexity).
	Credits any `json:"credits"`
	// X402 is its pay-per-call price without a key; absent when it takes
	// no payment.
	X402 *x402Price `json:"x402,omitempty"`
}

// x402Price is a pay-per-call price in USD: fixed (price), a range by the
// call's limit (min to max), or by complexity (perCredit, at least min).
type x402Price struct {
	Currency  string `json:"currency"`
	Mode      string `json:"mode"`
	Price     string `json:"price,omitempty"`
	Min       string `json:"min,omitempty"`
	Max       string `json:"max,omitempty"`
	PerCredit string `json:"perCredit,omitempty"`
}

// priceOf is the MetaPrice of a tool over ops.
func priceOf(def *toolDef, ops []*operation) toolPrice {
	p := toolPrice{Calls: "one", Routes: []routePrice{}}
	if def.Compose != nil && len(ops) > 1 {
		p.Calls = "all"
	}
	for _, op := range ops {
		rp := routePrice{Route: op.key(), Credits: op.CreditCost}
		if pi := op.PaymentInfo; pi != nil {
			rp.X402 = &x402Price{Currency: "USD", Mode: pi.Mode, Price: pi.Price, Min: pi.Min, Max: pi.Max}
		}
		p.Routes = append(p.Routes, rp)
	}
	if def.Read != nil { // fetch: /graphql's event(id:)
		g := access.GraphQLPolicy.Pricing
		usd := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
		p.Routes = append(p.Routes, routePrice{Route: "POST /graphql", Credits: "complexity",
			X402: &x402Price{Currency: "USD", Mode: g.Mode, Min: usd(g.Min), PerCredit: usd(g.PerCredit)}})
	}
	return p
}

// paymentRequiredDef names the x402 PaymentRequired in a priced tool's
// output schema's $defs.
const paymentRequiredDef = "X402PaymentRequired"

// orPaymentRequired is the output schema of a priced tool: its result or,
// in a tool error (isError) asking for a payment, the x402 v2
// PaymentRequired its structured content holds (x402's MCP transport v2).
// Clients validate structured content against the schema even in a tool
// error, so the schema admits both.
func orPaymentRequired(out map[string]any) map[string]any {
	defs, _ := out["$defs"].(map[string]any)
	delete(out, "$defs")
	if defs == nil {
		defs = map[string]any{}
	}
	defs[paymentRequiredDef] = map[string]any{
		"type": "object",
		"description": "x402 v2 PaymentRequired: the structured content of a tool error (isError) of a call that needs a payment, " +
			"or whose payment was refused (error says why). Pay one of accepts and call again with the PaymentPayload in " +
			`params._meta["x402/payment"].`,
		"properties": map[string]any{
			"x402Version": map[string]any{"type": "integer"},
			"error":       map[string]any{"type": "string"},
			"resource":    map[string]any{"type": "object"},
			"accepts":     map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
			"extensions":  map[string]any{"type": "object"},
		},
		"required": []any{"x402Version", "accepts"},
	}
	return map[string]any{"type": "object", "$defs": defs, "anyOf": []any{out, map[string]any{"$ref": "#/$defs/" + paymentRequiredDef}}}
}
