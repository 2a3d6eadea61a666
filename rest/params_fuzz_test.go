package rest

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cryptointel/cryptointel"
)

// FuzzParseCall feeds arbitrary query strings to the parameter parser of a
// route declaring every parameter type. It must never panic; a refusal is
// an EINVALID *cryptointel.Error with a message; an accepted integer respects its
// bounds, an accepted date-time its window, an accepted string is valid
// UTF-8 without NUL bytes and an accepted list its item limit.
func FuzzParseCall(f *testing.F) {
	for _, seed := range []string{
		"", "limit=5", "limit=-5&offset=99999999999999999999", "limit=abc", "limit=1.5", "limit=NaN",
		"since=2026-11-19T00:00:00Z", "since=yesterday", "since=0001-01-01T00:00:00Z", "since=2026-11-20T12:00:00+02:00",
		"q=eth", "query=a&q=b", "query=%00", "query=%FF%FE", "ids=1,2,3", "ids=1,,x,-2", "include=radar,signal",
		"include=radar,bogus", "compact", "compact=maybe", "window=7D", "window=1y", "limit=5&limit=abc",
		"cursor=AAAA", "id=%EF%BC%91", "limit=+7", "since=2026-11-20T10:00",
	} {
		f.Add(seed)
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	rt := paramRoute(
		Param{Name: "query", Aliases: []string{"q"}, In: "query", Type: TypeString, Var: "query"},
		limitParam(&cryptointel.Bounds{Default: 10, Min: 1, Max: 25}),
		offsetParam(&cryptointel.Bounds{Default: 0, Min: 0, Max: 250}),
		sinceParam("", cryptointel.FeedLookback),
		Param{Name: "window", In: "query", Type: TypeString, Default: "24h", Enum: []string{"24h", "7d", "30d"}},
		Param{Name: "ids", In: "query", Type: TypeIntegerList, MaxItems: 25},
		Param{Name: "include", In: "query", Type: TypeStringList, Enum: []string{"radar", "signal"}},
		compactParam(),
		cursorParam(),
		Param{Name: "id", In: "query", Type: TypeInteger, Var: "id"},
	)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		r := httptest.NewRequest("GET", "/v1/test", nil)
		r.URL.RawQuery = rawQuery
		c, err := parseCall(rt, r, now)
		if err != nil {
			var de *cryptointel.Error
			if !errors.As(err, &de) || de.Code != cryptointel.EINVALID || de.Message == "" {
				t.Fatalf("refusal of %q is not an EINVALID error with a message: %#v", rawQuery, err)
			}
			return
		}
		if l := c.Int("limit"); l < 1 || l > 25 {
			t.Fatalf("limit %d out of bounds for %q", l, rawQuery)
		}
		if o := c.Int("offset"); o < 0 || o > 250 {
			t.Fatalf("offset %d out of bounds for %q", o, rawQuery)
		}
		if ts, ok := c.Time("since"); ok && ts.Before(now.Add(-cryptointel.FeedLookback)) {
			t.Fatalf("since %s older than the window for %q", ts, rawQuery)
		}
		if ids, ok := c.Values["ids"].([]int); ok && len(ids) > 25 {
			t.Fatalf("%d ids accepted for %q", len(ids), rawQuery)
		}
		for _, name := range []string{"query", "cursor", "window"} {
			s := c.String(name)
			if !utf8.ValidString(s) {
				t.Fatalf("%s accepted invalid UTF-8 %q", name, s)
			}
			for i := 0; i < len(s); i++ {
				if s[i] == 0 {
					t.Fatalf("%s accepted a NUL byte: %q", name, s)
				}
			}
		}
		// The variables reach the executor in the parsed values' own
		// types, which its coercion and the operations' variable checks
		// take as they are.
		for name, v := range c.Vars {
			switch v.(type) {
			case int, string, bool, time.Time, []int, []string:
			default:
				t.Fatalf("variable %s of %q is a %T", name, rawQuery, v)
			}
		}
	})
}
