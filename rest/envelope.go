package rest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cryptointel/cryptointel"
)

// field is one member of an ordered JSON object.
type field struct {
	Key   string
	Value any
}

// object is a JSON object whose members are written in order, so envelopes
// read the way the contract lists them (and golden files stay stable).
type object []field

// MarshalJSON writes the members in order. Raw members (the executor's
// data, already compact JSON) are copied as they are, HTML-escaped the way
// encoding/json escapes them, instead of being validated and compacted
// again: a page of full events is tens of kilobytes, and re-scanning it
// cost more CPU than the rest of the envelope (see tests/bench/RESULTS.md).
// The bytes written are the same as json.Marshal's.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(o.sizeHint())
	if err := o.appendJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (o object) appendJSON(buf *bytes.Buffer) error {
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return err
		}
		buf.Write(k)
		buf.WriteByte(':')
		switch v := f.Value.(type) {
		case json.RawMessage:
			if len(bytes.TrimSpace(v)) == 0 {
				buf.WriteString("null") // as json.Marshal writes a nil RawMessage
				continue
			}
			appendRaw(buf, v)
		case safeRaw:
			if len(bytes.TrimSpace(v)) == 0 {
				buf.WriteString("null")
				continue
			}
			buf.Write(v)
		case []json.RawMessage:
			appendRawList(buf, v, false)
		case []safeRaw:
			appendRawList(buf, v, true)
		case object:
			if err := v.appendJSON(buf); err != nil {
				return fmt.Errorf("error encoding %s: %w", f.Key, err)
			}
		default:
			b, err := json.Marshal(f.Value)
			if err != nil {
				return fmt.Errorf("error encoding %s: %w", f.Key, err)
			}
			buf.Write(b)
		}
	}
	buf.WriteByte('}')
	return nil
}

// safeRaw is compact JSON that needs no HTML escaping any more: data in
// the facade's form (see facadeExtension).
type safeRaw []byte

// htmlSafe marks every raw member of env (data in the facade's form) as
// needing no escaping.
func htmlSafe(env any) any {
	switch v := env.(type) {
	case object:
		out := make(object, len(v))
		for i, f := range v {
			out[i] = field{f.Key, htmlSafe(f.Value)}
		}
		return out
	case json.RawMessage:
		return safeRaw(v)
	case []json.RawMessage:
		out := make([]safeRaw, len(v))
		for i, r := range v {
			out[i] = safeRaw(r)
		}
		return out
	}
	return env
}

// appendRawList appends a JSON array of compact values, as json.Marshal
// writes a []json.RawMessage.
func appendRawList[T json.RawMessage | safeRaw](buf *bytes.Buffer, list []T, safe bool) {
	if list == nil {
		buf.WriteString("null")
		return
	}
	buf.WriteByte('[')
	for i, v := range list {
		if i > 0 {
			buf.WriteByte(',')
		}
		switch {
		case len(bytes.TrimSpace(v)) == 0:
			buf.WriteString("null")
		case safe:
			buf.Write(v)
		default:
			appendRaw(buf, v)
		}
	}
	buf.WriteByte(']')
}

// sizeHint estimates the encoded size so the buffer grows once.
func (o object) sizeHint() int {
	n := 3 // braces and the body's newline
	for _, f := range o {
		n += len(f.Key) + 16
		switch v := f.Value.(type) {
		case json.RawMessage:
			n += len(v)
		case safeRaw:
			n += len(v)
		case object:
			n += v.sizeHint()
		}
	}
	return n
}

// appendRaw appends compact JSON raw to buf with <, >, & and U+2028/U+2029
// escaped, as json.Marshal writes a RawMessage.
func appendRaw(buf *bytes.Buffer, raw []byte) {
	for _, c := range raw {
		// 0xE2 leads the UTF-8 encodings of U+2028 and U+2029.
		if c == '<' || c == '>' || c == '&' || c == 0xE2 {
			json.HTMLEscape(buf, raw)
			return
		}
	}
	buf.Write(raw)
}

// members decodes a JSON object into its raw members; null decodes to nil.
// Compact objects from the executor are split by a byte scanner (each
// member's value is skipped, not decoded); anything it does not expect
// falls back to encoding/json.
func members(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	if m, ok := splitObject(raw); ok {
		return m, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("error decoding operation data: %w", err)
	}
	return m, nil
}

// splitObject splits a compact JSON object (no whitespace between tokens,
// keys without escapes) into its members. ok is false for anything else,
// including invalid JSON; the caller then decodes it the slow way.
func splitObject(raw []byte) (map[string]json.RawMessage, bool) {
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	i := 1
	if raw[i] == '}' {
		return m, i+1 == len(raw)
	}
	for {
		if raw[i] != '"' {
			return nil, false
		}
		end := bytes.IndexByte(raw[i+1:], '"')
		if end < 0 {
			return nil, false
		}
		key := raw[i+1 : i+1+end]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		i += end + 2
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		i++
		vend, ok := skipValue(raw, i)
		if !ok {
			return nil, false
		}
		m[string(key)] = json.RawMessage(raw[i:vend])
		i = vend
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i++
		case '}':
			return m, i+1 == len(raw)
		default:
			return nil, false
		}
	}
}

// skipValue returns the end of the compact JSON value starting at raw[i]:
// strings are skipped to their closing quote, objects and arrays to their
// matching bracket, literals and numbers to the next delimiter. It checks
// structure only as far as it needs to find the end.
func skipValue(raw []byte, i int) (int, bool) {
	if i >= len(raw) {
		return 0, false
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				end, ok := skipString(raw, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			case ' ', '\t', '\n', '\r':
				return 0, false // not compact: let encoding/json handle it
			}
			i++
		}
		return 0, false
	default:
		start := i
		for i < len(raw) && raw[i] != ',' && raw[i] != '}' && raw[i] != ']' {
			switch c := raw[i]; {
			case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			default:
				return 0, false
			}
			i++
		}
		return i, i > start
	}
}

// skipString returns the index after the string starting at raw[i] (a
// quote), honouring backslash escapes. It jumps from quote to quote with
// bytes.IndexByte (vectorized) and counts the backslashes before each: an
// odd run escapes the quote.
func skipString(raw []byte, i int) (int, bool) {
	i++
	for {
		j := bytes.IndexByte(raw[i:], '"')
		if j < 0 {
			return 0, false
		}
		q := i + j
		n := 0
		for k := q - 1; k >= i && raw[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
}

// dig follows keys through nested objects of raw; a missing member or a
// null on the way yields null.
func dig(raw json.RawMessage, keys ...string) (json.RawMessage, error) {
	for _, k := range keys {
		m, err := members(raw)
		if err != nil {
			return nil, err
		}
		v, ok := m[k]
		if !ok {
			return json.RawMessage("null"), nil
		}
		raw = v
	}
	if len(raw) == 0 {
		return json.RawMessage("null"), nil
	}
	return raw, nil
}

// isNull reports whether raw is absent or the JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// orEmptyList turns null into [] so data lists are always arrays.
func orEmptyList(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return json.RawMessage("[]")
	}
	return raw
}

// splice returns the JSON object obj with the members of extra appended,
// keeping obj's member order.
func splice(obj json.RawMessage, extra object) (json.RawMessage, error) {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, fmt.Errorf("error splicing: not a JSON object")
	}
	if len(extra) == 0 {
		return obj, nil
	}
	tail, err := extra.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(obj)+len(tail))
	out = append(out, obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, tail[1:]...)
	return out, nil
}

// flattenMatches turns [{<inner>: {...}, m1: v1, ...}] into
// [{..., m1: v1, ...}]: the inner object with the match fields appended in
// the order matchFields lists them. A compact array from the executor is
// split by the byte scanner (members); anything else is decoded by
// encoding/json.
func flattenMatches(raw json.RawMessage, inner string, matchFields ...string) ([]json.RawMessage, error) {
	var items []map[string]json.RawMessage
	if !isNull(raw) {
		var ok bool
		if items, ok = splitArrayOfObjects(raw); !ok {
			items = nil
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("error decoding matches: %w", err)
			}
		}
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		extra := make(object, 0, len(matchFields))
		for _, f := range matchFields {
			extra = append(extra, field{f, it[f]})
		}
		merged, err := splice(it[inner], extra)
		if err != nil {
			return nil, err
		}
		out = append(out, merged)
	}
	return out, nil
}

// splitArrayOfObjects splits a compact JSON array of objects into each
// object's members (splitObject); ok is false for anything else.
func splitArrayOfObjects(raw []byte) ([]map[string]json.RawMessage, bool) {
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false
	}
	var out []map[string]json.RawMessage
	i := 1
	if raw[i] == ']' {
		return out, i+1 == len(raw)
	}
	for {
		end, ok := skipValue(raw, i)
		if !ok {
			return nil, false
		}
		m, ok := splitObject(raw[i:end])
		if !ok {
			return nil, false
		}
		out = append(out, m)
		if end >= len(raw) {
			return nil, false
		}
		switch raw[end] {
		case ',':
			i = end + 1
		case ']':
			return out, end+1 == len(raw)
		default:
			return nil, false
		}
	}
}

// notFound is the 404 a route returns when its resource is null.
func notFound(msg string) error { return &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: msg} }
