// Package playground serves the GraphQL playground at /playground: GraphiQL
// built from its npm package (playground/web, pinned by package-lock.json)
// into static assets under dist/, which are committed and embedded in the
// binary, so building the service needs no Node and the page loads nothing
// from the internet. Rebuild the assets with `make playground`.
package playground

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed all:dist
var dist embed.FS

// Prefix is the path the playground is served under.
const Prefix = "/playground"

// contentSecurityPolicy keeps the page on its own origin: scripts, styles,
// fonts, workers and fetches may only come from this server (fonts and small
// images also as data: URIs inlined by the build).
const contentSecurityPolicy = "default-src 'self'; " +
	"script-src 'self'; " +
	"worker-src 'self' blob:; " +
	"style-src 'self' 'unsafe-inline'; " +
	"font-src 'self' data:; " +
	"img-src 'self' data:; " +
	"connect-src 'self'; " +
	"object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

// Assets returns the built static assets, rooted at dist/.
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded at compile time; fs.Sub cannot fail on it.
	}
	return sub
}

// Handler serves the playground. Mount it on both "GET /playground" and
// "GET /playground/". The page itself needs no API key; the queries it sends
// to /graphql carry the key entered on the page.
func Handler() http.Handler {
	assets := Assets()
	index, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		panic(err) // a build without dist/index.html is broken; fail at start.
	}
	files := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
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
		if info, err := fs.Stat(assets, name); err != nil || info.IsDir() {
			h.Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"not found"}`)) //nolint:errcheck
			return
		}
		if strings.HasPrefix(name, "assets/") {
			// Asset names carry a content hash: cache them for good.
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		u := *r.URL
		u.Path, u.RawPath = "/"+name, ""
		r2 := *r
		r2.URL = &u
		files.ServeHTTP(w, &r2)
	})
}
