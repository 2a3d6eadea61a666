package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/cryptointel/cryptointel/access"
)

// argSpec is an argument as a built tool checks it: its JSON Schema and
// what the checks read from it.
type argSpec struct {
	name     string
	param    string // route parameter; "" for an argument of the tool's own
	schema   map[string]any
	required bool
	kind     string // integer, string, boolean, integers, strings
	min, max *int
	maxItems int
	enum     []string
	def      any
}

// args are a call's validated arguments: the raw value of each given
// argument as a route parameter takes it, and the effective value of each
// (given, else its default).
type args struct {
	spec   []*argSpec
	given  map[string]bool
	values map[string]any // int, string, bool, []int, []string
}

// raw returns the argument as a route parameter's raw value ("" when it
// has none).
func (a args) raw(name string) string {
	switch v := a.values[name].(type) {
	case nil:
		return ""
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	case []int:
		return joinInts(v)
	case []string:
		return strings.Join(v, ",")
	}
	return ""
}

// int returns an integer argument (0 when absent).
func (a args) int(name string) int { n, _ := a.values[name].(int); return n }

// ints returns an integer-list argument.
func (a args) ints(name string) []int { l, _ := a.values[name].([]int); return l }

// detail returns the detail argument (summary by default).
func (a args) detail() string {
	if d, _ := a.values["detail"].(string); d != "" {
		return d
	}
	return DetailSummary
}

// max returns an integer argument's maximum.
func (a args) max(name string) (int, bool) {
	for _, s := range a.spec {
		if s.name == name && s.max != nil {
			return *s.max, true
		}
	}
	return 0, false
}

// params returns the route parameters of the named arguments the client
// gave (a route applies its own defaults to the others).
func (a args) params(names ...string) map[string]string {
	out := make(map[string]string, len(names))
	for _, s := range a.spec {
		if s.param != "" && a.given[s.name] && slices.Contains(names, s.name) {
			out[s.param] = a.raw(s.name)
		}
	}
	return out
}

// parseArgs checks raw (a tools/call's arguments) against the tool's
// arguments: a JSON object whose members are known arguments of the right
// type and within their bounds, with every required one present. Null
// counts as absent. Errors are messages an agent can act on.
func parseArgs(tool string, spec []*argSpec, raw json.RawMessage) (args, error) {
	a := args{spec: spec, given: map[string]bool{}, values: map[string]any{}}
	members := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '{' || !json.Valid(t) {
			return a, fmt.Errorf("arguments must be a JSON object")
		}
		if plainASCII(t) {
			// As json.Unmarshal into the map reads it (the last of a name
			// twice wins), without decoding the values yet.
			gjson.ParseBytes(t).ForEach(func(k, v gjson.Result) bool {
				members[k.Str] = json.RawMessage(v.Raw)
				return true
			})
		} else if json.Unmarshal(t, &members) != nil { // escapes, or names that are not ASCII
			return a, fmt.Errorf("arguments must be a JSON object")
		}
	}
	var unknown []string
	for name := range members {
		if !slices.ContainsFunc(spec, func(s *argSpec) bool { return s.name == name }) {
			unknown = append(unknown, strconv.Quote(access.Clip(name)))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		if len(unknown) > maxEchoed {
			unknown = append(unknown[:maxEchoed], fmt.Sprintf("and %d more", len(unknown)-maxEchoed))
		}
		names := make([]string, len(spec))
		for i, s := range spec {
			names[i] = s.name
		}
		takes := "no arguments"
		if len(names) > 0 {
			takes = "only " + strings.Join(names, ", ")
		}
		return a, fmt.Errorf("unknown argument %s: %s takes %s", strings.Join(unknown, ", "), tool, takes)
	}
	for _, s := range spec {
		v, ok := members[s.name]
		if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			if s.required {
				return a, fmt.Errorf("missing required argument %q", s.name)
			}
			if s.def != nil {
				a.values[s.name] = s.def
			}
			continue
		}
		val, err := s.parse(v)
		if err != nil {
			return a, err
		}
		a.values[s.name], a.given[s.name] = val, true
	}
	return a, nil
}

// plainASCII reports whether b is printable ASCII without escapes.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// parse checks one present value.
func (s *argSpec) parse(raw json.RawMessage) (any, error) {
	switch s.kind {
	case "integer":
		return s.parseInt(raw, s.name)
	case "boolean":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, fmt.Errorf("%s must be a boolean (true or false)", s.name)
		}
		return b, nil
	case "integers":
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil, fmt.Errorf("%s must be an array of integers", s.name)
		}
		if len(items) == 0 {
			return nil, fmt.Errorf("%s must have at least one item", s.name)
		}
		if s.maxItems > 0 && len(items) > s.maxItems {
			return nil, fmt.Errorf("%s must have at most %d items", s.name, s.maxItems)
		}
		out := make([]int, 0, len(items))
		for _, it := range items {
			n, err := s.parseInt(it, s.name+" items")
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	case "strings":
		var items []string
		if json.Unmarshal(raw, &items) != nil {
			return nil, fmt.Errorf("%s must be an array of strings", s.name)
		}
		for _, it := range items {
			if err := s.checkEnum(it); err != nil {
				return nil, err
			}
		}
		return items, nil
	default:
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return nil, fmt.Errorf("%s must be a string", s.name)
		}
		if s.required && strings.TrimSpace(str) == "" {
			return nil, fmt.Errorf("%s must not be empty", s.name)
		}
		return str, s.checkEnum(str)
	}
}

// maxEchoed is how many of a client's names a message quotes (each
// cut by access.Clip).
const maxEchoed = 8

// parseInt reads an integer. 3.0 is 3; 3.5 and strings are refused. A
// route parameter with bounds (limit, offset, days) is treated as its
// route treats it: a value out of its bounds is capped, or raised to its
// minimum, so a tool and its route answer the same call alike; any other
// integer (an id) out of its range is refused, as the route refuses it.
func (s *argSpec) parseInt(raw json.RawMessage, what string) (int, error) {
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) {
		return 0, fmt.Errorf("%s must be an integer", what)
	}
	if s.param != "" && s.min != nil && s.max != nil {
		return int(max(min(f, float64(*s.max)), float64(*s.min))), nil
	}
	lo, hi := float64(math.MinInt32), float64(math.MaxInt32) // ids are 32-bit
	if s.min != nil {
		lo = float64(*s.min)
	}
	if s.max != nil {
		hi = float64(*s.max)
	}
	if f < lo || f > hi {
		switch {
		case s.min != nil && s.max != nil:
			return 0, fmt.Errorf("%s must be between %d and %d (got %.0f)", what, *s.min, *s.max, f)
		case f < lo:
			return 0, fmt.Errorf("%s must be at least %.0f (got %.0f)", what, lo, f)
		default:
			return 0, fmt.Errorf("%s must be at most %.0f (got %.0f)", what, hi, f)
		}
	}
	return int(f), nil
}

func (s *argSpec) checkEnum(v string) error {
	if len(s.enum) > 0 && !slices.Contains(s.enum, v) {
		return fmt.Errorf("%s must be one of: %s", s.name, strings.Join(s.enum, ", "))
	}
	return nil
}
