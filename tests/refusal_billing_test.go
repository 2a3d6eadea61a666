package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/webhook"
)

// A request refused before its operation runs — its parameters, body or
// content type, its key, its plan, a limit — costs no credits, on every
// surface. The table below walks every class of refusal of each surface
// and compares the calling key's credits before and after; a control row
// of each surface shows an admitted request is charged.
//
// Each surface contributes its cases through refusalSurfaces: the walk,
// the credit check and the count printed by make test need nothing else.

// refusalEnv is the server the refusal table runs against.
type refusalEnv struct {
	s *hostileServer
}

// refusalCase is one request of the table.
type refusalCase struct {
	name string
	// plan is the plan of the fresh key the case is sent with.
	plan string
	// prepare, when set, puts the key in the state the case needs
	// (revoked, out of credits, over its window, holding streams).
	prepare func(t *testing.T, env *refusalEnv, key string, keyID int64)
	// send makes the request and returns its status and body.
	send func(t *testing.T, env *refusalEnv, key string) (int, string)
	// status is the status the refusal answers.
	status int
	// control marks an admitted request, which must be charged.
	control bool
}

// refusalSurfaces lists the surfaces the table walks.
var refusalSurfaces = []struct {
	name  string
	cases func(t *testing.T, env *refusalEnv) []refusalCase
}{
	{"v1", v1Refusals},
	{"graphql", graphqlRefusals},
	{"streams", streamRefusals},
	{"mcp", mcpRefusals},
}

// keyCredits is the credits used by a key's account, all months.
func keyCredits(t *testing.T, env *refusalEnv, keyID int64) int64 {
	t.Helper()
	var n int64
	require.NoError(t, env.s.store.Pool.QueryRow(context.Background(),
		`SELECT coalesce(sum(credits), 0) FROM account_usage_monthly WHERE account_id = (SELECT account_id FROM api_keys WHERE id = $1)`, keyID).Scan(&n))
	return n
}

// exhaustCredits uses up the key's account's monthly credits.
func exhaustCredits(t *testing.T, env *refusalEnv, _ string, keyID int64) {
	t.Helper()
	_, err := env.s.store.Pool.Exec(context.Background(), `
		INSERT INTO account_usage_monthly (account_id, month, requests, credits)
		SELECT k.account_id, date_trunc('month', $2::timestamptz AT TIME ZONE 'UTC')::date, 0, p.monthly_credits
		FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.name = a.plan WHERE k.id = $1`,
		keyID, restNow.Add(time.Duration(env.s.offset.Load())))
	require.NoError(t, err)
}

// fillWindow spends the key's rate window.
func fillWindow(t *testing.T, env *refusalEnv, key string, _ int64) {
	t.Helper()
	for i := 0; i < 100; i++ {
		r := env.s.send(t, key, hostileRequest{Method: http.MethodGet, Path: "/v1/usage"})
		require.Equal(t, http.StatusOK, r.Status)
	}
}

// revoke revokes the key.
func revoke(t *testing.T, env *refusalEnv, _ string, keyID int64) {
	t.Helper()
	_, err := env.s.store.Pool.Exec(context.Background(), `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, keyID)
	require.NoError(t, err)
}

// sendGet, sendPost and gqlReq are the case senders.
func sendGet(path string) func(*testing.T, *refusalEnv, string) (int, string) {
	return func(t *testing.T, env *refusalEnv, key string) (int, string) {
		r := env.s.send(t, key, hostileRequest{Method: http.MethodGet, Path: path})
		return r.Status, string(r.Body)
	}
}

func sendPost(path, ctype string, body []byte) func(*testing.T, *refusalEnv, string) (int, string) {
	return func(t *testing.T, env *refusalEnv, key string) (int, string) {
		r := env.s.send(t, key, hostileRequest{Method: http.MethodPost, Path: path, ContentType: ctype, Body: body})
		return r.Status, string(r.Body)
	}
}

func gqlReq(body any, header ...string) func(*testing.T, *refusalEnv, string) (int, string) {
	return func(t *testing.T, env *refusalEnv, key string) (int, string) {
		var raw []byte
		if s, ok := body.(string); ok {
			raw = []byte(s)
		} else {
			raw, _ = json.Marshal(body)
		}
		h := map[string]string{"Accept": "application/graphql-response+json"}
		for i := 0; i+1 < len(header); i += 2 {
			h[header[i]] = header[i+1]
		}
		ct := "application/json"
		if v, ok := h["Content-Type"]; ok {
			ct = v
			delete(h, "Content-Type")
		}
		r := env.s.send(t, key, hostileRequest{Method: http.MethodPost, Path: "/graphql", ContentType: ct, Body: raw, Header: h})
		return r.Status, string(r.Body)
	}
}

func v1Refusals(t *testing.T, env *refusalEnv) []refusalCase {
	since := url.QueryEscape(ts(-2 * 24 * time.Hour))
	export := []byte(`{"scope":"radar.history","format":"jsonl","since":"` + ts(-2*24*time.Hour) + `"}`)
	hook := []byte(`{"url":"https://127.0.0.1:9/hook","event_types":["radar"]}`)
	return []refusalCase{
		{name: "control: an admitted read", plan: cryptointel.PlanEnterprise, send: sendGet("/v1/latest"), status: http.StatusOK, control: true},
		{name: "integer parameter not an integer", plan: cryptointel.PlanEnterprise, send: sendGet("/v1/latest?limit=abc"), status: http.StatusBadRequest},
		{name: "required parameter missing", plan: cryptointel.PlanEnterprise, send: sendGet("/v1/search"), status: http.StatusBadRequest},
		{name: "since out of range", plan: cryptointel.PlanEnterprise, send: sendGet("/v1/radar/all?since=2000-01-01T00:00:00Z"), status: http.StatusBadRequest},
		{name: "cursor not a cursor", plan: cryptointel.PlanEnterprise, send: sendGet("/v1/radar/all?since=" + since + "&cursor=garbage"), status: http.StatusBadRequest},
		{name: "export without Content-Type", plan: cryptointel.PlanEnterprise, send: sendPost("/v1/export/jobs", "", export), status: http.StatusUnsupportedMediaType},
		{name: "export body not JSON", plan: cryptointel.PlanEnterprise, send: sendPost("/v1/export/jobs", "application/json", []byte(`{"scope":`)), status: http.StatusBadRequest},
		{name: "export body too large", plan: cryptointel.PlanEnterprise, send: sendPost("/v1/export/jobs", "application/json", []byte(`{"note":"`+repeat("n", 2<<20)+`"}`)), status: http.StatusRequestEntityTooLarge},
		{name: "export scope unknown", plan: cryptointel.PlanEnterprise, send: sendPost("/v1/export/jobs", "application/json", []byte(`{"scope":"everything","format":"jsonl"}`)), status: http.StatusBadRequest},
		{name: "export jobs at the account's bound", plan: cryptointel.PlanEnterprise, prepare: func(t *testing.T, env *refusalEnv, _ string, keyID int64) {
			_, err := env.s.store.Pool.Exec(context.Background(), `
				INSERT INTO export_jobs (id, account_id, api_key_id, scope, format, status, requested_params)
				SELECT gen_random_uuid(), account_id, id, 'radar.history', 'jsonl', 'running', '{}' FROM api_keys WHERE id = $1`, keyID)
			require.NoError(t, err)
		}, send: sendPost("/v1/export/jobs", "application/json", export), status: http.StatusConflict},
		{name: "webhook body not JSON", plan: cryptointel.PlanEnterprise, send: sendPost("/v1/webhooks", "application/json", []byte(`{"url":`)), status: http.StatusBadRequest},
		{name: "webhook with a form body", plan: cryptointel.PlanEnterprise, send: sendPost("/v1/webhooks", "application/x-www-form-urlencoded", []byte(`url=x`)), status: http.StatusUnsupportedMediaType},
		{name: "webhooks at the account's cap", plan: cryptointel.PlanEnterprise, prepare: func(t *testing.T, env *refusalEnv, key string, _ int64) {
			for i := 0; i < webhook.MaxPerAccount; i++ {
				r := env.s.send(t, key, hostileRequest{Method: http.MethodPost, Path: "/v1/webhooks", ContentType: "application/json", Body: hook})
				require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			}
		}, send: sendPost("/v1/webhooks", "application/json", hook)},
		{name: "method not allowed", plan: cryptointel.PlanEnterprise, send: sendPost("/v1/latest", "application/json", []byte(`{}`)), status: http.StatusMethodNotAllowed},
		{name: "plan without the route", plan: cryptointel.PlanFree, send: sendGet("/v1/brief?id=101&since=" + since), status: http.StatusForbidden},
		{name: "revoked key", plan: cryptointel.PlanEnterprise, prepare: revoke, send: sendGet("/v1/latest"), status: http.StatusUnauthorized},
		{name: "over the rate window", plan: cryptointel.PlanEnterprise, prepare: fillWindow, send: sendGet("/v1/latest"), status: http.StatusTooManyRequests},
		{name: "credits used up", plan: cryptointel.PlanFree, prepare: exhaustCredits, send: sendGet("/v1/latest"), status: http.StatusForbidden},
	}
}

func graphqlRefusals(t *testing.T, env *refusalEnv) []refusalCase {
	since := ts(-2 * 24 * time.Hour)
	ids := make([]string, 25)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	q := func(query string) map[string]any { return map[string]any{"query": query} }
	feed := fmt.Sprintf(`{ feed(since: %q, first: 25) { nodes { id title } } }`, since)
	return []refusalCase{
		{name: "control: an operation that ran", plan: cryptointel.PlanFree, send: gqlReq(q(`{ entity(id: 101) { canonicalName } }`)), status: http.StatusOK, control: true},
		{name: "parse error", plan: cryptointel.PlanFree, send: gqlReq(q(`{ entity(id: 101) { canonicalName }`)), status: http.StatusBadRequest},
		{name: "unknown field", plan: cryptointel.PlanFree, send: gqlReq(q(`{ entity(id: 101) { password } }`)), status: http.StatusBadRequest},
		{name: "invalid variable", plan: cryptointel.PlanFree, send: gqlReq(map[string]any{"query": "query($id: Int!) { entity(id: $id) { id } }", "variables": map[string]any{"id": "x"}}), status: http.StatusBadRequest},
		{name: "unknown operation name", plan: cryptointel.PlanFree, send: gqlReq(map[string]any{"query": "query A { __typename }", "operationName": "B"}), status: http.StatusBadRequest},
		{name: "depth limit", plan: cryptointel.PlanFree, send: gqlReq(q("{ entity(id: 101) " + strings.Repeat("{ relationships(first: 1) { relatedEntity ", 9) + "{ id }" + strings.Repeat(" } }", 9) + " }")), status: http.StatusBadRequest},
		{name: "alias limit", plan: cryptointel.PlanFree, send: gqlReq(q(aliased("entity(id: 101) { id }", 101))), status: http.StatusBadRequest},
		{name: "complexity limit", plan: cryptointel.PlanEnterprise, send: gqlReq(q("{ entities(ids: [" + strings.Join(ids, ",") + "]) { relationships(first: 50) { relatedEntity { events(first: 25) { nodes { id } } } } } }")), status: http.StatusBadRequest},
		{name: "__schema twice", plan: cryptointel.PlanFree, send: gqlReq(q(aliased("__schema { types { name } }", 2))), status: http.StatusBadRequest},
		{name: "subscription over POST", plan: cryptointel.PlanPro, send: gqlReq(q("subscription { events { id } }")), status: http.StatusBadRequest},
		{name: "body not JSON", plan: cryptointel.PlanFree, send: gqlReq(`{"query":`), status: http.StatusBadRequest},
		{name: "text/plain body", plan: cryptointel.PlanFree, send: gqlReq(q("{ __typename }"), "Content-Type", "text/plain"), status: http.StatusBadRequest},
		{name: "body too large", plan: cryptointel.PlanFree, send: gqlReq(q("{ __typename }" + repeat(" ", 2<<20))), status: http.StatusRequestEntityTooLarge},
		// The case: a free key asking for feed was charged 51.
		{name: "a field the plan lacks", plan: cryptointel.PlanFree, send: gqlReq(q(feed)), status: http.StatusForbidden},
		{name: "a field the plan lacks beside one it has", plan: cryptointel.PlanFree, send: gqlReq(q(`{ entity(id: 101) { id } brief(id: 101, since: "` + since + `") { label } }`)), status: http.StatusForbidden},
		{name: "revoked key", plan: cryptointel.PlanFree, prepare: revoke, send: gqlReq(q(`{ entity(id: 101) { id } }`)), status: http.StatusUnauthorized},
		{name: "over the rate window", plan: cryptointel.PlanFree, prepare: fillWindow, send: gqlReq(q(`{ entity(id: 101) { id } }`)), status: http.StatusTooManyRequests},
		{name: "credits used up", plan: cryptointel.PlanFree, prepare: exhaustCredits, send: gqlReq(q(`{ entity(id: 101) { id } }`)), status: http.StatusForbidden},
	}
}

// wsOperation opens a WebSocket connection with key and runs query on it,
// returning 101 and the operation's result (or the handshake's status).
func wsOperation(query string) func(*testing.T, *refusalEnv, string) (int, string) {
	return func(t *testing.T, env *refusalEnv, key string) (int, string) {
		resp, body, sock := rawHandshake(t, env.s.base, http.MethodGet, "/graphql", "Authorization: Bearer "+key, "Upgrade: websocket", "Connection: Upgrade")
		if sock == nil {
			return resp.StatusCode, string(body)
		}
		defer sock.closeNow()
		sock.init(t, nil)
		b, _ := json.Marshal(sock.query(t, "1", query))
		return resp.StatusCode, string(b)
	}
}

// sseOperation runs query as graphql-sse and returns its stream.
func sseOperation(query string) func(*testing.T, *refusalEnv, string) (int, string) {
	return func(t *testing.T, env *refusalEnv, key string) (int, string) {
		body, _ := json.Marshal(map[string]string{"query": query})
		resp, b, _ := rawExchange(t, env.s.base, http.MethodPost, "/graphql", string(body), "Authorization: Bearer "+key,
			"Accept: text/event-stream", "Content-Type: application/json")
		return resp.StatusCode, string(b)
	}
}

// holdStreams opens the plan's every stream for the key.
func holdStreams(n int) func(*testing.T, *refusalEnv, string, int64) {
	return func(t *testing.T, env *refusalEnv, key string, _ int64) {
		for i := 0; i < n; i++ {
			_, status, body := openSSE(t, env.s.base, "/v1/stream", key)
			require.Equal(t, http.StatusOK, status, "%s", body)
		}
	}
}

func streamRefusals(t *testing.T, env *refusalEnv) []refusalCase {
	pro := 5 // cryptointel.PlanStreamCaps: pro
	return []refusalCase{
		{name: "control: a stream that opened", plan: cryptointel.PlanPro, send: func(t *testing.T, env *refusalEnv, key string) (int, string) {
			_, status, body := openSSE(t, env.s.base, "/v1/stream", key)
			return status, string(body)
		}, status: http.StatusOK, control: true},
		{name: "/v1/stream unknown parameter", plan: cryptointel.PlanPro, send: sendGet("/v1/stream?surfce=radar"), status: http.StatusBadRequest},
		{name: "/v1/stream bad cursor", plan: cryptointel.PlanPro, send: sendGet("/v1/stream?cursor=garbage"), status: http.StatusBadRequest},
		{name: "/v1/stream unknown organization", plan: cryptointel.PlanPro, send: sendGet("/v1/stream?organizationId=99999"), status: http.StatusNotFound},
		{name: "/v1/stream plan without streams", plan: cryptointel.PlanFree, send: sendGet("/v1/stream"), status: http.StatusForbidden},
		{name: "/v1/stream past the plan's open streams", plan: cryptointel.PlanPro, prepare: holdStreams(pro), send: sendGet("/v1/stream"), status: http.StatusTooManyRequests},
		{name: "graphql-ws subscription the plan lacks", plan: cryptointel.PlanFree, send: wsOperation("subscription { events { id } }"), status: http.StatusSwitchingProtocols},
		{name: "graphql-ws subscription past the open streams", plan: cryptointel.PlanPro, prepare: holdStreams(pro), send: wsOperation("subscription { events { id } }"), status: http.StatusSwitchingProtocols},
		{name: "graphql-ws subscription with a bad cursor", plan: cryptointel.PlanPro, send: wsOperation(`subscription { events(after: "garbage") { id } }`), status: http.StatusSwitchingProtocols},
		{name: "graphql-ws parse error", plan: cryptointel.PlanPro, send: wsOperation("subscription { events { id }"), status: http.StatusSwitchingProtocols},
		{name: "graphql-sse subscription the plan lacks", plan: cryptointel.PlanFree, send: sseOperation("subscription { events { id } }"), status: http.StatusOK},
		{name: "graphql-sse subscription past the open streams", plan: cryptointel.PlanPro, prepare: holdStreams(pro), send: sseOperation("subscription { events { id } }"), status: http.StatusOK},
		{name: "WebSocket over the rate window", plan: cryptointel.PlanPro, prepare: fillWindow, send: wsOperation("{ __typename }"), status: http.StatusTooManyRequests},
	}
}

// TestRefusalsCostNothing walks every refusal class of every surface and
// checks that the calling key's credits did not move, while an admitted
// request of each surface was charged; it prints its counts in make test.
// (A 415 on the README's own export example cost 10 credits, and a free
// key asking /graphql for feed 51.)
func TestRefusalsCostNothing(t *testing.T) {
	t.Parallel()
	env := &refusalEnv{s: startHostileServer(t, func(c *app.Config) { c.ExportMaxActiveJobs = 1 })}
	counts := map[string]int{}
	var total int
	for _, surface := range refusalSurfaces {
		for _, c := range surface.cases(t, env) {
			name := surface.name + ": " + c.name
			env.s.nextMinute()
			key, keyID := accesstest.NewKey(t, env.s.store, c.plan)
			if c.prepare != nil {
				c.prepare(t, env, key, keyID)
			}
			before := keyCredits(t, env, keyID)
			status, body := c.send(t, env, key)
			if c.status != 0 {
				require.Equal(t, c.status, status, "%s: %s", name, abbreviate(body))
			} else {
				require.True(t, status >= 400 && status < 500, "%s: %d %s", name, status, abbreviate(body))
			}
			after := keyCredits(t, env, keyID)
			if c.control {
				require.Greater(t, after, before, "%s: an admitted request is charged", name)
				continue
			}
			require.NotContains(t, body, `"canonicalName"`, "%s served data", name)
			require.Equal(t, before, after, "%s (%d) was charged: %s", name, status, abbreviate(body))
			counts[surface.name]++
			total++
		}
	}
	var parts []string
	for _, s := range refusalSurfaces {
		parts = append(parts, fmt.Sprintf("%s %d", s.name, counts[s.name]))
	}
	sort.Strings(parts)
	summary(t, "refusal billing: %d refusals (%s): 0 credits charged for refusals", total, strings.Join(parts, ", "))
}

// mcpRefusals are tool calls on /mcp refused before their route's work
// runs: a key the access layer refuses (HTTP 401), and tool errors (a
// JSON-RPC result with isError, HTTP 200) for arguments the tool or its
// route refuses, a tool the plan lacks, spent credits and a full window,
// besides protocol errors (an unknown tool). None may cost a credit.
func mcpRefusals(t *testing.T, env *refusalEnv) []refusalCase {
	old, recent := ts(-60*24*time.Hour), ts(-2*24*time.Hour)
	return []refusalCase{
		{name: "control: a tool call that ran", plan: cryptointel.PlanFree, send: mcpCall("search_events", `{"query":"ethereum"}`, ""), status: http.StatusOK, control: true},
		{name: "revoked key", plan: cryptointel.PlanFree, prepare: revoke, send: mcpCall("search_events", `{"query":"ethereum"}`, "-"), status: http.StatusUnauthorized},
		{name: "argument of the wrong type", plan: cryptointel.PlanFree, send: mcpCall("search_events", `{"query":"ethereum","limit":"ten"}`, "limit"), status: http.StatusOK},
		{name: "required argument missing", plan: cryptointel.PlanFree, send: mcpCall("search_events", `{}`, "query"), status: http.StatusOK},
		{name: "unknown argument", plan: cryptointel.PlanFree, send: mcpCall("search_events", `{"query":"ethereum","limt":5}`, "limt"), status: http.StatusOK},
		{name: "since older than the route allows", plan: cryptointel.PlanFree, send: mcpCall("latest_events", `{"since":"`+old+`"}`, "since"), status: http.StatusOK},
		{name: "tool the plan lacks", plan: cryptointel.PlanFree, send: mcpCall("organization_brief", `{"ids":[101],"since":"`+recent+`"}`, "plan or higher"), status: http.StatusOK},
		{name: "monthly credits spent", plan: cryptointel.PlanFree, prepare: exhaustCredits, send: mcpCall("search_events", `{"query":"ethereum"}`, "API usage limit reached"), status: http.StatusOK},
		{name: "rate window full", plan: cryptointel.PlanFree, prepare: fillWindow, send: mcpCall("search_events", `{"query":"ethereum"}`, "Rate limit exceeded"), status: http.StatusOK},
		{name: "unknown tool", plan: cryptointel.PlanFree, send: mcpCall("no_such_tool", `{}`, "no_such_tool"), status: http.StatusOK},
	}
}

// mcpCall sends one tools/call of tool with the JSON arguments args. want
// is what the refusal must say: "" for a call that succeeds, "-" for a
// refusal answered by HTTP status alone, otherwise a fragment of the tool
// error's (or protocol error's) message.
func mcpCall(tool, args, want string) func(*testing.T, *refusalEnv, string) (int, string) {
	return func(t *testing.T, env *refusalEnv, key string) (int, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
		r := env.s.send(t, key, hostileRequest{Method: http.MethodPost, Path: "/mcp", ContentType: "application/json", Body: []byte(body),
			Header: map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}})
		if r.Status != http.StatusOK {
			return r.Status, string(r.Body)
		}
		var msg struct {
			Result *struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &msg), "%s", abbreviate(string(r.Body)))
		switch {
		case want == "":
			require.NotNil(t, msg.Result, "%s", abbreviate(string(r.Body)))
			require.False(t, msg.Result.IsError, "%s", abbreviate(string(r.Body)))
		case msg.Error != nil:
			require.Contains(t, msg.Error.Message, want)
		default:
			require.NotNil(t, msg.Result, "%s", abbreviate(string(r.Body)))
			require.True(t, msg.Result.IsError, "a refusal is a tool error: %s", abbreviate(string(r.Body)))
			text := ""
			for _, c := range msg.Result.Content {
				text += c.Text
			}
			require.Contains(t, text, want)
		}
		return r.Status, string(r.Body)
	}
}
