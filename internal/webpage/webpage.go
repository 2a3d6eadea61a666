// Package webpage serves a browser page built into the binary (the GraphQL
// playground, the API reference): its index and files from an embedded
// dist/ folder, kept on the service's own origin by one set of headers.
package webpage

import (
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// OwnOrigin is the start of a page's Content-Security-Policy: scripts,
// styles, fonts, workers and requests may only come from or go to this
// server (fonts and small images also as data: URIs inlined by the build,
// inline styles as the renderers write them). A page appends its
// form-action and frame-ancestors directives.
const OwnOrigin = "default-src 'self'; " +
	"script-src 'self'; " +
	"worker-src 'self' blob:; " +
	"style-src 'self' 'unsafe-inline'; " +
	"font-src 'self' data:; " +
	"img-src 'self' data:; " +
	"connect-src 'self'; " +
	"object-src 'none'; base-uri 'self'; "

// Dist returns the files of an embedded dist/ folder, rooted at dist/.
func Dist(embedded fs.FS) fs.FS {
	sub, err := fs.Sub(embedded, "dist")
	if err != nil {
		panic(err) // dist is embedded at compile time; fs.Sub cannot fail on it.
	}
	return sub
}

// Handler serves the page of assets under prefix: index.html at prefix
// and prefix/, any other file through serve, which says whether it served
// one (a JSON 404 when not). Every answer carries csp, nosniff and
// no-referrer.
func Handler(assets fs.FS, prefix, csp string, serve func(w http.ResponseWriter, r *http.Request, name string) bool) http.Handler {
	index, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		panic(err) // a build without dist/index.html is broken; fail at start.
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")

		name := strings.TrimPrefix(r.URL.Path, prefix)
		name = strings.TrimPrefix(path.Clean("/"+name), "/")
		if name == "" || name == "index.html" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			if r.Method != http.MethodHead {
				w.Write(index) //nolint:errcheck
			}
			return
		}
		if !serve(w, r, name) {
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"not found"}`)) //nolint:errcheck
		}
	})
}
