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

// Pooled marks. The facade's writer records a mark for every member its
// envelope reads (hundreds for a page of full events), and growing a fresh
// list to that length by doubling allocated about twice the list per
// request; like the buffer, the list goes back to the pool once the body
// is written.
const (
	// minMarks is the length a new list has room for.
	minMarks = 256
	// MaxPooledMarks is the largest capacity ReleaseMarks keeps.
	MaxPooledMarks = 1 << 14
)

var markLists = sync.Pool{New: func() any { m := make([]Mark, 0, minMarks); return &m }}

// Marks returns an empty list of marks from the pool, to be given back
// with ReleaseMarks when nothing refers to it any more.
func Marks() []Mark { return (*markLists.Get().(*[]Mark))[:0] }

// ReleaseMarks gives m back to the pool (when its capacity is at most
// MaxPooledMarks), its paths cleared. The caller must not use m, or any
// slice of it, afterwards.
func ReleaseMarks(m []Mark) {
	if cap(m) == 0 || cap(m) > MaxPooledMarks {
		return
	}
	clear(m)
	m = m[:0]
	markLists.Put(&m)
}
