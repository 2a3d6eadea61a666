package app

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/observe"
)

// Messages of a request no surface serves: the /v1 router's own.
const (
	msgNotFound         = "Not found"
	msgMethodNotAllowed = "Method not allowed"
)

// unserved is mux's pattern "/": it answers the requests no other pattern
// matches — a path outside every surface (GET /v2/latest, /latest without
// its /v1), or a method a path does not take (POST /healthz, PUT
// /openapi.json) — with the service's JSON error body, as the /v1 routes
// answer theirs, where ServeMux wrote a line of plain text: 405
// method_not_allowed with Allow when the path takes other methods, 404
// not_found otherwise. A request some pattern serves never comes here, so
// it costs them nothing.
func unserved(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Labelled as the mux's own misses were, never by the catch-all.
		observe.SetRoute(r.Context(), observe.RouteUnmatched)
		if allow := allowedMethods(mux, r); allow != "" {
			w.Header().Set("Allow", allow)
			writeMuxError(w, http.StatusMethodNotAllowed, cryptointel.EMETHOD, msgMethodNotAllowed)
			return
		}
		writeMuxError(w, http.StatusNotFound, cryptointel.ENOTFOUND, msgNotFound)
	})
}

// probedMethods are the methods allowedMethods asks a path for, in the
// order Allow lists them.
var probedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods lists the methods of probedMethods for which a pattern
// of mux other than "/" matches r's path, comma-separated; "" for none.
func allowedMethods(mux *http.ServeMux, r *http.Request) string {
	var allow []string
	for _, m := range probedMethods {
		probe := r.WithContext(r.Context()) // a shallow copy
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	return strings.Join(allow, ", ")
}

// writeMuxError writes the error body of code with msg.
func writeMuxError(w http.ResponseWriter, status int, code, msg string) {
	b, _ := json.Marshal(httperr.NewBody(code, msg, w.Header().Get(observe.RequestIDHeader))) //nolint:errchkjson // strings always encode
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) //nolint:errcheck // the client went away
}
