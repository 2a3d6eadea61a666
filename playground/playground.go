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
	"strings"

	"github.com/cryptointel/cryptointel/internal/webpage"
)

//go:embed all:dist
var dist embed.FS

// Prefix is the path the playground is served under.
const Prefix = "/playground"

// contentSecurityPolicy keeps the page on its own origin: scripts, styles,
// fonts, workers and fetches may only come from this server (fonts and small
// images also as data: URIs inlined by the build).
const contentSecurityPolicy = webpage.OwnOrigin + "frame-ancestors 'none'"

// Assets returns the built static assets, rooted at dist/.
func Assets() fs.FS { return webpage.Dist(dist) }

// Handler serves the playground. Mount it on both "GET /playground" and
// "GET /playground/". The page itself needs no API key; the queries it sends
// to /graphql carry the key entered on the page.
func Handler() http.Handler {
	assets := Assets()
	files := http.FileServerFS(assets)
	return webpage.Handler(assets, Prefix, contentSecurityPolicy, func(w http.ResponseWriter, r *http.Request, name string) bool {
		if info, err := fs.Stat(assets, name); err != nil || info.IsDir() {
			return false
		}
		if strings.HasPrefix(name, "assets/") {
			// Asset names carry a content hash: cache them for good.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		u := *r.URL
		u.Path, u.RawPath = "/"+name, ""
		r2 := *r
		r2.URL = &u
		files.ServeHTTP(w, &r2)
		return true
	})
}
