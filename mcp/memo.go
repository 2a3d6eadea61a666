package mcp

import (
	"encoding/json"
	"time"
	"unsafe"
)

// Results reused: when the route of a single-route tool answers from the
// response cache, its body comes with the body's tag (its ETag: length
// and 64-bit hash), and the same tag is the same body. The tool's result
// is a function of that body and the call's arguments, so it is made once
// (the lean pass, the text, the text's JSON escaping) and reused by every
// call with the same arguments that gets the same body: a call then costs
// what its route costs from the cache, plus the protocol. Access stays
// per call: the route meters, gates and charges each one before its body
// (and so its tag) is given. A paid call is never served from the cache
// and never reused; a body computed for its call has no tag.

const (
	// memoEntries bounds the results kept: as many as the response cache
	// keeps bodies (rest.DefaultCacheEntries), so that a call whose route
	// answers from the cache finds its result too. A result holds the
	// body by reference (the structured content, when read in place) and
	// its text, about half the body's size.
	memoEntries = 256
	// memoTTL is how long a result is kept: twice as long as the response
	// cache keeps a body by default (rest.DefaultCacheTTL); a body kept
	// longer gets its result made again now and then.
	memoTTL = 2 * time.Second
)

// memoKey is the key of a tool's result made from the body tagged tag
// with arguments (as the call sent them: the same bytes, the same
// arguments).
func memoKey(tool, tag string, arguments json.RawMessage) string {
	b := make([]byte, 0, len(tool)+len(tag)+len(arguments)+2)
	b = append(append(append(b, tool...), 0), tag...)
	b = append(append(b, 0), arguments...)
	return unsafeString(b)
}

// unsafeString is b as a string without a copy: b must not change after.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
