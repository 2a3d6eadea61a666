package mcp

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// tool is a tool built from its definition and the route table.
type tool struct {
	def    *toolDef
	sdk    *sdk.Tool
	args   []*argSpec
	routes map[string]*operation
	// priced reports whether a call may be paid per call (its routes take a
	// payment).
	priced bool
}

// detailSchema is the schema of the `detail` argument.
func detailSchema() map[string]any {
	return map[string]any{"type": "string", "enum": []any{DetailSummary, DetailFull}, "default": DetailSummary}
}

const detailDescription = "summary (the default): each event's id, title, category, subcategory, summary, timestamp and significance; " +
	"full: also its bullets, owners, participants and evidence (several times larger)."

// hintDescription documents the `hint` member of every tool's result.
const hintDescription = "What to call next for more (a cursor, an offset, a larger limit or detail full); absent when there is nothing more to get."

// buildTools builds every tool of defs against the route table doc.
func buildTools(defs []toolDef, doc *openAPI) ([]*tool, error) {
	var out []*tool
	for i := range defs {
		t, err := buildTool(&defs[i], doc)
		if err != nil {
			return nil, fmt.Errorf("error building tool %s: %w", defs[i].Name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func buildTool(def *toolDef, doc *openAPI) (*tool, error) {
	t := &tool{def: def, routes: map[string]*operation{}}
	var ops []*operation
	for _, key := range def.Routes {
		op, err := doc.route(key)
		if err != nil {
			return nil, err
		}
		t.routes[key] = op
		ops = append(ops, op)
		if op.PaymentInfo != nil {
			t.priced = true
		}
	}
	if t.priced && (len(ops) > 1 && def.Compose != nil) {
		return nil, fmt.Errorf("a tool that calls several routes at once cannot take a payment per call")
	}

	props := map[string]any{}
	var required []string
	argDefs := slices.Clone(def.Args)
	if def.Detail {
		argDefs = append(argDefs, argDef{Name: "detail", Param: "-", Description: detailDescription, Schema: detailSchema()})
	}
	for _, ad := range argDefs {
		spec, err := buildArg(ad, ops, t.routes)
		if err != nil {
			return nil, err
		}
		t.args = append(t.args, spec)
		props[spec.name] = spec.schema
		if spec.required {
			required = append(required, spec.name)
		}
	}
	input := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		input["required"] = required
	}

	output, err := t.outputSchema(doc, ops)
	if err != nil {
		return nil, err
	}
	note := pricingNote(ops, def.Compose != nil)
	if def.Read != nil {
		note, t.priced = def.Pricing, true
	}
	if t.priced {
		output = orPaymentRequired(output)
	}
	t.sdk = &sdk.Tool{
		Name:         def.Name,
		Title:        def.Title,
		Description:  def.Description + " " + note,
		InputSchema:  input,
		OutputSchema: output,
		Meta:         sdk.Meta{MetaPrice: priceOf(def, ops)},
		Annotations: &sdk.ToolAnnotations{
			Title: def.Title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool),
		},
	}
	return t, nil
}

// buildArg builds one argument: its schema is its route parameter's (the
// first of ops that declares it, or ad.Route's), with ad's description
// and the bounds written out.
func buildArg(ad argDef, ops []*operation, byKey map[string]*operation) (*argSpec, error) {
	spec := &argSpec{name: ad.Name, required: ad.Required}
	var schema map[string]any
	if ad.Param == "-" {
		schema = maps.Clone(ad.Schema)
	} else {
		spec.param = ad.Param
		if spec.param == "" {
			spec.param = ad.Name
		}
		var p *parameter
		if ad.Route != "" {
			if op := byKey[ad.Route]; op != nil {
				p = op.params[spec.param]
			}
		} else {
			for _, op := range ops {
				if p = op.params[spec.param]; p != nil {
					break
				}
			}
		}
		if p == nil {
			return nil, fmt.Errorf("argument %s: no route parameter %q", ad.Name, spec.param)
		}
		schema = copySchema(p.Schema, map[string]bool{}).(map[string]any)
		if ad.WithParam && p.Description != "" {
			ad.Description = strings.TrimSpace(strings.ReplaceAll(p.Description, "`", "") + " " + ad.Description)
		}
		// A required parameter with aliases is documented optional (any
		// of its names will do) with a string of minLength 1; a tool
		// takes the canonical name only, so it is required.
		spec.required = p.Required || (schema["type"] == "string" && intOf(schema["minLength"]) != nil && *intOf(schema["minLength"]) == 1)
	}
	delete(schema, "minLength")
	if spec.required && schema["type"] == "string" {
		schema["minLength"] = 1
	}
	switch schema["type"] {
	case "integer":
		spec.kind = "integer"
		spec.min, spec.max = intOf(schema["minimum"]), intOf(schema["maximum"])
	case "boolean":
		spec.kind = "boolean"
	case "array":
		items, _ := schema["items"].(map[string]any)
		spec.kind = "strings"
		if items["type"] == "integer" {
			spec.kind = "integers"
		}
		if n := intOf(schema["maxItems"]); n != nil {
			spec.maxItems = *n
		}
		spec.enum = stringsOf(items["enum"])
	default:
		spec.kind = "string"
		spec.enum = stringsOf(schema["enum"])
	}
	spec.def = schema["default"]
	if n := intOf(spec.def); n != nil {
		spec.def = *n
	}
	schema["description"] = describeArg(ad.Description, spec)
	spec.schema = schema
	return spec, nil
}

// describeArg appends an argument's bounds, default and allowed values to
// its description: "How many events to return. 1 to 20, default 10."
func describeArg(desc string, s *argSpec) string {
	var facts []string
	switch {
	case s.min != nil && s.max != nil:
		facts = append(facts, fmt.Sprintf("%d to %d", *s.min, *s.max))
	case s.min != nil:
		facts = append(facts, fmt.Sprintf("at least %d", *s.min))
	case s.max != nil:
		facts = append(facts, fmt.Sprintf("at most %d", *s.max))
	}
	if s.maxItems > 0 {
		facts = append(facts, fmt.Sprintf("at most %d items", s.maxItems))
	}
	if s.def != nil {
		facts = append(facts, fmt.Sprintf("default %v", s.def))
	}
	out := desc
	if len(facts) > 0 {
		f := strings.Join(facts, ", ")
		out += " " + strings.ToUpper(f[:1]) + f[1:] + "."
	}
	if s.min != nil && s.max != nil && s.param != "" {
		out += " A value out of these bounds is brought within them, as the route does."
	}
	if len(s.enum) > 0 && !strings.Contains(desc, s.enum[0]+":") {
		out += " One of: " + strings.Join(s.enum, ", ") + "."
	}
	if s.required && !strings.Contains(desc, "Required.") {
		out += " Required."
	}
	return out
}

// outputSchema is the tool's output schema: its routes' success bodies
// (one of them when the tool picks a route by its arguments), or what
// def.Output composes from them, with the shapes they use in $defs, events
// lean (and, for a tool taking `detail`, compact or full), and the hint.
func (t *tool) outputSchema(doc *openAPI, ops []*operation) (map[string]any, error) {
	refs := map[string]bool{}
	var bodies []map[string]any
	for _, op := range ops {
		s, err := op.successSchema()
		if err != nil {
			return nil, err
		}
		bodies = append(bodies, copySchema(s, refs).(map[string]any))
	}
	var out map[string]any
	switch {
	case t.def.Output != nil:
		out = t.def.Output(bodies)
		withHint(out)
	case len(bodies) == 1:
		out = bodies[0]
		withHint(out)
	default:
		variants := make([]any, len(bodies))
		for i, b := range bodies {
			withHint(b)
			variants[i] = b
		}
		out = map[string]any{"type": "object", "anyOf": variants}
	}
	defs, err := doc.defsFor(refs, func(_ string, s map[string]any) { leanSchema(s, t.def.Detail) })
	if err != nil {
		return nil, err
	}
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	return out, nil
}

// withHint adds the optional `hint` member to an object schema.
func withHint(s map[string]any) {
	if props, ok := s["properties"].(map[string]any); ok {
		props["hint"] = map[string]any{"type": "string", "description": hintDescription}
	}
}

// leanSchema edits an event-shaped schema (one with the event marker among
// its properties) as the tools shape the events: no legacy aliases and,
// when detail applies, the fields only the full form has made optional.
// A route documents an event as either of two shapes, with the legacy
// aliases (its default) or without them (legacy=false); the tools ask for
// the second (Server.do), so the schema becomes that shape alone.
func leanSchema(s map[string]any, detail bool) {
	if variants, ok := s["anyOf"].([]any); ok {
		lean := leanVariant(variants)
		if lean == nil {
			return
		}
		delete(s, "anyOf")
		for k, v := range lean {
			if _, ok := s[k]; !ok {
				s[k] = v
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	if _, ok := props[eventMarker]; !ok {
		return
	}
	for name := range legacyNames {
		delete(props, name)
	}
	required := stringsOf(s["required"])
	required = slices.DeleteFunc(required, func(n string) bool { return legacyNames[n] || (detail && fullOnly[n]) })
	r := make([]any, len(required))
	for i, n := range required {
		r[i] = n
	}
	s["required"] = r
	if d, _ := s["description"].(string); d != "" {
		d, _, _ = strings.Cut(d, " Without the legacy aliases")
		s["description"] = strings.Replace(d, ", with canonical and legacy fields", "", 1)
	}
}

// leanVariant returns the event shape of variants without legacy aliases,
// or nil when none is an event shape without them.
func leanVariant(variants []any) map[string]any {
	for _, v := range variants {
		vs, _ := v.(map[string]any)
		props, _ := vs["properties"].(map[string]any)
		if _, ok := props[eventMarker]; !ok {
			continue
		}
		if !slices.ContainsFunc(slices.Collect(maps.Keys(props)), func(n string) bool { return legacyNames[n] }) {
			return vs
		}
	}
	return nil
}

// objectSchema is a closed object schema with every member required.
func objectSchema(members ...member) map[string]any {
	props := map[string]any{}
	required := []any{}
	for _, m := range members {
		props[m.name] = m.value
		required = append(required, m.name)
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// propertyOf returns the schema of a property of an object schema.
func propertyOf(s map[string]any, name string) map[string]any {
	props, _ := s["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

// pricingNote says what a call costs: the routes' credits, plan layer and
// feature, and the pay-per-call price.
func pricingNote(ops []*operation, together bool) string {
	var parts []string
	credits := 0
	for _, op := range ops {
		credits += op.CreditCost
	}
	switch {
	case credits == 0:
		parts = append(parts, "Costs no credits.")
	case together:
		parts = append(parts, fmt.Sprintf("Costs %d credits a call.", credits))
	case len(ops) == 1:
		parts = append(parts, fmt.Sprintf("Costs %s a call.", plural(ops[0].CreditCost, "credit")))
	default:
		var each []string
		for _, op := range ops {
			each = append(each, plural(op.CreditCost, "credit")+" ("+op.key()+")")
		}
		parts = append(parts, "Costs "+strings.Join(each, " or ")+" a call.")
	}
	for _, op := range ops {
		if op.Layer != "evaluation" || op.Feature != "" || op.PlanFloor != "" {
			need := op.Layer + " layer"
			if op.Feature != "" {
				need += ", feature " + op.Feature
			}
			parts = append(parts, "Needs a plan with the "+need+" ("+op.key()+").")
		}
	}
	for _, op := range ops {
		if pi := op.PaymentInfo; pi != nil {
			if pi.Mode == "fixed" {
				parts = append(parts, "Without an API key, payable per call with x402: "+usd(pi.Price)+".")
			} else {
				parts = append(parts, "Without an API key, payable per call with x402: "+usd(pi.Min)+" to "+usd(pi.Max)+" by limit.")
			}
			break
		}
	}
	return strings.Join(parts, " ")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// usd writes a price such as "0.050000" as "0.05 USD".
func usd(price string) string {
	if strings.Contains(price, ".") {
		price = strings.TrimRight(strings.TrimRight(price, "0"), ".")
	}
	return price + " USD"
}

func intOf(v any) *int {
	switch n := v.(type) {
	case float64:
		i := int(n)
		return &i
	case int:
		return &n
	}
	return nil
}

func stringsOf(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
