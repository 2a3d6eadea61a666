package rest

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

// eventProps are the properties of the full event: canonical fields, then
// their legacy aliases (equal in value).
func eventProps() []prop {
	return withLegacyProps([]prop{
		p("id", integer()),
		p("title", str()),
		p("eventCategory", str()),
		p("eventSubcategory", str()),
		p("summary", str()),
		p("bullets", arr(str())),
		p("owners", arr(ref("EntityRef"))),
		p("participants", arr(ref("EntityRef"))),
		p("evidence", arr(ref("Evidence"))),
		p("latestEvidenceTimestamp", dateTime()),
		p("significance", describe(nullNum(), "Signal score; null for a radar-only event.")),
	})
}

// withLegacyProps appends to an event's canonical properties the legacy
// ones the facade adds for them (legacyAliases), each with its canonical
// property's schema.
func withLegacyProps(props []prop) []prop {
	out := append([]prop{}, props...)
	for _, a := range legacyAliases {
		for _, c := range props {
			if c.name == a.canonical {
				out = append(out, p(a.legacy, describe(c.s, "Legacy name of "+a.canonical+".")))
			}
		}
	}
	return out
}

func entityProps() []prop {
	return []prop{
		p("id", integer()),
		p("canonicalName", str()),
		p("displayName", str()),
		p("entityType", str()),
		p("status", str()),
		p("aliases", arr(str())),
		p("references", arr(ref("Reference"))),
	}
}

func concat(a []prop, b ...prop) []prop { return append(append([]prop{}, a...), b...) }

// componentSchemas are the named shapes of /openapi.json.
func componentSchemas() schema {
	briefProps := func(event string, withError bool) []prop {
		props := []prop{
			p("organizationId", integer()),
			p("label", nullStr()),
			p("radar", arr(ref(event))),
			p("signal", arr(ref(event))),
			p("counts", obj(p("radar", integer()), p("signal", integer()))),
		}
		if withError {
			props = append(props, p("error", describe(nullStr(), "Why this entry failed; null on success.")))
		}
		return props
	}
	marketViewProps := []prop{
		p("organization", str()),
		p("markets", arr(ref("Market"))),
		p("events", arr(ref("MarketEvent"))),
	}
	return schema{
		"Error": obj(p("error", describe(str(), "What went wrong."))),
		"EntityRef": obj(
			p("id", integer()), p("label", str()), p("type", str()), p("aliases", arr(str()))),
		"Evidence": obj(
			p("id", integer()), p("content", str()), p("url", str()), p("timestamp", dateTime())),
		"Event": describe(obj(eventProps()...),
			"A radar event (a signal when significance is set), with canonical and legacy fields."),
		"EventCompact": describe(obj(withLegacyProps([]prop{
			p("id", integer()),
			p("title", str()),
			p("eventCategory", str()),
			p("eventSubcategory", str()),
			p("summary", str()),
			p("latestEvidenceTimestamp", dateTime()),
			p("significance", nullNum()),
		})...), "A brief item in compact mode: without evidence, bullets, owners, participants and their legacy aliases."),
		"SearchEvent": obj(concat(eventProps(),
			p("matchedVia", describe(str(), "text, entity or related_entity")),
			p("matchType", str()),
			p("matchRank", describe(number(), "Lower is stronger.")))...),
		"ContentEvent": obj(concat(eventProps(),
			p("sourceType", str()),
			p("contentType", nullStr()),
			p("eventSurface", strEnum("radar", "signal")))...),
		"Reference": obj(
			p("id", integer()), p("referenceType", str()), p("title", str()), p("url", str())),
		"Entity": obj(entityProps()...),
		"EntitySummary": obj(
			p("id", integer()), p("canonicalName", str()), p("displayName", str()),
			p("entityType", str()), p("status", str())),
		"EntityMatch": obj(concat(entityProps(),
			p("matchedVia", str()),
			p("matchType", str()),
			p("matchRank", describe(integer(), "0 is the strongest; lower is stronger.")),
			p("matchedValue", str()))...),
		"Relationship": obj(
			p("sourceEntityId", integer()),
			p("targetEntityId", integer()),
			p("relationshipType", str()),
			p("status", str()),
			p("direction", str()),
			p("searchExpand", boolean()),
			p("relatedEntity", ref("EntitySummary"))),
		"Organization":      obj(p("id", integer()), p("label", str()), p("aliases", arr(str()))),
		"OrganizationEvent": obj(p("id", integer()), p("title", str()), p("signal", nullNum())),
		"OrganizationMatch": obj(
			p("id", integer()), p("label", str()), p("type", str()), p("aliases", arr(str())),
			p("matchedVia", str()), p("matchType", str()), p("matchRank", integer()), p("matchedValue", str())),
		"DirectoryEntry": obj(p("id", integer()), p("label", str())),
		"SignalHistory": obj(
			p("organizationId", integer()),
			p("label", str()),
			p("history", describe(arr(obj(
				p("date", schema{"type": "string", "pattern": `^\d{4}-\d{2}-\d{2}$`}),
				p("signalCount", integer()),
				p("radarCount", integer()))), "Newest first."))),
		"Brief":             obj(briefProps("Event", false)...),
		"BriefCompact":      obj(briefProps("EventCompact", false)...),
		"BatchBrief":        obj(briefProps("Event", true)...),
		"BatchBriefCompact": obj(briefProps("EventCompact", true)...),
		"Market": obj(
			p("id", integer()),
			p("question", str()),
			p("url", str()),
			p("outcomes", arr(str())),
			p("probability", nullNum()),
			p("volume", nullNum()),
			p("closes_at", nullDateTime())),
		"MarketEvent": obj(
			p("subevent_id", integer()),
			p("subevent_label", str()),
			p("subevent_type", str()),
			p("normalized_title", str()),
			p("injected_summary", str()),
			p("posts", arr(obj(p("id", integer()), p("content", str()), p("date", dateTime()))))),
		"MarketView":               obj(marketViewProps...),
		"MarketViewByOrganization": obj(concat([]prop{p("org_id", integer())}, marketViewProps...)...),
	}
}
