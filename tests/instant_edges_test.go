package tests

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/rest"
)

// instantEdge is one value sent where an instant is expected.
type instantEdge struct {
	name, value string
	// outcome: the value does not parse, parses outside the bounds, or is
	// a valid instant.
	outcome int
}

const (
	edgeSyntax = iota
	edgeRange
	edgeValid
)

// instantEdges are the edges of the instant bounds (0001-01-01T00:00:00Z
// to 9999-12-31T23:59:59.999999Z), of the offsets that cross them, and
// spellings of years RFC 3339 does not have.
var instantEdges = []instantEdge{
	{"year 0", "0000-01-01T00:00:00Z", edgeRange},
	{"year 0 date", "0000-01-01", edgeRange},
	{"last instant of year 0", "0000-12-31T23:59:59.999999Z", edgeRange},
	{"year 1 at +14:00", "0001-01-01T00:00:00+14:00", edgeRange},
	{"year 1 at +23:59", "0001-01-01T10:00:00+23:59", edgeRange},
	{"year 9999 at -14:00", "9999-12-31T23:00:00-14:00", edgeRange},
	{"a tenth of a microsecond after the last", "9999-12-31T23:59:59.9999999Z", edgeRange},
	{"year 10000", "10000-01-01T00:00:00Z", edgeSyntax},
	{"+ year", "+10000-01-01T00:00:00Z", edgeSyntax},
	{"- year", "-0001-01-01T00:00:00Z", edgeSyntax},
	{"- year date", "-0001-12-31", edgeSyntax},
	{"offset +99:00", "2026-11-20T10:00:00+99:00", edgeSyntax},
	{"offset minutes 99", "2026-11-20T10:00:00+00:99", edgeSyntax},
	{"offset +9999:00", "2026-11-20T10:00:00+9999:00", edgeSyntax},
	{"first instant", "0001-01-01T00:00:00Z", edgeValid},
	{"year 1 at -14:00", "0001-01-01T00:00:00-14:00", edgeValid},
	{"year 1 date", "0001-01-01", edgeValid},
	{"last instant", "9999-12-31T23:59:59.999999Z", edgeValid},
	{"year 9999 at +14:00", "9999-12-31T10:00:00+14:00", edgeValid},
	{"year 9999 date", "9999-12-31", edgeValid},
	{"offset +24:00", "2026-11-20T10:00:00+24:00", edgeValid},
}

// TestInstantEdges sends every instant edge to every /v1 route parameter
// of type date-time (read from the route table the server serves), to the
// export job body's since and until, and to every GraphQL argument of type
// Time (read from the schema); and cursors signed by the server at
// positions no page ends at (−2^63, before year 1, after year 9999, a
// negative id) to every cursor parameter and `after` argument. A value
// that does not parse or lies outside the bounds is a 400 (a GraphQL
// error with code invalid) naming the problem; a valid one is answered
// like any other instant; nothing is ever a 5xx or an internal error.
func TestInstantEdges(t *testing.T) {
	t.Parallel()
	s := startHostileServer(t)
	key := s.newKey(t, cryptointel.PlanEnterprise)
	var tried, fivexx int
	check := func(t *testing.T, resp *restResponse) {
		tried++
		if resp.Status >= 500 {
			fivexx++
		}
		require.Less(t, resp.Status, 500, "server error: %s", abbreviate(string(resp.Body)))
		require.NotContains(t, string(resp.Body), `"internal"`, abbreviate(string(resp.Body)))
		requireNoLeak(t, t.Name(), resp.Body)
	}
	n := 0
	send := func(t *testing.T, req hostileRequest) *restResponse {
		if n++; n%80 == 0 {
			s.nextMinute()
		}
		resp := s.send(t, key, req)
		check(t, resp)
		return resp
	}
	now := restNow

	t.Run("rest", func(t *testing.T) {
		routes := 0
		for _, r := range s.app.V1Routes() {
			for _, p := range r.Params {
				if p.Type != rest.TypeDateTime {
					continue
				}
				routes++
				for _, e := range instantEdges {
					path := routePath(r, p.Name, url.QueryEscape(e.value))
					t.Run(fmt.Sprintf("%s %s=%s", r.Path, p.Name, e.name), func(t *testing.T) {
						resp := send(t, hostileRequest{Method: r.Method, Path: path})
						switch {
						case e.outcome == edgeSyntax:
							requireError(t, resp, 400, p.Name+" must be an ISO 8601 timestamp")
						case e.outcome == edgeRange:
							requireError(t, resp, 400, p.Name+" must be an instant "+cryptointel.InstantBounds)
						case p.MaxAge > 0 && mustInstant(t, e.value).Before(now.Add(-p.MaxAge)):
							require.Equal(t, 400, resp.Status, string(resp.Body))
							require.Contains(t, string(resp.Body), "must be within the last")
						default:
							require.Equal(t, 200, resp.Status, string(resp.Body))
						}
					})
				}
			}
		}
		require.GreaterOrEqual(t, routes, 15, "date-time parameters found in the route table")
	})

	t.Run("export body", func(t *testing.T) {
		for _, field := range []string{"since", "until"} {
			for _, e := range instantEdges {
				if e.outcome == edgeValid {
					continue // a valid body creates a job; the bounds are what is tested here
				}
				body := map[string]any{"scope": "radar.history", "format": "jsonl", "since": "2026-11-19T00:00:00Z"}
				body[field] = e.value
				raw, _ := json.Marshal(body)
				t.Run(field+"="+e.name, func(t *testing.T) {
					resp := send(t, hostileRequest{Method: http.MethodPost, Path: "/v1/export/jobs", ContentType: "application/json", Body: raw})
					if e.outcome == edgeRange {
						requireError(t, resp, 400, "Invalid "+field+": use an instant "+cryptointel.InstantBounds+".")
					} else {
						requireError(t, resp, 400, "Invalid "+field+": use an ISO 8601 timestamp")
					}
				})
			}
		}
	})

	t.Run("graphql", func(t *testing.T) {
		args := 0
		for _, f := range timeArguments() {
			args++
			for _, e := range instantEdges {
				t.Run(fmt.Sprintf("%s(%s: %s)", f.path, f.arg, e.name), func(t *testing.T) {
					resp := send(t, gqlRequest(f.query, map[string]any{"t": e.value}))
					errs := graphqlErrors(t, resp)
					switch e.outcome {
					case edgeSyntax:
						require.Len(t, errs, 1, string(resp.Body))
						require.Equal(t, "invalid", errs[0].Code)
						require.Contains(t, errs[0].Message, "invalid timestamp")
					case edgeRange:
						require.Len(t, errs, 1, string(resp.Body))
						require.Equal(t, "invalid", errs[0].Code)
						require.Contains(t, errs[0].Message, "is out of range: use an instant "+cryptointel.InstantBounds)
					default:
						for _, e := range errs {
							require.Equal(t, "invalid", e.Code, "%s", resp.Body)
							require.Contains(t, e.Message, "must be within the last")
						}
					}
				})
			}
		}
		require.GreaterOrEqual(t, args, 11, "Time arguments found in the schema")
	})

	t.Run("cursors", func(t *testing.T) {
		positions := []cursorEdge{
			{"at -2^63", math.MinInt64, 5000, true},
			{"before year 1", cryptointel.MinInstant.UnixMicro() - 1, 5000, true},
			{"after year 9999", cryptointel.MaxInstant.UnixMicro() + 1, 5000, true},
			{"at 2^63-1", math.MaxInt64, 5000, true},
			{"negative id", restNow.UnixMicro(), -1, true},
			{"first instant", cryptointel.MinInstant.UnixMicro(), 5000, false},
			{"last instant", cryptointel.MaxInstant.UnixMicro(), 5000, false},
		}
		since := url.QueryEscape(ts(-6 * 24 * time.Hour))
		researchSince := url.QueryEscape(ts(-29 * 24 * time.Hour))
		timelineSince := url.QueryEscape(ts(-60 * 24 * time.Hour))
		restCursors := map[string]string{
			"/v1/radar/all":                 "/v1/radar/all?limit=1&since=" + since,
			"/v1/signal/all":                "/v1/signal/all?limit=1&since=" + since,
			"/v1/replay/global":             "/v1/replay/global?limit=1&since=" + since,
			"/v1/timeline/byOrganizationId": fmt.Sprintf("/v1/timeline/byOrganizationId?id=%d&limit=1&since=%s", entEthereum, timelineSince),
			"/v1/entities/{id}/research":    fmt.Sprintf("/v1/entities/%d/research?limit=1&since=%s", entEthereum, researchSince),
			"/v1/entities/{id}/media":       fmt.Sprintf("/v1/entities/%d/media?limit=1&since=%s", entSolana, researchSince),
			"/v1/search":                    "/v1/search?q=Solana&limit=1",
		}
		routes := 0
		for _, r := range s.app.V1Routes() {
			for _, p := range r.Params {
				if p.Name != "cursor" {
					continue
				}
				routes++
				if r.Path == "/v1/stream" {
					streamCursorEdges(t, s, key, send, positions)
					continue
				}
				first, ok := restCursors[r.Path]
				require.True(t, ok, "no first page for %s: add it to this table", r.Path)
				resp := send(t, hostileRequest{Method: http.MethodGet, Path: first})
				require.Equal(t, 200, resp.Status, string(resp.Body))
				genuine, _ := resp.JSON(t)["next_cursor"].(string)
				require.NotEmpty(t, genuine, "%s gave no next_cursor", first)
				require.Equal(t, genuine, resignCursor(t, genuine, nil), "the test's signing must reproduce the server's")
				for _, pos := range positions {
					t.Run(r.Path+" "+pos.name, func(t *testing.T) {
						forged := resignCursor(t, genuine, &cursorPosition{at: pos.at, id: pos.id})
						resp := send(t, hostileRequest{Method: http.MethodGet, Path: first + "&cursor=" + forged})
						if pos.invalid {
							requireError(t, resp, 400, "invalid cursor")
						} else {
							require.Equal(t, 200, resp.Status, string(resp.Body))
						}
					})
				}
			}
		}
		require.GreaterOrEqual(t, routes, 6, "cursor parameters found in the route table")

		for _, c := range []struct{ name, first, next string }{
			{"feed", `{ feed(since: "` + ts(-6*24*time.Hour) + `", first: 1) { nextCursor } }`,
				`query($c: String) { feed(since: "` + ts(-6*24*time.Hour) + `", first: 1, after: $c) { limit } }`},
			{"entity.timeline", fmt.Sprintf(`{ entity(id: %d) { timeline(first: 1) { nextCursor } } }`, entEthereum),
				fmt.Sprintf(`query($c: String) { entity(id: %d) { timeline(first: 1, after: $c) { limit } } }`, entEthereum)},
			{"entity.events", fmt.Sprintf(`{ entity(id: %d) { events(first: 1) { nextCursor } } }`, entEthereum),
				fmt.Sprintf(`query($c: String) { entity(id: %d) { events(first: 1, after: $c) { limit } } }`, entEthereum)},
		} {
			resp := send(t, gqlRequest(c.first, nil))
			require.Equal(t, 200, resp.Status, string(resp.Body))
			genuine := findString(resp.JSON(t), "nextCursor")
			require.NotEmpty(t, genuine, "%s gave no nextCursor: %s", c.name, resp.Body)
			for _, pos := range positions {
				t.Run("graphql "+c.name+" "+pos.name, func(t *testing.T) {
					forged := resignCursor(t, genuine, &cursorPosition{at: pos.at, id: pos.id})
					resp := send(t, gqlRequest(c.next, map[string]any{"c": forged}))
					errs := graphqlErrors(t, resp)
					if pos.invalid {
						require.Len(t, errs, 1, string(resp.Body))
						require.Equal(t, "invalid cursor", errs[0].Message)
					} else {
						require.Empty(t, errs, string(resp.Body))
					}
				})
			}
		}
	})

	summary(t, "instant edges: %d requests tried (%d edges × every date-time parameter, export field and Time argument; forged cursor positions × every cursor), %d answered 5xx",
		tried, len(instantEdges), fivexx)
	require.Zero(t, fivexx)
}

func mustInstant(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := cryptointel.ParseInstant(s)
	require.NoError(t, err, s)
	return v
}

// routePath is a request to route r with valid values for its required
// parameters and value (already escaped) for the parameter named param.
func routePath(r rest.Route, param, value string) string {
	path := r.Path
	q := url.Values{}
	raw := ""
	for _, p := range r.Params {
		v := ""
		switch {
		case p.Name == param:
			raw = param + "=" + value
			continue
		case !p.Required:
			continue
		case p.Type == rest.TypeDateTime:
			v = restNow.Add(-24 * time.Hour).Format(time.RFC3339)
		case p.Type == rest.TypeInteger:
			v = fmt.Sprint(entEthereum)
		case p.Type == rest.TypeIntegerList:
			v = fmt.Sprintf("%d,%d", entEthereum, entSolana)
		case p.Name == "category":
			v = "funding"
		default:
			v = "eth"
		}
		if p.In == "path" {
			path = strings.Replace(path, "{"+p.Name+"}", v, 1)
		} else {
			q.Set(p.Name, v)
		}
	}
	if enc := q.Encode(); enc != "" {
		raw = enc + "&" + raw
	}
	return path + "?" + raw
}

// requireError requires a JSON error answer with status whose message
// starts with prefix.
func requireError(t *testing.T, resp *restResponse, status int, prefix string) {
	t.Helper()
	require.Equal(t, status, resp.Status, string(resp.Body))
	msg, _ := resp.JSON(t)["error"].(string)
	require.True(t, strings.HasPrefix(msg, prefix), "message %q does not start with %q", msg, prefix)
}

// timeArgument is one GraphQL argument of type Time and a query that
// sends $t to it.
type timeArgument struct {
	path, arg, query string
}

// timeArguments lists every argument of type Time of the fields of Query
// and of Entity (reached through entity(id:)), with the field's other
// required arguments filled in, from the schema itself.
func timeArguments() []timeArgument {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	var out []timeArgument
	fill := func(field *ast.FieldDefinition, timeArg string) string {
		var args []string
		for _, a := range field.Arguments {
			switch {
			case a.Name == timeArg:
				args = append(args, a.Name+": $t")
			case !a.Type.NonNull || a.DefaultValue != nil:
			case a.Type.Name() == "Time":
				args = append(args, fmt.Sprintf("%s: %q", a.Name, restNow.Add(-24*time.Hour).Format(time.RFC3339)))
			case a.Type.Elem != nil:
				args = append(args, fmt.Sprintf("%s: [%d, %d]", a.Name, entEthereum, entSolana))
			case a.Type.Name() == "Int":
				args = append(args, fmt.Sprintf("%s: %d", a.Name, entEthereum))
			case a.Name == "category": // a category in use (an unknown one is refused)
				args = append(args, a.Name+`: "funding"`)
			default:
				args = append(args, a.Name+`: "eth"`)
			}
		}
		return field.Name + "(" + strings.Join(args, ", ") + ") { __typename }"
	}
	for _, parent := range []struct{ typ, wrap string }{{"Query", "%s"}, {"Entity", fmt.Sprintf("entity(id: %d) { %%s }", entEthereum)}} {
		for _, field := range schema.Types[parent.typ].Fields {
			for _, a := range field.Arguments {
				if a.Type.Name() != "Time" {
					continue
				}
				typ := "Time"
				if a.Type.NonNull {
					typ = "Time!"
				}
				out = append(out, timeArgument{path: parent.typ + "." + field.Name, arg: a.Name,
					query: "query($t: " + typ + ") { " + fmt.Sprintf(parent.wrap, fill(field, a.Name)) + " }"})
			}
		}
	}
	return out
}

func gqlRequest(query string, vars map[string]any) hostileRequest {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return hostileRequest{Method: http.MethodPost, Path: "/graphql", ContentType: "application/json", Body: body,
		Header: map[string]string{"Accept": "application/graphql-response+json"}}
}

type graphqlError struct {
	Message string
	Code    string
}

func graphqlErrors(t *testing.T, resp *restResponse) []graphqlError {
	t.Helper()
	var body struct {
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &body), string(resp.Body))
	var out []graphqlError
	for _, e := range body.Errors {
		code, _ := e.Extensions["code"].(string)
		out = append(out, graphqlError{Message: e.Message, Code: code})
	}
	return out
}

// findString returns the first string value under key anywhere in v.
func findString(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x[key].(string); ok {
			return s
		}
		for _, c := range x {
			if s := findString(c, key); s != "" {
				return s
			}
		}
	case []any:
		for _, c := range x {
			if s := findString(c, key); s != "" {
				return s
			}
		}
	}
	return ""
}

type cursorPosition struct{ at, id int64 }

// cursorEdge is a forged cursor position and whether it must be refused.
type cursorEdge struct {
	name    string
	at, id  int64
	invalid bool
}

// streamCursorEdges sends the forged positions to /v1/stream, whose cursor
// comes from streamCursor rather than a first page: a position no cursor
// can hold is "invalid cursor"; of the valid ones, year 1 is long expired (a
// 400 saying so) and year 9999 opens a stream, closed at once.
func streamCursorEdges(t *testing.T, s *hostileServer, key string, send func(*testing.T, hostileRequest) *restResponse, positions []cursorEdge) {
	resp := send(t, gqlRequest(`{ streamCursor }`, nil))
	require.Equal(t, 200, resp.Status, string(resp.Body))
	genuine := findString(resp.JSON(t), "streamCursor")
	require.NotEmpty(t, genuine, "no streamCursor: %s", resp.Body)
	require.Equal(t, genuine, resignCursor(t, genuine, nil), "the test's signing must reproduce the server's")
	for _, pos := range positions {
		t.Run("/v1/stream "+pos.name, func(t *testing.T) {
			forged := resignCursor(t, genuine, &cursorPosition{at: pos.at, id: pos.id})
			if pos.invalid || pos.at == cryptointel.MinInstant.UnixMicro() {
				resp := send(t, hostileRequest{Method: http.MethodGet, Path: "/v1/stream?cursor=" + forged})
				msg := "invalid cursor"
				if !pos.invalid {
					msg = "cursor has expired: streams resume from cursors up to 7 days old; start a new stream (backfill with the bulk feeds)"
				}
				requireError(t, resp, 400, msg)
				return
			}
			c, status, body := openSSE(t, s.base, "/v1/stream?cursor="+forged, key)
			require.Equal(t, 200, status, string(body))
			c.close()
		})
	}
}

// resignCursor re-signs a genuine cursor of the hostile server at another
// position (nil keeps its own), keeping the query it was issued for:
// version(1) context(16) at(8) id(8) offset(8), then the first 16 bytes of
// its HMAC-SHA256 under the cursor secret, in unpadded base64url.
func resignCursor(t *testing.T, token string, pos *cursorPosition) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	require.Len(t, raw, 41+16)
	payload := raw[:41]
	if pos != nil {
		binary.BigEndian.PutUint64(payload[17:25], uint64(pos.at))
		binary.BigEndian.PutUint64(payload[25:33], uint64(pos.id))
	}
	mac := hmac.New(sha256.New, []byte(hostileCursorSecret))
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(append(payload, mac.Sum(nil)[:16]...))
}
