package rest

import (
	"strings"

	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/wire"
)

// JSON Schemas (OpenAPI 3.1 dialect, JSON Schema 2020-12) of the response
// shapes. Objects are closed (additionalProperties false) so a test that
// validates live responses against /openapi.json catches any drift between
// an operation and its documented shape.

// schema is a JSON Schema object.
type schema = map[string]any

// prop is one property of an object schema.
type prop struct {
	name     string
	s        schema
	optional bool
}

// p declares a required property.
func p(name string, s schema) prop { return prop{name: name, s: s} }

// optional declares a property that may be absent.
func optional(name string, s schema) prop { return prop{name: name, s: s, optional: true} }

// obj is a closed object schema; every property is required unless
// declared optional.
func obj(props ...prop) schema {
	properties := schema{}
	required := []string{}
	for _, pr := range props {
		properties[pr.name] = pr.s
		if !pr.optional {
			required = append(required, pr.name)
		}
	}
	return schema{
		"type":                 "object",
		"properties":           properties,
		"required":             required,
		"additionalProperties": false,
	}
}

func str() schema      { return schema{"type": "string"} }
func nullStr() schema  { return schema{"type": []any{"string", "null"}} }
func integer() schema  { return schema{"type": "integer"} }
func number() schema   { return schema{"type": "number"} }
func nullNum() schema  { return schema{"type": []any{"number", "null"}} }
func boolean() schema  { return schema{"type": "boolean"} }
func dateTime() schema { return schema{"type": "string", "format": "date-time"} }
func nullDateTime() schema {
	return schema{"type": []any{"string", "null"}, "format": "date-time"}
}
func strEnum(values ...string) schema {
	enum := make([]any, len(values))
	for i, v := range values {
		enum[i] = v
	}
	return schema{"type": "string", "enum": enum}
}
func arr(items schema) schema { return schema{"type": "array", "items": items} }
func ref(name string) schema  { return schema{"$ref": "#/components/schemas/" + name} }
func nullable(s schema) schema {
	return schema{"anyOf": []any{s, schema{"type": "null"}}}
}
func anyOf(ss ...schema) schema {
	l := make([]any, len(ss))
	for i, s := range ss {
		l[i] = s
	}
	return schema{"anyOf": l}
}

// describe returns s with a description.
func describe(s schema, d string) schema {
	out := schema{}
	for k, v := range s {
		out[k] = v
	}
	out["description"] = d
	return out
}

// wireSchema is the JSON Schema of a field of the wire tables.
func wireSchema(f wire.Field) schema {
	var s schema
	switch f.Type {
	case wire.Int:
		s = integer()
	case wire.String:
		s = str()
	case wire.Float:
		s = number()
	case wire.Time:
		s = dateTime()
	case wire.Strings:
		s = arr(str())
	case wire.EntityRefs:
		s = arr(ref("EntityRef"))
	case wire.EvidenceList:
		s = arr(ref("Evidence"))
	default:
		panic("rest: no JSON Schema for wire type " + string(f.Type))
	}
	if f.Nullable {
		s["type"] = []any{s["type"], "null"}
	}
	return describe(s, f.Description)
}

// wireProps are the properties of the wire fields that keep reports true
// for, in table order, and the legacy aliases of those with one (equal in
// value; the operations select them as GraphQL aliases, see
// rest/ops/fragments).
func wireProps(fields []wire.Field, keep func(wire.Field) bool) (canonical, legacy []prop) {
	for _, f := range fields {
		if !keep(f) {
			continue
		}
		canonical = append(canonical, p(f.Name, wireSchema(f)))
		if f.Legacy != "" {
			legacy = append(legacy, p(f.Legacy, describe(wireSchema(f), "Legacy name of "+f.Name+".")))
		}
	}
	return canonical, legacy
}

// eventShape is the schema of an event made of the wire.EventFields keep
// reports true for, then extra: with their legacy aliases after them (the
// default), or without any (legacy=false, legacyParam), each shape closed.
func eventShape(description string, keep func(wire.Field) bool, extra ...prop) schema {
	canonical, legacy := wireProps(wire.EventFields, keep)
	return describe(anyOf(
		obj(concat(concat(canonical, legacy...), extra...)...),
		obj(concat(canonical, extra...)...)),
		description+" Without the legacy aliases when the request asks for the lean shape (legacy=false).")
}

func allFields(wire.Field) bool { return true }

// compactDropped lists what the compact brief item drops: the
// wire.EventFields not marked Compact and their legacy aliases.
func compactDropped() (canonical, legacy string) {
	var c, l []string
	for _, f := range wire.EventFields {
		if !f.Compact {
			c = append(c, f.Name)
			if f.Legacy != "" {
				l = append(l, f.Legacy)
			}
		}
	}
	return strings.Join(c, ", "), strings.Join(l, ", ")
}

// compactDescription describes the compact brief item by what it drops.
func compactDescription() string {
	canonical, _ := compactDropped()
	return "A brief item in compact mode: without " + canonical + " and their legacy aliases."
}

func concat(a []prop, b ...prop) []prop { return append(append([]prop{}, a...), b...) }

// fieldSchemas are the schemas of the GraphQL fields whose type says less
// than the contract: a day as a date string, an event's surface, and the
// search cursor in the form the generated clients were built from.
var fieldSchemas = map[string]schema{
	"SignalHistoryDay.date":   {"type": "string", "pattern": `^\d{4}-\d{2}-\d{2}$`},
	"SearchReport.nextCursor": nullable(str()),
	"Event.eventSurface":      strEnum("radar", "signal"),
}

// componentSchemas are the named shapes of /openapi.json: the ones written
// here (fixedComponents) and the ones derived from the operations'
// selections (deriveResponses).
func componentSchemas() schema {
	out := fixedComponents()
	d, err := derived()
	if err != nil {
		panic(err.Error())
	}
	for name, s := range d.components {
		out[name] = s
	}
	return out
}

// fixedComponents are the components no operation selects: the error body,
// the stream's close message and the API keys (derived from the Go types
// written, goschema.go), and the
// event shapes, made of the wire tables with their legacy aliases (the
// operations' event fragments are generated from the same tables).
func fixedComponents() schema {
	entityRefProps, _ := wireProps(wire.EntityRefFields, allFields)
	evidenceProps, _ := wireProps(wire.EvidenceFields, allFields)
	out := schema{
		"Error":        describe(goSchemaOf[httperr.Body](), "The body of every error response."),
		"StreamClose":  describe(goSchemaOf[streamClose](), "The data of the `close` message that ends a stream the server closed."),
		"EntityRef":    obj(entityRefProps...),
		"Evidence":     obj(evidenceProps...),
		"Event":        eventShape("A radar event (a signal when significance is set), with canonical and legacy fields.", allFields),
		"EventCompact": eventShape(compactDescription(), func(f wire.Field) bool { return f.Compact }),
	}
	for name, s := range goComponentSchemas() {
		out[name] = s
	}
	return out
}
