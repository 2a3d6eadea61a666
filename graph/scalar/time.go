// Package scalar holds the hand-written marshalers of the GraphQL custom
// scalars that gqlgen binds in gqlgen.yml.
package scalar

import (
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/wire"
)

// TimeLayout is how the Time scalar is written: the API's instant form,
// wire.TimeLayout (RFC 3339 in UTC with milliseconds and a Z suffix).
const TimeLayout = wire.TimeLayout

// FormatTime formats t the way the Time scalar is written.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// MarshalTime writes t as an RFC 3339 UTC string with milliseconds.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		io.WriteString(w, strconv.Quote(FormatTime(t))) //nolint:errcheck
	})
}

// AppendTime appends t quoted, as MarshalTime writes it; the generated
// executor (graph/fastexec_gen.go) writes Time values through it.
func AppendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = wire.AppendTimeLayout(b, t)
	return append(b, '"')
}

// UnmarshalTime reads an ISO 8601 date-time string (any offset, optional
// fractional seconds; see cryptointel.ParseInstant) within the instant
// bounds, or takes a time.Time as it is (in UTC): an in-process surface
// passes the instant it parsed with the same parser.
func UnmarshalTime(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t.UTC(), nil
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, cryptointel.Errorf(cryptointel.EINVALID, "invalid timestamp: use an ISO 8601 date-time string such as 2026-11-20T10:00:00Z")
	}
	return ParseTime(s)
}

// ParseTime parses a date-time with cryptointel.ParseInstant, returning it
// in UTC. A bad value is a *cryptointel.Error with code EINVALID.
func ParseTime(s string) (time.Time, error) {
	t, err := cryptointel.ParseInstant(s)
	if cryptointel.IsInstantRange(err) {
		return time.Time{}, cryptointel.Errorf(cryptointel.EINVALID, "timestamp %q is out of range: use an instant %s", s, cryptointel.InstantBounds)
	} else if err != nil {
		return time.Time{}, cryptointel.Errorf(cryptointel.EINVALID, "invalid timestamp %q: use an ISO 8601 date-time such as 2026-11-20T10:00:00Z", s)
	}
	return t, nil
}
