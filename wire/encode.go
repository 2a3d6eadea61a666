package wire

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The value encoders of each Type, shared by the generated encoders
// (event_gen.go) and by any code that writes the wire shape by hand. Their
// JSON forms are byte for byte encoding/json's, so an encoding can switch
// between them and encoding/json without a visible change.

// ErrUnsupportedValue is returned for a value JSON cannot hold: a NaN or
// infinite Float, a Time outside the years 0–9999.
var ErrUnsupportedValue = errors.New("wire: unsupported value")

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string the way encoding/json writes it:
// invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are escaped, and <, >
// and & are escaped when escapeHTML is set.
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendFloat appends f as a JSON number the way encoding/json writes a
// float64 (ES6 number formatting). NaN and infinities are
// ErrUnsupportedValue.
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, ErrUnsupportedValue
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// AppendNullableFloat appends *f, or null for nil.
func AppendNullableFloat(dst []byte, f *float64) ([]byte, error) {
	if f == nil {
		return append(dst, "null"...), nil
	}
	return AppendFloat(dst, *f)
}

// AppendTime appends t in UTC as a JSON string in layout. Years outside
// 0–9999 are ErrUnsupportedValue, as for time.Time's MarshalJSON.
func AppendTime(dst []byte, t time.Time, layout string) ([]byte, error) {
	t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, ErrUnsupportedValue
	}
	dst = append(dst, '"')
	if layout == TimeLayout {
		dst = AppendTimeLayout(dst, t)
	} else {
		dst = t.AppendFormat(dst, layout)
	}
	return append(dst, '"'), nil
}

// AppendTimeLayout appends t in TimeLayout, in UTC, unquoted: the bytes of
// t.UTC().AppendFormat(dst, TimeLayout), written without interpreting the
// layout (the API writes an instant per event and per post). Years outside
// 0–9999 are written by AppendFormat.
func AppendTimeLayout(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, TimeLayout)
	}
	hour, minute, second := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+second/10), byte('0'+second%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// AppendStrings appends a JSON array of strings; nil is [].
func AppendStrings(dst []byte, ss []string, escapeHTML bool) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s, escapeHTML)
	}
	return append(dst, ']')
}

// NonNil is s, or an empty list for nil: a list is never null, neither
// in what the API writes (JSON [], as AppendStrings writes nil) nor in
// what the stores send PostgreSQL (an empty array, not NULL).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// CSVFloat is the CSV cell of a nullable Float: Go's shortest 'g' form, or
// empty for null.
func CSVFloat(f *float64) string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// CSVTime is the CSV cell of a Time in layout, in UTC.
func CSVTime(t time.Time, layout string) string { return t.UTC().Format(layout) }

// CSVStrings is the CSV cell of a Strings field: the items joined with
// " | ".
func CSVStrings(ss []string) string { return strings.Join(ss, " | ") }

// CSVPairs is the CSV cell of a list of objects (EntityRefs,
// EvidenceList): "id:value" per item, value being the object's CSVValue
// field, joined with "|". It reuses sb.
func CSVPairs(sb *strings.Builder, n int, item func(i int) (id int64, value string)) string {
	sb.Reset()
	for i := range n {
		if i > 0 {
			sb.WriteByte('|')
		}
		id, v := item(i)
		sb.WriteString(strconv.FormatInt(id, 10))
		sb.WriteByte(':')
		sb.WriteString(v)
	}
	return sb.String()
}
