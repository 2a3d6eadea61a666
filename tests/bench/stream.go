package main

// The live-push scenario of make bench: many subscribers on one server
// while events are ingested at a steady rate, measuring how long an event
// takes from the ingest request to each subscriber and what the subscribers
// cost in memory. It runs on its own server process (so its RSS is the
// streams' alone) against the benchmark database, and writes
// tests/bench/STREAM.md.

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/ingest"
)

// streamOptions are the scenario's settings.
type streamOptions struct {
	only        bool
	subscribers int
	rate        int
	batch       int
	duration    time.Duration
	warmup      time.Duration
	out         string
}

// streamFlags registers the scenario's flags.
func streamFlags(s *streamOptions) {
	flag.BoolVar(&s.only, "stream-only", false, "run only the live-push scenario (any migrated database will do: it ingests its own events)")
	flag.IntVar(&s.subscribers, "stream-subscribers", 1000, "live push: concurrent /v1/stream subscribers on one server; 0 skips the scenario")
	flag.IntVar(&s.rate, "stream-rate", 100, "live push: events ingested per second (through POST /admin/ingest)")
	flag.IntVar(&s.batch, "stream-batch", 10, "live push: events per ingest request")
	flag.DurationVar(&s.duration, "stream-duration", 30*time.Second, "live push: how long events are ingested")
	flag.DurationVar(&s.warmup, "stream-warmup", 10*time.Second, "live push: how long events are ingested first without subscribers (the RSS baseline)")
	flag.StringVar(&s.out, "stream-out", "tests/bench/STREAM.md", "live push: where its report is written")
}

// streamAccount names the scenario's accounts ("bench-streams-<i>", one
// per key; enterprise: 100 streams each).
const streamAccount = "bench-streams"

// streamAdminToken guards the scenario server's /admin/ingest.
const streamAdminToken = "bench-stream-admin"

// streamEventBase is where the scenario's event ids start, far above the
// demo data's.
const streamEventBase = 900_000_000

// streamResult is what the scenario measured.
type streamResult struct {
	subscribers, opened  int
	events               int
	want, got, dup, lost int64
	closes               int64
	latencies            []time.Duration
	rssStart, rssBase    int64
	rssIdle              int64
	rssPeak              int64
	cpu                  time.Duration
	elapsed              time.Duration
	ingestErrors         int
	sendLate             time.Duration
}

// In a full run the scenario is the last suite (order 300), after the
// routes; -stream-only runs it alone. It writes STREAM.md rather than a
// section of RESULTS.md.
func init() {
	registerSuite(suite{name: "stream", order: 300, run: func(ctx context.Context, env *benchEnv) (*section, error) {
		return nil, runStream(ctx, env.opts)
	}})
}

// runStream runs the live-push scenario and writes its report.
func runStream(ctx context.Context, o options) error {
	s := o.stream
	if s.subscribers <= 0 {
		return nil
	}
	machine := describeMachine()
	// Every subscriber comes from this one address: the per-address cap on
	// streaming connections is lifted for the scenario.
	o.serverEnv = append(append([]string{}, o.serverEnv...), "ADMIN_TOKEN="+streamAdminToken, "STATEMENT_COUNT_HEADER=false",
		"STREAM_MAX_CONNECTIONS_PER_ADDRESS=-1")
	// -pprof-addr profiles this server too.
	srv, err := startServer(ctx, o, "server-stream.log")
	if err != nil {
		return err
	}
	defer srv.stop()
	log.Printf("live push: server pid %d on %s", srv.pid(), srv.base)
	keys, entity, err := streamFixtures(ctx, o, (s.subscribers+99)/100)
	if err != nil {
		return err
	}
	res, err := measureStream(ctx, s, srv, keys, entity)
	if err != nil {
		return err
	}
	machine.loadAfter = loadAverage()
	if err := removeStreamEvents(ctx, o); err != nil {
		return err
	}
	report := renderStream(machine, s, res)
	fmt.Print(report)
	if !o.stdoutOnly {
		if err := os.WriteFile(s.out, []byte(report), 0o644); err != nil {
			return fmt.Errorf("error writing %s: %w", s.out, err)
		}
		log.Printf("wrote %s", s.out)
	}
	return nil
}

// streamFixtures creates n enterprise keys (their earlier ones deleted),
// removes the scenario's events of earlier runs, and returns the entity
// that owns the new events.
func streamFixtures(ctx context.Context, o options, n int) ([]string, int64, error) {
	store, err := db.Open(ctx, o.databaseURL, db.Options{MaxConns: 4})
	if err != nil {
		return nil, 0, err
	}
	defer store.Close()
	// Every key is an account of its own: the rate window and the credits
	// belong to the account.
	if _, err := store.Pool.Exec(ctx, `DELETE FROM accounts WHERE name = $1 OR name LIKE $1 || '-%'`, streamAccount); err != nil {
		return nil, 0, fmt.Errorf("error deleting earlier stream accounts: %w", err)
	}
	if _, err := store.Pool.Exec(ctx, deleteStreamEventsSQL, streamEventBase); err != nil {
		return nil, 0, fmt.Errorf("error deleting earlier stream events: %w", err)
	}
	keys := make([]string, n)
	for i := range keys {
		if keys[i], _, err = db.CreateAPIKey(ctx, store.Bun, fmt.Sprintf("%s-%d", streamAccount, i), cryptointel.PlanEnterprise); err != nil {
			return nil, 0, fmt.Errorf("error creating stream keys: %w", err)
		}
	}
	// A dedicated owner: ingest recounts the owner's events on every batch,
	// which for a popular entity of the demo data is most of the batch's
	// cost.
	entity := int64(streamEventBase)
	if _, err := ingest.Write(ctx, store, strings.NewReader(fmt.Sprintf(`{"kind":"entity","id":%d,"canonicalName":"Bench Stream Entity"}`+"\n", entity)), ingest.Options{}); err != nil {
		return nil, 0, fmt.Errorf("error ingesting the stream entity: %w", err)
	}
	return keys, entity, nil
}

// deleteStreamEventsSQL deletes the scenario's events: those from
// streamEventBase ($1) on, which the seed never uses.
const deleteStreamEventsSQL = `DELETE FROM events WHERE id >= $1`

// removeStreamEvents removes the events the scenario ingested, once it is
// measured. Left in place until the next run's streamFixtures, they were
// the newest events of the benchmark database, hours newer than the seed:
// the next run's searches then walked empty hours down to the seeded
// events (news-style searches cost PostgreSQL three times as much,
// tests/bench/NOTES.md, with the search indexes' pending lists, which
// migration 029 removed). Until migration 030 deleting them was not
// enough: the search corpus kept their newest time as its own, and every
// later run's searches walked the same empty hours (2.5 times the
// PostgreSQL CPU, tests/bench/NOTES.md). The rows of the next run measure
// the database as seeded.
func removeStreamEvents(ctx context.Context, o options) error {
	store, err := db.Open(ctx, o.databaseURL, db.Options{MaxConns: 1})
	if err != nil {
		return err
	}
	defer store.Close()
	tag, err := store.Pool.Exec(ctx, deleteStreamEventsSQL, streamEventBase)
	if err != nil {
		return fmt.Errorf("error deleting the stream events: %w", err)
	}
	log.Printf("live push: removed its %d events", tag.RowsAffected())
	return nil
}

// streamSub is one subscriber's record: when each event arrived.
type streamSub struct {
	mu       sync.Mutex
	seen     map[int64]time.Time
	dups     int64
	closes   int64
	openedAt chan struct{}
}

// measureStream opens the subscribers, ingests at the rate for the
// duration, waits for the last events and collects the figures.
func measureStream(ctx context.Context, s streamOptions, srv *proc, keys []string, entity int64) (*streamResult, error) {
	res := &streamResult{subscribers: s.subscribers}
	started := time.Now()
	time.Sleep(time.Second)
	res.rssStart = procStatusKB(srv.pid(), "VmRSS") * 1024
	// The same ingest without subscribers first: the server's working
	// size without streams, so the growth measured later is theirs.
	warmCtx, stopWarm := context.WithCancel(ctx)
	warmPeak := sampleRSS(warmCtx, srv.pid())
	warm := &streamIngester{srv: srv, entity: entity, next: streamEventBase, sent: map[int64]time.Time{}}
	warm.run(ctx, s, s.warmup)
	stopWarm()
	res.rssBase = max(warmPeak(), res.rssStart)
	log.Printf("live push: RSS %.1f MB at start, %.1f MB at most while ingesting without subscribers", mb(res.rssStart), mb(res.rssBase))
	cpuStart := procCPU(srv.pid())

	transport := &http.Transport{
		MaxIdleConnsPerHost: s.subscribers + 16,
		MaxConnsPerHost:     0,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	}
	client := &http.Client{Transport: transport}
	subCtx, stopSubs := context.WithCancel(ctx)
	defer stopSubs()
	subs := make([]*streamSub, s.subscribers)
	var wg sync.WaitGroup
	dial := make(chan struct{}, 32)
	for i := range subs {
		sub := &streamSub{seen: make(map[int64]time.Time, s.rate*int(s.duration/time.Second)+16), openedAt: make(chan struct{})}
		subs[i] = sub
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub.run(subCtx, client, srv.base, keys[i/100], dial)
		}()
	}
	opened := 0
	deadline := time.After(2 * time.Minute)
	for _, sub := range subs {
		select {
		case <-sub.openedAt:
			opened++
		case <-deadline:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res.opened = opened
	if opened < s.subscribers {
		return nil, fmt.Errorf("live push: only %d of %d subscribers opened", opened, s.subscribers)
	}
	time.Sleep(2 * time.Second)
	res.rssIdle = procStatusKB(srv.pid(), "VmRSS") * 1024
	log.Printf("live push: %d subscribers open; RSS %.1f MB", opened, mb(res.rssIdle))

	// Ingest at the rate while the server's RSS is sampled.
	peak := sampleRSS(subCtx, srv.pid())
	in := &streamIngester{srv: srv, entity: entity, next: streamEventBase + 1_000_000, sent: map[int64]time.Time{}}
	in.run(ctx, s, s.duration)
	res.events, res.ingestErrors, res.sendLate = in.events, in.errors, in.late
	sent := in.sent
	// The last events reach everyone within a few seconds, or are lost.
	want := int64(res.events) * int64(s.subscribers)
	drain := time.Now().Add(15 * time.Second)
	for time.Now().Before(drain) {
		var got int64
		for _, sub := range subs {
			sub.mu.Lock()
			got += int64(len(sub.seen))
			sub.mu.Unlock()
		}
		if got >= want {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	res.cpu = procCPU(srv.pid()) - cpuStart
	stopSubs()
	wg.Wait()
	res.rssPeak = max(peak(), res.rssIdle)
	res.want = want
	for _, sub := range subs {
		res.dup += sub.dups
		res.closes += sub.closes
		for id, at := range sub.seen {
			if t0, ok := sent[id]; ok {
				res.got++
				res.latencies = append(res.latencies, at.Sub(t0))
			}
		}
	}
	res.lost = res.want - res.got
	slices.Sort(res.latencies)
	res.elapsed = time.Since(started)
	return res, nil
}

// sampleRSS samples the process's VmRSS every 250 ms until ctx ends and
// returns a function reading the highest value seen.
func sampleRSS(ctx context.Context, pid int) func() int64 {
	var peak atomic.Int64
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if v := procStatusKB(pid, "VmRSS") * 1024; v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	return peak.Load
}

// streamIngester sends new events through POST /admin/ingest at a steady
// rate, recording when each event's request was sent.
type streamIngester struct {
	srv    *proc
	entity int64
	next   int64

	mu     sync.Mutex
	sent   map[int64]time.Time
	events int
	errors int
	late   time.Duration
}

// run ingests s.batch events every s.batch/s.rate for d.
func (in *streamIngester) run(ctx context.Context, s streamOptions, d time.Duration) {
	interval := time.Duration(float64(time.Second) * float64(s.batch) / float64(s.rate))
	client := &http.Client{Timeout: 30 * time.Second}
	begin := time.Now()
	var wg sync.WaitGroup
	for b := 0; b < int(d/interval) && ctx.Err() == nil; b++ {
		if wait := time.Until(begin.Add(time.Duration(b) * interval)); wait > 0 {
			time.Sleep(wait)
		} else if -wait > in.late {
			in.late = -wait
		}
		var body bytes.Buffer
		now := time.Now()
		ts := now.UTC().Format(time.RFC3339)
		in.mu.Lock()
		for i := 0; i < s.batch; i++ {
			in.next++
			fmt.Fprintf(&body, `{"kind":"event","id":%d,"title":"Live bench event %d","eventCategory":"funding","eventSubcategory":"grants",`+
				`"summary":"A steady stream of events for the live-push benchmark.","bullets":["one","two"],"owners":[%d],`+
				`"evidence":[{"id":%d,"content":"Benchmark evidence post","url":"https://example.org/%d","timestamp":%q}],"significance":5}`+"\n",
				in.next, in.next, in.entity, in.next, in.next, ts)
			in.sent[in.next] = now
		}
		in.events += s.batch
		in.mu.Unlock()
		wg.Add(1)
		go func(body []byte) {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, in.srv.base+"/admin/ingest", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+streamAdminToken)
			resp, err := client.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body) //nolint:errcheck
				resp.Body.Close()
			}
			if err != nil || resp.StatusCode != http.StatusOK {
				in.mu.Lock()
				in.errors++
				in.mu.Unlock()
			}
		}(body.Bytes())
	}
	wg.Wait()
}

// run keeps one subscriber connected, resuming from its last id whenever
// the server closes its stream, until ctx ends.
func (s *streamSub) run(ctx context.Context, client *http.Client, base, key string, dial chan struct{}) {
	last := ""
	first := true
	for ctx.Err() == nil {
		dial <- struct{}{}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/stream", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "text/event-stream")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := client.Do(req)
		<-dial
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			time.Sleep(500 * time.Millisecond)
			continue
		}
		last = s.read(resp.Body, last, &first)
		resp.Body.Close()
	}
}

// read consumes one stream and returns the last id seen. The event id is
// read from the start of the data line ({"id":N,…}) without decoding the
// rest.
func (s *streamSub) read(body io.Reader, last string, first *bool) string {
	r := bufio.NewReaderSize(body, 64<<10)
	id := ""
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return last
		}
		switch {
		case bytes.HasPrefix(line, []byte("id: ")):
			id = string(bytes.TrimSpace(line[4:]))
			if *first {
				*first = false
				close(s.openedAt)
			}
			last = id
		case bytes.HasPrefix(line, []byte("event: close")):
			s.closes++
		case bytes.HasPrefix(line, []byte(`data: {"id":`)):
			now := time.Now()
			rest := line[len(`data: {"id":`):]
			end := bytes.IndexByte(rest, ',')
			if end < 0 {
				continue
			}
			n, err := strconv.ParseInt(string(rest[:end]), 10, 64)
			if err != nil {
				continue
			}
			s.mu.Lock()
			if _, dup := s.seen[n]; dup {
				s.dups++
			} else {
				s.seen[n] = now
			}
			s.mu.Unlock()
		}
	}
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}

// renderStream writes the scenario's markdown report.
func renderStream(m machine, s streamOptions, r *streamResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Live push benchmark\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`tests/bench/stream.go`; alone: `make bench BENCHFLAGS=-stream-only`). "+
		"%d subscribers hold `GET /v1/stream` open on one server (%d API keys, 100 streams each) while events are ingested "+
		"through `POST /admin/ingest` on the same server, %d every %s (%d events/s) for %s. Latency is from the moment "+
		"the harness sends an event's ingest request to the moment a subscriber reads the event's line, for every "+
		"(event, subscriber) pair. RSS growth is the peak with subscribers minus the peak of the same ingest run first "+
		"for %s without subscribers. The harness, the server and PostgreSQL share the machine.\n\n",
		s.subscribers, (s.subscribers+99)/100, s.batch, time.Duration(float64(time.Second)*float64(s.batch)/float64(s.rate)),
		s.rate, s.duration, s.warmup)
	fmt.Fprintf(&b, "Machine: %s. Load average before: %s; after: %s.\n\n", m.oneLine(), m.loadBefore, m.loadAfter)
	fmt.Fprintf(&b, "| subscribers | events/s | events | deliveries | lost | duplicates | p50 | p99 | max | RSS at start | RSS ingesting, no subscribers | RSS with subscribers, idle | RSS peak with subscribers | RSS growth | server CPU |\n")
	fmt.Fprintf(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %.1f ms | %.1f ms | %.1f ms | %.1f MB | %.1f MB | %.1f MB | %.1f MB | %.1f MB | %.1f s (%.0f%% of a core) |\n\n",
		r.subscribers, s.rate, r.events, r.got, r.lost, r.dup,
		msf(pct(r.latencies, 0.50)), msf(pct(r.latencies, 0.99)), msf(pct(r.latencies, 1)),
		mb(r.rssStart), mb(r.rssBase), mb(r.rssIdle), mb(r.rssPeak), mb(r.rssPeak-r.rssBase),
		r.cpu.Seconds(), 100*r.cpu.Seconds()/s.duration.Seconds())
	p99 := pct(r.latencies, 0.99)
	fmt.Fprintf(&b, "Goals: p99 ≤ 500 ms — %s (%.1f ms); RSS growth ≤ 100 MB at %d subscribers — %s (%.1f MB).",
		yes(p99 <= 500*time.Millisecond && r.got > 0), msf(p99), r.subscribers, yes(r.rssPeak-r.rssBase <= 100<<20), mb(r.rssPeak-r.rssBase))
	if r.closes > 0 {
		fmt.Fprintf(&b, " %d streams were closed by the server and resumed from their cursor.", r.closes)
	}
	if r.ingestErrors > 0 {
		fmt.Fprintf(&b, " %d ingest requests failed.", r.ingestErrors)
	}
	if r.sendLate > 50*time.Millisecond {
		fmt.Fprintf(&b, " The harness sent a batch up to %s late.", r.sendLate.Round(time.Millisecond))
	}
	if loadHigh(m.loadBefore) {
		b.WriteString(" **The machine was busy when the run started: the figures are pessimistic.**")
	}
	fmt.Fprintf(&b, "\n\nElapsed: %s.\n", r.elapsed.Round(time.Second))
	return b.String()
}
