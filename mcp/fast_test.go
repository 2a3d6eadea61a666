package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/rest"
)

// testServer is a Server over a stand-in API that answers the search
// route with one event, the latest route with a 402 and the entity route
// with a 404.
func testServer(t testing.TB) *Server {
	t.Helper()
	doc, err := json.Marshal(rest.OpenAPI(append(rest.Routes(), rest.UsageRoute(nil))))
	require.NoError(t, err)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/search":
			if r.Header.Get("PAYMENT-SIGNATURE") != "" {
				w.Header().Set("PAYMENT-RESPONSE", base64.StdEncoding.EncodeToString([]byte(`{"success":true,"transaction":"0x1","network":"eip155:8453"}`)))
			}
			w.Write([]byte(`{"query":"q","limit":10,"data":[` + sampleEvent + `]}` + "\n")) //nolint:errcheck
		case "/v1/latest":
			req, _ := json.Marshal(map[string]any{"x402Version": 2, "error": "PAYMENT-SIGNATURE header is required",
				"resource": map[string]any{"url": "http://x/v1/latest", "description": "d", "mimeType": "application/json"},
				"accepts":  []any{map[string]any{"scheme": "exact", "network": "eip155:8453", "amount": "5000"}}})
			w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString(req))
			w.WriteHeader(http.StatusPaymentRequired)
			w.Write([]byte(`{"error":"X-PAYMENT header is required"}`)) //nolint:errcheck
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"Entity not found"}`)) //nolint:errcheck
		}
	})
	s, err := New(Config{API: api, OpenAPI: doc, Authenticate: func(context.Context, string) error { return nil }, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return s
}

// post serves one /mcp POST and returns the decoded JSON-RPC response.
func post(t *testing.T, s *Server, body string) map[string]any {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2025-06-18")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &m), w.Body.String())
	return m
}

// TestFastPathAnswersAsTheSDK: a tools/call the server answers directly
// gets the very response the SDK's handler gives for it: results, tool
// errors, payment requirements, settlements and protocol errors.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	s := testServer(t)
	payment := `{"x402Version":2,"accepted":{},"payload":{}}`
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"q"}}}`,
		`{"jsonrpc":"2.0","id":"a-b","method":"tools/call","params":{"name":"search_events","arguments":{"query":"q","detail":"full"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"q"},"_meta":{"x402/payment":` + payment + `}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_events","arguments":{"limit":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"latest_events"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_entity","arguments":{"id":1}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"q"},"_meta":{"x402/payment":"nope"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search_events","name":"get_entity","arguments":{"query":"q"}}}`,
	} {
		s.noFastPath = false
		fast := post(t, s, body)
		s.noFastPath = true
		slow := post(t, s, body)
		require.Equal(t, slow, fast, body)
	}
	// A member name in another case is no tools/call to the SDK (it
	// answers 202, as to a notification): nor to the fast path.
	odd := `{"jsonrpc":"2.0","id":7,"Method":"tools/call","params":{"name":"search_events","arguments":{"query":"q"}}}`
	var answers []string
	for _, noFast := range []bool{false, true} {
		s.noFastPath = noFast
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(odd))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		answers = append(answers, strconv.Itoa(w.Code)+" "+w.Body.String())
	}
	require.Equal(t, answers[1], answers[0])
	s.noFastPath = false
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events"}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	tl, _ := s.fastTool(r, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events"}}`))
	require.NotNil(t, tl, "a plain tools/call takes the fast path")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	tl, _ = s.fastTool(r, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events"}}`))
	require.Nil(t, tl, "the 2026-07-28 protocol is the SDK's")
}

// TestFastRequestReadAsJSONDoes: the fast path reads a request as
// json.Unmarshal does, and leaves anything unusual (another member, a name
// in another case, a member twice, invalid JSON) to the SDK.
func TestFastRequestReadAsJSONDoes(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"q"}}}`,
		` {"params":{"arguments":null,"name":"s\u0065arch_events"},"method":"tools/call","id":"x\"y","jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"n","_meta":{"x402/payment":{"x402Version":2}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":null}}`,
	} {
		got, ok := readFastRequest([]byte(body))
		require.True(t, ok, body)
		var want fastRequest
		require.NoError(t, json.Unmarshal([]byte(body), &want))
		require.Equal(t, &want, got, body)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"search_events"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"search_events"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","task":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"search_events"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events"}`,
		`{"jsonrpc":2,"id":1,"method":"tools/call","params":{"name":"search_events"}}`,
	} {
		_, ok := readFastRequest([]byte(body))
		require.False(t, ok, body)
	}
}

// TestFastPathWritesItsLength: a tool call answered directly goes out
// with its Content-Length, not chunked (as the routes' responses do): no
// last empty chunk to write after the body. The body is larger than what
// net/http buffers to measure by itself.
func TestFastPathWritesItsLength(t *testing.T) {
	doc, err := json.Marshal(rest.OpenAPI(append(rest.Routes(), rest.UsageRoute(nil))))
	require.NoError(t, err)
	events := strings.TrimSuffix(strings.Repeat(sampleEvent+",", 30), ",")
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"query":"q","limit":30,"data":[` + events + `]}` + "\n")) //nolint:errcheck
	})
	s, err := New(Config{API: api, OpenAPI: doc, Authenticate: func(context.Context, string) error { return nil }, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"q","detail":"full"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, string(body), `"structuredContent":`)
	require.Greater(t, len(body), 8<<10)
	require.Empty(t, resp.TransferEncoding, "chunked")
	require.Equal(t, int64(len(body)), resp.ContentLength)
}

// TestLentBodyHandedBackOnceWritten: a body its route lent (RouteAnswer.
// Release) is handed back once, and only after the response that reads it
// in place is written: a Release that scribbles over the body changes no
// byte of the response.
func TestLentBodyHandedBackOnceWritten(t *testing.T) {
	doc, err := json.Marshal(rest.OpenAPI(append(rest.Routes(), rest.UsageRoute(nil))))
	require.NoError(t, err)
	released := 0
	call := func(_ context.Context, route string, _ map[string]string, _ http.Header, _, _ string, _ bool) RouteAnswer {
		require.Equal(t, "GET /v1/search", route)
		// Events without legacy aliases, as the tools ask for them: the
		// structured content is the body itself, read in place.
		event := sampleEvent[:strings.Index(sampleEvent, `,"globalSummary"`)] + "}"
		body := []byte(`{"query":"q","limit":10,"data":[` + event + "," + event + `]}` + "\n")
		return RouteAnswer{Status: http.StatusOK, Marks: http.Header{}, Body: body, Release: func() {
			released++
			for i := range body {
				body[i] = 'x'
			}
		}}
	}
	s, err := New(Config{API: http.NotFoundHandler(), Call: call, OpenAPI: doc,
		Authenticate: func(context.Context, string) error { return nil }, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	for n := 1; n <= 2; n++ {
		res := post(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"q","detail":"full"}}}`)
		result, ok := res["result"].(map[string]any)
		require.True(t, ok, res)
		sc, ok := result["structuredContent"].(map[string]any)
		require.True(t, ok, result)
		require.Equal(t, "q", sc["query"])
		require.Len(t, sc["data"], 2)
		require.NotContains(t, result["content"].([]any)[0].(map[string]any)["text"], "xxx")
		require.Equal(t, n, released, "the body is handed back once a call")
	}
}
