// Package held holds a handler's response instead of sending it, for a
// caller that decides what goes out once the handler is done: the access
// layer settles a payment first, the app rewrites ServeMux's plain-text
// errors. The zero Response is ready to use.
package held

import (
	"bytes"
	"net/http"
)

// Response is an http.ResponseWriter that keeps what it is given.
type Response struct {
	header http.Header
	// Status is the first status written (200 once the body is written
	// without one); 0 while nothing is.
	Status int
	// Body is the body written.
	Body bytes.Buffer
}

// Header implements http.ResponseWriter.
func (r *Response) Header() http.Header {
	if r.header == nil {
		r.header = http.Header{}
	}
	return r.header
}

// WriteHeader implements http.ResponseWriter: the first status stays.
func (r *Response) WriteHeader(status int) {
	if r.Status == 0 {
		r.Status = status
	}
}

// Write implements http.ResponseWriter.
func (r *Response) Write(p []byte) (int, error) {
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	return r.Body.Write(p)
}

// FlushTo sends the held response on w: its headers over w's (the ones
// only w has stay), its status (200 when none was written) and its body.
func (r *Response) FlushTo(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range r.header {
		h[k] = v
	}
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(r.Body.Bytes()) //nolint:errcheck // the client went away: nothing to tell it
}
