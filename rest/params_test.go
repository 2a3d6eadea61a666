package rest

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/search"
)

func TestParseInt(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int{"5": 5, "+7": 7, "-3": -3, "0": 0, "99999999999999999999": maxInt, "-99999999999999999999": minInt, "4294967296": maxInt} {
		got, err := parseInt("limit", raw)
		require.NoError(t, err, raw)
		require.Equal(t, want, got, raw)
	}
	for _, raw := range []string{"1.5", "NaN", "abc", "1e3", "0x10", "5 apples", "Infinity"} {
		_, err := parseInt("limit", raw)
		require.Equal(t, &cryptointel.Error{Code: cryptointel.EINVALID, Message: "limit must be an integer"}, err, raw)
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, raw := range []string{
		"2026-11-20T10:00:00Z", "2026-11-20T10:00:00.000Z", "2026-11-20T12:00:00+02:00",
		"2026-11-20T12:00:00 02:00", // '+' decoded as a space in a query string
		"2026-11-20T10:00:00", "2026-11-20T10:00",
	} {
		got, err := parseTime(raw)
		require.NoError(t, err, raw)
		require.True(t, want.Equal(got), "%s: %s", raw, got)
	}
	got, err := parseTime("2026-11-20")
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), got)
	for _, raw := range []string{"yesterday", "20/11/2026", "2026-13-01", "1732096800"} {
		_, err := parseTime(raw)
		require.Error(t, err, raw)
	}
}

// route builds a throwaway route for parameter tests.
func paramRoute(params ...Param) *Route {
	return &Route{Method: "GET", Path: "/v1/test", Params: params}
}

func TestParseCallRules(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	rt := paramRoute(
		Param{Name: "query", Aliases: []string{"q"}, In: "query", Type: TypeString, Required: true, Var: "query", RequiredMessage: search.MsgQueryRequired},
		limitParam(&cryptointel.Bounds{Default: 10, Min: 1, Max: 25}),
		offsetParam(&cryptointel.Bounds{Default: 0, Min: 0, Max: 250}),
		requiredSince("", cryptointel.FeedLookback, msgBulkSinceRequired),
		Param{Name: "window", In: "query", Type: TypeString, Default: "24h", Enum: []string{"24h", "7d", "30d"}},
		compactParam(),
	)
	parse := func(qs string) (*Call, error) {
		return parseCall(rt, httptest.NewRequest("GET", "/v1/test?"+qs, nil), now)
	}
	since := "&since=2026-11-19T00:00:00Z"

	c, err := parse("q=eth" + since)
	require.NoError(t, err)
	require.Equal(t, "eth", c.String("query"))
	require.Equal(t, 10, c.Int("limit"), "default")
	require.Equal(t, 0, c.Int("offset"), "default")
	require.Equal(t, "24h", c.String("window"))
	require.False(t, c.Bool("compact"))
	require.False(t, c.Given["limit"])
	require.Equal(t, map[string]any{"query": "eth", "first": 10, "offset": 0, "since": time.Date(2026, 11, 19, 0, 0, 0, 0, time.UTC)}, c.Vars, "the parsed values, typed")

	c, err = parse("query=a&q=b&limit=3&limit=9&offset=-4&window=7D&compact" + since)
	require.NoError(t, err)
	require.Equal(t, "a", c.String("query"), "canonical name wins over alias")
	require.Equal(t, 3, c.Int("limit"), "first occurrence wins")
	require.Equal(t, 0, c.Int("offset"), "clamped")
	require.Equal(t, "7d", c.String("window"), "enum is case-insensitive")
	require.True(t, c.Bool("compact"), "bare boolean is true")

	c, err = parse("q=a&limit=1000&offset=1000&compact=false" + since)
	require.NoError(t, err)
	require.Equal(t, 25, c.Int("limit"))
	require.Equal(t, 250, c.Int("offset"))
	require.False(t, c.Bool("compact"))

	c, err = parse("q=a&limit=&q=zzz" + since)
	require.NoError(t, err)
	require.Equal(t, 10, c.Int("limit"), "empty is absent")

	for qs, msg := range map[string]string{
		"":                               search.MsgQueryRequired,
		"q=%20%20":                       search.MsgQueryRequired,
		"q=a":                            msgBulkSinceRequired,
		"q=a&since=":                     msgBulkSinceRequired,
		"q=a&since=soon":                 "since must be an ISO 8601 timestamp, for example 2026-11-19T12:00:00Z or 2026-11-19",
		"q=a&limt=5" + since:             `unknown parameter "limt": /v1/test accepts query, q, limit, offset, since, window, compact`,
		"q=a&Limit=5" + since:            `unknown parameter "Limit": /v1/test accepts query, q, limit, offset, since, window, compact`,
		"q=a&__=1" + since:               `unknown parameter "__": /v1/test accepts query, q, limit, offset, since, window, compact`,
		"limt=5":                         `unknown parameter "limt": /v1/test accepts query, q, limit, offset, since, window, compact`, // before missing ones
		"q=a&zz=1&aa=2&mm=3" + since:     `unknown parameter "zz": /v1/test accepts query, q, limit, offset, since, window, compact`,   // the first in the query
		"q=a&%7A=1" + since:              `unknown parameter "z": /v1/test accepts query, q, limit, offset, since, window, compact`,
		"q=a&since=2026-11-12T11:59:59Z": "since must be within the last 7 days",
		"q=a&limit=1.5" + since:          "limit must be an integer",
		"q=a&offset=NaN" + since:         "offset must be an integer",
		"q=a&window=1h" + since:          "window must be one of: 24h, 7d, 30d",
		"q=a&compact=maybe" + since:      "compact must be a boolean (true or false)",
		"limit=x" + since:                search.MsgQueryRequired, // declared order: query first
	} {
		_, err := parse(qs)
		require.Equal(t, &cryptointel.Error{Code: cryptointel.EINVALID, Message: msg}, err, qs)
	}
	_, err = parse("q=a&since=2026-11-13T12:00:00Z")
	require.NoError(t, err, "exactly at the window's edge is allowed")
	c, err = parse("q=a&_=1732096800000&limit=3" + since)
	require.NoError(t, err, "the cache-busting parameter is accepted")
	require.Equal(t, 3, c.Int("limit"))
	_, err = parseCall(paramRoute(idPathParam("entity")), httptest.NewRequest("GET", "/v1/test?limit=2", nil), now)
	require.Equal(t, &cryptointel.Error{Code: cryptointel.EINVALID, Message: `unknown parameter "limit": /v1/test accepts no query parameters`}, err)
}

func TestParseBatchIDs(t *testing.T) {
	t.Parallel()
	got, err := parseBatchIDs(" 3, 1,x,3,,-2,0,2 ")
	require.NoError(t, err)
	require.Equal(t, []int{3, 1, 2}, got)
	_, err = parseBatchIDs("a,b,,")
	require.Equal(t, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgNoValidIDs}, err)
	ids := ""
	for i := 1; i <= 26; i++ {
		ids += "," + string(rune('0'+i/10)) + string(rune('0'+i%10))
	}
	_, err = parseBatchIDs(ids)
	require.Equal(t, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgTooManyBatchIDs}, err)
	_, err = parseBatchIDs(ids[3:])
	require.NoError(t, err, "25 ids are allowed")
}

func TestResolveSort(t *testing.T) {
	t.Parallel()
	rt := paramRoute(
		Param{Name: "sort", In: "query", Type: TypeString, Enum: []string{"significance", "recency"}},
		Param{Name: "mode", In: "query", Type: TypeString, Enum: []string{"largest", "new"}},
	)
	for qs, want := range map[string][3]string{
		"":                           {"significance", "largest", "SIGNIFICANCE"},
		"mode=new":                   {"recency", "new", "RECENCY"},
		"mode=largest":               {"significance", "largest", "SIGNIFICANCE"},
		"sort=recency":               {"recency", "new", "RECENCY"},
		"sort=recency&mode=largest":  {"recency", "new", "RECENCY"},
		"sort=significance&mode=new": {"significance", "largest", "SIGNIFICANCE"},
	} {
		c, err := parseCall(rt, httptest.NewRequest("GET", "/v1/test?"+qs, nil), time.Now())
		require.NoError(t, err)
		resolveSort(c)
		require.Equal(t, want, [3]string{c.String("sort"), c.String("mode"), c.Vars["sort"].(string)}, qs)
	}
}
