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
	"strings"

	"github.com/cryptointel/cryptointel/internal/webpage"
)

//go:embed all:dist
var dist embed.FS

// Prefix is the path the reference is served under.
const Prefix = "/docs"

// ContentSecurityPolicy keeps the page on its own origin: its scripts,
// styles, fonts and requests (the document and "Test Request") may only
// come from or go to this server; inline styles are the renderer's.
const ContentSecurityPolicy = webpage.OwnOrigin + "form-action 'self'; frame-ancestors 'none'"

// Assets returns the page and its scripts, rooted at dist/.
func Assets() fs.FS { return webpage.Dist(dist) }

// Handler serves the reference. Mount it on both "GET /docs" and
// "GET /docs/". The page needs no API key; "Test Request" sends the key
// entered on the page.
func Handler() http.Handler {
	assets := Assets()
	return webpage.Handler(assets, Prefix, ContentSecurityPolicy, func(w http.ResponseWriter, r *http.Request, name string) bool {
		b, err := fs.ReadFile(assets, name)
		if err != nil || !strings.HasSuffix(name, ".js") {
			return false
		}
		h := w.Header()
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodHead {
			w.Write(b) //nolint:errcheck
		}
		return true
	})
}
