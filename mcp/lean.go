package mcp

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/tidwall/gjson"

	"github.com/cryptointel/cryptointel/wire"
)

// A route's body becomes a tool's structured content in one pass over its
// JSON: event objects lose the legacy aliases the /v1 envelopes carry
// beside the canonical fields (the wire table names them), and, at detail
// summary, the canonical fields the wire table does not mark Compact.
// Everything else is copied byte for byte.

// eventMarker is the member that makes a JSON object an event: no other
// shape of the API has a member of that name.
const eventMarker = "latestEvidenceTimestamp"

var (
	// legacyNames are the legacy aliases of the event fields.
	legacyNames = map[string]bool{}
	// fullOnly are the event fields the compact form leaves out.
	fullOnly = map[string]bool{}
)

func init() {
	for _, f := range wire.EventFields {
		if f.Legacy != "" {
			legacyNames[f.Legacy] = true
		}
		if !f.Compact {
			fullOnly[f.Name] = true
		}
	}
	if !slices.ContainsFunc(wire.EventFields, func(f wire.Field) bool { return f.Name == eventMarker && f.Compact }) {
		panic("mcp: the event marker " + eventMarker + " must be a compact field of wire.EventFields")
	}
}

// lean appends the lean form of the JSON value v to dst.
func lean(dst []byte, v gjson.Result, summary bool) []byte {
	switch {
	case v.IsObject():
		event := v.Get(eventMarker).Exists()
		dst = append(dst, '{')
		first := true
		v.ForEach(func(key, value gjson.Result) bool {
			if event && (legacyNames[key.Str] || (summary && fullOnly[key.Str])) {
				return true
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, key.Raw...)
			dst = append(dst, ':')
			dst = lean(dst, value, summary)
			return true
		})
		return append(dst, '}')
	case v.IsArray():
		dst = append(dst, '[')
		first := true
		v.ForEach(func(_, value gjson.Result) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = lean(dst, value, summary)
			return true
		})
		return append(dst, ']')
	}
	return append(dst, v.Raw...)
}

// leanBody returns the lean form of a route's JSON body.
func leanBody(body []byte, summary bool) []byte {
	return lean(make([]byte, 0, len(body)), gjson.ParseBytes(body), summary)
}

// member is one member of an object a tool composes, or of its schema.
type member struct {
	name  string
	value any // json.RawMessage / []byte for values, map[string]any for schemas
}

// fieldOf returns the raw JSON of a top-level member of body (nil when
// absent).
func fieldOf(body []byte, name string) []byte {
	r := gjson.GetBytes(body, gjson.Escape(name))
	if !r.Exists() {
		return nil
	}
	return []byte(r.Raw)
}

// count returns the number of items of the list at path (0 when absent).
func count(body []byte, path string) int {
	r := gjson.GetBytes(body, path)
	if !r.IsArray() {
		return 0
	}
	return int(r.Get("#").Int())
}

// composeObject writes a JSON object of raw members (absent values as
// null).
func composeObject(members ...member) []byte {
	b := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(m.name)
		b = append(b, name...)
		b = append(b, ':')
		raw, _ := m.value.([]byte)
		if len(raw) == 0 {
			raw = []byte("null")
		}
		b = append(b, raw...)
	}
	return append(b, '}')
}

// withMember appends a string member to a JSON object.
func withMember(obj []byte, name, value string) []byte {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return obj
	}
	out := append([]byte{}, obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(out)) > 1 {
		out = append(out, ',')
	}
	k, _ := json.Marshal(name)
	v, _ := json.Marshal(value)
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, v...)
	return append(out, '}')
}
