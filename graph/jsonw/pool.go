package jsonw

import "sync"

// Pooled buffers. A /v1 route's operation writes its whole data into one
// buffer that the facade copies into its envelope and then drops: a
// brief of 25 organizations is half a megabyte, and growing a fresh buffer
// to that size by doubling allocated about twice the body per request
// (tests/bench/NOTES.md). The facade hands the buffer back with Release
// once it has copied it, so the next operation starts at the size the
// last ones needed.
const (
	// minBuffer is the capacity of a new buffer: a page of full events
	// is tens of kilobytes.
	minBuffer = 16 << 10
	// MaxPooled is the largest capacity Release keeps: a rare huge
	// response is left to the collector instead of holding its memory
	// for the requests after it.
	MaxPooled = 1 << 20
)

var buffers = sync.Pool{New: func() any { b := make([]byte, 0, minBuffer); return &b }}

// Buffer returns an empty buffer from the pool, to be given back with
// Release when nothing refers to its bytes any more.
func Buffer() []byte { return (*buffers.Get().(*[]byte))[:0] }

// Release gives b back to the pool (when its capacity is at most
// MaxPooled). The caller must not use b, or any slice of it, afterwards.
func Release(b []byte) {
	if cap(b) == 0 || cap(b) > MaxPooled {
		return
	}
	b = b[:0]
	buffers.Put(&b)
}
