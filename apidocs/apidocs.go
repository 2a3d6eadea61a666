// Package apidocs serves the API reference at /docs: /openapi.json rendered
// by Scalar's API reference (@scalar/api-reference, pinned by
// apidocs/web/package-lock.json), whose standalone bundle is copied with the
// page into dist/, committed and embedded in the binary, so the page loads
// nothing from the internet. Rebuild dist/ with `make apidocs`.
package apidocs

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed all:dist
var dist embed.FS

// Prefix is the path the reference is served under.
const Prefix = "/docs"

// ContentSecurityPolicy keeps the page on its own origin: its scripts,
// styles, fonts and requests (the document and "Test Request") may only
// come from or go to this server; inline styles are the renderer's.
const ContentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self'; " +
	"worker-src 'self' blob:; " +
	"style-src 'self' 'unsafe-inline'; " +
	"font-src 'self' data:; " +
	"img-src 'self' data:; " +
	"connect-src 'self'; " +
	"object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// Assets returns the page and its scripts, rooted at dist/.
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded at compile time; fs.Sub cannot fail on it.
	}
	return sub
}

// Handler serves the reference. Mount it on both "GET /docs" and
// "GET /docs/". The page needs no API key; "Test Request" sends the key
// entered on the page.
func Handler() http.Handler {
	assets := Assets()
	index, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		panic(err) // a build without dist/index.html is broken; fail at start.
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")

		name := strings.TrimPrefix(r.URL.Path, Prefix)
		name = strings.TrimPrefix(path.Clean("/"+name), "/")
		if name == "" || name == "index.html" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			if r.Method != http.MethodHead {
				w.Write(index) //nolint:errcheck
			}
			return
		}
		b, err := fs.ReadFile(assets, name)
		if err != nil || !strings.HasSuffix(name, ".js") {
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"not found"}`)) //nolint:errcheck
			return
		}
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodHead {
			w.Write(b) //nolint:errcheck
		}
	})
}
