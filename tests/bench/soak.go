package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The soak mode (`bench -soak`, `make soak`): one server, one steady
// open-loop request rate over a mix of the measured routes for a bounded
// time (5 minutes by default), a small writer (new events every 30 s,
// pushed to a webhook the harness receives), and a probe of the server's
// memory and goroutines and of PostgreSQL's backends every few seconds. It
// prints an interval table and a verdict, writes them to
// tests/bench/SOAK.md and fails (exit status 1) unless no request fails,
// requests go out on schedule, the server's RSS and heap, the backends'
// memory and the goroutines stay flat, every ingested event is delivered
// and the server logs no error. The report is written by
// soak_report.go, the writer and its webhook receiver live in
// soak_webhook.go.
//
// The rate is meant to leave the machine idle part of the time: the point
// is a steady state held for minutes, not throughput.

// soakOptions are the settings of the soak mode.
type soakOptions struct {
	enabled     bool
	rate        float64
	inflight    int
	interval    time.Duration
	probe       time.Duration
	writeEvery  time.Duration
	writeEvents int
	mix         string
	out         string
	lateAfter   time.Duration
	grace       time.Duration
	smoke       bool
}

// defaultSoakDuration is the soak's -duration unless one is given.
const defaultSoakDuration = 5 * time.Minute

// soakRoutes names the routes a soak mix may weigh: each key stands for
// exactly one measured scenario, by its full name, so routes added to the
// benchmark later never make a mix ambiguous (TestSoakRoutesAreScenarios
// holds every name to coreScenarios).
var soakRoutes = map[string]string{
	"latest":         "GET /v1/latest?limit=25",
	"latest-recency": "GET /v1/latest?limit=25&sort=recency&window=30d",
	"signal":         "GET /v1/signal/top",
	"search":         "GET /v1/search?q=…",
	"byName":         "GET /v1/entities/byName",
	"relationships":  "GET /v1/entities/{id}/relationships",
	"radar":          "GET /v1/radar/all (cursor walk)",
	"brief":          "GET /v1/brief/batch (25 ids)",
	"graphql":        "POST /graphql (25 latest with owners and evidence)",
	"graphql-3hops":  "POST /graphql (3 hops, 5 per level)",
}

// defaultSoakMix weighs the routes roughly as a client fleet reading feeds
// would: feeds and lookups dominate, the expensive brief batch is rare.
// The weighted mean costs about 5 ms of server CPU and as much of
// PostgreSQL's per request, so the default 100 req/s keeps a 2-core
// machine about half busy.
const defaultSoakMix = "latest=25,signal=10,search=10,byName=15,relationships=12,radar=10,brief=3,graphql=15"

// Verdict tolerances. Memory is compared as the mean of the last third of
// the run against the mean of the middle third (the first third is
// warm-up: pools fill, caches and the heap reach their working size). At
// the defaults, 16 MB between the thirds is a leak of about 1.6 KB per
// request.
const (
	// memGrowthPct and memGrowthMB bound the growth: both must hold.
	memGrowthPct = 10.0
	memGrowthMB  = 16.0
	// memNoiseMB is the growth that always passes: the Go heap is sampled
	// at random points of its GC sawtooth, so means of a small heap move
	// by a few MB between thirds without any leak.
	memNoiseMB = 4.0
	// goroutineGrowth and goroutineGrowthPct bound the growth of the
	// goroutine floor (the least count of a third, HTTP connection
	// goroutines excluded): in-flight requests and River workers come and
	// go; a leak of one per request or per job would be thousands.
	goroutineGrowth    = 10.0
	goroutineGrowthPct = 10.0
	// maxOffSchedulePct bounds the requests missed or sent late: above it
	// the machine could not hold the rate and the run was no steady state.
	maxOffSchedulePct = 1.0
)

// soakFlags registers the soak mode's flags (-duration is shared with the
// benchmark and defaults to defaultSoakDuration in soak mode).
func soakFlags(s *soakOptions) {
	flag.BoolVar(&s.enabled, "soak", false, "soak mode (make soak): a steady open-loop request mix for -duration (default 5m) instead of the benchmark; writes -soak-out and exits 1 unless memory and goroutines stay flat and nothing fails")
	flag.Float64Var(&s.rate, "rate", 100, "soak: requests per second in all (open loop: each is sent at its scheduled time whether or not earlier ones have answered)")
	flag.IntVar(&s.inflight, "inflight", 64, "soak: requests in flight at most; a request due while all are in flight is counted as missed, never queued")
	flag.DurationVar(&s.interval, "interval", 10*time.Second, "soak: length of one row of the interval table")
	flag.DurationVar(&s.probe, "probe", 2*time.Second, "soak: how often the server's RSS, heap and goroutines are read (averaged per row)")
	flag.DurationVar(&s.writeEvery, "write-every", 30*time.Second, "soak: period of the writer, a POST /admin/ingest of -write-events new events that a registered webhook must deliver to the harness; 0 disables it")
	flag.IntVar(&s.writeEvents, "write-events", 3, "soak: new events per write")
	flag.StringVar(&s.mix, "mix", defaultSoakMix, "soak: comma-separated NAME=WEIGHT, NAME one of "+soakRouteNames())
	flag.StringVar(&s.out, "soak-out", "tests/bench/SOAK.md", "soak: where the markdown report is written")
	flag.DurationVar(&s.lateAfter, "late-after", 100*time.Millisecond, "soak: a request sent this long after its scheduled time counts as late")
	flag.BoolVar(&s.smoke, "smoke", false, "soak: a short run that checks the harness end to end (seed, server, mix, writer, report): memory and the schedule are measured and shown but not judged, since a trend needs minutes on a quiet machine; every other check (no failed request, every webhook delivery, no ERROR logged) must pass")
	flag.DurationVar(&s.grace, "delivery-grace", 75*time.Second, "soak: how long to wait after the load for the last webhook deliveries (the poller's period is 60 s)")
}

// flagWasSet reports whether the named flag was given on the command line.
func flagWasSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// errSoakFailed is returned when the run completed but the verdict failed.
var errSoakFailed = errors.New("soak verdict: FAIL (see the report)")

// mixEntry is one route of the mix and its weight.
type mixEntry struct {
	sc     scenario
	weight int
}

// parseMix matches each NAME=WEIGHT to the scenario soakRoutes names.
func parseMix(spec string, scs []scenario) ([]mixEntry, error) {
	byName := make(map[string]scenario, len(scs))
	for _, sc := range scs {
		byName[sc.name] = sc
	}
	var out []mixEntry
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, w, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		weight, err := strconv.Atoi(strings.TrimSpace(w))
		if !ok || err != nil || weight < 0 {
			return nil, fmt.Errorf("invalid -mix entry %q: want NAME=WEIGHT", part)
		}
		route, ok := soakRoutes[name]
		if !ok {
			return nil, fmt.Errorf("-mix entry %q: unknown route %q; one of %s", part, name, soakRouteNames())
		}
		sc, ok := byName[route]
		if !ok {
			return nil, fmt.Errorf("-mix entry %q: the benchmark has no scenario %q", part, route)
		}
		if seen[name] {
			return nil, fmt.Errorf("-mix names %q twice", name)
		}
		seen[name] = true
		if weight > 0 {
			out = append(out, mixEntry{sc: sc, weight: weight})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("-mix selects no route")
	}
	return out, nil
}

// soakRouteNames lists soakRoutes' keys, sorted.
func soakRouteNames() string {
	names := make([]string, 0, len(soakRoutes))
	for name := range soakRoutes {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// mixSchedule interleaves the routes by smooth weighted round robin: one
// cycle holds each route exactly weight times, spread evenly, so every
// interval of the run sees the same mix.
func mixSchedule(mix []mixEntry) []int {
	total := 0
	for _, e := range mix {
		total += e.weight
	}
	cur := make([]int, len(mix))
	out := make([]int, 0, total)
	for range total {
		best := 0
		for i, e := range mix {
			cur[i] += e.weight
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, best)
	}
	return out
}

// connCounter counts the harness's open connections to the server: each
// is one goroutine in the server, which the goroutine check leaves out.
type connCounter struct{ open atomic.Int64 }

type countedConn struct {
	net.Conn
	c    *connCounter
	once sync.Once
}

func (cc *countedConn) Close() error {
	cc.once.Do(func() { cc.c.open.Add(-1) })
	return cc.Conn.Close()
}

// newSoakClient is a keep-alive client with up to conns idle connections
// whose open connections are counted.
func newSoakClient(gzip bool, conns int) (*http.Client, *connCounter) {
	cnt := &connCounter{}
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				cnt.open.Add(1)
				return &countedConn{Conn: c, c: cnt}, nil
			},
			MaxIdleConns:        conns + 8,
			MaxIdleConnsPerHost: conns + 8,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  !gzip,
		},
	}, cnt
}

// routeStats is one route's figures over the whole run.
type routeStats struct {
	name   string
	weight int
	lat    []time.Duration
	errors int
	missed int
}

// soakCounts collects what the workers and the writer measure; the
// sampler takes the current interval's share at each row.
type soakCounts struct {
	mu          sync.Mutex
	lat         []time.Duration // this interval
	errors      int             // this interval
	missed      int             // this interval
	late        int             // this interval
	sched       int             // this interval
	writes      int             // this interval
	writeErrors int             // this interval
	routes      []routeStats
	// totals over the run
	scheduled, totalLate, totalMissed int
	totalWrites, totalWriteErrors     int
	errSamples                        []string
}

func (c *soakCounts) noteError(msg string) {
	if len(c.errSamples) < 8 && !slices.Contains(c.errSamples, msg) {
		c.errSamples = append(c.errSamples, msg)
	}
}

func (c *soakCounts) request(route int, lat time.Duration, errMsg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &c.routes[route]
	if errMsg != "" {
		c.errors++
		r.errors++
		c.noteError(errMsg)
	}
	if lat > 0 {
		c.lat = append(c.lat, lat)
		r.lat = append(r.lat, lat)
	}
}

func (c *soakCounts) write(errMsg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	c.totalWrites++
	if errMsg != "" {
		c.writeErrors++
		c.totalWriteErrors++
		c.noteError(errMsg)
	}
}

// soakProbe is one reading of the server process.
type soakProbe struct {
	t          time.Duration
	rss        float64 // bytes
	heap       float64 // go_memstats_heap_inuse_bytes
	goroutines float64 // go_goroutines minus the harness's open connections
	rawGor     float64 // go_goroutines
	inFlight   float64 // cryptointel_http_requests_in_flight (this probe's scrape included)
	pgConns    float64 // backends on the database
	pgMem      float64 // their RssAnon, bytes
	ok         bool    // /metrics answered
}

// soakRow is one row of the interval table.
type soakRow struct {
	start, end                     time.Duration
	scheduled                      int
	span                           time.Duration
	requests, errors, missed, late int
	writes, writeErrors, delivered int
	p50, p99                       time.Duration
	lat                            []time.Duration // sorted
	serverCPU, busy                float64         // % of one core; % of the machine
	rss, heap, goroutines, rawGor  float64         // means of the row's probes
	conns                          int64
	pgConns, pgMem                 float64 // means of the row's probes
	jobs                           float64
}

// soakResult is everything the report shows.
type soakResult struct {
	machine   machine
	seed      *seedInfo
	opts      options
	userEnv   []string
	mix       []mixEntry
	rows      []soakRow
	probes    []soakProbe
	counts    *soakCounts
	recv      *webhookReceiver
	webhookOK bool
	logErrors []string
	logErrN   int
	logWarnN  int
	genCPU    time.Duration
	peakRSS   int64
	elapsed   time.Duration
	duration  time.Duration
	// settled is the least goroutine count of the probes taken once the
	// load has ended and its requests have left the server (HTTP
	// connections excluded), -1 when none answered: what the last third
	// of a stalled machine keeps in flight is not in it, a leak is.
	settled float64
}

// runSoak is the whole soak: database, webhook receiver, server, keys,
// the steady load with its writer and sampler, the verdict and the report.
func runSoak(ctx context.Context, o options) error {
	s := o.soak
	if !flagWasSet("duration") && os.Getenv("BENCH_DURATION") == "" {
		o.duration = defaultSoakDuration
	}
	switch {
	case s.rate <= 0:
		return errors.New("-rate must be positive")
	case s.inflight < 1:
		return errors.New("-inflight must be at least 1")
	case s.interval <= 0 || s.probe <= 0:
		return errors.New("-interval and -probe must be positive")
	case o.duration < 3*s.interval:
		return fmt.Errorf("-duration %s is too short: the verdict compares thirds of the run, so give it at least 3 intervals (%s)", o.duration, 3*s.interval)
	}
	mix, err := parseMix(s.mix, scenarios(&fixtures{now: time.Now()}))
	if err != nil {
		return err
	}
	started := time.Now()
	res := &soakResult{machine: describeMachine(), opts: o, userEnv: o.serverEnv, mix: mix, duration: o.duration, settled: -1}
	log.Printf("machine: %s", res.machine.oneLine())
	if res.seed, err = ensureSeeded(ctx, o); err != nil {
		return err
	}

	var adminToken string
	if s.writeEvery > 0 {
		recv, err := startReceiver(cacheDir(o))
		if err != nil {
			return err
		}
		defer recv.close()
		res.recv = recv
		adminToken = randomHex(16)
		o.serverEnv = append(slices.Clip(o.serverEnv),
			"ADMIN_TOKEN="+adminToken,
			"WEBHOOK_ALLOW_CIDRS=127.0.0.0/8,::1",
			"WEBHOOK_CA_FILE="+recv.caFile)
	}
	srv, err := startServer(ctx, o, "server.log")
	if err != nil {
		return err
	}
	defer srv.stop()
	log.Printf("server pid %d on %s", srv.pid(), srv.base)
	fx, err := prepareFixtures(ctx, o)
	if err != nil {
		return err
	}
	fixturesKeys = fx.keys
	// The mix's closures read the real fixtures.
	if mix, err = parseMix(s.mix, scenarios(fx)); err != nil {
		return err
	}
	res.mix = mix
	log.Printf("%d keys, %d entities for parameters", len(fx.keys.keys), len(fx.entityIDs))
	stats, err := openStatsConn(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer stats.Close(context.Background())
	client, conns := newSoakClient(o.gzip, s.inflight)

	w := &soakWriter{client: client, base: srv.base, token: adminToken, fx: fx, recv: res.recv, n: s.writeEvents}
	if res.recv != nil {
		if err := w.setup(ctx, stats); err != nil {
			return err
		}
	}
	logStart := fileSize(filepath.Join(cacheDir(o), "server.log"))

	res.counts = &soakCounts{routes: make([]routeStats, len(mix))}
	for i, e := range mix {
		res.counts.routes[i] = routeStats{name: e.sc.name, weight: e.weight}
	}
	genCPU0 := procCPU(os.Getpid())
	if err := soakLoad(ctx, o, res, client, conns, stats, srv, w); err != nil {
		return err
	}
	res.genCPU = procCPU(os.Getpid()) - genCPU0
	res.peakRSS = srv.peakRSS()
	res.settled = settledGoroutines(ctx, client, srv, conns)

	if res.recv != nil {
		res.webhookOK = w.finish(ctx, s.grace, res.counts)
	}
	res.logErrN, res.logWarnN, res.logErrors = scanServerLog(filepath.Join(cacheDir(o), "server.log"), logStart)
	res.machine.loadAfter = loadAverage()
	res.elapsed = time.Since(started)
	report, pass := renderSoakReport(res)
	fmt.Print(report)
	if !o.stdoutOnly {
		if err := os.WriteFile(s.out, []byte(report), 0o644); err != nil {
			return fmt.Errorf("error writing %s: %w", s.out, err)
		}
		log.Printf("wrote %s", s.out)
	}
	if !pass {
		return errSoakFailed
	}
	log.Print("soak verdict: PASS")
	return nil
}

// soakLoad runs the dispatcher, the workers, the writer and the sampler
// for the run's duration and fills res.rows and res.probes.
func soakLoad(ctx context.Context, o options, res *soakResult, client *http.Client, conns *connCounter, stats *pgx.Conn, srv *proc, w *soakWriter) error {
	s := o.soak
	mix := res.mix
	sched := mixSchedule(mix)
	counts := res.counts
	baseURL, err := url.Parse(srv.base)
	if err != nil {
		return err
	}
	start := time.Now()
	end := start.Add(o.duration)
	log.Printf("soak: %.0f req/s for %s (at most %d in flight), writer every %s", s.rate, o.duration, s.inflight, s.writeEvery)

	// Workers: each keeps its own per-route state (cursor walks).
	jobs := make(chan int) // the route of each request handed over
	var workers sync.WaitGroup
	for g := range s.inflight {
		workers.Add(1)
		go func() {
			defer workers.Done()
			states := make([]*worker, len(mix))
			for i := range states {
				states[i] = &worker{id: g, iter: g * 131}
			}
			for route := range jobs {
				soakRequest(ctx, client, baseURL, mix[route].sc, states[route], route, counts)
			}
		}()
	}

	// Writer.
	loadDone := make(chan struct{})
	var writer sync.WaitGroup
	if res.recv != nil {
		writer.Add(1)
		go func() {
			defer writer.Done()
			t := time.NewTicker(s.writeEvery)
			defer t.Stop()
			for {
				select {
				case <-loadDone:
					return
				case <-ctx.Done():
					return
				case <-t.C:
					if time.Until(end) < time.Second {
						return
					}
					counts.write(w.write(ctx))
				}
			}
		}()
	}

	// Sampler: probes every s.probe, a row every s.interval, the last row
	// once the workers are done (so in-flight requests land in it).
	workersDone := make(chan struct{})
	samplerErr := make(chan error, 1)
	go func() {
		samplerErr <- sampleSoak(ctx, o, res, client, conns, stats, srv, start, workersDone)
	}()

	// Dispatcher: request i is due at start + i/rate.
	period := float64(time.Second) / s.rate
	for i := 0; ; i++ {
		at := start.Add(time.Duration(float64(i) * period))
		if !at.Before(end) {
			break
		}
		if d := time.Until(at); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		route := sched[i%len(sched)]
		select {
		case jobs <- route:
			late := time.Since(at) > s.lateAfter
			counts.mu.Lock()
			counts.scheduled++
			counts.sched++
			if late {
				counts.late++
				counts.totalLate++
			}
			counts.mu.Unlock()
		default:
			counts.mu.Lock()
			counts.scheduled++
			counts.sched++
			counts.missed++
			counts.totalMissed++
			counts.routes[route].missed++
			counts.mu.Unlock()
		}
	}
	close(jobs)
	close(loadDone)
	writer.Wait()
	workers.Wait()
	close(workersDone)
	if err := <-samplerErr; err != nil {
		return err
	}
	return ctx.Err()
}

// soakRequest sends one request of sc and records it.
func soakRequest(ctx context.Context, client *http.Client, base *url.URL, sc scenario, w *worker, route int, counts *soakCounts) {
	req, err := sc.next(w)
	if err != nil {
		counts.request(route, 0, "building request: "+err.Error())
		return
	}
	req.URL.Scheme, req.URL.Host, req.Host = base.Scheme, base.Host, base.Host
	if sc.key {
		req.Header.Set("Authorization", "Bearer "+fixturesKeys.get())
	}
	t0 := time.Now()
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		if ctx.Err() == nil {
			counts.request(route, time.Since(t0), fmt.Sprintf("%s %s: %v", req.Method, req.URL.Path, err))
		}
		return
	}
	w.buf.Reset()
	_, rerr := io.Copy(&w.buf, resp.Body)
	resp.Body.Close()
	lat := time.Since(t0)
	w.iter++
	if resp.StatusCode/100 != 2 || rerr != nil {
		msg := w.buf.String()
		if len(msg) > 160 {
			msg = msg[:160]
		}
		if rerr != nil {
			msg = rerr.Error()
		}
		w.cursor = ""
		counts.request(route, lat, fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, strings.TrimSpace(msg)))
		return
	}
	if sc.after != nil {
		sc.after(w, w.buf.Bytes())
	}
	counts.request(route, lat, "")
}

// sampleSoak probes the server every o.soak.probe and closes a row every
// o.soak.interval until the run's end.
func sampleSoak(ctx context.Context, o options, res *soakResult, client *http.Client, conns *connCounter, stats *pgx.Conn, srv *proc, start time.Time, workersDone <-chan struct{}) error {
	s := o.soak
	pid := srv.pid()
	cpu0 := procCPU(pid)
	m0 := readMachineTimes()
	var rowProbes []soakProbe
	delivered0 := 0
	probeAt := start.Add(s.probe)
	rowEnd := start.Add(s.interval)
	runEnd := start.Add(o.duration)
	lastRow, lastEnd := start, time.Duration(0)
	for {
		if rowEnd.After(runEnd) {
			rowEnd = runEnd
		}
		next := rowEnd
		if probeAt.Before(next) {
			next = probeAt
		}
		select {
		case <-time.After(time.Until(next)):
		case <-ctx.Done():
			return nil
		}
		if !probeAt.After(next) {
			p := probeServer(ctx, client, srv, conns)
			p.t = time.Since(start)
			if err := probePostgres(ctx, stats, &p); err != nil && ctx.Err() == nil {
				return err
			}
			if p.ok {
				rowProbes = append(rowProbes, p)
				res.probes = append(res.probes, p)
			}
			probeAt = probeAt.Add(s.probe)
		}
		if next.Before(rowEnd) {
			continue
		}
		final := !rowEnd.Before(runEnd)
		if final {
			select {
			case <-workersDone:
			case <-ctx.Done():
				return nil
			}
		}
		now := time.Now()
		cpu1 := procCPU(pid)
		m1 := readMachineTimes()
		row := soakRow{start: lastEnd, end: rowEnd.Sub(start), span: now.Sub(lastRow)}
		lastEnd = row.end
		row.serverCPU = 100 * float64(cpu1-cpu0) / float64(row.span)
		if d := m1.total - m0.total; d > 0 {
			row.busy = 100 * float64((m1.busy+m1.steal)-(m0.busy+m0.steal)) / float64(d)
		}
		cpu0, m0, lastRow = cpu1, m1, now
		c := res.counts
		c.mu.Lock()
		lat := c.lat
		row.errors, row.missed, row.late, row.writes, row.writeErrors, row.scheduled = c.errors, c.missed, c.late, c.writes, c.writeErrors, c.sched
		c.lat, c.errors, c.missed, c.late, c.writes, c.writeErrors, c.sched = nil, 0, 0, 0, 0, 0, 0
		c.mu.Unlock()
		row.requests = len(lat)
		slices.Sort(lat)
		row.p50, row.p99, row.lat = pctOf(lat, 0.50), pctOf(lat, 0.99), lat
		for _, p := range rowProbes {
			row.rss += p.rss / float64(len(rowProbes))
			row.heap += p.heap / float64(len(rowProbes))
			row.goroutines += p.goroutines / float64(len(rowProbes))
			row.rawGor += p.rawGor / float64(len(rowProbes))
			row.pgConns += p.pgConns / float64(len(rowProbes))
			row.pgMem += p.pgMem / float64(len(rowProbes))
		}
		rowProbes = rowProbes[:0]
		row.conns = conns.open.Load()
		if m, err := scrapeMetrics(ctx, client, srv.base); err == nil {
			row.jobs = m["cryptointel_river_queue_jobs"]
		}
		if res.recv != nil {
			d := res.recv.deliveredCount()
			row.delivered, delivered0 = d-delivered0, d
		}
		res.rows = append(res.rows, row)
		log.Printf("t=%-5s %5d req %6.1f req/s  errors %d  missed %d late %d  p50 %s p99 %s  cpu %3.0f%% (machine %3.0f%%)  rss %.1f MB  heap %.1f MB  goroutines %.0f  conns %d  pg %.0f (%.0f MB)  writes %d delivered %d",
			fmtDur(row.end), row.requests, float64(row.requests)/row.span.Seconds(), row.errors+row.writeErrors, row.missed, row.late,
			ms(row.p50), ms(row.p99), row.serverCPU, row.busy, row.rss/(1<<20), row.heap/(1<<20), row.rawGor, row.conns, row.pgConns, row.pgMem/(1<<20), row.writes, row.delivered)
		if final {
			return nil
		}
		rowEnd = rowEnd.Add(s.interval)
	}
}

// probeServer reads the server's RSS and, from /metrics, its Go heap in
// use and goroutines.
func probeServer(ctx context.Context, client *http.Client, srv *proc, conns *connCounter) soakProbe {
	p := soakProbe{rss: float64(procStatusKB(srv.pid(), "VmRSS") * 1024)}
	m, err := scrapeMetrics(ctx, client, srv.base)
	if err != nil {
		return p
	}
	p.heap = m["go_memstats_heap_inuse_bytes"]
	p.rawGor = m["go_goroutines"]
	p.goroutines = p.rawGor - float64(conns.open.Load())
	p.inFlight = m["cryptointel_http_requests_in_flight"]
	p.ok = p.rss > 0
	return p
}

// settleProbes and settleWait bound the probes of settledGoroutines.
const (
	settleProbes = 4
	settleWait   = 10 * time.Second
)

// settledGoroutines waits, after the load, until the server serves no
// request but the probe's own (at most settleWait), then returns the least
// goroutine count, HTTP connections excluded, of settleProbes probes
// 250 ms apart; -1 when /metrics never answered.
func settledGoroutines(ctx context.Context, client *http.Client, srv *proc, conns *connCounter) float64 {
	least := -1.0
	deadline := time.Now().Add(settleWait)
	for n := 0; n < settleProbes && ctx.Err() == nil; {
		p := probeServer(ctx, client, srv, conns)
		if p.ok && (p.inFlight <= 1 || time.Now().After(deadline)) {
			if least < 0 || p.goroutines < least {
				least = p.goroutines
			}
			n++
		} else if time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	return least
}

// probePostgres counts the backends on the benchmark database and sums
// their private memory (RssAnon: what each allocated for itself, such as
// prepared statements and their plans; shared buffers are not in it).
func probePostgres(ctx context.Context, stats *pgx.Conn, p *soakProbe) error {
	var pids []int32
	if err := stats.QueryRow(ctx, `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE datname = current_database()`).Scan(&pids); err != nil {
		return fmt.Errorf("error listing PostgreSQL connections: %w", err)
	}
	p.pgConns = float64(len(pids))
	for _, pid := range pids {
		p.pgMem += float64(procStatusKB(int(pid), "RssAnon") * 1024)
	}
	return nil
}

// scrapeMetrics reads /metrics (Prometheus text) into name → value, the
// values of a name's labelled series summed.
func scrapeMetrics(ctx context.Context, client *http.Client, base string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body) //nolint:errcheck
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		// The value follows the name and its labels; a timestamp may
		// follow it.
		rest := line[len(name):]
		if i := strings.LastIndexByte(rest, '}'); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out, sc.Err()
}

func pctOf(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	if d > time.Minute {
		return fmt.Sprintf("%dm%02ds", d/time.Minute, (d%time.Minute)/time.Second)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read does not fail
	return hex.EncodeToString(b)
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// scanServerLog counts the ERROR and WARN lines the server logged after
// offset (its JSON log) and returns up to five distinct ERROR messages.
func scanServerLog(path string, offset int64) (errs, warns int, samples []string) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, nil
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, 0, nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.Contains(line, []byte(`"level":"ERROR"`)):
			errs++
			var m struct {
				Msg   string `json:"msg"`
				Error string `json:"error"`
			}
			msg := string(line)
			if json.Unmarshal(line, &m) == nil {
				msg = strings.TrimSpace(m.Msg + ": " + m.Error)
			}
			if len(msg) > 200 {
				msg = msg[:200]
			}
			if len(samples) < 5 && !slices.Contains(samples, msg) {
				samples = append(samples, msg)
			}
		case bytes.Contains(line, []byte(`"level":"WARN"`)):
			warns++
		}
	}
	return errs, warns, samples
}
