package live

import (
	"net/http"
	"time"
)

// Writer is an http.ResponseWriter for a streamed response whose every
// write and flush must finish within a timeout: a client that stops reading
// for longer is disconnected (the write fails) instead of holding the
// handler and its buffers.
type Writer struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// NewWriter returns w with writes and flushes bounded by timeout.
func NewWriter(w http.ResponseWriter, timeout time.Duration) *Writer {
	return &Writer{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

// Write implements http.ResponseWriter.
func (w *Writer) Write(b []byte) (int, error) {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) //nolint:errcheck // unsupported: unbounded
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (w *Writer) Flush() {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) //nolint:errcheck
	w.rc.Flush()                                     //nolint:errcheck
}

// FlushError flushes and reports whether the client is still there.
func (w *Writer) FlushError() error {
	w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) //nolint:errcheck
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }
