// Package jsonw is the byte writer of the executor (graph's fastexec.go and
// fastexec_gen.go): values are appended to one buffer in exactly the bytes
// gqlgen's marshalers write, so a response is built without a
// graphql.Marshaler, a closure or a map per value. An object that turns out
// null (a non-null field inside it failed) is cut back with Truncate.
//
// The writer belongs to whoever asked for the data: a surface that wraps
// the data in a form of its own (the /v1 facade's envelopes) brings a
// Writer with HTML set and its own buffer, and reads the Marks the
// executor left on the way instead of scanning the data again.
package jsonw

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Writer appends JSON to B. The zero value is ready to use.
type Writer struct {
	// B holds what was written.
	B []byte
	// HTML, when set, escapes <, > and & (and U+2028, U+2029) in strings
	// as encoding/json does by default, so the bytes are what
	// json.Marshal would make of a json.RawMessage holding them.
	HTML bool
	// Marking, when set, asks the writer of the data to record Marks.
	Marking bool
	// Elements, with Marking, asks for Spans too. A writer that cannot
	// record them (graph's gqlgen fallback) records none, so a reader
	// takes them as hints.
	Elements bool
	// Marks are the spans of the values the executor marked, each
	// recorded once its value is written (so a value's members come
	// before it). See graph's Run for which values are marked.
	Marks []Mark
	// Spans are, with Elements, the spans of the object elements of every
	// list that Marks leave out (a list below another, or below a field
	// that is not a root field), without paths: nothing for a collector
	// to scan. Each is recorded once its element is written, as Marks
	// are.
	Spans []Span
}

// Span is the span B[Start:End] of one value.
type Span struct{ Start, End int32 }

// Mark is the span B[Start:End] of one value and its path: the response
// keys from the root joined by ".", with "[]" after a list's key for an
// element of it ("events.nodes", "searchEvents[].event").
type Mark struct {
	Path       string
	Start, End int
}

// Mark records the span from start to the end of B under path.
func (w *Writer) Mark(path string, start int) {
	w.Marks = append(w.Marks, Mark{Path: path, Start: start, End: len(w.B)})
}

// Span records the span from start to the end of B, without a path.
func (w *Writer) Span(start int) {
	w.Spans = append(w.Spans, Span{Start: int32(start), End: int32(len(w.B))})
}

// Write appends p; Writer is an io.Writer for the marshalers it falls back
// to.
func (w *Writer) Write(p []byte) (int, error) {
	w.B = append(w.B, p...)
	return len(p), nil
}

// WriteString appends s.
func (w *Writer) WriteString(s string) (int, error) {
	w.B = append(w.B, s...)
	return len(s), nil
}

// Byte appends c.
func (w *Writer) Byte(c byte) { w.B = append(w.B, c) }

// Raw appends s as it is.
func (w *Writer) Raw(s string) { w.B = append(w.B, s...) }

// Len is the number of bytes written.
func (w *Writer) Len() int { return len(w.B) }

// Truncate cuts the buffer back to n bytes.
func (w *Writer) Truncate(n int) { w.B = w.B[:n] }

// Null appends null.
func (w *Writer) Null() { w.B = append(w.B, "null"...) }

// Bool appends true or false.
func (w *Writer) Bool(b bool) {
	if b {
		w.B = append(w.B, "true"...)
	} else {
		w.B = append(w.B, "false"...)
	}
}

// Int appends i in decimal, as graphql.MarshalInt and MarshalInt64 do.
func (w *Writer) Int(i int64) { w.B = strconv.AppendInt(w.B, i, 10) }

// Float appends f as fmt's %g does (graphql.MarshalFloat). It reports
// false, writing nothing, for an infinity or NaN, which GraphQL cannot
// carry; the caller records the error and writes null.
func (w *Writer) Float(f float64) bool {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return false
	}
	w.B = strconv.AppendFloat(w.B, f, 'g', -1, 64)
	return true
}

// Key appends "name": for an object member whose name needs no escaping
// (a GraphQL name or alias), preceded by a comma unless first.
func (w *Writer) Key(name string, first bool) {
	if !first {
		w.B = append(w.B, ',')
	}
	w.B = append(w.B, '"')
	w.B = append(w.B, name...)
	w.B = append(w.B, '"', ':')
}

const (
	hex      = "0123456789ABCDEF" // gqlgen's control-character escapes
	hexLower = "0123456789abcdef" // encoding/json's HTML escapes
)

// plain[c] reports that byte c is written as it is in a string (no
// escape); htmlPlain[c] the same under HTML (where <, >, & and the lead
// byte of U+2028 and U+2029 need a look).
var plain, htmlPlain [256]bool

func init() {
	for c := 0x20; c < 256; c++ {
		plain[c] = c != '\\' && c != '"'
		htmlPlain[c] = plain[c] && c != '<' && c != '>' && c != '&' && c != 0xE2
	}
}

// String appends s quoted the way gqlgen's MarshalString does: \t, \r, \n,
// \\ and \" escaped, other control characters as \u00XX (upper-case hex),
// everything else (invalid UTF-8 included) as it is. With HTML set it then
// escapes as encoding/json's HTML-safe compaction would.
func (w *Writer) String(s string) {
	set := &plain
	if w.HTML {
		set = &htmlPlain
	}
	w.B = append(w.B, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if set[c] {
			continue
		}
		switch c {
		case '\t':
			w.B = append(append(w.B, s[start:i]...), '\\', 't')
		case '\r':
			w.B = append(append(w.B, s[start:i]...), '\\', 'r')
		case '\n':
			w.B = append(append(w.B, s[start:i]...), '\\', 'n')
		case '\\', '"':
			w.B = append(append(w.B, s[start:i]...), '\\', c)
		case '<', '>', '&':
			w.B = append(append(w.B, s[start:i]...), '\\', 'u', '0', '0', hexLower[c>>4], hexLower[c&0xF])
		case 0xE2:
			// U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != '\u2028' && r != '\u2029' {
				continue
			}
			w.B = append(append(w.B, s[start:i]...), '\\', 'u', '2', '0', '2', hexLower[r&0xF])
			i += size - 1
		default:
			w.B = append(append(w.B, s[start:i]...), '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	w.B = append(w.B, s[start:]...)
	w.B = append(w.B, '"')
}
