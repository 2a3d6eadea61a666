package rest

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cryptointel/cryptointel"
)

// Parameter types a route may declare.
const (
	TypeString      = "string"
	TypeInteger     = "integer"
	TypeBoolean     = "boolean"
	TypeDateTime    = "date-time"
	TypeIntegerList = "integer-list"
	TypeStringList  = "string-list"
)

// intp returns a pointer to n, for Param bounds.
func intp(n int) *int { return &n }

// parseCall parses r's parameters against rt's declarations and returns the
// call with Values, Given and Vars filled. Parameters are checked in the
// order they are declared, so the first problem reported is the one the
// contract lists first.
//
// Duplicated query parameters: the first occurrence wins, and the canonical
// name wins over its aliases (?q=a&query=b searches for b). An empty value
// counts as absent, except for a boolean given bare (?compact), which is true.
func parseCall(rt *Route, r *http.Request, now time.Time) (*Call, error) {
	c := &Call{
		Route:     rt,
		Request:   r,
		Now:       now,
		Values:    map[string]any{},
		Given:     map[string]bool{},
		Vars:      map[string]any{},
		Operation: rt.Operation,
	}
	query := r.URL.Query()
	for i := range rt.Params {
		p := &rt.Params[i]
		raw, present := lookupParam(p, r, query)
		raw = strings.TrimSpace(raw)
		if err := checkRaw(p, raw); err != nil {
			return nil, err
		}
		if raw == "" && !(present && p.Type == TypeBoolean) {
			if p.Required {
				return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: requiredMessage(p)}
			}
			if p.Default != nil {
				c.Values[p.Name] = p.Default
				if p.Var != "" {
					c.Vars[p.Var] = p.Default
				}
			}
			continue
		}
		v, err := parseValue(p, raw, now)
		if err != nil {
			return nil, err
		}
		c.Values[p.Name] = v
		c.Given[p.Name] = true
		if p.Var != "" {
			c.Vars[p.Var] = varValue(v)
		}
	}
	return c, nil
}

// MaxParamBytes bounds the length of one parameter value.
const MaxParamBytes = 2048

// checkRaw refuses a value no parameter accepts: longer than MaxParamBytes,
// not valid UTF-8, or holding a NUL byte (which PostgreSQL text cannot
// store, so it would otherwise fail deep in a query as a 500).
func checkRaw(p *Param, raw string) error {
	switch {
	case len(raw) > MaxParamBytes:
		return cryptointel.Errorf(cryptointel.EINVALID, "%s is too long (at most %d bytes)", p.Name, MaxParamBytes)
	case !utf8.ValidString(raw):
		return cryptointel.Errorf(cryptointel.EINVALID, "%s must be valid UTF-8 text", p.Name)
	case strings.IndexByte(raw, 0) >= 0:
		return cryptointel.Errorf(cryptointel.EINVALID, "%s must not contain NUL bytes", p.Name)
	}
	return nil
}

// lookupParam returns the first value of p under its canonical name, else
// under its first alias present, and whether any of them was present.
func lookupParam(p *Param, r *http.Request, query url.Values) (string, bool) {
	if p.In == "path" {
		v := r.PathValue(p.Name)
		return v, v != ""
	}
	if p.In == "header" {
		v := r.Header.Get(p.Name)
		return v, strings.TrimSpace(v) != ""
	}
	for _, name := range append([]string{p.Name}, p.Aliases...) {
		if vs, ok := query[name]; ok && len(vs) > 0 {
			if strings.TrimSpace(vs[0]) == "" && p.Type != TypeBoolean {
				continue
			}
			return vs[0], true
		}
	}
	return "", false
}

func requiredMessage(p *Param) string {
	if p.RequiredMessage != "" {
		return p.RequiredMessage
	}
	return p.Name + " parameter is required"
}

// parseValue parses one present, non-empty raw value of p.
func parseValue(p *Param, raw string, now time.Time) (any, error) {
	if p.Parse != nil {
		return p.Parse(raw)
	}
	switch p.Type {
	case TypeInteger:
		n, err := parseInt(p.Name, raw)
		if err != nil {
			return nil, err
		}
		return clampInt(p, n), nil
	case TypeBoolean:
		switch strings.ToLower(raw) {
		case "", "true", "1", "yes":
			return true, nil
		case "false", "0", "no":
			return false, nil
		}
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be a boolean (true or false)", p.Name)
	case TypeDateTime:
		t, err := parseTime(raw)
		if cryptointel.IsInstantRange(err) {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be an instant %s", p.Name, cryptointel.InstantBounds)
		} else if err != nil {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be an ISO 8601 timestamp", p.Name)
		}
		if p.MaxAge > 0 && t.Before(now.Add(-p.MaxAge)) {
			return nil, cryptointel.SinceTooOld(p.Name, p.MaxAge)
		}
		return t, nil
	case TypeIntegerList:
		var out []int
		for _, item := range strings.Split(raw, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			n, err := parseInt(p.Name, item)
			if err != nil {
				return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be a comma-separated list of integers", p.Name)
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		if p.MaxItems > 0 && len(out) > p.MaxItems {
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s accepts at most %d values", p.Name, p.MaxItems)
		}
		return out, nil
	case TypeStringList:
		var out []string
		for _, item := range strings.Split(raw, ",") {
			item = strings.ToLower(strings.TrimSpace(item))
			if item == "" {
				continue
			}
			if len(p.Enum) > 0 && !slices.Contains(p.Enum, item) {
				return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must only contain: %s", p.Name, strings.Join(p.Enum, ", "))
			}
			if !slices.Contains(out, item) {
				out = append(out, item)
			}
		}
		return out, nil
	default: // TypeString
		if len(p.Enum) > 0 {
			for _, e := range p.Enum {
				if strings.EqualFold(e, raw) {
					return e, nil
				}
			}
			return nil, cryptointel.Errorf(cryptointel.EINVALID, "%s must be one of: %s", p.Name, strings.Join(p.Enum, ", "))
		}
		return raw, nil
	}
}

// parseInt parses a base-10 integer. Fractions, exponents, NaN and other
// text are an error; a value too large for an int saturates so that caps
// still apply to it.
func parseInt(name, raw string) (int, error) {
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			if strings.HasPrefix(raw, "-") {
				return minInt, nil
			}
			return maxInt, nil
		}
		return 0, cryptointel.Errorf(cryptointel.EINVALID, "%s must be an integer", name)
	}
	if n > maxInt {
		return maxInt, nil
	} else if n < minInt {
		return minInt, nil
	}
	return int(n), nil
}

// Integers are bounded to 32 bits, the range of a GraphQL Int.
const (
	maxInt = 1<<31 - 1
	minInt = -1 << 31
)

// clampInt caps n at p.Max and clamps it to p.Min.
func clampInt(p *Param, n int) int {
	if p.Max != nil && n > *p.Max {
		n = *p.Max
	}
	if p.Min != nil && n < *p.Min {
		n = *p.Min
	}
	return n
}

// parseTime parses a date-time parameter with cryptointel.ParseInstant, the
// one parser and bound of instants. A '+' offset that arrived unescaped in
// a query string (and so decoded as a space) is restored first.
func parseTime(raw string) (time.Time, error) {
	return cryptointel.ParseInstant(strings.ReplaceAll(raw, " ", "+"))
}

// formatTime writes t as the GraphQL Time scalar reads it.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// varValue converts a parsed value to a GraphQL variable value.
func varValue(v any) any {
	if t, ok := v.(time.Time); ok {
		return formatTime(t)
	}
	return v
}
