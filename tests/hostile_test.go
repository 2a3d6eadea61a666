package tests

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph/validation/validationtest"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/resolvers"
)

// Expected outcomes of a hostile case.
const (
	// want4xx: a JSON error body {"error": "..."} with a 4xx status.
	want4xx = iota
	// want200: the contract defines a success for this input (limits above
	// the cap are capped, negative ones clamped; first duplicate wins; an
	// injection string is only text that matches nothing).
	want200
	// wantGQLRequestError: /graphql refuses the request as a whole (parse,
	// validation, limits, transport): a 4xx with a JSON body holding
	// `errors`, per GraphQL over HTTP with application/graphql-response+json.
	wantGQLRequestError
	// wantGQLFieldError: the operation is valid and ran; a resolver
	// refused an argument. GraphQL over HTTP answers 200 with `errors`,
	// whose extensions.code is a client code (never internal).
	wantGQLFieldError
)

// hostileCase is one row of the hostile table.
type hostileCase struct {
	name string
	req  hostileRequest
	want int
	// status, when non-zero, is the exact status expected.
	status int
	// key overrides the API key: "-" sends none.
	key string
}

// TestHostileInput sends a table of malformed, oversized and malicious
// requests to every /v1 route and to /graphql on one server and checks
// that each gets a clear client error (or the success the contract defines
// for it), never a 5xx, a hang, a stack trace or an internal detail, and
// that the domain tables are unchanged afterwards.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	s := startHostileServer(t)
	key := s.newKey(t, cryptointel.PlanEnterprise)
	free := s.newKey(t, cryptointel.PlanFree)

	// A webhook of the caller's account, so updates reach validation.
	hook := s.send(t, key, hostileRequest{Method: http.MethodPost, Path: "/v1/webhooks", ContentType: "application/json",
		Body: []byte(`{"url":"https://127.0.0.1:9/hook","event_types":["radar"]}`)})
	require.Equal(t, http.StatusCreated, hook.Status, string(hook.Body))
	hookID, err := hook.JSON(t)["data"].(map[string]any)["id"].(json.Number).Int64()
	require.NoError(t, err)
	secret := hook.JSON(t)["data"].(map[string]any)["secret"].(string)

	// Genuine cursors to tamper with.
	since := url.QueryEscape(ts(-6 * 24 * time.Hour))
	radarCursor := nextCursor(t, s, key, "/v1/radar/all?limit=1&since="+since)
	signalCursor := nextCursor(t, s, key, "/v1/signal/all?limit=1&since="+since)
	researchSince := url.QueryEscape(ts(-29 * 24 * time.Hour))
	researchCursor := nextCursor(t, s, key, fmt.Sprintf("/v1/entities/%d/research?limit=1&since=%s", entEthereum, researchSince))
	foreign := resolvers.NewCursorCodec("another-deployment-secret").EncodeCursor("feed", resolvers.Cursor{AtMicro: restNow.UnixMicro(), ID: 5000})

	before := snapshotDomain(t, s.store)

	// Genuinely signed cursors at positions no page ends at.
	forged := map[string]string{
		"at -2^63":      resignCursor(t, radarCursor, &cursorPosition{at: math.MinInt64, id: 5000}),
		"before year 1": resignCursor(t, radarCursor, &cursorPosition{at: cryptointel.MinInstant.UnixMicro() - 1, id: 5000}),
	}

	cases := hostileCases(hookID, since, radarCursor, signalCursor, researchSince, researchCursor, foreign, forged)
	// The key separated from its scheme by a tab is still the key (it once
	// read as no key); on /graphql too.
	cases = append(cases,
		hostileCase{name: "bearer<TAB>key", key: "-", want: want200, req: hostileRequest{Method: http.MethodGet, Path: "/v1/latest",
			Header: map[string]string{"Authorization": "Bearer\t" + key}}},
		hostileCase{name: "bearer<TAB>key on admin ingest", key: "-", want: want200, req: hostileRequest{Method: http.MethodPost,
			Path: "/admin/ingest", ContentType: "application/x-ndjson", Body: []byte("\n"), Header: map[string]string{"Authorization": "Bearer\t" + hostileAdminToken}}})
	// Stream tickets: forged or misplaced ones are refused, never a stream
	// opened; minting names only stream routes.
	cases = append(cases,
		hostileCase{name: "stream with a forged ticket", key: "-", want: want4xx, status: http.StatusUnauthorized,
			req: hostileRequest{Method: http.MethodGet, Path: "/v1/stream?ticket=eyJrIjoiMDAifQ.AAAA"}},
		hostileCase{name: "stream with an empty ticket", key: "-", want: want4xx, status: http.StatusUnauthorized,
			req: hostileRequest{Method: http.MethodGet, Path: "/v1/stream?ticket="}},
		hostileCase{name: "stream with a ticket and NUL", key: "-", want: want4xx, status: http.StatusUnauthorized,
			req: hostileRequest{Method: http.MethodGet, Path: "/v1/stream?ticket=a%00.b"}},
		withBody("ticket for a plain route", http.MethodPost, "/v1/stream/tickets?path=/v1/latest", "", nil, want4xx, http.StatusBadRequest),
		withBody("ticket without path", http.MethodPost, "/v1/stream/tickets", "", nil, want4xx, http.StatusBadRequest),
		withBody("ticket with a bad query", http.MethodPost, "/v1/stream/tickets?path=/v1/stream&query=%25zz", "", nil, want4xx, http.StatusBadRequest))
	cases = append(cases, meteringCases(free)...)
	require.GreaterOrEqual(t, len(cases), 150, "the table must hold at least 150 cases")

	var tried, got2xx, got4xx, got5xx int
	for i, c := range cases {
		if i%80 == 0 {
			s.nextMinute() // keep the per-minute window from refusing the run
		}
		k := key
		switch c.key {
		case "-":
			k = ""
		case "":
		default:
			k = c.key
		}
		t.Run(c.name, func(t *testing.T) {
			resp := s.send(t, k, c.req)
			tried++
			switch {
			case resp.Status >= 500:
				got5xx++
			case resp.Status >= 400:
				got4xx++
			default:
				got2xx++
			}
			checkHostile(t, c, resp)
		})
	}
	after := snapshotDomain(t, s.store)
	summary(t, "hostile table: %d requests tried, %d answered 2xx (contract-defined successes), %d answered 4xx, %d answered 5xx",
		tried, got2xx, got4xx, got5xx)
	require.Zero(t, got5xx, "5xx seen")
	require.Equal(t, before, after, "domain tables changed")

	logs := s.logs.String()
	require.NotContains(t, logs, key, "the API key appears in the logs")
	require.NotContains(t, logs, secret, "the webhook secret appears in the logs")
	require.NotContains(t, logs, "goroutine ", "a stack trace was logged")
	require.NotContains(t, logs, "panic", "a panic was logged")
}

// meteringCases are the classes of the second hardening round: protocol
// upgrades and event streams asked for where they do not apply (served,
// metered and budgeted as plain requests, or refused), WebSocket handshakes
// the protocol does not allow, introspection over its bound, a field the
// plan lacks (free is the free plan's key), and wrong admin tokens (fewer
// than the throttle allows in a minute; the throttle has its own test).
func meteringCases(free string) []hostileCase {
	typename := "/graphql?query=" + url.QueryEscape("{ __typename }")
	gqlAccept := "application/graphql-response+json"
	upgrade := func(name, path, upgrade string, want int) hostileCase {
		return hostileCase{name: name, want: want, req: hostileRequest{Method: http.MethodGet, Path: path,
			Header: map[string]string{"Upgrade": upgrade, "Connection": "Upgrade", "Accept": gqlAccept}}}
	}
	cs := []hostileCase{
		upgrade("h2c upgrade on a read route", "/v1/latest", "h2c", want200),
		upgrade("WebSocket upgrade on a read route", "/v1/latest", "websocket", want200),
		upgrade("WebSocket upgrade listed second on a read route", "/v1/search?query=eth", "foo, websocket", want200),
		upgrade("h2c upgrade on /graphql", typename, "h2c", want200),
		upgrade("unknown upgrade on /graphql", typename, "foo", want200),
		upgrade("WebSocket handshake without a key", typename, "websocket", wantGQLRequestError),
		upgrade("WebSocket handshake listed second without a key", typename, "foo, websocket", wantGQLRequestError),
		{name: "WebSocket upgrade of a POST", want: wantGQLRequestError, req: hostileRequest{Method: http.MethodPost, Path: "/graphql",
			ContentType: "application/json", Body: []byte(`{"query":"{ entity(id: 101) { canonicalName } }"}`),
			Header: map[string]string{"Upgrade": "foo, websocket", "Connection": "Upgrade", "Accept": gqlAccept,
				"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"}}},
		{name: "WebSocket handshake of another version", want: wantGQLRequestError, req: hostileRequest{Method: http.MethodGet, Path: typename,
			Header: map[string]string{"Upgrade": "websocket", "Connection": "Upgrade", "Accept": gqlAccept,
				"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "8"}}},
		{name: "event stream asked of a read route", want: want200, req: hostileRequest{Method: http.MethodGet, Path: "/v1/latest",
			Header: map[string]string{"Accept": "text/event-stream"}}},
		{name: "event stream asked with GET of /graphql", want: want200, req: hostileRequest{Method: http.MethodGet, Path: typename,
			Header: map[string]string{"Accept": "text/event-stream"}}},
		gql("__schema twice", map[string]any{"query": "{ a: __schema { types { name } } b: __schema { types { name } } }"}, wantGQLRequestError),
		gql("__schema 100 times", map[string]any{"query": aliasedSchema(100)}, wantGQLRequestError),
		gql("__schema once", map[string]any{"query": "{ __schema { queryType { name } } }"}, want200),
	}
	for _, c := range []hostileCase{
		gql("a field the plan lacks", map[string]any{"query": fmt.Sprintf(`{ feed(since: %q) { nodes { id } } }`, ts(-24*time.Hour))}, wantGQLRequestError),
		gql("a field the plan lacks beside one it has", map[string]any{"query": fmt.Sprintf(`{ entity(id: 101) { id } brief(id: 101, since: %q) { label } }`, ts(-24*time.Hour))}, wantGQLRequestError),
		gql("a subscription the plan lacks, over POST", map[string]any{"query": "subscription { events { id } }"}, wantGQLRequestError),
	} {
		c.key = free
		c.status = http.StatusForbidden
		if strings.Contains(c.name, "POST") {
			c.status = http.StatusBadRequest // refused for its transport first
		}
		cs = append(cs, c)
	}
	for _, auth := range []string{"Bearer wrong-token", "Bearer " + hostileAdminToken + "x", "Basic " + hostileAdminToken, "Bearer " + repeat("t", 100*1024)} {
		cs = append(cs, hostileCase{name: "admin ingest with a wrong token", key: "-", want: want4xx, status: http.StatusUnauthorized,
			req: hostileRequest{Method: http.MethodPost, Path: "/admin/ingest", ContentType: "application/x-ndjson", Body: []byte("\n"),
				Header: map[string]string{"Authorization": auth}}})
	}
	for i := range cs {
		cs[i].name = "metering: " + cs[i].name
	}
	return cs
}

// aliasedSchema selects __schema n times under aliases.
func aliasedSchema(n int) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "s%d: __schema { types { name } } ", i)
	}
	return b.String() + "}"
}

// nextCursor returns the next_cursor of a first page.
func nextCursor(t *testing.T, s *hostileServer, key, path string) string {
	t.Helper()
	resp := s.send(t, key, hostileRequest{Method: http.MethodGet, Path: path})
	require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
	c, ok := resp.JSON(t)["next_cursor"].(string)
	require.True(t, ok, "no next_cursor in %s", resp.Body)
	return c
}

// checkHostile asserts the answer to one case.
func checkHostile(t *testing.T, c hostileCase, resp *restResponse) {
	t.Helper()
	name := fmt.Sprintf("%s (%s %s)", c.name, c.req.Method, abbreviate(c.req.Path))
	require.Less(t, resp.Status, 500, "%s: server error: %s", name, abbreviate(string(resp.Body)))
	if c.status != 0 {
		require.Equal(t, c.status, resp.Status, "%s: %s", name, abbreviate(string(resp.Body)))
	}
	ct := resp.Header.Get("Content-Type")
	require.Contains(t, ct, "json", "%s: Content-Type %q", name, ct)
	var body map[string]any
	require.NoError(t, json.Unmarshal(resp.Body, &body), "%s: body is not a JSON object: %s", name, abbreviate(string(resp.Body)))
	switch c.want {
	case want4xx:
		require.GreaterOrEqual(t, resp.Status, 400, "%s: accepted: %s", name, abbreviate(string(resp.Body)))
		msg, ok := body["error"].(string)
		require.True(t, ok, "%s: no error string: %s", name, abbreviate(string(resp.Body)))
		require.GreaterOrEqual(t, len(msg), 8, "%s: unclear message %q", name, msg)
		require.LessOrEqual(t, len(msg), 400, "%s: message too long (input echoed?): %s", name, abbreviate(msg))
		requireErrorCode(t, name, resp, body)
		requireNoLeak(t, name, resp.Body)
	case want200:
		require.Equal(t, http.StatusOK, resp.Status, "%s: %s", name, abbreviate(string(resp.Body)))
	case wantGQLRequestError, wantGQLFieldError:
		errs, ok := body["errors"].([]any)
		require.True(t, ok && len(errs) > 0, "%s: no errors: %s", name, abbreviate(string(resp.Body)))
		if c.want == wantGQLRequestError {
			require.GreaterOrEqual(t, resp.Status, 400, "%s: %s", name, abbreviate(string(resp.Body)))
		} else {
			require.Equal(t, http.StatusOK, resp.Status, "%s: %s", name, abbreviate(string(resp.Body)))
		}
		for _, e := range errs {
			em, _ := e.(map[string]any)
			msg, _ := em["message"].(string)
			require.NotEmpty(t, msg, "%s: error without message", name)
			require.LessOrEqual(t, len(msg), 400, "%s: message too long: %s", name, abbreviate(msg))
			ext, _ := em["extensions"].(map[string]any)
			require.NotEqual(t, cryptointel.EINTERNAL, ext["code"], "%s: internal error: %s", name, abbreviate(string(resp.Body)))
			code, _ := ext["code"].(string)
			require.NotEmpty(t, code, "%s: error without extensions.code: %s", name, abbreviate(string(resp.Body)))
			if c.want == wantGQLFieldError {
				require.Contains(t, httperr.Codes(), code, "%s: extensions.code is not a row of the error table", name)
				require.Equal(t, httperr.DocURL(code), ext["docUrl"], "%s: extensions.docUrl", name)
			}
		}
		requireNoLeak(t, name, resp.Body)
	}
}

// requireErrorCode asserts what a program acts on in an error body: a
// code that is a row of the error table and agrees with the status, the
// link to that row, the request id of the response, and a parameter only
// where the message names it.
func requireErrorCode(t *testing.T, name string, resp *restResponse, body map[string]any) {
	t.Helper()
	code, _ := body["code"].(string)
	require.Contains(t, httperr.Codes(), code, "%s: code %q is not a row of the error table: %s", name, code, abbreviate(string(resp.Body)))
	require.Equal(t, resp.Status, httperr.Status(code), "%s: code %s has another status", name, code)
	require.Equal(t, httperr.DocURL(code), body["docUrl"], "%s: docUrl", name)
	require.Equal(t, resp.Header.Get("X-Request-Id"), body["requestId"], "%s: requestId", name)
	if param, ok := body["param"].(string); ok {
		require.Contains(t, body["error"], param, "%s: param %q is not in the message", name, param)
	}
}

// get builds a GET case.
func get(name, path string, want int) hostileCase {
	return hostileCase{name: name, req: hostileRequest{Method: http.MethodGet, Path: path}, want: want}
}

// withBody builds a case with a body and content type.
func withBody(name, method, path, ctype string, body []byte, want, status int) hostileCase {
	return hostileCase{name: name, req: hostileRequest{Method: method, Path: path, ContentType: ctype, Body: body}, want: want, status: status}
}

// gql builds a POST /graphql case with a JSON body.
func gql(name string, body any, want int) hostileCase {
	var raw []byte
	switch b := body.(type) {
	case string:
		raw = []byte(b)
	default:
		raw, _ = json.Marshal(b)
	}
	return hostileCase{name: name, want: want, req: hostileRequest{Method: http.MethodPost, Path: "/graphql",
		ContentType: "application/json", Body: raw, Header: map[string]string{"Accept": "application/graphql-response+json"}}}
}

// badInts are values no integer parameter accepts.
var badInts = map[string]string{
	"word":          "abc",
	"fraction":      "1.5",
	"NaN":           "NaN",
	"Infinity":      "Infinity",
	"exponent":      "1e3",
	"hex":           "0x1A",
	"NUL":           "%00",
	"trailing NUL":  "1%00",
	"injection":     "1%3BDROP%20TABLE%20events",
	"fullwidth one": "%EF%BC%91",
	"double minus":  "--1",
	"underscore":    "1_000",
	"invalid UTF-8": "%FF%FE",
}

// hostileCases is the table.
func hostileCases(hookID int64, since, radarCursor, signalCursor, researchSince, researchCursor, foreign string, forged map[string]string) []hostileCase {
	var cs []hostileCase
	add := func(c ...hostileCase) { cs = append(cs, c...) }
	sinceP := "since=" + since
	hook := fmt.Sprintf("/v1/webhooks/%d", hookID)

	// Integers that are not integers, on every kind of integer parameter.
	intTargets := []struct{ name, prefix string }{
		{"latest limit", "/v1/latest?limit="},
		{"latest offset", "/v1/latest?offset="},
		{"latest entityId", "/v1/latest?entityId="},
		{"search limit", "/v1/search?query=eth&limit="},
		{"entity id", "/v1/entities/byId?id="},
		{"relationships path id", "/v1/entities/%s/relationships"},
		{"signal-history days", "/v1/organizations/101/signal-history?days="},
		{"includeLimit", "/v1/organizations/byOrganizationId?id=101&includeLimit="},
		{"pmarket offset", "/v1/pmarket/all?offset="},
		{"bulk limit", "/v1/radar/all?" + sinceP + "&limit="},
		{"export list limit", "/v1/export/jobs?limit="},
		{"webhook path id", "/v1/webhooks/%s"},
		{"brief id", "/v1/brief?" + sinceP + "&id="},
	}
	for _, tg := range intTargets {
		for _, vname := range sortedKeys(badInts) {
			v := badInts[vname]
			path := tg.prefix + v
			if strings.Contains(tg.prefix, "%s") {
				path = fmt.Sprintf(tg.prefix, v)
			}
			add(get(tg.name+": "+vname, path, want4xx))
		}
	}

	// Huge and negative limits and offsets are capped and clamped (section
	// 4): a success with the bound applied.
	for _, p := range []string{
		"/v1/latest?limit=99999999999999999999", "/v1/latest?limit=-5", "/v1/latest?offset=-1",
		"/v1/latest?offset=9223372036854775808", "/v1/entities/byName?name=eth&limit=-9223372036854775809",
		"/v1/organizations/all?limit=1000000&offset=-3", "/v1/radar/all?" + sinceP + "&limit=0&offset=999999999",
		"/v1/organizations/101/signal-history?days=-1", "/v1/organizations/101/signal-history?days=4294967296",
		"/v1/export/jobs?limit=-1&offset=99999999999",
	} {
		add(get("clamped bound", p, want200))
	}
	// Ids out of range or negative: not found or invalid, never a 500.
	for _, p := range []string{
		"/v1/entities/byId?id=-1", "/v1/entities/byId?id=0", "/v1/entities/byId?id=99999999999999999999",
		"/v1/entities/-5/relationships", "/v1/entities/0/references", "/v1/entities/2147483648/research",
		"/v1/signal/byOrganizationId?id=-9223372036854775808",
		"/v1/organizations/-1/signal-history", "/v1/brief?" + sinceP + "&id=-1",
		"/v1/webhooks/-1", "/v1/webhooks/0", "/v1/webhooks/99999999999999999999", "/v1/webhooks/9999999",
		"/v1/brief/batch?" + sinceP + "&ids=-1,-2,abc", "/v1/brief/batch?" + sinceP + "&ids=" + strings.Repeat("1,", 5000) + "2",
		"/v1/brief/batch?" + sinceP + "&ids=" + idList(26),
	} {
		add(get("bad id", p, want4xx))
	}

	// Timestamps: not timestamps, impossible dates, far past, NUL, huge.
	badTimes := map[string]string{
		"word":          "yesterday",
		"month 13":      "2026-13-01T00:00:00Z",
		"hour 25":       "2026-11-20T25:00:00Z",
		"far past":      "0001-01-01T00:00:00Z",
		"epoch":         "1970-01-01T00:00:00Z",
		"NUL":           "%00",
		"trailing NUL":  "2026-11-19T00:00:00Z%00",
		"unix seconds":  "1763640000",
		"year 10000":    "10000-01-01T00:00:00Z",
		"negative year": "-0001-01-01T00:00:00Z",
		"huge":          repeat("2026", 100_000),
	}
	for _, tg := range []string{"/v1/radar/all?since=", "/v1/signal/all?since=", "/v1/replay/global?since=",
		"/v1/latest?since=", "/v1/entities/101/media?since=", "/v1/brief?id=101&since="} {
		for _, vname := range sortedKeys(badTimes) {
			if (vname == "far past" || vname == "epoch") && strings.HasPrefix(tg, "/v1/brief") {
				continue // briefs have no lookback: an old since is valid
			}
			add(get("since "+vname, tg+badTimes[vname], want4xx))
		}
	}
	// Instants before year 1 once their offset is applied: the routes the
	// red team saw answer 500 (PostgreSQL has no year 0).
	for _, v := range []string{"0000-01-01T00:00:00Z", url.QueryEscape("0001-01-01T00:00:00+14:00")} {
		for _, p := range []string{"/v1/timeline/byOrganizationId?id=101&", "/v1/search?query=eth&", "/v1/signal/top?",
			"/v1/radar/byCategory?category=funding&", "/v1/signal/byOrganizationId?id=101&", "/v1/radar/byOrganizationId?id=101&",
			"/v1/brief?id=101&", "/v1/brief/batch?ids=101,103&"} {
			add(get("since before year 1", p+"since="+v, want4xx))
		}
	}
	for _, name := range sortedKeys(forged) {
		add(get("radar cursor signed at "+name, "/v1/radar/all?"+sinceP+"&cursor="+forged[name], want4xx))
	}
	// Far-future and far-past windows where the route has no lookback:
	// valid instants, so an empty success.
	add(get("far-future since", "/v1/signal/top?since=9999-12-31T23:59:59Z", want200),
		get("far-past search since", "/v1/search?query=eth&since=0001-01-01T00:00:00Z", want200),
		get("far-future bulk since", "/v1/radar/all?since=9999-12-31T23:59:59Z", want200),
		get("far-future timeline", "/v1/timeline/byOrganizationId?id=101&since=9999-12-31T23:59:59Z", want200),
		get("far-past brief", "/v1/brief?id=101&since=0001-01-01T00:00:00Z", want200),
		// The prediction-market view of an unknown organization is an empty
		// list by design (rest/routes.go), negative ids included.
		get("negative market organization", "/v1/pmarket/byOrganizationId?id=-1", want200))

	// Strings: NUL bytes, invalid UTF-8 and 100 KB values are refused;
	// unicode and SQL are text that matches nothing — a category that
	// matches none in use is a 400 listing them.
	big := repeat("a", 100*1024)
	stringTargets := []string{"/v1/search?query=", "/v1/entities/byName?name=", "/v1/organizations/byOrganizationName?name=",
		"/v1/signal/byCategory?category=", "/v1/latest?topic=", "/v1/radar/byCategory?category=", "/v1/entities/byTopName?name="}
	for _, tg := range stringTargets {
		add(get("NUL in string", tg+"eth%00", want4xx),
			get("invalid UTF-8", tg+"%C3%28eth", want4xx),
			get("100 KB string", tg+big, want4xx))
		if !strings.Contains(tg, "byTopName") { // byTopName answers 404 when nothing matches
			// An unknown category is refused (400, listing the categories
			// in use); elsewhere such text is a value that matches nothing.
			none := want200
			if strings.Contains(tg, "category=") {
				none = want4xx
			}
			add(get("SQL injection", tg+url.QueryEscape("' OR '1'='1'; DROP TABLE events; --"), none),
				get("unicode", tg+url.QueryEscape("以太坊 🚀 \u202eRTL\u200b"), none),
				get("LIKE wildcards around a word", tg+url.QueryEscape("%_eth%\\"), none))
			// A search query or topic must hold a word: wildcards alone
			// are refused (400), elsewhere they are text that matches
			// nothing.
			if strings.Contains(tg, "search") || strings.Contains(tg, "topic") {
				add(get("LIKE wildcards", tg+url.QueryEscape("%_%\\"), want4xx),
					get("operators only", tg+url.QueryEscape("& | ! : * ( ) < >"), want4xx),
					get("stop words only", tg+url.QueryEscape("the of and"), map[bool]int{true: want4xx, false: want200}[strings.Contains(tg, "search")]))
			} else {
				add(get("LIKE wildcards", tg+url.QueryEscape("%_%\\"), none))
			}
		}
	}
	add(get("injection in top name", "/v1/entities/byTopName?name="+url.QueryEscape("x' UNION SELECT * FROM api_keys --"), want4xx))

	// Duplicated parameters: the first occurrence wins.
	add(get("duplicate limit, first valid", "/v1/latest?limit=5&limit=abc", want200),
		get("duplicate limit, first invalid", "/v1/latest?limit=abc&limit=5", want4xx),
		get("duplicate id", "/v1/entities/byId?id=101&id=abc", want200),
		get("duplicate id, first invalid", "/v1/entities/byId?id=abc&id=101", want4xx),
		get("query and q", "/v1/search?query=eth&q=%00", want200),
		get("duplicate since, first invalid", "/v1/radar/all?since=bad&"+sinceP, want4xx),
		get("duplicate cursor", "/v1/radar/all?"+sinceP+"&cursor=garbage&cursor="+radarCursor, want4xx))

	// Cursors: malformed, tampered, truncated, extended, foreign.
	flip := func(c string, i int) string {
		b := []byte(c)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	for _, cur := range []struct{ name, value string }{
		{"garbage", "garbage"},
		{"empty base64", "AAAA"},
		{"flipped first byte", flip(radarCursor, 0)},
		{"flipped middle byte", flip(radarCursor, len(radarCursor)/2)},
		{"flipped last byte", flip(radarCursor, len(radarCursor)-1)},
		{"truncated", radarCursor[:len(radarCursor)-4]},
		{"extended", radarCursor + "AAAA"},
		{"padded std base64", radarCursor + "=="},
		{"from signal/all", signalCursor},
		{"from research", researchCursor},
		{"other deployment's secret", foreign},
		{"NUL", "%00"},
		{"100 KB", big},
		{"spaces", "a%20b%20c"},
	} {
		add(get("radar cursor "+cur.name, "/v1/radar/all?"+sinceP+"&cursor="+cur.value, want4xx))
	}
	add(get("cursor with another since", "/v1/radar/all?since="+url.QueryEscape(ts(-5*24*time.Hour))+"&cursor="+radarCursor, want4xx),
		get("feed cursor on research", fmt.Sprintf("/v1/entities/%d/research?since=%s&cursor=%s", entEthereum, researchSince, radarCursor), want4xx),
		get("research cursor on another entity", fmt.Sprintf("/v1/entities/%d/research?since=%s&cursor=%s", entSolana, researchSince, researchCursor), want4xx),
		get("feed cursor on timeline", "/v1/timeline/byOrganizationId?id=101&cursor="+radarCursor, want4xx))

	// Webhook bodies.
	jsonCT := "application/json"
	tenMB := []byte(`{"url":"https://127.0.0.1:9/x","event_types":["radar"],"pad":"` + repeat("x", 10<<20) + `"}`)
	for _, b := range []struct {
		name, method, path, ctype string
		body                      []byte
		status                    int
	}{
		{"create: invalid JSON", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":`), 400},
		{"create: array", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`[]`), 400},
		{"create: null", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`null`), 400},
		{"create: string", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`"https://127.0.0.1:9/x"`), 400},
		{"create: empty", http.MethodPost, "/v1/webhooks", jsonCT, []byte{}, 400},
		{"create: text/plain", http.MethodPost, "/v1/webhooks", "text/plain", []byte(`{"url":"https://127.0.0.1:9/x","event_types":["radar"]}`), 415},
		{"create: no content type", http.MethodPost, "/v1/webhooks", "", []byte(`{"url":"https://127.0.0.1:9/x","event_types":["radar"]}`), 415},
		{"update: no content type", http.MethodPatch, hook, "", []byte(`{"active":false}`), 415},
		{"create: form", http.MethodPost, "/v1/webhooks", "application/x-www-form-urlencoded", []byte(`url=https://127.0.0.1:9/x&event_types=radar`), 415},
		{"create: bad content type", http.MethodPost, "/v1/webhooks", ";;;", []byte(`{}`), 415},
		{"create: 10 MB", http.MethodPost, "/v1/webhooks", jsonCT, tenMB, 413},
		{"create: url number", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":123,"event_types":["radar"]}`), 400},
		{"create: http url", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"http://127.0.0.1:9/x","event_types":["radar"]}`), 400},
		{"create: javascript url", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"javascript:alert(1)","event_types":["radar"]}`), 400},
		{"create: NUL in url", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://127.0.0.1:9/x\u0000y","event_types":["radar"]}`), 400},
		{"create: 100 KB url", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://127.0.0.1:9/` + repeat("a", 100*1024) + `","event_types":["radar"]}`), 400},
		{"create: unknown event type", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://127.0.0.1:9/x","event_types":["radar","bogus"]}`), 400},
		{"create: event_types string", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://127.0.0.1:9/x","event_types":"radar"}`), 400},
		{"create: empty event_types", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://127.0.0.1:9/x","event_types":[]}`), 400},
		{"create: NUL event type", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://127.0.0.1:9/x","event_types":["radar\u0000"]}`), 400},
		{"create: unknown field", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://127.0.0.1:9/x","event_types":["radar"],"secret":"mine"}`), 400},
		{"create: trailing data", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://127.0.0.1:9/x","event_types":["radar"]}{}`), 400},
		{"create: deep nesting", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`), 400},
		{"create: host without dns", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://no-such-host.invalid/x","event_types":["radar"]}`), 400},
		{"create: metadata address", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://169.254.169.254/latest","event_types":["radar"]}`), 400},
		{"create: IPv4-translated loopback", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://[::ffff:0:127.0.0.1]/x","event_types":["radar"]}`), 400},
		{"create: IPv4-compatible loopback", http.MethodPost, "/v1/webhooks", jsonCT, []byte(`{"url":"https://[::127.0.0.1]/x","event_types":["radar"]}`), 400},
		{"update: no fields", http.MethodPatch, hook, jsonCT, []byte(`{}`), 400},
		{"update: invalid JSON", http.MethodPatch, hook, jsonCT, []byte(`{"active":tru`), 400},
		{"update: text/plain", http.MethodPatch, hook, "text/plain", []byte(`{"active":false}`), 415},
		{"update: 10 MB", http.MethodPatch, hook, jsonCT, tenMB, 413},
		{"update: active string", http.MethodPatch, hook, jsonCT, []byte(`{"active":"false"}`), 400},
		{"update: active null", http.MethodPatch, hook, jsonCT, []byte(`{"active":null}`), 400},
		{"update: http url", http.MethodPatch, hook, jsonCT, []byte(`{"url":"http://127.0.0.1:9/x"}`), 400},
		{"update: bad event type", http.MethodPatch, hook, jsonCT, []byte(`{"event_types":["signal","x"]}`), 400},
		{"update: unknown field", http.MethodPatch, hook, jsonCT, []byte(`{"active":false,"account_id":1}`), 400},
		{"update: bad id", http.MethodPatch, "/v1/webhooks/abc", jsonCT, []byte(`{"active":false}`), 400},
		{"update: missing webhook", http.MethodPatch, "/v1/webhooks/987654", jsonCT, []byte(`{"active":false}`), 404},
		{"delete: bad id", http.MethodDelete, "/v1/webhooks/1.5", "", nil, 400},
		{"delete: missing webhook", http.MethodDelete, "/v1/webhooks/987654", "", nil, 404},
		{"rotate: missing webhook", http.MethodPost, "/v1/webhooks/987654/rotate-secret", "", nil, 404},
		{"test: bad id", http.MethodPost, "/v1/webhooks/%00/test", "", nil, 400},
		{"redeliver: not a uuid", http.MethodPost, hook + "/deliveries/not-a-uuid/redeliver", "", nil, 0},
		{"redeliver: NUL", http.MethodPost, hook + "/deliveries/%00/redeliver", "", nil, 0},
		{"redeliver: unknown uuid", http.MethodPost, hook + "/deliveries/00000000-0000-0000-0000-000000000000/redeliver", "", nil, 404},
		{"get: bad status filter", http.MethodGet, hook + "?status=%00", "", nil, 400},
		{"get: bad limit", http.MethodGet, hook + "?limit=NaN", "", nil, 400},
	} {
		add(withBody("webhook "+b.name, b.method, b.path, b.ctype, b.body, want4xx, b.status))
	}

	// Export job bodies.
	valid := `"scope":"radar.history","format":"jsonl","since":"2026-11-19T00:00:00Z"`
	for _, b := range []struct {
		name, ctype string
		body        []byte
		status      int
	}{
		{"invalid JSON", jsonCT, []byte(`{"scope":`), 400},
		{"array", jsonCT, []byte(`[{` + valid + `}]`), 400},
		{"null", jsonCT, []byte(`null`), 400},
		{"empty", jsonCT, nil, 400},
		{"text/plain", "text/plain", []byte(`{` + valid + `}`), 415},
		{"no content type", "", []byte(`{` + valid + `}`), 415},
		{"form", "application/x-www-form-urlencoded", []byte(`scope=radar.history&format=jsonl`), 415},
		{"10 MB", jsonCT, []byte(`{` + valid + `,"note":"` + repeat("n", 10<<20) + `"}`), 413},
		{"bad scope", jsonCT, []byte(`{"scope":"everything","format":"jsonl"}`), 400},
		{"scope injection", jsonCT, []byte(`{"scope":"radar.history'; DROP TABLE export_jobs; --","format":"jsonl"}`), 400},
		{"bad format", jsonCT, []byte(`{"scope":"organizations.registry","format":"xml"}`), 400},
		{"since not a time", jsonCT, []byte(`{"scope":"radar.history","format":"csv","since":"last week"}`), 400},
		{"since NUL", jsonCT, []byte(`{"scope":"radar.history","format":"csv","since":"2026-11-19T00:00:00Z\u0000"}`), 400},
		{"until before since", jsonCT, []byte(`{` + valid + `,"until":"2026-11-18T00:00:00Z"}`), 400},
		{"until number", jsonCT, []byte(`{` + valid + `,"until":20261120}`), 400},
		{"organizationIds negative", jsonCT, []byte(`{"scope":"timeline.by-organization","format":"jsonl","since":"2026-11-19T00:00:00Z","organizationIds":[-1]}`), 400},
		{"organizationIds strings", jsonCT, []byte(`{"scope":"timeline.by-organization","format":"jsonl","since":"2026-11-19T00:00:00Z","organizationIds":["101"]}`), 400},
		{"organizationIds fraction", jsonCT, []byte(`{"scope":"timeline.by-organization","format":"jsonl","since":"2026-11-19T00:00:00Z","organizationIds":[1.5]}`), 400},
		{"organizationIds huge", jsonCT, []byte(`{"scope":"timeline.by-organization","format":"jsonl","since":"2026-11-19T00:00:00Z","organizationIds":[99999999999999999999]}`), 400},
		{"organizationIds missing", jsonCT, []byte(`{"scope":"timeline.by-organization","format":"jsonl","since":"2026-11-19T00:00:00Z"}`), 400},
		{"note 501 characters", jsonCT, []byte(`{` + valid + `,"note":"` + repeat("é", 501*2)[:501*2] + `"}`), 400},
		{"NUL in note", jsonCT, []byte(`{` + valid + `,"note":"a\u0000b"}`), 400},
		{"NUL in category", jsonCT, []byte(`{` + valid + `,"category":"x\u0000"}`), 400},
		{"includeEvidence string", jsonCT, []byte(`{` + valid + `,"includeEvidence":"yes"}`), 400},
		{"unknown field", jsonCT, []byte(`{` + valid + `,"accountId":1}`), 400},
		{"duplicate key", jsonCT, []byte(`{` + valid + `,"scope":"bogus"}`), 400},
		{"trailing data", jsonCT, []byte(`{` + valid + `} {}`), 400},
		{"deep nesting", jsonCT, []byte(`{"note":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`), 400},
	} {
		add(withBody("export "+b.name, http.MethodPost, "/v1/export/jobs", b.ctype, b.body, want4xx, b.status))
	}
	add(get("export job not a uuid", "/v1/export/jobs/not-a-uuid", want4xx),
		get("export job NUL", "/v1/export/jobs/%00", want4xx),
		get("export job unknown uuid", "/v1/export/jobs/00000000-0000-0000-0000-000000000000", want4xx),
		get("export job 100 KB id", "/v1/export/jobs/"+big, want4xx),
		hostileCase{name: "export download without signature", key: "-", want: want4xx, status: 403,
			req: hostileRequest{Method: http.MethodGet, Path: "/v1/export/files/00000000-0000-0000-0000-000000000000"}},
		hostileCase{name: "export download forged signature", key: "-", want: want4xx, status: 403,
			req: hostileRequest{Method: http.MethodGet, Path: "/v1/export/files/x?expires=99999999999&sig=" + repeat("0", 64)}},
		hostileCase{name: "export download signed with the secret but bound to no account", key: "-", want: want4xx, status: 403,
			req: hostileRequest{Method: http.MethodGet, Path: unboundExportLink("00000000-0000-0000-0000-000000000001")}},
		hostileCase{name: "export download huge expiry", key: "-", want: want4xx, status: 403,
			req: hostileRequest{Method: http.MethodGet, Path: "/v1/export/files/x?expires=99999999999999999999999&sig=00"}})

	// Admin ingest: instants and scores outside their bounds are reported
	// as failed lines (a 200 with failedCount, and nothing written: the
	// domain tables are compared after the run).
	admin := map[string]string{"Authorization": "Bearer " + hostileAdminToken}
	for _, line := range []string{
		`{"kind":"event","id":9901,"title":"t","eventCategory":"funding","owners":[101],"evidence":[{"id":99001,"timestamp":"9999-12-31T00:00:00Z"}]}`,
		`{"kind":"event","id":9902,"title":"t","eventCategory":"funding","owners":[101],"significance":1e308,"evidence":[{"id":99002,"timestamp":"2026-11-19T00:00:00Z"}]}`,
		`{"kind":"event","id":9903,"title":"t","eventCategory":"funding","owners":[101],"evidence":[{"id":99003,"timestamp":"0001-01-01T00:00:00+14:00"}]}`,
		`{"kind":"market","id":9904,"entityId":101,"question":"q","closesAt":"0000-06-01T00:00:00Z"}`,
	} {
		add(hostileCase{name: "admin ingest out of bounds", key: "-", want: want200, req: hostileRequest{Method: http.MethodPost,
			Path: "/admin/ingest", ContentType: "application/x-ndjson", Body: []byte(line), Header: admin}})
	}

	// Methods, paths and keys.
	add(withBody("PUT on a read route", http.MethodPut, "/v1/latest", jsonCT, []byte(`{}`), want4xx, 405),
		withBody("POST on search", http.MethodPost, "/v1/search?query=eth", jsonCT, []byte(`{}`), want4xx, 405),
		get("unknown route", "/v1/nope", want4xx),
		get("100 KB path", "/v1/"+big, want4xx),
		get("empty path id", "/v1/entities//relationships", want4xx),
		get("traversal", "/v1/entities/..%2F..%2Fadmin/relationships", want4xx),
		hostileCase{name: "no key", key: "-", want: want4xx, status: 401, req: hostileRequest{Method: http.MethodGet, Path: "/v1/latest"}},
		hostileCase{name: "unknown key", key: "ci_live_" + repeat("0", 40), want: want4xx, status: 401, req: hostileRequest{Method: http.MethodGet, Path: "/v1/latest"}},
		hostileCase{name: "100 KB key", key: big, want: want4xx, status: 401, req: hostileRequest{Method: http.MethodGet, Path: "/v1/latest"}},
		hostileCase{name: "basic auth", key: "-", want: want4xx, status: 401, req: hostileRequest{Method: http.MethodGet, Path: "/v1/latest",
			Header: map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}}},
		hostileCase{name: "injection key", key: "' OR 1=1 --", want: want4xx, status: 401, req: hostileRequest{Method: http.MethodGet, Path: "/v1/usage"}},
	)

	// GraphQL.
	deep := "{ entity(id: 101) " + strings.Repeat("{ relationships(first: 1) { relatedEntity ", 25) + "{ id }" + strings.Repeat(" } }", 25) + " }"
	var aliases strings.Builder
	aliases.WriteString("{ ")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&aliases, "a%d: entity(id: 101) { id canonicalName } ", i)
	}
	aliases.WriteString("}")
	var typenames strings.Builder
	typenames.WriteString("{ ")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&typenames, "t%d: __typename ", i)
	}
	typenames.WriteString("}")
	// The red team's fragment bomb: each fragment spreads the next twice,
	// 2^30 fields once expanded, in about 1 KB.
	bomb, nested := validationtest.FragmentBomb, validationtest.RepeatedNesting
	var manyFragments strings.Builder
	manyFragments.WriteString("{ entity(id: 101) { ...G0 } }\n")
	for i := 0; i <= 100; i++ {
		fmt.Fprintf(&manyFragments, "fragment G%d on Entity { id ...G%d }\n", i, i+1)
	}
	manyFragments.WriteString("fragment G101 on Entity { label }\n")
	gqlCases := []hostileCase{
		gql("fragment bomb (2^30 fields)", map[string]any{"query": bomb("query { entity(id: 101) { ...F0 } }", "Entity", "id", 30)}, wantGQLRequestError),
		gql("fragment bomb (2^30 fields), unused", map[string]any{"query": "{ __typename }\n" + bomb("", "Entity", "id", 30)}, wantGQLRequestError),
		gql("introspection fragment bomb", map[string]any{"query": bomb("query { __schema { types { ...F0 } } }", "__Type", "name", 30)}, wantGQLRequestError),
		gql("fragment bomb with overlapping fields", map[string]any{"query": bomb("query { entity(id: 101) { ...F0 } }", "Entity", "id label x: id", 24)}, wantGQLRequestError),
		gql("repeated nested fields (2 per level, 9 levels)", map[string]any{"query": "{ entity(id: 101) { " + nested(9, 2) + " } }"}, wantGQLRequestError),
		gql("repeated nested fields (6 per level, 3 levels)", map[string]any{"query": "{ entity(id: 101) { " + nested(3, 6) + " } }"}, wantGQLRequestError),
		gql("101 fragments", map[string]any{"query": manyFragments.String()}, wantGQLRequestError),
		gql("one field 5,000 times", map[string]any{"query": "{ " + strings.Repeat("__typename ", 5000) + "}"}, want200),
		gql("entity.events since year 0", map[string]any{"query": `{ entity(id: 101) { events(since: "0000-01-01T00:00:00Z") { limit } } }`}, wantGQLFieldError),
		gql("entity.timeline since year 1 +14:00", map[string]any{"query": `{ entity(id: 101) { timeline(since: "0001-01-01T00:00:00+14:00") { limit } } }`}, wantGQLFieldError),
		gql("topSignals since year 0", map[string]any{"query": `{ topSignals(since: "0000-01-01T00:00:00Z") { id } }`}, wantGQLFieldError),
		gql("eventsByCategory since year 1 +14:00", map[string]any{"query": `{ eventsByCategory(category: "funding", since: "0001-01-01T00:00:00+14:00") { id } }`}, wantGQLFieldError),
		gql("searchEvents since year 0", map[string]any{"query": `{ searchEvents(query: "eth", since: "0000-01-01T00:00:00Z") { matchType } }`}, wantGQLFieldError),
		gql("brief since year 1 +14:00", map[string]any{"query": `{ brief(id: 101, since: "0001-01-01T00:00:00+14:00") { label } }`}, wantGQLFieldError),
		gql("feed after a cursor signed at -2^63", map[string]any{"query": fmt.Sprintf(`{ feed(since: %q, after: %q) { limit } }`, ts(-6*24*time.Hour), forged["at -2^63"])}, wantGQLFieldError),
		gql("too many entity ids", map[string]any{"query": fmt.Sprintf(`{ entities(ids: [%s]) { id canonicalName } }`, idList(400))}, wantGQLFieldError),

		gql("invalid JSON", `{"query":`, wantGQLRequestError),
		gql("empty body", ``, wantGQLRequestError),
		gql("JSON array (batch)", `[{"query":"{ __typename }"}]`, wantGQLRequestError),
		gql("no query", map[string]any{"variables": map[string]any{}}, wantGQLRequestError),
		gql("syntax error", map[string]any{"query": "{ entity(id: ) { id }"}, wantGQLRequestError),
		gql("unknown field", map[string]any{"query": "{ entity(id: 101) { password } }"}, wantGQLRequestError),
		gql("mutation", map[string]any{"query": "mutation { dropEverything }"}, wantGQLRequestError),
		gql("subscription", map[string]any{"query": "subscription { events { id } }"}, wantGQLRequestError),
		// gqlgen reads Int as 64 bits: an id beyond 32 bits finds nothing.
		gql("Int overflow literal", map[string]any{"query": "{ entity(id: 99999999999) { id } }"}, want200),
		gql("Float as Int", map[string]any{"query": "{ entity(id: 1.5) { id } }"}, wantGQLRequestError),
		gql("string as Int variable", map[string]any{"query": "query($id: Int!) { entity(id: $id) { id } }", "variables": map[string]any{"id": "abc"}}, wantGQLRequestError),
		gql("NaN variable", map[string]any{"query": "query($id: Int!) { entity(id: $id) { id } }", "variables": map[string]any{"id": "NaN"}}, wantGQLRequestError),
		gql("missing variable", map[string]any{"query": "query($id: Int!) { entity(id: $id) { id } }"}, wantGQLRequestError),
		gql("variables not an object", `{"query":"{ __typename }","variables":[1,2]}`, wantGQLRequestError),
		// gqlgen coerces custom scalars when the field runs: a field error.
		gql("bad Time literal", map[string]any{"query": `{ feed(since: "yesterday") { limit } }`}, wantGQLFieldError),
		gql("bad Time variable", map[string]any{"query": "query($s: Time!) { feed(since: $s) { limit } }", "variables": map[string]any{"s": "2026-13-01"}}, wantGQLFieldError),
		gql("unknown operation name", map[string]any{"query": "query A { __typename }", "operationName": "B"}, wantGQLRequestError),
		gql("two anonymous operations", map[string]any{"query": "{ __typename } { __typename }"}, wantGQLRequestError),
		gql("fragment cycle", map[string]any{"query": "{ entity(id: 101) { ...A } } fragment A on Entity { ...B } fragment B on Entity { ...A }"}, wantGQLRequestError),
		gql("deep query (50 levels)", map[string]any{"query": deep}, wantGQLRequestError),
		gql("alias bomb (1,000 aliases)", map[string]any{"query": aliases.String()}, wantGQLRequestError),
		gql("typename alias bomb (1,000 aliases)", map[string]any{"query": typenames.String()}, wantGQLRequestError),
		gql("directive bomb", map[string]any{"query": "{ __typename " + strings.Repeat("@include(if: true) ", 1000) + "}"}, wantGQLRequestError),
		gql("100 KB query", map[string]any{"query": "{ __typename }" + repeat(" ", 100*1024) + "#"}, want200),
		gql("10 MB query", map[string]any{"query": "{ __typename " + repeat("a ", 5<<20) + "}"}, wantGQLRequestError),
		gql("NUL in name", map[string]any{"query": "query($n: String!) { resolveEntities(name: $n) { matchType } }", "variables": map[string]any{"n": "eth\u0000"}}, wantGQLRequestError),
		gql("100 KB name", map[string]any{"query": "query($n: String!) { resolveEntities(name: $n) { matchType } }", "variables": map[string]any{"n": big}}, wantGQLRequestError),
		gql("NUL in search", map[string]any{"query": "query($q: String!) { searchEvents(query: $q) { matchType } }", "variables": map[string]any{"q": "\u0000"}}, wantGQLRequestError),
		gql("100 KB search", map[string]any{"query": "query($q: String!) { searchEvents(query: $q) { matchType } }", "variables": map[string]any{"q": big}}, wantGQLRequestError),
		gql("NUL in category", map[string]any{"query": `{ eventsByCategory(category: "a\u0000") { id } }`}, wantGQLRequestError),
		gql("garbage cursor", map[string]any{"query": fmt.Sprintf(`{ feed(since: %q, after: "garbage") { limit } }`, ts(-6*24*time.Hour))}, wantGQLFieldError),
		gql("tampered cursor", map[string]any{"query": fmt.Sprintf(`{ feed(since: %q, after: %q) { limit } }`, ts(-6*24*time.Hour), flip(radarCursor, 10))}, wantGQLFieldError),
		gql("foreign cursor", map[string]any{"query": fmt.Sprintf(`{ feed(since: %q, after: %q) { limit } }`, ts(-6*24*time.Hour), foreign)}, wantGQLFieldError),
		gql("far-past feed", map[string]any{"query": `{ feed(since: "0001-01-01T00:00:00Z") { limit } }`}, wantGQLFieldError),
		gql("bad window", map[string]any{"query": `{ events(window: "1000y") { limit } }`}, wantGQLFieldError),
		gql("far-past events", map[string]any{"query": `{ events(since: "1970-01-01T00:00:00Z") { limit } }`}, wantGQLFieldError),
		gql("empty name", map[string]any{"query": `{ resolveEntities(name: "") { matchType } }`}, wantGQLFieldError),
		gql("too many batch ids", map[string]any{"query": fmt.Sprintf(`{ briefs(ids: [%s], since: %q) { label } }`, idList(26), ts(-24*time.Hour))}, wantGQLFieldError),
		{name: "GET mutation", want: wantGQLRequestError, req: hostileRequest{Method: http.MethodGet, Path: "/graphql?query=" + url.QueryEscape("mutation { x }"),
			Header: map[string]string{"Accept": "application/graphql-response+json"}}},
		{name: "GET without query", want: wantGQLRequestError, req: hostileRequest{Method: http.MethodGet, Path: "/graphql",
			Header: map[string]string{"Accept": "application/graphql-response+json"}}},
		{name: "text/plain body", want: wantGQLRequestError, req: hostileRequest{Method: http.MethodPost, Path: "/graphql", ContentType: "text/plain",
			Body: []byte(`{"query":"{ __typename }"}`), Header: map[string]string{"Accept": "application/graphql-response+json"}}},
		{name: "PUT", want: wantGQLRequestError, req: hostileRequest{Method: http.MethodPut, Path: "/graphql", ContentType: jsonCT,
			Body: []byte(`{"query":"{ __typename }"}`), Header: map[string]string{"Accept": "application/graphql-response+json"}}},
	}
	for i := range gqlCases {
		gqlCases[i].name = "graphql " + gqlCases[i].name
	}
	add(gqlCases...)
	return cs
}

// unboundExportLink is a download link for export id signed with the
// hostile server's secret the way links were before they named the owning
// account: anyone holding a shipped default secret could make one.
func unboundExportLink(id string) string {
	exp := strconv.FormatInt(restNow.Add(time.Hour).Unix(), 10)
	m := hmac.New(sha256.New, []byte(hostileExportSecret))
	m.Write([]byte("export-download\n" + id + "\n" + exp))
	return "/v1/export/files/" + id + "?expires=" + exp + "&sig=" + hex.EncodeToString(m.Sum(nil))
}

// idList returns "1,2,…,n".
func idList(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(ids, ",")
}

// sortedKeys returns m's keys in order, so the table runs the same way
// every time.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
