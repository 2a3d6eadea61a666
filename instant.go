package cryptointel

import (
	"errors"
	"time"
)

// The bounds of every instant the API accepts — query parameters, GraphQL
// Time arguments and variables, export job bodies, ingest lines and
// cursor positions. Outside them PostgreSQL cannot read the instant back
// (it has no year 0: "0000-12-31" is out of range) or RFC 3339 cannot write
// it (four-digit years), so an instant outside them is a client's mistake:
// a 400, never a 500.
// The database keeps microseconds.
var (
	MinInstant = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	MaxInstant = time.Date(9999, time.December, 31, 23, 59, 59, 999_999_000, time.UTC)
)

// InstantBounds names the bounds in error messages.
const InstantBounds = "between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z"

// Instant errors, both EINVALID. Callers that name the argument (a query
// parameter, a body field) tell them apart with errors.Is and word their
// own messages.
// ErrInstantSyntax is a value that is not an ISO 8601 date-time,
// ErrInstantRange an instant outside [MinInstant, MaxInstant] once its
// offset is applied.
var (
	ErrInstantSyntax = &Error{Code: EINVALID, Message: "invalid timestamp: use an ISO 8601 date-time such as 2026-11-20T10:00:00Z"}
	ErrInstantRange  = &Error{Code: EINVALID, Message: "timestamp out of range: use an instant " + InstantBounds}
)

// instantLayouts are the ISO 8601 forms accepted: RFC 3339 with any offset
// and optional fractional seconds; without an offset (UTC); to the minute;
// or a date alone (midnight UTC).
var instantLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

// ParseInstant parses s, an ISO 8601 date-time (see instantLayouts), and
// returns it in UTC. It is the one parser of instants the API accepts; it
// returns ErrInstantSyntax for a value that does not parse and
// ErrInstantRange for an instant outside [MinInstant, MaxInstant].
func ParseInstant(s string) (time.Time, error) {
	// A year is four digits (time.Parse reads no other), so "-0001-…",
	// "+10000-…" and "10000-…" do not parse.
	for _, layout := range instantLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			if err := CheckInstant(t); err != nil {
				return time.Time{}, err
			}
			return t, nil
		}
	}
	return time.Time{}, ErrInstantSyntax
}

// CheckInstant returns ErrInstantRange when t lies outside [MinInstant,
// MaxInstant], else nil. Instants decoded by other means (encoding/json in
// ingest lines) go through it.
func CheckInstant(t time.Time) error {
	if t.Before(MinInstant) || t.After(MaxInstant) {
		return ErrInstantRange
	}
	return nil
}

// IsInstantRange reports whether err is ErrInstantRange.
func IsInstantRange(err error) bool { return errors.Is(err, ErrInstantRange) }

// InstantMicrosInRange reports whether an instant given in Unix
// microseconds (a cursor position) lies within the bounds.
func InstantMicrosInRange(us int64) bool {
	return us >= MinInstant.UnixMicro() && us <= MaxInstant.UnixMicro()
}
