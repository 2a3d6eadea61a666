package main

import (
	"runtime/debug"
)

// Garbage-collector defaults of `serve`, applied only when the environment
// leaves them unset (GOGC and GOMEMLIMIT keep their meaning).
//
// Go's default GOGC of 100 collects whenever the heap doubles its live
// size. The service's live heap is small (about 20 MB) while a computed
// /v1 page allocates around a megabyte, so at 100 the collector ran every
// few dozen requests and took about a quarter of the server's CPU. At 400 a
// computed /v1/latest costs about 20% less CPU (tests/bench/NOTES.md) for a
// peak RSS of about 110 MB at 32 concurrent requests; the soft memory limit
// makes the collector work harder instead of letting a burst of large
// responses (batch briefs) grow the heap without bound.
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 512 << 20
)

// tuneGC applies the collector defaults that getenv leaves unset.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}
