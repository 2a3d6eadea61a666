package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// thirdMeans returns the mean of f over the probes of the middle and of
// the last third of the run.
func thirdMeans(probes []soakProbe, d time.Duration, f func(soakProbe) float64) (mid, last float64, nMid, nLast int) {
	for _, p := range probes {
		switch {
		case p.t >= d/3 && p.t < 2*d/3:
			mid += f(p)
			nMid++
		case p.t >= 2*d/3:
			last += f(p)
			nLast++
		}
	}
	if nMid > 0 {
		mid /= float64(nMid)
	}
	if nLast > 0 {
		last /= float64(nLast)
	}
	return mid, last, nMid, nLast
}

// thirdFloors returns the least value of f over the probes of the middle
// and of the last third of the run.
func thirdFloors(probes []soakProbe, d time.Duration, f func(soakProbe) float64) (mid, last float64) {
	mid, last = math.Inf(1), math.Inf(1)
	for _, p := range probes {
		switch {
		case p.t >= d/3 && p.t < 2*d/3:
			mid = math.Min(mid, f(p))
		case p.t >= 2*d/3:
			last = math.Min(last, f(p))
		}
	}
	return mid, last
}

// slopePerMin is the least-squares slope of f over the probes after the
// first third, per minute.
func slopePerMin(probes []soakProbe, d time.Duration, f func(soakProbe) float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for _, p := range probes {
		if p.t < d/3 {
			continue
		}
		x, y := p.t.Minutes(), f(p)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	den := n*sxx - sx*sx
	if n < 2 || den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// check is one line of the verdict.
type check struct {
	name, measured, limit string
	ok                    bool
}

// memCheck judges a memory series: growth of the last third's mean over
// the middle third's.
func memCheck(name string, probes []soakProbe, d time.Duration, f func(soakProbe) float64) check {
	mid, last, nMid, nLast := thirdMeans(probes, d, f)
	growth := (last - mid) / (1 << 20)
	pct := 0.0
	if mid > 0 {
		pct = 100 * (last - mid) / mid
	}
	slope := slopePerMin(probes, d, f) / (1 << 20)
	ok := nMid > 0 && nLast > 0 && (growth <= memNoiseMB || (growth <= memGrowthMB && pct <= memGrowthPct))
	return check{
		name: name,
		measured: fmt.Sprintf("%.1f → %.1f MB (%+.1f MB, %+.1f%%; trend after warm-up %+.2f MB/min; %d and %d probes)",
			mid/(1<<20), last/(1<<20), growth, pct, slope, nMid, nLast),
		limit: fmt.Sprintf("growth ≤ %.0f MB, or ≤ %.0f MB and ≤ %.0f%%", memNoiseMB, memGrowthMB, memGrowthPct),
		ok:    ok,
	}
}

// renderSoakReport writes the markdown report and returns it with the
// verdict.
func renderSoakReport(r *soakResult) (string, bool) {
	var b strings.Builder
	m := r.machine
	o := r.opts
	s := o.soak
	c := r.counts

	// Totals.
	var all []time.Duration
	reqs, errs := 0, 0
	for _, rt := range c.routes {
		all = append(all, rt.lat...)
		reqs += len(rt.lat)
		errs += rt.errors
	}
	slices.Sort(all)
	errs += c.totalWriteErrors

	// Verdict.
	var checks []check
	checks = append(checks, check{
		name:     "no failed request (non-2xx or transport error), reads and writes",
		measured: fmt.Sprintf("%d of %d reads, %d of %d writes", errs-c.totalWriteErrors, reqs, c.totalWriteErrors, c.totalWrites),
		limit:    "0", ok: errs == 0,
	})
	// Like memory, the schedule is judged after the warm-up third: the
	// first seconds on a cold cache may fall behind.
	var wMissed, wLate, wSched int
	for _, row := range r.rows {
		if row.start >= r.duration/3 {
			wMissed, wLate, wSched = wMissed+row.missed, wLate+row.late, wSched+row.scheduled
		}
	}
	offPct := 100 * float64(wMissed+wLate) / float64(max(1, wSched))
	checks = append(checks, check{
		name: "steady state: requests sent on schedule after warm-up",
		measured: fmt.Sprintf("%d missed, %d late of %d scheduled (%.2f%%); whole run %d missed, %d late of %d",
			wMissed, wLate, wSched, offPct, c.totalMissed, c.totalLate, c.scheduled),
		limit: fmt.Sprintf("≤ %.0f%%", maxOffSchedulePct), ok: wSched > 0 && offPct <= maxOffSchedulePct,
	})
	if s.smoke {
		// A smoke run shares the machine with whatever else runs (a test
		// suite): whether the harness kept its schedule says nothing then.
		checks[len(checks)-1].limit += " (not judged: -smoke)"
		checks[len(checks)-1].ok = wSched > 0
	}
	for _, mc := range []check{
		memCheck("server RSS flat", r.probes, r.duration, func(p soakProbe) float64 { return p.rss }),
		memCheck("Go heap in use flat", r.probes, r.duration, func(p soakProbe) float64 { return p.heap }),
		memCheck("PostgreSQL backends' private memory flat", r.probes, r.duration, func(p soakProbe) float64 { return p.pgMem }),
	} {
		if s.smoke {
			mc.limit, mc.ok = "not judged (-smoke: a trend needs minutes)", true
		}
		checks = append(checks, mc)
	}
	checks = append(checks, goroutineCheck(r.probes, r.duration, r.settled))
	var df deliveryFigures
	if r.recv != nil {
		df = r.recv.figures()
		checks = append(checks, check{
			name: "webhook: every ingested event delivered once signed",
			measured: fmt.Sprintf("%d of %d delivered (median %s, max %s after the ingest was sent); %d duplicate, %d badly signed, %d unexpected",
				df.delivered, df.ingested, ms(df.medianLag), ms(df.maxLag), df.dups, df.badSig, df.unknown),
			limit: fmt.Sprintf("all, within %s of the load's end", s.grace), ok: r.webhookOK && df.ingested > 0,
		})
	}
	checks = append(checks, check{
		name:     "server log: no ERROR line during the run",
		measured: fmt.Sprintf("%d ERROR, %d WARN", r.logErrN, r.logWarnN),
		limit:    "0 ERROR", ok: r.logErrN == 0,
	})
	pass := true
	for _, ch := range checks {
		pass = pass && ch.ok
	}

	fmt.Fprintf(&b, "# Soak results\n\n")
	fmt.Fprintf(&b, "Written by `make soak` (tests/bench, `-soak`); do not edit by hand, run it again.\n\n")
	m.writeHead(&b, "")
	fmt.Fprintf(&b, "- Load average (1/5/15 min) before the run: %s; after: %s", m.loadBefore, m.loadAfter)
	if loadHigh(m.loadBefore) {
		fmt.Fprintf(&b, " — **the machine was busy with other work before the run**")
	}
	fmt.Fprintf(&b, "\n")
	if sd := r.seed; sd != nil {
		sd.writeLine(&b, o.events, 2)
	}
	var mixParts []string
	total := 0
	for _, e := range r.mix {
		total += e.weight
	}
	for _, e := range r.mix {
		mixParts = append(mixParts, fmt.Sprintf("%s %.0f%%", e.sc.name, 100*float64(e.weight)/float64(total)))
	}
	fmt.Fprintf(&b, "- Load: open loop at %.0f req/s for %s (request i is sent at start + i/rate whether or not earlier ones have answered; at most %d in flight, a request due while all are busy is counted as missed; one sent more than %s after its time as late); keep-alive; %s; server pool %d connections; whole run %s\n",
		s.rate, r.duration, s.inflight, s.lateAfter, map[bool]string{false: "plain JSON", true: "Accept-Encoding: gzip"}[o.gzip], o.dbMaxConns, r.elapsed.Round(time.Second))
	fmt.Fprintf(&b, "- Mix (interleaved evenly): %s\n", strings.Join(mixParts, ", "))
	if r.recv != nil {
		fmt.Fprintf(&b, "- Writer: every %s, `POST /admin/ingest` of %d new scored events (ids above every stored one, evidence timestamped now, so they head the feeds); one webhook (`radar`, `signal`), registered through `POST /v1/webhooks` and deleted at the end, delivers them over HTTPS to a receiver in the harness that checks `X-Service-Signature`\n",
			s.writeEvery, s.writeEvents)
	}
	if len(r.userEnv) > 0 {
		fmt.Fprintf(&b, "- Server environment added for this run: `%s`\n", strings.Join(r.userEnv, " "))
	}
	fmt.Fprintf(&b, "- Access: %d enterprise keys, each used at most %d times per rate window: every request is authenticated, metered and charged, none refused for rate\n", o.keys, perKeyBudget)
	fmt.Fprintf(&b, "- Load generator CPU: %.1f s over the run (%.0f%% of one core)\n", r.genCPU.Seconds(), 100*r.genCPU.Seconds()/r.duration.Seconds())
	fmt.Fprintf(&b, "\n")

	fmt.Fprintf(&b, "## Verdict: %s\n\n", map[bool]string{true: "PASS", false: "**FAIL**"}[pass])
	fmt.Fprintf(&b, "| check | measured | limit | ok |\n|---|---|---|---|\n")
	for _, ch := range checks {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", ch.name, ch.measured, ch.limit, yes(ch.ok))
	}
	fmt.Fprintf(&b, "\n")
	var steady []time.Duration
	for _, row := range r.rows {
		if row.start >= r.duration/3 {
			steady = append(steady, row.lat...)
		}
	}
	slices.Sort(steady)
	first, last := firstRow(r.rows), lastRow(r.rows)
	fmt.Fprintf(&b, "Summary: %s at %.0f req/s: %d requests (%.1f req/s answered), %d errors; p50 %s and p99 %s after warm-up (%s and %s over the whole run); first row → last row: server RSS %.0f → %.0f MB (peak %.0f MB), Go heap %.1f → %.1f MB, goroutines %.0f → %.0f, PostgreSQL backends %.0f → %.0f MB.\n\n",
		r.duration, s.rate, reqs, float64(reqs)/r.duration.Seconds(), errs, ms(pctOf(steady, 0.5)), ms(pctOf(steady, 0.99)),
		ms(pctOf(all, 0.5)), ms(pctOf(all, 0.99)),
		first.rss/(1<<20), last.rss/(1<<20), float64(r.peakRSS)/(1<<20),
		first.heap/(1<<20), last.heap/(1<<20), first.rawGor, last.rawGor, first.pgMem/(1<<20), last.pgMem/(1<<20))

	fmt.Fprintf(&b, "## Intervals\n\n")
	fmt.Fprintf(&b, "| t | requests | req/s | errors | missed | late | p50 ms | p99 ms | server CPU %% | machine CPU %% | RSS MB | heap MB | goroutines | HTTP conns | PG conns | PG conns MB | River jobs | writes | delivered |\n")
	fmt.Fprintf(&b, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %s | %d | %.1f | %d | %d | %d | %.2f | %.2f | %.0f | %.0f | %.1f | %.1f | %.0f | %d | %.0f | %.0f | %.0f | %d | %d |\n",
			fmtDur(row.end), row.requests, float64(row.requests)/row.span.Seconds(), row.errors+row.writeErrors, row.missed, row.late,
			msf(row.p50), msf(row.p99), row.serverCPU, row.busy, row.rss/(1<<20), row.heap/(1<<20), row.rawGor, row.conns, row.pgConns, row.pgMem/(1<<20), row.jobs, row.writes, row.delivered)
	}
	fmt.Fprintf(&b, "\n")
	fmt.Fprintf(&b, "## Routes (whole run)\n\n| route | share | requests | errors | missed | p50 ms | p99 ms | max ms |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, rt := range c.routes {
		lat := slices.Clone(rt.lat)
		slices.Sort(lat)
		fmt.Fprintf(&b, "| %s | %.0f%% | %d | %d | %d | %.2f | %.2f | %.2f |\n", rt.name, 100*float64(rt.weight)/float64(total), len(lat), rt.errors, rt.missed,
			msf(pctOf(lat, 0.5)), msf(pctOf(lat, 0.99)), msf(pctOf(lat, 1)))
	}
	fmt.Fprintf(&b, "\n")

	fmt.Fprintf(&b, "## How to read it\n\n")
	fmt.Fprintf(&b, "- Each row covers %s. **requests**, **errors** (non-2xx answers and transport errors of reads, plus failed writes), **p50/p99** (send to last body byte, by the client, over the requests answered in the row) are for that row only. **server CPU** is the server process's user+system time in %% of one core (`/proc/<pid>/stat`); **machine CPU** is the whole machine's busy time (`/proc/stat`), PostgreSQL and the harness included — below 100%% the run was not saturated.\n", s.interval)
	fmt.Fprintf(&b, "- **RSS** (`VmRSS` from `/proc/<pid>/status`), **heap** (`go_memstats_heap_inuse_bytes` from the server's `/metrics`) and **goroutines** (`go_goroutines`) are means of the probes taken every %s within the row, as are **PG conns** and **PG conns MB**. **HTTP conns** are the harness's open connections to the server at the row's end (each holds one server goroutine), **PG conns** are the backends on the database (`pg_stat_activity`: the server's pool, its River listener and this harness's statistics connection) and **PG conns MB** their private memory (the sum of their `RssAnon`; shared buffers are not in it), **River jobs** the unfinished jobs (`cryptointel_river_queue_jobs`).\n", s.probe)
	fmt.Fprintf(&b, "- The verdict compares the mean of the probes in the last third of the run with the mean of those in the middle third; the first third is warm-up (pools fill, caches and the heap reach their working size). Memory is flat when it grew by at most %.0f MB, or by at most %.0f MB and %.0f%%: %.0f MB absorbs where the probes fall in the GC sawtooth of a small heap, and the %.0f MB / %.0f%% bound catches a leak of about %.1f KB per request at this rate within the run. The trend is the least-squares slope over the last two thirds, for information. Goroutines are judged by their floor, the least count of each third, without the harness's HTTP connections: a request in flight briefly adds dozens (GraphQL resolves lists concurrently) and the number of keep-alive connections follows the concurrency of the moment, while a leak raises the floor. The last floor also counts the probes taken once the load has ended and its requests have left the server (`cryptointel_http_requests_in_flight` down to the probe's own), so a machine stalled through the last third, which keeps requests in flight in each of its probes, is not read as a leak.\n",
		memNoiseMB, memGrowthMB, memGrowthPct, memNoiseMB, memGrowthMB, memGrowthPct, memGrowthMB*1024/(s.rate*r.duration.Seconds()/3))
	for _, e := range c.errSamples {
		fmt.Fprintf(&b, "- error: `%s`\n", strings.ReplaceAll(e, "`", "'"))
	}
	for _, e := range r.logErrors {
		fmt.Fprintf(&b, "- server log ERROR: `%s`\n", strings.ReplaceAll(e, "`", "'"))
	}
	return b.String(), pass
}

func firstRow(rows []soakRow) soakRow {
	if len(rows) == 0 {
		return soakRow{}
	}
	return rows[0]
}

func lastRow(rows []soakRow) soakRow {
	if len(rows) == 0 {
		return soakRow{}
	}
	return rows[len(rows)-1]
}

// goroutineCheck judges the goroutine floor (HTTP connections excluded)
// of probes over a run of duration d: the last third's floor, or the
// count once the load had ended (settled; < 0: not measured) when it is
// lower, against the middle third's.
func goroutineCheck(probes []soakProbe, d time.Duration, settled float64) check {
	gor := func(p soakProbe) float64 { return p.goroutines }
	gMid, gThird := thirdFloors(probes, d, gor)
	gMeanMid, gMeanLast, _, _ := thirdMeans(probes, d, gor)
	gLimit := math.Max(goroutineGrowth, gMid*goroutineGrowthPct/100)
	// A machine that stalls through the last third keeps requests (and
	// their goroutines) in flight in every one of its probes; a leak keeps
	// its goroutines after the load.
	gLast, after := gThird, "not measured"
	if settled >= 0 {
		gLast = math.Min(gThird, settled)
		after = fmt.Sprintf("%.0f", settled)
	}
	return check{
		name: "goroutines flat (the floor, HTTP connections excluded)",
		measured: fmt.Sprintf("floor %.0f → %.0f (%+.0f; last third %.0f, after the load %s); mean %.1f → %.1f",
			gMid, gLast, gLast-gMid, gThird, after, gMeanMid, gMeanLast),
		limit: fmt.Sprintf("floor growth ≤ %.0f", gLimit), ok: !math.IsInf(gMid, 0) && !math.IsInf(gLast, 0) && gLast-gMid <= gLimit,
	}
}
