package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
)

// statementHeader is the per-response statement count the service reports
// when started with STATEMENT_COUNT_HEADER=true.
const statementHeader = "X-Statement-Count"

// scenario is one measured route: how each closed-loop worker builds its
// next request and, for walks, what it learns from the response.
type scenario struct {
	// name is the row's label in the report.
	name string
	// key says whether requests carry an API key (the floor's do not).
	key bool
	// next builds the worker's next request.
	next func(w *worker) (*http.Request, error)
	// after, when set, reads the response body (cursor walks).
	after func(w *worker, body []byte)
	// check, when set, finds an error in a 200 response's body (an MCP
	// tool error); such a response counts as an error.
	check func(body []byte) error
}

// worker is one closed-loop client: it sends a request, waits for the whole
// response, and sends the next.
type worker struct {
	id     int
	iter   int
	rng    *rand.Rand
	cursor string
	since  string
	buf    bytes.Buffer
}

// result is one row of the report.
type result struct {
	name        string
	concurrency int
	requests    int
	errors      int
	firstError  string
	elapsed     time.Duration
	lat         []time.Duration
	stmts       int64
	stmtReplies int
	xacts       int64
	rssPeak     int64
	bytes       int64
	keyWaits    int64
	cpu         time.Duration
	// pgCPU is the CPU time of the PostgreSQL backends serving the
	// benchmark database over the measured period (see backendsCPU).
	pgCPU time.Duration
	// machine is every core's time over the measured period; others is
	// the busy part of it spent by neither the service, its PostgreSQL
	// backends nor the load generator (PostgreSQL's background processes,
	// the replica, any other process), steal the part the hypervisor gave
	// to someone else. Both say how much the machine was shared.
	machine, others, steal time.Duration
	// rounds is each round's req/s when the row is the sum of rounds
	// alternated with a peer's (mergeRounds); nil otherwise.
	rounds []float64
}

// side is one server and the scenario it is measured with.
type side struct {
	base string
	sc   scenario
	pid  int
}

// mergeRounds sums the rounds of one row into the row: its requests, time,
// latencies, statements and CPU, the highest RSS, and each round's req/s.
func mergeRounds(rs []result) result {
	if len(rs) == 0 {
		return result{}
	}
	m := rs[0]
	m.lat = append([]time.Duration(nil), rs[0].lat...)
	m.rounds = []float64{rs[0].rps()}
	for _, r := range rs[1:] {
		m.requests += r.requests
		m.errors += r.errors
		if m.firstError == "" {
			m.firstError = r.firstError
		}
		m.elapsed += r.elapsed
		m.lat = append(m.lat, r.lat...)
		m.stmts += r.stmts
		m.stmtReplies += r.stmtReplies
		m.xacts += r.xacts
		m.rssPeak = max(m.rssPeak, r.rssPeak)
		m.bytes += r.bytes
		m.keyWaits += r.keyWaits
		m.cpu += r.cpu
		m.pgCPU += r.pgCPU
		m.machine += r.machine
		m.others += r.others
		m.steal += r.steal
		m.rounds = append(m.rounds, r.rps())
	}
	slices.Sort(m.lat)
	return m
}

// roundsNote is "  rounds 960, 855, 924 req/s", each round's req/s for a
// log line, or "" for a row measured at once.
func (r result) roundsNote() string {
	if len(r.rounds) < 2 {
		return ""
	}
	parts := make([]string, len(r.rounds))
	for i, v := range r.rounds {
		parts[i] = fmt.Sprintf("%.0f", v)
	}
	return "  rounds " + strings.Join(parts, ", ") + " req/s"
}

// othersPct is the share of the machine's CPU time over the measured
// period that other processes used; stealPct the share stolen.
func (r result) othersPct() float64 { return shareOf(r.others, r.machine) }
func (r result) stealPct() float64  { return shareOf(r.steal, r.machine) }

func shareOf(part, whole time.Duration) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(max(part, 0)) / float64(whole)
}

// pgCPUPerReq is PostgreSQL's CPU time per request for this row.
func (r result) pgCPUPerReq() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.pgCPU / time.Duration(r.requests)
}

// cpuPerReq is the server process's CPU time per request over the measured
// period (user plus system): unlike req/s it hardly depends on what else
// runs on the machine.
func (r result) cpuPerReq() time.Duration {
	if r.requests == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.requests)
}

func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// pct returns the q-quantile (0..1) of the latencies, by rank on the sorted
// samples (every sample is kept, so this is exact).
func (r result) pct(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(q*float64(len(r.lat))+0.5) - 1
	i = max(0, min(i, len(r.lat)-1))
	return r.lat[i]
}

// stmtsPerReq is the mean of the service's per-response statement counts,
// or -1 when responses carried none.
func (r result) stmtsPerReq() float64 {
	if r.stmtReplies == 0 {
		return -1
	}
	return float64(r.stmts) / float64(r.stmtReplies)
}

func (r result) logLine() string {
	return fmt.Sprintf("%-28s c=%-2d %7.0f req/s  p50 %s  p95 %s  p99 %s  errors %d  cpu/req %s  pg cpu/req %s  stmts/req %.2f  xacts/req %.2f  rss peak %d MB  others %.0f%%  steal %.0f%%",
		r.name, r.concurrency, r.rps(), ms(r.pct(0.50)), ms(r.pct(0.95)), ms(r.pct(0.99)), r.errors, ms(r.cpuPerReq()), ms(r.pgCPUPerReq()),
		r.stmtsPerReq(), float64(r.xacts)/float64(max(1, r.requests)), r.rssPeak>>20, r.othersPct(), r.stealPct())
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + " ms" }

// newClient is a keep-alive client with one idle connection per worker.
// Compression is off unless asked: the floor sends plain JSON, so both are
// measured on the same bytes.
func newClient(gzip bool, conns int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        conns * 2,
			MaxIdleConnsPerHost: conns * 2,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  !gzip,
			ForceAttemptHTTP2:   false,
		},
	}
}

// openStatsConn opens the connection that reads pg_stat_database.
func openStatsConn(ctx context.Context, url string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("error connecting for statistics: %w", err)
	}
	return conn, nil
}

// xactCount is the benchmark database's committed plus rolled-back
// transactions so far (pg_stat_database; every autocommit statement is
// one). It includes background work (River, the poller) and this
// connection's own reads, so it is a cross-check, not the headline.
func xactCount(ctx context.Context, conn *pgx.Conn) (int64, error) {
	if _, err := conn.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		return 0, fmt.Errorf("error clearing the statistics snapshot: %w", err)
	}
	var n int64
	err := conn.QueryRow(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("error reading pg_stat_database: %w", err)
	}
	return n, nil
}

// measure runs sc closed-loop with c workers against base: a warm-up, then
// the measured period. Every request's latency (send to last body byte) is
// kept.
func measure(ctx context.Context, client *http.Client, stats *pgx.Conn, base string, sc scenario, c int, o options, pid int) (result, error) {
	var pool *keyPool
	if sc.key {
		pool = fixturesKeys
	}
	workers := make([]*worker, c)
	for i := range workers {
		workers[i] = &worker{id: i, rng: rand.New(rand.NewPCG(uint64(i+1), uint64(c)))}
	}
	if o.warmup > 0 {
		loop(ctx, client, base, sc, workers, pool, o.warmup)
	}
	// pg_stat_database is flushed by backends at most once a second; wait
	// for the warm-up's counts to land before the first reading.
	time.Sleep(1100 * time.Millisecond)
	x0, err := xactCount(ctx, stats)
	if err != nil {
		return result{}, err
	}
	waits0 := int64(0)
	if pool != nil {
		waits0 = pool.waits.Load()
	}
	cpu0 := procCPU(pid)
	pg0 := backendsCPU(o.databaseURL)
	self0, m0 := procCPU(os.Getpid()), readMachineTimes()
	res := loop(ctx, client, base, sc, workers, pool, o.duration)
	res.cpu = procCPU(pid) - cpu0
	res.pgCPU = cpuSince(pg0, backendsCPU(o.databaseURL))
	self, m := procCPU(os.Getpid())-self0, readMachineTimes()
	res.machine, res.steal = m.total-m0.total, m.steal-m0.steal
	res.others = (m.busy - m0.busy) - res.cpu - res.pgCPU - self
	time.Sleep(1100 * time.Millisecond)
	x1, err := xactCount(ctx, stats)
	if err != nil {
		return result{}, err
	}
	res.name = sc.name
	res.concurrency = c
	res.xacts = x1 - x0 - 2 // this connection's own two readings
	res.rssPeak = procStatusKB(pid, "VmHWM") * 1024
	if pool != nil {
		res.keyWaits = pool.waits.Load() - waits0
	}
	return res, nil
}

// meetKeys sends base one request of path with each of pool's keys, eight
// at a time, unmeasured. The access layer predicts a key's next admission
// from its last metering statement and then runs the request's read
// beside its metering statement; a long-running server has met its
// clients' keys, so no row measures a process meeting the run's keys for
// the first time (at c=1 that was most of a 6 s row's requests).
func meetKeys(ctx context.Context, client *http.Client, base, path string, pool *keyPool) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for range len(pool.keys) {
		key := pool.get()
		g.Go(func() error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
			if err != nil {
				return err
			}
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := client.Do(req)
			if err != nil {
				return fmt.Errorf("error meeting the keys: %w", err)
			}
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("error meeting the keys: GET %s answered %d", path, resp.StatusCode)
			}
			return nil
		})
	}
	return g.Wait()
}

// fixturesKeys is the run's key pool (set once fixtures are prepared).
var fixturesKeys *keyPool

// loop runs the workers for d and merges what they measured.
func loop(ctx context.Context, client *http.Client, base string, sc scenario, workers []*worker, pool *keyPool, d time.Duration) result {
	type part struct {
		lat                 []time.Duration
		errors, stmtReplies int
		stmts, bytes        int64
		firstError          string
	}
	parts := make([]part, len(workers))
	baseURL, err := url.Parse(base)
	if err != nil {
		return result{errors: 1, firstError: err.Error()}
	}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &parts[i]
			p.lat = make([]time.Duration, 0, 4096)
			for ctx.Err() == nil && time.Now().Before(deadline) {
				req, err := sc.next(w)
				if err != nil {
					p.errors++
					if p.firstError == "" {
						p.firstError = err.Error()
					}
					continue
				}
				req.URL.Scheme, req.URL.Host, req.Host = baseURL.Scheme, baseURL.Host, baseURL.Host
				if pool != nil {
					req.Header.Set("Authorization", "Bearer "+pool.get())
				}
				t0 := time.Now()
				resp, err := client.Do(req.WithContext(ctx))
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					p.errors++
					if p.firstError == "" {
						p.firstError = err.Error()
					}
					continue
				}
				w.buf.Reset()
				n, rerr := io.Copy(&w.buf, resp.Body)
				resp.Body.Close()
				lat := time.Since(t0)
				w.iter++
				p.bytes += n
				p.lat = append(p.lat, lat)
				if s := resp.Header.Get(statementHeader); s != "" {
					if v, err := strconv.ParseInt(s, 10, 64); err == nil {
						p.stmts += v
						p.stmtReplies++
					}
				}
				if resp.StatusCode != http.StatusOK || rerr != nil {
					p.errors++
					if p.firstError == "" {
						msg := w.buf.String()
						if len(msg) > 200 {
							msg = msg[:200]
						}
						if rerr != nil {
							msg = rerr.Error()
						}
						p.firstError = fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.RequestURI(), resp.StatusCode, msg)
					}
					w.cursor = ""
					continue
				}
				if sc.check != nil {
					if err := sc.check(w.buf.Bytes()); err != nil {
						p.errors++
						if p.firstError == "" {
							p.firstError = fmt.Sprintf("%s %s: %v", req.Method, req.URL.RequestURI(), err)
						}
						continue
					}
				}
				if sc.after != nil {
					sc.after(w, w.buf.Bytes())
				}
			}
		}()
	}
	wg.Wait()
	res := result{elapsed: time.Since(start)}
	for _, p := range parts {
		res.lat = append(res.lat, p.lat...)
		res.errors += p.errors
		res.stmts += p.stmts
		res.stmtReplies += p.stmtReplies
		res.bytes += p.bytes
		if res.firstError == "" {
			res.firstError = p.firstError
		}
	}
	res.requests = len(res.lat)
	slices.Sort(res.lat)
	return res
}
