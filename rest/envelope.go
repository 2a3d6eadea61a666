package rest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cryptointel/cryptointel/db"
)

// field is one member of an ordered JSON object.
type field struct {
	Key   string
	Value any
}

// object is a JSON object whose members are written in order, so envelopes
// read the way the contract lists them (and golden files stay stable).
type object []field

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("error encoding %s: %w", f.Key, err)
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// members decodes a JSON object into its raw members; null decodes to nil.
func members(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if isNull(raw) {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("error decoding operation data: %w", err)
	}
	return m, nil
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
// the order matchFields lists them.
func flattenMatches(raw json.RawMessage, inner string, matchFields ...string) ([]json.RawMessage, error) {
	var items []map[string]json.RawMessage
	if !isNull(raw) {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("error decoding matches: %w", err)
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

// notFound is the 404 a route returns when its resource is null.
func notFound(msg string) error { return &db.Error{Code: db.ENOTFOUND, Message: msg} }
