package mcp

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestResultReusedForTheSameBody: a tool's result made from a body the
// response cache served (a tagged body) is reused by the next call with
// the same arguments that gets the same tag, and only then: another tag,
// other arguments or an untagged (computed) body make the result afresh.
// The fast path and the SDK's answer agree on a reused result too.
func TestResultReusedForTheSameBody(t *testing.T) {
	s := testServer(t)
	body := func(title string) []byte {
		return []byte(`{"query":"q","limit":10,"data":[` + strings.Replace(sampleEvent, `"T <b>"`, `"`+title+`"`, 1) + `]}` + "\n")
	}
	var answer RouteAnswer
	calls := 0
	s.cfg.Call = func(context.Context, string, map[string]string, http.Header, string, string, bool) RouteAnswer {
		calls++
		return answer
	}
	call := func(args string) string {
		t.Helper()
		res := post(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":`+args+`}}`)
		r := res["result"].(map[string]any)
		require.NotEqual(t, true, r["isError"], "%v", r)
		return r["structuredContent"].(map[string]any)["data"].([]any)[0].(map[string]any)["title"].(string)
	}

	answer = RouteAnswer{Status: http.StatusOK, Marks: http.Header{}, Body: body("first"), Tag: "tag-1"}
	require.Equal(t, "first", call(`{"query":"q"}`))
	answer.Body = body("changed under the same tag")
	require.Equal(t, "first", call(`{"query":"q"}`), "the same tag and arguments: the result made before")
	require.Equal(t, 2, calls, "the route ran for each call all the same (access, metering)")
	require.Equal(t, "changed under the same tag", call(`{"query":"q","detail":"full"}`), "other arguments: made afresh")

	answer = RouteAnswer{Status: http.StatusOK, Marks: http.Header{}, Body: body("second"), Tag: "tag-2"}
	require.Equal(t, "second", call(`{"query":"q"}`), "another tag: made afresh")

	answer = RouteAnswer{Status: http.StatusOK, Marks: http.Header{}, Body: body("computed")}
	require.Equal(t, "computed", call(`{"query":"q"}`))
	answer.Body = body("computed again")
	require.Equal(t, "computed again", call(`{"query":"q"}`), "a body without a tag is never reused")

	// A reused result is the SDK's answer too.
	answer = RouteAnswer{Status: http.StatusOK, Marks: http.Header{}, Body: body("reused"), Tag: "tag-3"}
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"q"}}}`
	first := post(t, s, req)
	fast := post(t, s, req)
	s.noFastPath = true
	slow := post(t, s, req)
	s.noFastPath = false
	require.Equal(t, first, fast)
	require.Equal(t, slow, fast)
}
