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
