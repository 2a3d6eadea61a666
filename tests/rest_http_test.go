package tests

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRESTUnknownRoutesAndMethods: unknown /v1 paths are JSON 404s and
// wrong methods JSON 405s with Allow, both with the request id and policy
// headers.
func TestRESTUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)

	for _, path := range []string{"/v1/nope", "/v1/entities/101/unknown", "/v1/categories/none", "/v1/latest/extra"} {
		r := s.get(t, path)
		require.Equal(t, 404, r.Status, path)
		require.Equal(t, "Not found", r.Error(t))
		require.Equal(t, "application/json; charset=utf-8", r.Header.Get("Content-Type"))
		require.NotEmpty(t, r.Header.Get("X-Request-Id"))
		require.NotEmpty(t, r.Header.Get("X-Api-Surface"))
		require.NotEmpty(t, r.Header.Get("X-Access-Layer"))
		require.Equal(t, "not_found", r.Header.Get("X-Endpoint-Policy"))
		require.Equal(t, "0", r.Header.Get("X-Credit-Cost"))
	}

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		r := s.do(t, method, "/v1/latest")
		require.Equal(t, 405, r.Status, method)
		require.Equal(t, "Method not allowed", r.Error(t))
		require.Equal(t, "GET, HEAD", r.Header.Get("Allow"))
		require.Equal(t, "latest", r.Header.Get("X-Endpoint-Policy"))
		require.Equal(t, "feed", r.Header.Get("X-Api-Surface"))
		require.Equal(t, "0", r.Header.Get("X-Credit-Cost"))
		require.NotEmpty(t, r.Header.Get("X-Request-Id"))
	}
	r := s.do(t, http.MethodPut, "/v1/webhooks")
	require.Equal(t, 405, r.Status)
	require.Equal(t, "GET, HEAD, POST", r.Header.Get("Allow"))

	head := s.do(t, http.MethodHead, "/v1/entities/byId?id=101")
	require.Equal(t, 200, head.Status)
	require.Empty(t, head.Body)
	require.NotEmpty(t, head.Header.Get("ETag"))
}

// TestUnservedPathsAnswerJSON: outside /v1 too, a path no surface serves
// is a JSON 404 and a method a path does not take a JSON 405 with Allow
// (ServeMux answered both with a line of text), each with its code and
// the request id; what is served, and the mux's redirects, are as before.
func TestUnservedPathsAnswerJSON(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	for _, path := range []string{"/v2/latest", "/latest", "/nope", "/healthz/extra", "/graphqlx"} {
		r := s.get(t, path)
		require.Equal(t, 404, r.Status, path)
		require.Equal(t, "Not found", r.Error(t), path)
		require.Equal(t, "not_found", r.JSON(t)["code"], path)
		require.Equal(t, "application/json; charset=utf-8", r.Header.Get("Content-Type"), path)
		require.NotEmpty(t, r.Header.Get("X-Request-Id"), path)
		require.Equal(t, r.Header.Get("X-Request-Id"), r.JSON(t)["requestId"], path)
	}
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodPost, "/healthz", "GET, HEAD"},
		{http.MethodPut, "/openapi.json", "GET, HEAD"},
		{http.MethodDelete, "/docs", "GET, HEAD"},
		{http.MethodPost, "/readyz", "GET, HEAD"},
	} {
		r := s.do(t, c.method, c.path)
		require.Equal(t, 405, r.Status, "%s %s", c.method, c.path)
		require.Equal(t, "Method not allowed", r.Error(t), "%s %s", c.method, c.path)
		require.Equal(t, "method_not_allowed", r.JSON(t)["code"], "%s %s", c.method, c.path)
		require.Equal(t, c.allow, r.Header.Get("Allow"), "%s %s", c.method, c.path)
		require.NotEmpty(t, r.Header.Get("X-Request-Id"))
	}
	require.Equal(t, 200, s.get(t, "/healthz").Status)
	require.Equal(t, 200, s.get(t, "/openapi.json").Status)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.base + "/v1")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
	require.Equal(t, "/v1/", resp.Header.Get("Location"))
}

// TestRESTRequestID: a valid incoming X-Request-Id is echoed on success and
// error alike; an invalid one is replaced by a generated id.
func TestRESTRequestID(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	for _, path := range []string{"/v1/entities/byId?id=101", "/v1/entities/byId", "/v1/entities/byId?id=999", "/v1/nope"} {
		r := s.get(t, path, "X-Request-Id", "client-req.42_abc")
		require.Equal(t, "client-req.42_abc", r.Header.Get("X-Request-Id"), path)
	}
	for _, bad := range []string{"has space", strings.Repeat("x", 200), "semi;colon", "new\u00e9"} {
		r := s.get(t, "/v1/entities/byId?id=101", "X-Request-Id", bad)
		got := r.Header.Get("X-Request-Id")
		require.NotEmpty(t, got)
		require.NotEqual(t, bad, got)
	}
	a := s.get(t, "/v1/entities/byId?id=101").Header.Get("X-Request-Id")
	b := s.get(t, "/v1/entities/byId?id=101").Header.Get("X-Request-Id")
	require.NotEqual(t, a, b, "generated ids are unique")
}

// TestRESTPolicyHeadersWithoutKey: a request the access layer refuses still
// carries the route's policy headers and a request id.
func TestRESTPolicyHeadersWithoutKey(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	resp, err := http.Get(s.base + "/v1/radar/all?since=" + ts(-restDay))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 401, resp.StatusCode)
	require.Equal(t, "radar.all", resp.Header.Get("X-Endpoint-Policy"))
	require.Equal(t, "premium", resp.Header.Get("X-Access-Layer"))
	require.Equal(t, "feed", resp.Header.Get("X-Api-Surface"))
	require.Equal(t, "5", resp.Header.Get("X-Credit-Cost"))
	require.NotEmpty(t, resp.Header.Get("X-Request-Id"))
}

// TestRESTGzipAndETag: large bodies are gzipped for clients that accept it
// (small ones are not), and a GET carries a strong ETag that answers a
// matching If-None-Match with 304.
func TestRESTGzipAndETag(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	path := "/v1/latest?window=7d&limit=25"

	plain := s.get(t, path)
	require.Equal(t, 200, plain.Status)
	require.Empty(t, plain.Header.Get("Content-Encoding"))
	require.Greater(t, len(plain.Body), 1024)
	etag := plain.Header.Get("ETag")
	require.Regexp(t, `^"[A-Za-z0-9_-]+"$`, etag, "strong ETag")

	zipped := s.get(t, path, "Accept-Encoding", "gzip, deflate")
	require.Equal(t, 200, zipped.Status)
	require.Equal(t, "gzip", zipped.Header.Get("Content-Encoding"))
	require.Contains(t, zipped.Header.Values("Vary"), "Accept-Encoding")
	require.Less(t, len(zipped.Body), len(plain.Body))
	zr, err := gzip.NewReader(bytes.NewReader(zipped.Body))
	require.NoError(t, err)
	unzipped, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, plain.Body, unzipped)
	require.NotEqual(t, etag, zipped.Header.Get("ETag"), "the gzipped representation has its own strong ETag")

	refused := s.get(t, path, "Accept-Encoding", "gzip;q=0")
	require.Empty(t, refused.Header.Get("Content-Encoding"))

	small := s.get(t, "/v1/entities/byId", "Accept-Encoding", "gzip")
	require.Equal(t, 400, small.Status)
	require.Empty(t, small.Header.Get("Content-Encoding"), "small bodies are not compressed")
	require.Empty(t, small.Header.Get("ETag"), "errors carry no ETag")

	again := s.get(t, path)
	require.Equal(t, etag, again.Header.Get("ETag"), "same body, same ETag")

	for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, zipped.Header.Get("ETag"), "*"} {
		nm := s.get(t, path, "If-None-Match", inm)
		require.Equal(t, 304, nm.Status, inm)
		require.Empty(t, nm.Body)
		require.Equal(t, etag, nm.Header.Get("ETag"))
		require.NotEmpty(t, nm.Header.Get("X-Request-Id"))
		require.Equal(t, "latest", nm.Header.Get("X-Endpoint-Policy"))
	}
	changed := s.get(t, path, "If-None-Match", `"stale"`)
	require.Equal(t, 200, changed.Status)
	require.Equal(t, plain.Body, changed.Body)

	other := s.get(t, "/v1/latest?window=7d&limit=24")
	require.NotEqual(t, etag, other.Header.Get("ETag"))
}
