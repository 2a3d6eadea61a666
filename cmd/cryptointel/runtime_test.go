package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// Not parallel: the collector's settings are process-wide.
func TestTuneGC(t *testing.T) {
	restore := func(percent int, limit int64) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
	defer restore(debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64))

	tuneGC(func(string) string { return "" })
	require.Equal(t, defaultGCPercent, debug.SetGCPercent(100))
	require.EqualValues(t, defaultMemoryLimit, debug.SetMemoryLimit(math.MaxInt64))

	// Set in the environment: the runtime applied them already; tuneGC
	// leaves them alone.
	env := map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}
	tuneGC(func(k string) string { return env[k] })
	require.Equal(t, 100, debug.SetGCPercent(100))
	require.EqualValues(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64))
}

// The collector's headroom follows the allocation rate: GOGC 400 while
// computed requests allocate hundreds of MB/s over a small live heap, down
// to 100 (never below) when a large live heap of open streams allocates
// little.
func TestGCPercentFor(t *testing.T) {
	require.Equal(t, defaultGCPercent, gcPercentFor(0, 0))
	require.Equal(t, defaultGCPercent, gcPercentFor(24<<20, 400<<20), "computed requests keep 400")
	require.Equal(t, 200, gcPercentFor(25<<20, 200<<20))
	require.Equal(t, 100, gcPercentFor(60<<20, 10<<20), "streams: little garbage, a large live heap")
	require.Equal(t, 100, gcPercentFor(24<<20, 0), "idle")
}
