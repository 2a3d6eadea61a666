package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// machine describes where the run happened.
type machine struct {
	cpus       int
	cpuModel   string
	memTotal   string
	goVersion  string
	kernel     string
	date       time.Time
	loadBefore string
	loadAfter  string
}

func describeMachine() machine {
	m := machine{cpus: runtime.NumCPU(), goVersion: runtime.Version(), date: time.Now().UTC(), loadBefore: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.cpuModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if kb := procMeminfoKB("MemTotal"); kb > 0 {
		m.memTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	if out, err := exec.Command("nproc").Output(); err == nil {
		fmt.Sscan(string(out), &m.cpus) //nolint:errcheck
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m.kernel = strings.TrimSpace(string(out))
	}
	return m
}

func (m machine) oneLine() string {
	return fmt.Sprintf("%d CPUs (%s), %s RAM, %s, load %s", m.cpus, m.cpuModel, m.memTotal, m.goVersion, m.loadBefore)
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute averages.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func procMeminfoKB(field string) int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var n int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n) //nolint:errcheck
			return n
		}
	}
	return 0
}

// reportInput is everything the report shows.
type reportInput struct {
	machine  machine
	seed     *seedInfo
	opts     options
	rows     []result // the service as shipped
	floor    []result
	computed []result // the service computing every request
	pgl      []result // PostGraphile 5
	probes   []stmtProbe
	// computedProbes are probes against the server with the response
	// cache off (probes hit the cache on their second request).
	computedProbes  []stmtProbe
	same            []sameData
	sections        []*section
	serverPeakRSS   int64
	computedPeakRSS int64
	elapsed         time.Duration
}

// Route names the targets read.
const (
	latestRoute       = "GET /v1/latest?limit=25"
	threeHopRoute     = "POST /graphql (3 hops, 5 per level)"
	pglThreeHopRoute  = "PostGraphile 5: 3 hops, 5 per level"
	latestDocRoute    = "POST /graphql (25 latest with owners and evidence)"
	pglLatestDocRoute = "PostGraphile 5: 25 latest events with owners and evidence"
	searchRoute       = "GET /v1/search?q=…"
	byNameRoute       = "GET /v1/entities/byName"
	byIDRoute         = "GET /v1/entities/byId"
	relationshipRoute = "GET /v1/entities/{id}/relationships"
	briefBatchRoute   = "GET /v1/brief/batch (25 ids)"
)

// Targets of the issue on the cached /v1/latest (they were met before the
// computed path was worked on and must stay met).
const (
	targetRPS        = 1200.0
	targetFloorRatio = 0.65
	targetP50c1      = 1500 * time.Microsecond
	targetP99c32     = 40 * time.Millisecond
	targetRSS        = 150 << 20
)

// Targets of the computed core, every request computed: issue 18's, with
// issue 42's where it raised them (the floor ratio, /graphql against
// PostGraphile for both documents, byName's p50, brief/batch's CPU).
const (
	targetComputedFloorRatio = 1.0
	targetComputedCPU        = 800 * time.Microsecond
	targetPGLRatio           = 2.0
	targetThreeHopP50        = 3 * time.Millisecond
	targetSearchP50          = 2 * time.Millisecond
	targetByNameP50          = 1 * time.Millisecond
	targetLookupP50          = 2 * time.Millisecond
	targetBriefCPU           = 1500 * time.Microsecond
)

// writeHead writes the heading of a report's "Machine and run" and its
// date, CPU and Go lines; also names what else shares the machine besides
// the service and PostgreSQL ("" or a list ending in "and ").
func (m machine) writeHead(b *strings.Builder, also string) {
	fmt.Fprintf(b, "## Machine and run\n\n")
	fmt.Fprintf(b, "- Date: %s\n", m.date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(b, "- CPU: %d × %s (`nproc` = %d); memory %s; %s\n", m.cpus, m.cpuModel, m.cpus, m.memTotal, m.kernel)
	if also == "" {
		fmt.Fprintf(b, "- Go: %s. The service, PostgreSQL and the load generator share the machine.\n", m.goVersion)
	} else {
		fmt.Fprintf(b, "- Go: %s. The service, PostgreSQL, %sthe load generator share the machine.\n", m.goVersion, also)
	}
}

// writeLine writes a report's Data line: the seeded database, its size in
// GiB with digits decimals.
func (s *seedInfo) writeLine(b *strings.Builder, events, digits int) {
	reuse := "generated for this run"
	if s.Reused {
		reuse = "reused from the cache"
	}
	fmt.Fprintf(b, "- Data: `seed --demo --events %d` (%s, %s, seeded %s): %d events, %d evidence posts, %d entities; database %.*f GiB; %s\n",
		events, s.Key, reuse, s.SeededAt.UTC().Format("2006-01-02 15:04 MST"), s.Events, s.Evidence, s.Entities, digits, float64(s.DBSize)/(1<<30), s.Vacuum.reportLine())
}

func renderReport(in reportInput) string {
	var b strings.Builder
	m := in.machine
	fmt.Fprintf(&b, "# Benchmark results\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (tests/bench); do not edit by hand, run it again.\n\n")
	m.writeHead(&b, "the floor, PostGraphile and ")
	fmt.Fprintf(&b, "- Load average (1/5/15 min) before the run: %s; after: %s (the run itself keeps both cores busy, so the figure after it is never low)", m.loadBefore, m.loadAfter)
	if loadHigh(m.loadBefore) {
		fmt.Fprintf(&b, " — **the machine was busy with other work; the figures below are lower than on an idle machine**")
	}
	fmt.Fprintf(&b, "\n")
	if s := in.seed; s != nil {
		s.writeLine(&b, in.opts.events, 1)
	}
	conc := make([]string, len(in.opts.concs))
	for i, c := range in.opts.concs {
		conc[i] = fmt.Sprint(c)
	}
	gz := "plain JSON (no Accept-Encoding: gzip)"
	if in.opts.gzip {
		gz = "Accept-Encoding: gzip"
	}
	fmt.Fprintf(&b, "- Load: closed loop (each of c workers sends its next request when the last response is fully read), c = %s, %s measured after %s warm-up per row; %s; keep-alive; pools of %d connections (service, floor, PostGraphile); whole run %s\n",
		strings.Join(conc, ", "), in.opts.duration, in.opts.warmup, gz, in.opts.dbMaxConns, in.elapsed.Round(time.Second))
	if len(in.opts.serverEnv) > 0 {
		fmt.Fprintf(&b, "- Server environment added for this run: `%s`\n", strings.Join(in.opts.serverEnv, " "))
	}
	fmt.Fprintf(&b, "- Access: %d enterprise keys, each used at most %d times per 60-second rate window, so the rate limit never refuses and every service request is authenticated, metered and charged (one statement); the floor and PostGraphile have no access layer\n",
		in.opts.keys, perKeyBudget)
	fmt.Fprintf(&b, "\n")

	fmt.Fprintf(&b, "## Routes\n\n")
	writeHeader(&b)
	for _, r := range in.rows {
		writeRow(&b, r)
	}
	for _, r := range in.floor {
		writeRow(&b, r)
	}
	for _, r := range in.computed {
		writeRow(&b, r)
	}
	for _, r := range in.pgl {
		writeRow(&b, r)
	}
	fmt.Fprintf(&b, "\n")
	fmt.Fprintf(&b, "- The service runs as shipped, with its response cache on (`RESPONSE_CACHE_TTL` 1s): a load of identical requests, like the /v1/latest and /v1/signal/top rows, is answered from it after the first request of each content version and second, for the metering statement alone (SQL stmts/req 1.00); routes whose parameters vary per request mostly compute. Every request is still authenticated, rate-limited and metered.\n")
	if len(in.computed) > 0 {
		fmt.Fprintf(&b, "- **(computed)** rows: the same binary started a second time with `RESPONSE_CACHE_TTL=-1s`, so every request runs the operation, its loads and the encoding; each measured right after the route's cached rows. The targets below are read on these rows.\n")
	}
	if len(byConcurrency(in.computed, byIDRoute+" (computed)")) > 0 {
		fmt.Fprintf(&b, "- **/v1/entities/byId** rows: the cheapest metered request (one entity by its key, 0.3 KB: the access layer, its metering statement and one read). Each c=1 p50 target names its computed c=1 p50 beside the figure it reads.\n")
	}
	if len(in.floor) > 0 {
		fmt.Fprintf(&b, "- **floor** rows: a hand-written handler in tests/bench (pgx pool of the same size, the same three statements as the service's events, roles and evidence loads, `encoding/json`, the same envelope and event shape — note the equal KB/resp), no access layer or metering, in its own process; measured in %d rounds at each concurrency, alternated with the computing server's /v1/latest rows (the row is their sum, the ratio's rounds are each round's).\n", max(in.opts.pairRounds, 1))
	}
	if len(in.pgl) > 0 {
		fmt.Fprintf(&b, "- **PostGraphile 5** rows: PostGraphile %s (amber preset, as installed by `make bench` from tests/bench/postgraphile/package-lock.json, on Node 22 from the npm package `node`) serving the same database with the same pool size, no access layer; each measured in %d rounds at each concurrency, alternated with the computing server's equivalent /graphql rows. The query pairs and the same-data check are below.\n", pglVersion(in.opts), max(in.opts.pairRounds, 1))
	}
	fmt.Fprintf(&b, "- **SQL stmts/req** is the mean of the `X-Statement-Count` header the service sets on every response when started with `STATEMENT_COUNT_HEADER=true`: the statements its request context ran (the access layer's metering statement included).\n")
	fmt.Fprintf(&b, "- **xacts/req** cross-checks it from PostgreSQL's side: the change of `xact_commit + xact_rollback` in `pg_stat_database` over the measured period divided by the requests (every autocommit statement is one transaction; background work such as River's polling adds a little).\n")
	fmt.Fprintf(&b, "- **server CPU ms/req** is the server process's user+system CPU time (`/proc/<pid>/stat`, 10 ms ticks) over the measured period divided by the requests. **PG CPU ms/req** is the same for the PostgreSQL backends connected to the benchmark database (their process titles name it): PostgreSQL's share of each request. Both are the figures least disturbed by other load on the machine.\n")
	fmt.Fprintf(&b, "- **others %%** and **steal %%** say how much the machine was shared while a row was measured, from `/proc/stat` over the measured period, as shares of every core's time: *others* is the busy time spent by neither the service, its PostgreSQL backends nor the load generator (PostgreSQL's background processes, the replica and any other process on the machine), *steal* the time the hypervisor gave to another guest while this one wanted a core. A row measured with either high reads slow for reasons outside the code.\n")
	fmt.Fprintf(&b, "- Latencies are exact quantiles over every request (send to last body byte, measured by the client). **server peak RSS** is `VmHWM` from `/proc/<pid>/status`, the peak since the process started (so it only grows down a server's rows).\n")
	all := append(append(append(append([]result{}, in.rows...), in.floor...), in.computed...), in.pgl...)
	for _, r := range all {
		if r.errors > 0 {
			fmt.Fprintf(&b, "- %s at c=%d: first error: `%s`\n", r.name, r.concurrency, strings.ReplaceAll(r.firstError, "`", "'"))
		}
		if r.keyWaits > 0 {
			fmt.Fprintf(&b, "- %s at c=%d waited %d times for a key with budget (more keys: `-keys`)\n", r.name, r.concurrency, r.keyWaits)
		}
	}
	fmt.Fprintf(&b, "\n")

	if len(in.same) > 0 {
		fmt.Fprintf(&b, "## PostGraphile 5 side by side\n\n")
		fmt.Fprintf(&b, "Each pair asks both servers for the same rows in the same order. Before the rows were measured, the harness sent each pair's documents to both (the 3-hop one from several roots) and compared what came back, reduced to ids and counts per level:\n\n")
		fmt.Fprintf(&b, "| pair | documents | same ids, same counts |\n|---|--:|---|\n")
		for _, sd := range in.same {
			verdict := "yes"
			if !sd.same {
				verdict = "**no**: " + sd.detail
			}
			fmt.Fprintf(&b, "| %s | %d | %s |\n", sd.pair, sd.documents, verdict)
		}
		fmt.Fprintf(&b, "\n")
		for _, qp := range queryPairs() {
			fmt.Fprintf(&b, "**%s** — the service (`POST /graphql`):\n\n```graphql\n%s\n```\n\nPostGraphile 5:\n\n```graphql\n%s\n```\n\n", qp.name, qp.service, qp.pgl)
		}
		fmt.Fprintf(&b, "The 3-hop roots are the entities with at least five outbound relationships (the service lists outbound edges first, PostGraphile's relation follows outbound ones only), five per level; the REST form of the first pair is `GET /v1/latest?limit=25&sort=recency&window=30d` (full events: participants, bullets and the legacy fields too).\n\n")
	}

	if len(in.probes) > 0 {
		fmt.Fprintf(&b, "## SQL statements per request by page size and fan-out\n\n")
		if len(in.computedProbes) == len(in.probes) {
			fmt.Fprintf(&b, "`X-Statement-Count` (metering included) of each request computed (the server with the response cache off) and answered again from the cache (the server as shipped; `/graphql` is never cached), the smaller of two sends with one key: a key's first `/graphql` request in a minute adds one lookup of the key before its document is read (access/door.go):\n\n| request | size | statements, computed | statements, cached |\n|---|---|--:|--:|\n")
			for i, p := range in.probes {
				fmt.Fprintf(&b, "| %s | %s | %d | %d |\n", p.route, p.size, in.computedProbes[i].stmts, p.stmts)
			}
		} else {
			fmt.Fprintf(&b, "One request each, `X-Statement-Count` (metering included):\n\n| request | size | statements |\n|---|---|--:|\n")
			for _, p := range in.probes {
				fmt.Fprintf(&b, "| %s | %s | %d |\n", p.route, p.size, p.stmts)
			}
		}
		fmt.Fprintf(&b, "\n")
	}

	floor := byConcurrency(in.floor, "floor: ")
	if len(in.computed) > 0 {
		fmt.Fprintf(&b, "## Targets, every request computed (metering on)\n\n")
		writeComputedTargets(&b, in, floor)
	}
	fmt.Fprintf(&b, "## Targets of /v1/latest?limit=25 as shipped (response cache on)\n\n")
	writeTargets(&b, byConcurrency(named(in.rows, latestRoute), latestRoute), floor, fmt.Sprintf("%.0f MB over the whole run, all routes", float64(in.serverPeakRSS)/(1<<20)))

	for _, sec := range in.sections {
		fmt.Fprintf(&b, "## %s\n\n", sec.title)
		if len(sec.rows) > 0 {
			writeHeader(&b)
			for _, r := range sec.rows {
				writeRow(&b, r)
			}
			fmt.Fprintf(&b, "\n")
		}
		if sec.markdown != "" {
			b.WriteString(strings.TrimSpace(sec.markdown) + "\n\n")
		}
	}

	if notes, err := os.ReadFile(filepath.Join(in.opts.repo, "tests", "bench", "NOTES.md")); err == nil {
		// The hand-written analysis (profile findings, what was changed,
		// what is left) follows the measured figures.
		b.Write(notes)
	}
	return b.String()
}

func writeHeader(b *strings.Builder) {
	fmt.Fprintf(b, "| route | c | req/s | p50 ms | p95 ms | p99 ms | errors | server CPU ms/req | PG CPU ms/req | SQL stmts/req | xacts/req | KB/resp | server peak RSS MB | others %% | steal %% |\n")
	fmt.Fprintf(b, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
}

// roundsClause is "; rounds 1.05, 0.98, …" with each round's ratio of r to
// its peer p, when the two were alternated in rounds (measurePaired).
func roundsClause(r, p result) string {
	if len(r.rounds) < 2 || len(r.rounds) != len(p.rounds) {
		return ""
	}
	parts := make([]string, len(r.rounds))
	for i := range r.rounds {
		if p.rounds[i] <= 0 {
			return ""
		}
		parts[i] = fmt.Sprintf("%.2f", r.rounds[i]/p.rounds[i])
	}
	return "; rounds " + strings.Join(parts, ", ")
}

// pglVersion is the installed PostGraphile's version.
func pglVersion(o options) string {
	b, err := os.ReadFile(filepath.Join(pglDir(o), "node_modules", "postgraphile", "package.json"))
	if err != nil {
		return "5"
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pkg) != nil || pkg.Version == "" {
		return "5"
	}
	return pkg.Version
}

// meteredFloorClause is what a c=1 p50 target's measured figure is read
// beside: the p50 of the cheapest metered request (byIDRoute, computed,
// c=1) in the same run, or "" when it was not measured. A c=1 latency is
// the sum of its steps' CPU and wake-ups on this machine, so the clause
// says how much of a target the access layer and one read take here.
func meteredFloorClause(in reportInput) string {
	r, ok := byConcurrency(in.computed, byIDRoute+" (computed)")[1]
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (the cheapest metered request, `/v1/entities/byId`: %s)", ms(r.pct(0.5)))
}

// writeComputedTargets writes the computed core's targets, each with what
// was measured, the gap and the row it was read on.
func writeComputedTargets(b *strings.Builder, in reportInput, floor map[int]result) {
	type target struct {
		name, measured string
		met            bool
		gap            string
	}
	var ts []target
	add := func(name, measured string, met bool, gap string) {
		ts = append(ts, target{name, measured, met, gap})
	}
	short := func(want, got float64) string { return gap(want, got) }
	over := func(got, want time.Duration) string { return gap(float64(got), float64(want)) }
	latest := byConcurrency(in.computed, latestRoute+" (computed)")
	if r, ok := latest[8]; ok {
		if f, ok := floor[8]; ok && f.rps() > 0 {
			ratio := r.rps() / f.rps()
			add(fmt.Sprintf("/v1/latest?limit=25 c=8 ≥ %.1f × floor", targetComputedFloorRatio),
				fmt.Sprintf("%.2f × (service %.0f ÷ floor %.0f req/s%s)", ratio, r.rps(), f.rps(), roundsClause(r, f)), ratio >= targetComputedFloorRatio, short(targetComputedFloorRatio, ratio))
		}
		add(fmt.Sprintf("/v1/latest?limit=25 server CPU ≤ %s per request (c=8)", ms(targetComputedCPU)), ms(r.cpuPerReq()),
			r.cpuPerReq() <= targetComputedCPU, over(r.cpuPerReq(), targetComputedCPU))
	}
	if r, ok := latest[1]; ok {
		add(fmt.Sprintf("/v1/latest?limit=25 c=1 p50 ≤ %s", ms(targetP50c1)), ms(r.pct(0.5)), r.pct(0.5) <= targetP50c1, over(r.pct(0.5), targetP50c1))
	}
	if r, ok := latest[32]; ok {
		add(fmt.Sprintf("/v1/latest?limit=25 c=32 p99 ≤ %s", ms(targetP99c32)), ms(r.pct(0.99)), r.pct(0.99) <= targetP99c32, over(r.pct(0.99), targetP99c32))
	}
	for _, doc := range []struct{ route, peer, name string }{
		{latestDocRoute, pglLatestDocRoute, "/graphql 25 latest"},
		{threeHopRoute, pglThreeHopRoute, "/graphql 3 hops"},
	} {
		r, ok := byConcurrency(in.computed, doc.route+" (computed)")[8]
		p, pok := byConcurrency(in.pgl, doc.peer)[8]
		if !ok || !pok || p.rps() <= 0 {
			continue
		}
		ratio := r.rps() / p.rps()
		add(fmt.Sprintf("%s (query text never compiled) c=8 ≥ %.0f × PostGraphile 5", doc.name, targetPGLRatio),
			fmt.Sprintf("%.2f × (service %.0f ÷ PostGraphile %.0f req/s%s)", ratio, r.rps(), p.rps(), roundsClause(r, p)), ratio >= targetPGLRatio, short(targetPGLRatio, ratio))
	}
	hop := byConcurrency(in.computed, threeHopRoute+" (computed)")
	if r, ok := hop[1]; ok {
		add(fmt.Sprintf("/graphql 3 hops c=1 p50 ≤ %s", ms(targetThreeHopP50)), ms(r.pct(0.5)), r.pct(0.5) <= targetThreeHopP50, over(r.pct(0.5), targetThreeHopP50))
	}
	p50 := func(route string, want time.Duration) {
		if r, ok := byConcurrency(in.computed, route+" (computed)")[1]; ok {
			add(fmt.Sprintf("%s c=1 p50 ≤ %s", strings.TrimPrefix(route, "GET "), ms(want)), ms(r.pct(0.5))+meteredFloorClause(in), r.pct(0.5) <= want, over(r.pct(0.5), want))
		}
	}
	p50(searchRoute, targetSearchP50)
	searchTargets(in, add)
	p50(byNameRoute, targetByNameP50)
	p50(relationshipRoute, targetLookupP50)
	if r, ok := byConcurrency(in.computed, briefBatchRoute+" (computed)")[8]; ok {
		add(fmt.Sprintf("/v1/brief/batch 25 ids server CPU ≤ %s per request (c=8)", ms(targetBriefCPU)), ms(r.cpuPerReq()),
			r.cpuPerReq() <= targetBriefCPU, over(r.cpuPerReq(), targetBriefCPU))
	}
	peak := max(in.serverPeakRSS, in.computedPeakRSS)
	add("server peak RSS over the whole run ≤ 150 MB", fmt.Sprintf("%.0f MB (as shipped %.0f MB, computing %.0f MB)", float64(peak)/(1<<20),
		float64(in.serverPeakRSS)/(1<<20), float64(in.computedPeakRSS)/(1<<20)), peak <= targetRSS, gap(float64(peak), targetRSS))
	errs := 0
	for _, r := range in.computed {
		errs += r.errors
	}
	add("zero errors (computed rows)", fmt.Sprint(errs), errs == 0, "")
	fmt.Fprintf(b, "| target | measured | met | gap |\n|---|---|---|---|\n")
	for _, t := range ts {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.name, t.measured, yes(t.met), t.gap)
	}
	fmt.Fprintf(b, "\nSearch quality (recall@10, MRR, nDCG@10) is not a load figure: `tests/search_eval_test.go` checks both judged sets on the demo data in every `make test`; the section \"Search judged set\" below scores the judged set on this database.\n\n")
}

func writeRow(b *strings.Builder, r result) {
	stmts := "–"
	if v := r.stmtsPerReq(); v >= 0 {
		stmts = fmt.Sprintf("%.2f", v)
	}
	kb := 0.0
	if r.requests > 0 {
		kb = float64(r.bytes) / float64(r.requests) / 1024
	}
	fmt.Fprintf(b, "| %s | %d | %.0f | %.2f | %.2f | %.2f | %d | %.2f | %.2f | %s | %.2f | %.1f | %.0f | %.0f | %.1f |\n",
		r.name, r.concurrency, r.rps(), msf(r.pct(0.5)), msf(r.pct(0.95)), msf(r.pct(0.99)), r.errors, msf(r.cpuPerReq()), msf(r.pgCPUPerReq()), stmts,
		float64(r.xacts)/float64(max(1, r.requests)), kb, float64(r.rssPeak)/(1<<20), r.othersPct(), r.stealPct())
}

// gap says how far want is above got (for targets where more is better,
// or pass the measured value first where less is better): "", when met,
// else "N.N× short".
func gap(want, got float64) string {
	if got <= 0 || want <= got {
		return ""
	}
	return fmt.Sprintf("%.1f× short", want/got)
}

func msf(d time.Duration) float64 { return float64(d) / 1e6 }

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// loadHigh reports whether the 1-minute load average is above 3 (on this
// 2-core machine: other work competed with the run).
func loadHigh(load string) bool {
	var one float64
	if _, err := fmt.Sscan(load, &one); err != nil {
		return false
	}
	return one > 3
}

// byConcurrency picks the rows whose name starts with prefix, by
// concurrency.
// named is the rows of rows named name exactly (byConcurrency takes a
// prefix: "GET /v1/latest?limit=25" begins other routes' names too).
func named(rows []result, name string) []result {
	var out []result
	for _, r := range rows {
		if r.name == name {
			out = append(out, r)
		}
	}
	return out
}

func byConcurrency(rows []result, prefix string) map[int]result {
	out := map[int]result{}
	for _, r := range rows {
		if strings.HasPrefix(r.name, prefix) {
			out[r.concurrency] = r
		}
	}
	return out
}

// writeTargets writes the targets table of the /v1/latest rows in latest
// against the floor's; rssNote qualifies the RSS figure.
func writeTargets(b *strings.Builder, latest, floor map[int]result, rssNote string) {
	fmt.Fprintf(b, "| target | measured | met | gap |\n|---|---|---|---|\n")
	if r, ok := latest[8]; ok {
		fmt.Fprintf(b, "| c=8 ≥ %.0f req/s | %.0f req/s | %s | %s |\n", targetRPS, r.rps(), yes(r.rps() >= targetRPS), gap(targetRPS, r.rps()))
		if f, ok := floor[8]; ok && f.rps() > 0 {
			ratio := r.rps() / f.rps()
			fmt.Fprintf(b, "| c=8 ≥ %.2f × floor | %.2f × (service %.0f ÷ floor %.0f req/s%s) | %s | %s |\n", targetFloorRatio, ratio, r.rps(), f.rps(), roundsClause(r, f), yes(ratio >= targetFloorRatio), gap(targetFloorRatio, ratio))
		}
	}
	if r, ok := latest[1]; ok {
		fmt.Fprintf(b, "| c=1 p50 ≤ %s | %s | %s | %s |\n", ms(targetP50c1), ms(r.pct(0.5)), yes(r.pct(0.5) <= targetP50c1), gap(float64(r.pct(0.5)), float64(targetP50c1)))
	}
	if r, ok := latest[32]; ok {
		fmt.Fprintf(b, "| c=32 p99 ≤ %s | %s | %s | %s |\n", ms(targetP99c32), ms(r.pct(0.99)), yes(r.pct(0.99) <= targetP99c32), gap(float64(r.pct(0.99)), float64(targetP99c32)))
	}
	if len(latest) > 0 {
		errs := 0
		for _, r := range latest {
			errs += r.errors
		}
		fmt.Fprintf(b, "| zero errors | %d | %s | |\n", errs, yes(errs == 0))
	}
	var latestRSS int64
	for _, r := range latest {
		latestRSS = max(latestRSS, r.rssPeak)
	}
	if latestRSS > 0 {
		fmt.Fprintf(b, "| server RSS ≤ 150 MB | %.0f MB peak through the /v1/latest rows (%s) | %s | %s |\n",
			float64(latestRSS)/(1<<20), rssNote, yes(latestRSS <= targetRSS), gap(float64(latestRSS), targetRSS))
	}
	fmt.Fprintf(b, "\n")
}
