package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/httperr"
)

// nopExecutor answers every operation with empty data; for router tests
// that never reach the graph.
type nopExecutor struct{}

func (nopExecutor) Run(_ context.Context, _, _ string, _ map[string]any, w *jsonw.Writer) gqlerror.List {
	w.B = append(w.B, "{}"...)
	return nil
}

func TestETagMatches(t *testing.T) {
	t.Parallel()
	require.True(t, etagMatches(`"abc"`, "abc"))
	require.True(t, etagMatches(`W/"abc"`, "abc"))
	require.True(t, etagMatches(`"x", "abc"`, "abc"))
	require.True(t, etagMatches(`"abc-gzip"`, "abc"))
	require.True(t, etagMatches(`*`, "abc"))
	require.False(t, etagMatches(``, "abc"))
	require.False(t, etagMatches(`"abcd"`, "abc"))
}

func TestAcceptsGzip(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]bool{
		"gzip": true, "gzip, deflate, br": true, "br;q=1.0, GZIP;q=0.5": true,
		"gzip;q=0": false, "gzip; q=0.0": false, "deflate": false, "": false, "x-gzip": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", header)
		require.Equal(t, want, newEncodingWriter(httptest.NewRecorder(), r).acceptsGzip(), header)
	}
}

// TestGraphErrorMapping: GraphQL errors map through the one status table;
// an error without a known code is internal and never shown.
func TestGraphErrorMapping(t *testing.T) {
	t.Parallel()
	for code, status := range map[string]int{
		cryptointel.EINVALID: 400, cryptointel.ENOTFOUND: 404, cryptointel.EFORBIDDEN: 403, cryptointel.EUNAUTHORIZED: 401,
		cryptointel.EPAYMENT: 402, cryptointel.ERATELIMIT: 429, cryptointel.EQUOTA: 403, cryptointel.EUNAVAILABLE: 503,
		cryptointel.ETOOLARGE: 413, cryptointel.EINTERNAL: 500, "GRAPHQL_VALIDATION_FAILED": 500, "": 500,
	} {
		err := graphError("Op", gqlerror.List{{Message: "boom " + code, Extensions: map[string]any{"code": code}}})
		w := httptest.NewRecorder()
		WriteError(w, httptest.NewRequest("GET", "/v1/x", nil), err)
		require.Equal(t, status, w.Code, code)
		if status == 500 {
			require.JSONEq(t, `{"error":"Internal server error."}`, errorOnly(t, w.Body.Bytes()))
		} else if status != 503 {
			require.JSONEq(t, `{"error":"boom `+code+`"}`, errorOnly(t, w.Body.Bytes()))
		}
	}
	w := httptest.NewRecorder()
	WriteError(w, httptest.NewRequest("GET", "/v1/x", nil), cryptointel.Errorf(cryptointel.ENOTFOUND, "Webhook not found"))
	require.Equal(t, http.StatusNotFound, w.Code)
	require.JSONEq(t, `{"error":"Webhook not found"}`, errorOnly(t, w.Body.Bytes()))
}

// panicExecutor panics, as a bug in a resolver might.
type panicExecutor struct{}

func (panicExecutor) Run(context.Context, string, string, map[string]any, *jsonw.Writer) gqlerror.List {
	panic("resolver bug")
}

// TestRouterRecoversPanics: a panic becomes a JSON 500 with the request id
// and policy headers, not a dropped connection.
func TestRouterRecoversPanics(t *testing.T) {
	t.Parallel()
	rt, err := New(Config{Executor: panicExecutor{}})
	require.NoError(t, err)
	w := httptest.NewRecorder()
	rt.ServeHTTP(w, httptest.NewRequest("GET", "/v1/entities/byId?id=1", nil))
	require.Equal(t, http.StatusInternalServerError, w.Code)
	require.JSONEq(t, `{"error":"Internal server error."}`, errorOnly(t, w.Body.Bytes()))
	require.NotEmpty(t, w.Header().Get("X-Request-Id"))
	require.Equal(t, "entities.byId", w.Header().Get("X-Endpoint-Policy"))

	// The router alone (no access wrapper) serves envelopes from the
	// executor's data.
	rt, err = New(Config{Executor: nopExecutor{}})
	require.NoError(t, err)
	w = httptest.NewRecorder()
	rt.ServeHTTP(w, httptest.NewRequest("GET", "/v1/entities/byId?id=1", nil))
	require.Equal(t, http.StatusNotFound, w.Code)
	require.JSONEq(t, `{"error":"Entity not found"}`, errorOnly(t, w.Body.Bytes()))
}

// TestEncodingWriterPrecomputedBody: a cached body written whole is sent
// by reference with its precomputed ETag; any other write (before, after,
// or a copy of the same bytes) is buffered, so a handler reusing its
// buffer cannot change what is sent.
func TestEncodingWriterPrecomputedBody(t *testing.T) {
	cached := []byte(`{"data":[1,2,3]}` + "\n")
	tag := bodyTag(cached)
	run := func(write func(w http.ResponseWriter)) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		ew := newEncodingWriter(rec, httptest.NewRequest(http.MethodGet, "/v1/x", nil))
		ew.state = &frameState{tag: tag, tagged: cached}
		write(ew)
		ew.finish()
		return rec
	}

	rec := run(func(w http.ResponseWriter) { w.Write(cached) }) //nolint:errcheck
	require.Equal(t, string(cached), rec.Body.String())
	require.Equal(t, `"`+tag+`"`, rec.Header().Get("ETag"))

	rec = run(func(w http.ResponseWriter) {
		w.Write(cached)           //nolint:errcheck
		w.Write([]byte("more\n")) //nolint:errcheck
	})
	require.Equal(t, string(cached)+"more\n", rec.Body.String())
	require.Equal(t, `"`+bodyTag([]byte(string(cached)+"more\n"))+`"`, rec.Header().Get("ETag"))

	reused := append([]byte(nil), cached...)
	rec = run(func(w http.ResponseWriter) {
		w.Write(reused) //nolint:errcheck
		copy(reused, "XXXX")
	})
	require.Equal(t, string(cached), rec.Body.String(), "a body that is not the precomputed one is copied")
	require.Equal(t, `"`+tag+`"`, rec.Header().Get("ETag"))
}

// errorOnly returns the message member of an error body as {"error": …},
// after checking that the body also has its code.
func errorOnly(t *testing.T, body []byte) string {
	t.Helper()
	var e ErrorBody
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	require.NotEmpty(t, e.Code, "no code: %s", body)
	b, err := json.Marshal(map[string]string{"error": e.Error})
	require.NoError(t, err)
	return string(b)
}

// TestErrorBodyWithoutCodeGetsOne: an error body written with its message
// only still carries the code of its status and the link.
func TestErrorBodyWithoutCodeGetsOne(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	w.Header().Set("X-Request-Id", "req-7")
	writeJSON(w, http.StatusTooManyRequests, ErrorBody{Error: "Too many things at once."})
	var e ErrorBody
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e))
	require.Equal(t, ErrorBody{Error: "Too many things at once.", Code: cryptointel.ERATELIMIT,
		DocURL: httperr.DocURL(cryptointel.ERATELIMIT), RequestID: "req-7"}, e)
}
