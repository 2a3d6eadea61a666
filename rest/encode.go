package rest

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
)

// gzipMinSize is the smallest body worth compressing.
const gzipMinSize = 1024

// encodingWriter buffers a response so that, once the handler is done, a
// successful GET gets a strong ETag (and a 304 when If-None-Match matches)
// and a large body is gzipped for a client that accepts it. A handler that
// flushes (streaming) switches the writer to pass-through.
type encodingWriter struct {
	w   http.ResponseWriter
	r   *http.Request
	buf bytes.Buffer
	// shared is the body when it was written whole as the handler's
	// precomputed (cached or just computed, immutable) body: it is kept by
	// reference rather than copied into buf.
	shared      []byte
	status      int
	passthrough bool
	state       *frameState
}

func newEncodingWriter(w http.ResponseWriter, r *http.Request) *encodingWriter {
	return &encodingWriter{w: w, r: r}
}

// Header returns the underlying header map.
func (e *encodingWriter) Header() http.Header { return e.w.Header() }

// WriteHeader records the status.
func (e *encodingWriter) WriteHeader(status int) {
	if e.passthrough {
		return
	}
	if e.status == 0 {
		e.status = status
	}
}

// Write buffers b.
func (e *encodingWriter) Write(b []byte) (int, error) {
	if e.passthrough {
		return e.w.Write(b)
	}
	if e.status == 0 {
		e.status = http.StatusOK
	}
	if e.buf.Len() == 0 && e.shared == nil && e.isPrecomputed(b) {
		e.shared = b
		return len(b), nil
	}
	if e.shared != nil {
		e.buf.Write(e.shared) //nolint:errcheck
		e.shared = nil
	}
	return e.buf.Write(b)
}

// isPrecomputed reports whether b is the very body the handler computed
// ahead (same backing array; frameState.tagged): such a body is never
// modified, so it may be kept past Write.
func (e *encodingWriter) isPrecomputed(b []byte) bool {
	s := e.state
	return s != nil && len(b) > 0 && len(s.tagged) == len(b) && &s.tagged[0] == &b[0]
}

// body is what was written.
func (e *encodingWriter) body() []byte {
	if e.shared != nil {
		return e.shared
	}
	return e.buf.Bytes()
}

// Flush switches to pass-through: what is buffered is sent as is and the
// rest streams.
func (e *encodingWriter) Flush() {
	if !e.passthrough {
		e.passthrough = true
		if e.status == 0 {
			e.status = http.StatusOK
		}
		e.w.WriteHeader(e.status)
		e.w.Write(e.body()) //nolint:errcheck
		e.buf.Reset()
		e.shared = nil
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (e *encodingWriter) Unwrap() http.ResponseWriter { return e.w }

// reset discards what was buffered (status and body) so another response
// can be written instead.
func (e *encodingWriter) reset() {
	e.buf.Reset()
	e.shared = nil
	e.status = 0
}

// finish writes the buffered response.
func (e *encodingWriter) finish() {
	if e.passthrough {
		return
	}
	status := e.status
	if status == 0 {
		status = http.StatusOK
	}
	h := e.w.Header()
	body := e.body()
	h.Add("Vary", "Accept-Encoding")
	get := e.r.Method == http.MethodGet || e.r.Method == http.MethodHead
	if status == http.StatusOK && get && h.Get("ETag") == "" && h.Get("Content-Encoding") == "" {
		tag := e.bodyTag(body)
		etag := `"` + tag + `"`
		if etagMatches(e.r.Header.Get("If-None-Match"), tag) {
			if e.state != nil && e.state.notModified != nil {
				e.state.notModified(h)
			}
			h.Set("ETag", etag)
			h.Del("Content-Length")
			h.Del("Content-Type")
			e.w.WriteHeader(http.StatusNotModified)
			return
		}
		if e.acceptsGzip() && len(body) >= gzipMinSize {
			// A gzipped body is another representation: its strong ETag
			// differs, and If-None-Match accepts either.
			etag = `"` + tag + `-gzip"`
		}
		h.Set("ETag", etag)
	}
	if e.acceptsGzip() && len(body) >= gzipMinSize && h.Get("Content-Encoding") == "" {
		var zbuf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&zbuf, gzip.BestSpeed)
		zw.Write(body) //nolint:errcheck
		zw.Close()     //nolint:errcheck
		body = zbuf.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	e.w.WriteHeader(status)
	if e.r.Method != http.MethodHead {
		e.w.Write(body) //nolint:errcheck
	}
}

// bodyTag returns the ETag value of body: the one the handler computed
// ahead for exactly these bytes, or a fresh hash.
func (e *encodingWriter) bodyTag(body []byte) string {
	if s := e.state; s != nil && s.tag != "" && len(s.tagged) == len(body) &&
		(len(body) == 0 || &s.tagged[0] == &body[0] || bytes.Equal(s.tagged, body)) {
		return s.tag
	}
	return bodyTag(body)
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func (e *encodingWriter) acceptsGzip() bool {
	for _, part := range strings.Split(e.r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// etagMatches reports whether an If-None-Match header matches the tag (in
// either representation; weak comparison, as RFC 9110 asks for
// If-None-Match).
func etagMatches(header, tag string) bool {
	if header == "" {
		return false
	}
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" {
			return true
		}
		part = strings.TrimPrefix(part, "W/")
		part = strings.Trim(part, `"`)
		if part == tag || part == tag+"-gzip" {
			return true
		}
	}
	return false
}
