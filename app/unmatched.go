package app

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/internal/held"
	"github.com/cryptointel/cryptointel/observe"
)

// Messages of a request no surface serves: the /v1 router's own.
const (
	msgNotFound         = "Not found"
	msgMethodNotAllowed = "Method not allowed"
)

// unmatchedJSON serves mux, answering the requests none of its patterns
// matches — a path outside every surface (GET /v2/latest, /latest without
// its /v1), or a method a path does not take (POST /healthz, PUT
// /openapi.json) — with the service's JSON error body (404 not_found; 405
// method_not_allowed with the mux's Allow header), as the /v1 routes
// answer theirs, where ServeMux writes a line of plain text. A matched
// request goes to mux as it is; only an unmatched one is held (a few
// bytes) to be rewritten.
func unmatchedJSON(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		var res held.Response
		mux.ServeHTTP(&res, r)
		plain := strings.HasPrefix(res.Header().Get("Content-Type"), "text/plain")
		switch {
		case plain && res.Status == http.StatusNotFound:
			writeMuxError(w, http.StatusNotFound, cryptointel.ENOTFOUND, msgNotFound)
		case plain && res.Status == http.StatusMethodNotAllowed:
			if allow := res.Header().Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
			}
			writeMuxError(w, http.StatusMethodNotAllowed, cryptointel.EMETHOD, msgMethodNotAllowed)
		default:
			res.FlushTo(w)
		}
	})
}

// writeMuxError writes the error body of code with msg.
func writeMuxError(w http.ResponseWriter, status int, code, msg string) {
	b, _ := json.Marshal(httperr.NewBody(code, msg, w.Header().Get(observe.RequestIDHeader))) //nolint:errchkjson // strings always encode
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) //nolint:errcheck // the client went away
}
