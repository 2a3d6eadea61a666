package main

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Garbage-collector defaults of `serve`, applied only when the environment
// leaves them unset (GOGC and GOMEMLIMIT keep their meaning).
//
// Go's default GOGC of 100 collects whenever the heap doubles its live
// size. The service's live heap is small (about 20 MB) while a computed
// /v1 page allocates around a megabyte, so at 100 the collector ran every
// few dozen requests and took about a quarter of the server's CPU. At 400 a
// computed /v1/latest costs about 20% less CPU (tests/bench/NOTES.md) for a
// peak RSS of about 110 MB at 32 concurrent requests (governGC lowers it
// when the process allocates slowly, e.g. while it holds live streams).
//
// The soft memory limit makes the collector work harder instead of letting
// concurrent large responses grow the heap to five times its live size: at
// 32 concurrent batch briefs (0.5 MB each, ~1.2 MB allocated per request)
// the live heap is ~35 MB and the heap grew to ~180 MB under GOGC 400. At
// 96 MiB the process's memory peaks near the limit (~135 MB RSS with the
// binary) and the collector takes ~2.8% of the CPU instead of ~1.3%
// (in process, GOGC 400, tests/bench/NOTES.md). A process whose live heap
// nears the limit (thousands of open streams) just collects more often;
// set GOMEMLIMIT higher for it.
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 96 << 20
)

// tuneGC applies the collector defaults that getenv leaves unset. It
// reports whether it set GOGC (the collector is then the service's to
// govern, see governGC).
func tuneGC(getenv func(string) string) (ownGCPercent bool) {
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
		return true
	}
	return false
}

// gcPeriod is how often, at most, the collector should need to run while
// the service owns GOGC. GOGC sets the collector's headroom (the garbage it
// lets pile up between collections) in proportion to the live heap, stacks
// and globals; the cost of a small headroom is collections, which matter
// only when the process allocates fast. So governGC sizes the headroom to
// what the process allocates in gcPeriod, between GOGC 100 and 400:
// serving computed requests (hundreds of MB/s, a ~20 MB live heap) keeps
// 400, a collection every ~250 ms, about 20% less CPU than GOGC 100
// (tests/bench/NOTES.md); pushing events to live streams allocates little
// while each open stream holds its connection's state in the live heap, so
// GOGC falls toward 100 and a thousand streams do not grow the heap by four
// times their state again in garbage.
const gcPeriod = 250 * time.Millisecond

// gcPercentFor is the GOGC that gives scannable bytes (live heap, stacks,
// globals) a headroom of allocRate bytes/s over gcPeriod, between 100 and
// defaultGCPercent.
func gcPercentFor(scannable uint64, allocRate float64) int {
	if scannable == 0 {
		return defaultGCPercent
	}
	p := allocRate * gcPeriod.Seconds() * 100 / float64(scannable)
	return int(min(max(p, 100), defaultGCPercent))
}

// governGC re-reads the allocation rate and the collector's view of live
// memory every interval and sets GOGC to gcPercentFor them, until ctx is
// done.
func governGC(ctx context.Context, interval time.Duration) {
	samples := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
	}
	read := func() (allocs, scannable uint64) {
		metrics.Read(samples)
		for i, s := range samples {
			if s.Value.Kind() != metrics.KindUint64 {
				continue
			}
			if i == 0 {
				allocs = s.Value.Uint64()
			} else {
				scannable += s.Value.Uint64()
			}
		}
		return allocs, scannable
	}
	current := defaultGCPercent
	lastAllocs, _ := read()
	last := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		allocs, scannable := read()
		now := time.Now()
		rate := float64(allocs-lastAllocs) / now.Sub(last).Seconds()
		lastAllocs, last = allocs, now
		if p := gcPercentFor(scannable, rate); p != current {
			current = p
			debug.SetGCPercent(p)
		}
	}
}
