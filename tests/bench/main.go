// Command bench is the load harness of `make bench`: it prepares a benchmark
// database seeded with the demo dataset (once, cached by a marker), starts
// the real server on a loopback port, creates enough API keys that the
// per-key rate limit is never the bottleneck (metering stays on), drives
// every measured route closed-loop at several concurrencies for a bounded
// time, measures a hand-written pgx "floor" for /v1/latest?limit=25 in the
// same run, and writes a markdown report (tests/bench/RESULTS.md).
//
// It is a report, not a test: nothing here asserts timings.
//
//	go run ./tests/bench -bin bin/cryptointel -database-url postgres://…/cryptointel_bench
//
// The same binary serves the floor when started as `bench floor` (the
// harness re-executes itself so the floor, like the service, runs in its own
// process), and with -soak it runs the soak of `make soak` instead (soak.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the harness's command-line settings.
type options struct {
	bin         string
	databaseURL string
	repo        string
	out         string
	events      int
	seedMaxAge  time.Duration
	duration    time.Duration
	warmup      time.Duration
	concs       []int
	keys        int
	only        string
	gzip        bool
	pprofAddr   string
	dbMaxConns  int
	noFloor     bool
	mcpRounds   int
	pairRounds  int
	noUncached  bool
	noPGL       bool
	stdoutOnly  bool
	serverEnv   []string
	soak        soakOptions
	stream      streamOptions
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("bench: ")
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		if err := floorMain(os.Args[2:]); err != nil {
			log.Fatal(err)
		}
		return
	}
	var (
		o         options
		concs     string
		serverEnv string
	)
	flag.StringVar(&o.bin, "bin", "bin/cryptointel", "the cryptointel binary to benchmark")
	flag.StringVar(&o.databaseURL, "database-url", os.Getenv("BENCH_DATABASE_URL"), "benchmark database URL (env BENCH_DATABASE_URL); it is migrated and seeded when its marker is missing or stale")
	flag.StringVar(&o.repo, "repo", ".", "repository root (the seed version is a hash of the demo generator's sources)")
	flag.StringVar(&o.out, "out", "tests/bench/RESULTS.md", "where the markdown report is written")
	flag.IntVar(&o.events, "events", 1_000_000, "events in the benchmark database")
	flag.DurationVar(&o.seedMaxAge, "seed-max-age", 12*time.Hour, "re-seed when the cached seed is older than this (the demo data is anchored at seed time, so the 24h feeds thin out as it ages)")
	flag.DurationVar(&o.duration, "duration", envDuration("BENCH_DURATION", 6*time.Second), "measured time per route and concurrency (env BENCH_DURATION)")
	flag.DurationVar(&o.warmup, "warmup", envDuration("BENCH_WARMUP", time.Second), "unmeasured warm-up before each measurement (env BENCH_WARMUP)")
	flag.StringVar(&concs, "c", envString("BENCH_CONCURRENCY", "1,8,32"), "comma-separated concurrencies (env BENCH_CONCURRENCY)")
	flag.IntVar(&o.keys, "keys", 1500, "API keys created per run (enterprise plan); each is used at most 90 times per rate window")
	flag.StringVar(&o.only, "only", envString("BENCH_ONLY", ""), "comma-separated substrings: measure only routes whose name contains one (env BENCH_ONLY)")
	flag.BoolVar(&o.gzip, "gzip", false, "send Accept-Encoding: gzip (the default measures plain JSON, like the floor)")
	flag.StringVar(&o.pprofAddr, "pprof-addr", os.Getenv("PPROF_ADDR"), "passed to the server as PPROF_ADDR (e.g. 127.0.0.1:6060) to profile it during the run")
	flag.IntVar(&o.dbMaxConns, "db-max-conns", 16, "pool size of the server and of the floor")
	flag.BoolVar(&o.noFloor, "no-floor", false, "skip the floor measurement")
	flag.IntVar(&o.mcpRounds, "mcp-rounds", 4, "how many times the MCP suite measures each pair route, tool, tool, route on the computing server (the server as shipped: once)")
	flag.IntVar(&o.pairRounds, "pair-rounds", 3, "how many rounds a compared pair (the computing server's /v1/latest and the floor, its /graphql documents and PostGraphile 5's) alternates in at each concurrency, -duration split between them")
	flag.BoolVar(&o.noUncached, "no-uncached", false, "skip the computed rows (a second server with the response cache off)")
	flag.BoolVar(&o.noPGL, "no-postgraphile", false, "skip PostGraphile 5 (its install, rows and same-data check)")
	flag.BoolVar(&o.stdoutOnly, "stdout", false, "print the report only; do not write -out")
	flag.StringVar(&serverEnv, "server-env", "", "comma-separated KEY=VALUE settings added to the server's environment only (e.g. GOGC=300); the report lists them")
	soakFlags(&o.soak)
	streamFlags(&o.stream)
	flag.Parse()
	for _, kv := range strings.Split(serverEnv, ",") {
		if kv = strings.TrimSpace(kv); kv != "" {
			if !strings.Contains(kv, "=") {
				log.Fatalf("invalid -server-env entry %q: want KEY=VALUE", kv)
			}
			o.serverEnv = append(o.serverEnv, kv)
		}
	}
	for _, s := range strings.Split(concs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("invalid concurrency %q", s)
		}
		o.concs = append(o.concs, n)
	}
	if o.databaseURL == "" {
		log.Fatal("no benchmark database: set -database-url or BENCH_DATABASE_URL")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runMode := run
	if o.soak.enabled {
		runMode = runSoak
	} else if o.stream.only {
		runMode = runStream
	}
	if err := runMode(ctx, o); err != nil {
		log.Fatal(err)
	}
}

func envDuration(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			log.Fatalf("invalid %s=%q: %v", name, v, err)
		}
		return d
	}
	return def
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// run is the whole benchmark: database, servers (the service as shipped,
// the service computing every request, the floor, PostGraphile), keys,
// the same-data check, measurements, report.
func run(ctx context.Context, o options) error {
	started := time.Now()
	machine := describeMachine()
	log.Printf("machine: %s", machine.oneLine())

	seed, err := ensureSeeded(ctx, o)
	if err != nil {
		return err
	}
	if !o.noPGL {
		// Before any server starts, so npm's work is outside every
		// measurement.
		if err := installPostGraphile(ctx, o); err != nil {
			return err
		}
	}
	srv, err := startServer(ctx, o, "server.log")
	if err != nil {
		return err
	}
	defer srv.stop()
	log.Printf("server pid %d on %s", srv.cmd.Process.Pid, srv.base)
	// The same service with its response cache off: every request runs
	// the operation, its loads and the encoding.
	var computed *proc
	if !o.noUncached {
		ou := o
		ou.serverEnv = append(append([]string{}, o.serverEnv...), "RESPONSE_CACHE_TTL=-1s")
		ou.pprofAddr = ""
		computed, err = startServer(ctx, ou, "server-computed.log")
		if err != nil {
			return err
		}
		defer computed.stop()
		log.Printf("server computing every request (response cache off): pid %d on %s", computed.cmd.Process.Pid, computed.base)
	}

	fx, err := prepareFixtures(ctx, o)
	if err != nil {
		return err
	}
	fixturesKeys = fx.keys
	log.Printf("%d keys, %d entities for parameters, %d 3-hop roots", len(fx.keys.keys), len(fx.entityIDs), len(fx.hopIDs))

	var floor *floorProc
	if !o.noFloor {
		floor, err = startFloor(ctx, o)
		if err != nil {
			return err
		}
		defer floor.stop()
		log.Printf("floor pid %d on %s", floor.cmd.Process.Pid, floor.base)
	}
	var pgl *proc
	if !o.noPGL {
		pgl, err = startPostGraphile(ctx, o)
		if err != nil {
			return err
		}
		defer pgl.stop()
		log.Printf("PostGraphile 5 pid %d on %s", pgl.pid(), pgl.base)
	}

	client := newClient(o.gzip, maxInt(o.concs))
	stats, err := openStatsConn(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer stats.Close(context.Background())

	// Each server meets every key once before its first row, as a server
	// that has run a while has met its clients' keys.
	for _, p := range []*proc{srv, computed} {
		if p == nil {
			continue
		}
		if err := meetKeys(ctx, client, p.base, fmt.Sprintf("/v1/entities/byId?id=%d", fx.entityIDs[0]), fx.keys); err != nil {
			return err
		}
	}
	probes, err := probeStatements(ctx, client, srv.base, fx)
	if err != nil {
		return err
	}
	var computedProbes []stmtProbe
	if computed != nil {
		if computedProbes, err = probeStatements(ctx, client, computed.base, fx); err != nil {
			return err
		}
	}
	var same []sameData
	if pgl != nil {
		base := srv.base
		if computed != nil {
			base = computed.base
		}
		if same, err = checkSameData(ctx, client, base, pgl.base, fx); err != nil {
			return err
		}
		for _, sd := range same {
			log.Printf("same data, %s: %t over %d documents %s", sd.pair, sd.same, sd.documents, sd.detail)
		}
	}
	measureAll := func(base string, sc scenario, pid int) ([]result, error) {
		var out []result
		for _, c := range o.concs {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res, err := measure(ctx, client, stats, base, sc, c, o, pid)
			if err != nil {
				return nil, err
			}
			log.Print(res.logLine())
			out = append(out, res)
		}
		return out, nil
	}
	// Rows that are compared are measured together: the computing server's
	// /v1/latest and the floor, its /graphql documents and PostGraphile's,
	// alternate at each concurrency in -pair-rounds rounds that share
	// -duration (measurePaired), so a burst of the machine's steal or of
	// another process falls on both sides, not on one; the computed rows
	// of the other routes come right after each route's cached ones.
	peers := map[string]scenario{}
	if pgl != nil {
		ps := pglScenarios(fx)
		peers["POST /graphql (25 latest with owners and evidence)"] = ps[0]
		peers["POST /graphql (3 hops, 5 per level)"] = ps[1]
	}
	measurePaired := func(a, b side) ([]result, []result, error) {
		rounds := max(o.pairRounds, 1)
		oo := o
		oo.duration = max(o.duration/time.Duration(rounds), time.Second)
		var outA, outB []result
		for _, c := range o.concs {
			var ra, rb []result
			for range rounds {
				for _, s := range []struct {
					side
					into *[]result
				}{{a, &ra}, {b, &rb}} {
					if ctx.Err() != nil {
						return nil, nil, ctx.Err()
					}
					res, err := measure(ctx, client, stats, s.base, s.sc, c, oo, s.pid)
					if err != nil {
						return nil, nil, err
					}
					*s.into = append(*s.into, res)
				}
			}
			ma, mb := mergeRounds(ra), mergeRounds(rb)
			log.Print(ma.logLine() + ma.roundsNote())
			log.Print(mb.logLine() + mb.roundsNote())
			outA, outB = append(outA, ma), append(outB, mb)
		}
		return outA, outB, nil
	}
	var rows, floorRows, computedRows, pglRows []result
	for _, sc := range scenarios(fx) {
		if !selected(o.only, sc.name) {
			continue
		}
		var peer *side
		switch p, ok := peers[sc.name]; {
		case sc.name == latestRoute && floor != nil:
			peer = &side{floor.base, floorScenario(), floor.pid()}
		case ok:
			peer = &side{pgl.base, p, pgl.pid()}
		}
		var peerRows []result
		if computed == nil && peer != nil {
			// The server computes every request itself (-server-env):
			// its rows are the pair's.
			res, pres, err := measurePaired(side{srv.base, sc, srv.pid()}, *peer)
			if err != nil {
				return err
			}
			rows, peerRows = append(rows, res...), pres
		} else {
			res, err := measureAll(srv.base, sc, srv.pid())
			if err != nil {
				return err
			}
			rows = append(rows, res...)
		}
		if computed != nil {
			off := sc
			off.name = sc.name + " (computed)"
			a := side{computed.base, off, computed.pid()}
			if peer != nil {
				res, pres, err := measurePaired(a, *peer)
				if err != nil {
					return err
				}
				computedRows, peerRows = append(computedRows, res...), pres
			} else {
				res, err := measureAll(a.base, a.sc, a.pid)
				if err != nil {
					return err
				}
				computedRows = append(computedRows, res...)
			}
		}
		if sc.name == latestRoute && floor != nil {
			floorRows = peerRows
		} else if peer != nil {
			pglRows = append(pglRows, peerRows...)
		}
	}
	env := &benchEnv{
		opts: o, fx: fx, client: client, stats: stats,
		startServer: func(ctx context.Context, logName string, extraEnv ...string) (*proc, error) {
			oo := o
			oo.serverEnv = append(append([]string{}, o.serverEnv...), extraEnv...)
			oo.pprofAddr = ""
			return startServer(ctx, oo, logName)
		},
		measure: func(ctx context.Context, base string, sc scenario, c int, pid int) (result, error) {
			return measure(ctx, client, stats, base, sc, c, o, pid)
		},
	}
	// A suite that fails is reported in its section and fails the run
	// once the report is written: the rows measured so far are kept.
	var sections []*section
	var suiteErr error
	sort.SliceStable(suites, func(i, j int) bool { return suites[i].order < suites[j].order })
	for _, s := range suites {
		if !selected(o.only, s.name) {
			continue
		}
		log.Printf("suite %s", s.name)
		sec, err := s.run(ctx, env)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			log.Printf("suite %s failed: %v", s.name, err)
			suiteErr = errors.Join(suiteErr, fmt.Errorf("error running the %s suite: %w", s.name, err))
			sec = &section{title: s.name, markdown: fmt.Sprintf("Not measured: %v.", err)}
		}
		if sec != nil {
			sections = append(sections, sec)
		}
	}
	machine.loadAfter = loadAverage()
	in := reportInput{
		machine: machine, seed: seed, opts: o, rows: rows, floor: floorRows, computed: computedRows, pgl: pglRows,
		probes: probes, computedProbes: computedProbes, same: same, sections: sections,
		serverPeakRSS: srv.peakRSS(), elapsed: time.Since(started),
	}
	if computed != nil {
		in.computedPeakRSS = computed.peakRSS()
	}
	report := renderReport(in)
	fmt.Print(report)
	if !o.stdoutOnly {
		if err := os.WriteFile(o.out, []byte(report), 0o644); err != nil {
			return fmt.Errorf("error writing %s: %w", o.out, err)
		}
		log.Printf("wrote %s", o.out)
	}
	return suiteErr
}

func selected(only, name string) bool {
	if only == "" {
		return true
	}
	for _, s := range strings.Split(only, ",") {
		if s = strings.TrimSpace(s); s != "" && strings.Contains(name, s) {
			return true
		}
	}
	return false
}

func maxInt(xs []int) int {
	m := 1
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
