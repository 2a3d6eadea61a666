package app

import (
	"bytes"
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
		held := &heldResponse{header: http.Header{}}
		mux.ServeHTTP(held, r)
		plain := strings.HasPrefix(held.header.Get("Content-Type"), "text/plain")
		switch {
		case plain && held.status == http.StatusNotFound:
			writeMuxError(w, http.StatusNotFound, cryptointel.ENOTFOUND, msgNotFound)
		case plain && held.status == http.StatusMethodNotAllowed:
			if allow := held.header.Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
			}
			writeMuxError(w, http.StatusMethodNotAllowed, cryptointel.EMETHOD, msgMethodNotAllowed)
		default:
			for k, v := range held.header {
				w.Header()[k] = v
			}
			if held.status == 0 {
				held.status = http.StatusOK
			}
			w.WriteHeader(held.status)
			w.Write(held.body.Bytes()) //nolint:errcheck // the client went away
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

// heldResponse holds what ServeMux answers an unmatched request.
type heldResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return h.body.Write(b)
}
