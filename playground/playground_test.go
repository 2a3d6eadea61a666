package playground

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func serve(t *testing.T, target string) *http.Response {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /playground", Handler())
	mux.Handle("GET /playground/", Handler())
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Result()
}

func TestIndex(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"/playground", "/playground/", "/playground/index.html"} {
		resp := serve(t, target)
		require.Equal(t, http.StatusOK, resp.StatusCode, target)
		require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "connect-src 'self'")
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Contains(t, string(body), `<div id="root">`)
	}
}

// TestAssetsAreLocal checks that the page references only its own embedded
// assets, each of which is served with a long cache lifetime.
func TestAssetsAreLocal(t *testing.T) {
	t.Parallel()
	index, err := fs.ReadFile(Assets(), "index.html")
	require.NoError(t, err)
	// Links to other pages of this server (the API reference) are not assets.
	for _, a := range regexp.MustCompile(`<a [^>]*href="([^"]+)"`).FindAllStringSubmatch(string(index), -1) {
		require.True(t, strings.HasPrefix(a[1], "/") && !strings.HasPrefix(a[1], "//"), "index.html links to %q, off this server", a[1])
	}
	refs := regexp.MustCompile(`<(?:script|link)[^>]*(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(index), -1)
	require.NotEmpty(t, refs)
	for _, ref := range refs {
		require.True(t, strings.HasPrefix(ref[1], "/playground/assets/"), "index.html references %q", ref[1])
		resp := serve(t, ref[1])
		require.Equal(t, http.StatusOK, resp.StatusCode, ref[1])
		require.Equal(t, "public, max-age=31536000, immutable", resp.Header.Get("Cache-Control"))
	}
}

// TestNoRemoteLoads scans the bundle for code or styles that would load a
// script, stylesheet, font or worker from another origin.
func TestNoRemoteLoads(t *testing.T) {
	t.Parallel()
	remote := regexp.MustCompile(`(?i)(importScripts\(\s*["'` + "`" + `]https?:|@import\s+(url\()?["']?https?:|url\(["']?https?:|<script[^>]+src=["']https?:|<link[^>]+href=["']https?:|\bimport\(\s*["']https?:|from\s*["']https?:)`)
	for _, bad := range []string{
		`importScripts("https://cdn.example/worker.js")`,
		`@import url("https://fonts.example/css")`,
		`src:url(https://fonts.example/a.woff2)`,
		`<script src="https://cdn.example/graphiql.js">`,
		`<link rel="stylesheet" href="https://cdn.example/graphiql.css">`,
		`import("https://esm.example/react")`,
	} {
		require.NotNil(t, remote.FindString(bad), "pattern misses %s", bad)
	}
	var scanned int
	err := fs.WalkDir(Assets(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(name, ".js") && !strings.HasSuffix(name, ".css") && !strings.HasSuffix(name, ".html") {
			return nil
		}
		data, err := fs.ReadFile(Assets(), name)
		require.NoError(t, err)
		scanned++
		require.Nil(t, remote.Find(data), "%s loads %q from another origin", name, remote.Find(data))
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, scanned, 2)
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"/playground/nope.js", "/playground/assets", "/playground/assets/"} {
		resp := serve(t, target)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, target)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	}
}
