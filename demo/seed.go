// Package demo generates the deterministic demo dataset that `cryptointel
// seed --demo` (and so `make run`) and the tests load: entities with
// tickers and relationships, references, radar events and signals with
// evidence, and prediction markets. The rows are bulk-loaded through db.
package demo

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// Options configure Seed.
type Options struct {
	// Events is how many events to generate. Defaults to 20,000.
	Events int
	// Entities is how many entities to generate: the named ones (about 230
	// projects, foundations, exchanges, funds and regulators) plus generated
	// projects up to this number. Defaults to 520; values below the named
	// count are raised to it.
	Entities int
	// Force replaces existing domain data (entities, events, markets and
	// everything hanging off them). Without it Seed does nothing when
	// any entity or event exists.
	Force bool
	// Seed is the PRNG seed. Defaults to a fixed value, so two runs with
	// the same options and the same clock produce identical data.
	Seed uint64
	// Progress receives a progress line about every tenth of the events (at
	// most every 100,000), unless OnEvents is set, and a line per later
	// phase. Nil for none.
	Progress io.Writer
	// OnEvents, when set, is called after each chunk of events is written
	// with the events written so far and the total, in place of Progress's
	// per-event lines (the CLI draws a progress bar with it). Nil for none.
	OnEvents func(done, total int)
	// ChunkSize is how many events one round of COPY writes. Defaults to
	// 5,000.
	ChunkSize int
}

// defaultSeed is the demo data's fixed PRNG seed.
const defaultSeed = 20261122

// Result counts what Seed wrote.
type Result struct {
	// Skipped is true when the database already had data and Force was not
	// set; nothing was written.
	Skipped bool `json:"skipped"`

	// The rest count the rows written per table; Signals counts the events
	// with a significance.
	Entities      int `json:"entities"`
	Relationships int `json:"relationships"`
	References    int `json:"references"`
	Events        int `json:"events"`
	Signals       int `json:"signals"`
	Evidence      int `json:"evidence"`
	EventEntities int `json:"eventEntities"`
	Markets       int `json:"markets"`
	Subevents     int `json:"subevents"`
	MarketPosts   int `json:"marketPosts"`
}

// Seed fills an empty database with a deterministic, coherent demo world
// (see world.go and stories.go): real-world-style projects with tickers
// (two tickers deliberately shared), foundations (FOUNDATION_OF,
// searchExpand), exchanges (LISTED_ON), funds (INVESTED_IN), regulators
// (REGULATES), partnerships (PARTNER_OF) and BUILT_ON edges that the
// events agree with; references; news over the last 30 days (relative to
// store.Now, truncated to the minute), each happening told by one to five
// sources in their own phrasings with 1–3 evidence posts in other words,
// storylines whose steps follow over days and weeks, events scheduled
// ahead, about 30% of them signals with significance 1–10, research,
// commentary, analysis and media items; and prediction markets with
// sub-events and posts.
//
// Everything is bulk-loaded with COPY in one transaction, followed by
// ANALYZE. Seeded events carry ingest_seq 0: they are history, so the
// webhook poller never replays them. Seeding only happens on an empty
// database unless Force is set.
func Seed(ctx context.Context, store *db.DB, opts Options) (*Result, error) {
	if opts.Events <= 0 {
		opts.Events = 20_000
	}
	if opts.Entities <= 0 {
		opts.Entities = 520
	}
	if opts.Seed == 0 {
		opts.Seed = defaultSeed
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 5_000
	}
	now := store.Now().UTC().Truncate(time.Minute)
	gen := newSeedGen(opts.Seed, now, opts.Entities)
	gen.total = int64(opts.Events)
	res := &Result{}
	started := time.Now()

	load, err := store.BeginBulkLoad(ctx, opts.Force)
	if err != nil {
		return nil, err
	}
	if load == nil {
		return &Result{Skipped: true}, nil
	}
	defer load.Rollback(ctx)
	copyRows := func(table string, cols []string, rows [][]any) (int, error) {
		return load.Copy(ctx, table, cols, rows)
	}

	// Entities and their names.
	var entityRows [][]any
	var nameIDs []int64
	var nameKinds, nameValues []string
	for _, e := range gen.entities {
		entityRows = append(entityRows, []any{e.id, e.name, e.name, e.typ, "active", e.aliases})
		nameIDs = append(nameIDs, e.id, e.id)
		nameKinds = append(nameKinds, "canonical_name", "display_name")
		nameValues = append(nameValues, e.name, e.name)
		for _, a := range e.aliases {
			nameIDs = append(nameIDs, e.id)
			nameKinds = append(nameKinds, "alias")
			nameValues = append(nameValues, a)
		}
	}
	if res.Entities, err = copyRows("entities", []string{"id", "canonical_name", "display_name", "entity_type", "status", "aliases"}, entityRows); err != nil {
		return nil, err
	}
	if err := load.WriteEntityNames(ctx, nameIDs, nameKinds, nameValues); err != nil {
		return nil, err
	}
	if res.Relationships, err = copyRows("relationships",
		[]string{"source_entity_id", "target_entity_id", "relationship_type", "status", "search_expand"}, gen.relationships()); err != nil {
		return nil, err
	}
	if res.References, err = copyRows("entity_references",
		[]string{"id", "entity_id", "reference_type", "title", "url"}, gen.references()); err != nil {
		return nil, err
	}
	markets, subevents, posts := gen.markets()
	if res.Markets, err = copyRows("markets",
		[]string{"id", "entity_id", "question", "url", "outcomes", "probability", "volume", "closes_at"}, markets); err != nil {
		return nil, err
	}
	if res.Subevents, err = copyRows("market_subevents",
		[]string{"id", "market_id", "label", "subevent_type", "normalized_title", "injected_summary"}, subevents); err != nil {
		return nil, err
	}
	if res.MarketPosts, err = copyRows("market_posts", []string{"id", "subevent_id", "content", "posted_at"}, posts); err != nil {
		return nil, err
	}

	// Events, in chunks: each chunk's events, then their evidence and roles.
	progressEvery := min(100_000, max(1, opts.Events/10))
	nextProgress := progressEvery
	eventCounts := make(map[int64]int64, len(gen.entities))
	var events, evidence, links [][]any
	for id := 1; id <= opts.Events; id++ {
		ev := gen.event(int64(id))
		events = append(events, ev.row)
		evidence = append(evidence, ev.evidence...)
		links = append(links, ev.links...)
		for _, eid := range ev.entityIDs {
			eventCounts[eid]++
		}
		if ev.signal {
			res.Signals++
		}
		if len(events) < opts.ChunkSize && id < opts.Events {
			continue
		}
		n, err := copyRows("events", []string{"id", "title", "category", "subcategory", "summary", "bullets",
			"significance", "content_type", "latest_evidence_at", "evidence_text", "ingest_seq"}, events)
		if err != nil {
			return nil, err
		}
		res.Events += n
		if n, err = copyRows("evidence", []string{"id", "event_id", "content", "url", "ts"}, evidence); err != nil {
			return nil, err
		}
		res.Evidence += n
		if n, err = copyRows("event_entities", []string{"event_id", "entity_id", "role", "position",
			"latest_evidence_at", "significance", "content_type", "category"}, links); err != nil {
			return nil, err
		}
		res.EventEntities += n
		events, evidence, links = events[:0], evidence[:0], links[:0]
		if opts.OnEvents != nil {
			opts.OnEvents(id, opts.Events)
		} else if opts.Progress != nil && (id >= nextProgress || id == opts.Events) {
			fmt.Fprintf(opts.Progress, "seed: %d/%d events (%s)\n", id, opts.Events, time.Since(started).Round(100*time.Millisecond))
			for nextProgress <= id {
				nextProgress += progressEvery
			}
		}
	}

	if err := load.RebuildIndexes(ctx); err != nil {
		return nil, err
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "seed: indexes rebuilt (%s)\n", time.Since(started).Round(100*time.Millisecond))
	}

	countIDs := make([]int64, 0, len(eventCounts))
	counts := make([]int64, 0, len(eventCounts))
	for id, n := range eventCounts {
		countIDs = append(countIDs, id)
		counts = append(counts, n)
	}
	if err := load.SetEventCounts(ctx, countIDs, counts); err != nil {
		return nil, err
	}
	if err := load.Commit(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// seedEntity is one generated entity.
type seedEntity struct {
	id      int64
	name    string
	typ     string
	aliases []string
	ticker  string
	slug    string
	of      string
	named   bool
}

// seedGen generates the demo data from one PRNG seed.
type seedGen struct {
	seed     uint64
	now      time.Time
	entities []*seedEntity
	byName   map[string]*seedEntity
	pools    map[string][]*seedEntity // by entity type, most popular first
	events   *rand.Rand
	// total is how many events the run generates; event times grow with
	// their ids, as they do for ingested events, so the table is stored in
	// time order.
	total int64
	world *world
	// open are the happenings still being reported, oldest first; steps
	// the storylines' next steps, soonest first.
	open    []*happening
	steps   stepQueue
	stepSeq int
}

func newSeedGen(seed uint64, now time.Time, entityCount int) *seedGen {
	g := &seedGen{
		seed:   seed,
		now:    now,
		byName: map[string]*seedEntity{},
		pools:  map[string][]*seedEntity{},
		events: rand.New(rand.NewPCG(seed, 0xe7e27)),
	}
	add := func(e *seedEntity) {
		e.id = int64(100 + len(g.entities))
		e.slug = seedSlug(e.name)
		e.ticker = e.name
		for _, a := range e.aliases {
			if isTicker(a) {
				e.ticker = a
				break
			}
		}
		g.entities = append(g.entities, e)
		g.byName[e.name] = e
		g.pools[e.typ] = append(g.pools[e.typ], e)
	}
	tickers := map[string]bool{}
	for _, n := range seedNamedEntities {
		add(&seedEntity{name: n.name, typ: n.typ, aliases: append([]string{}, n.aliases...), of: n.of, named: true})
		for _, a := range n.aliases {
			tickers[a] = true
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0xe11717))
	for i := 0; len(g.entities) < entityCount; i++ {
		p := seedNamePrefixes[(i*7+i/len(seedNamePrefixes))%len(seedNamePrefixes)]
		s := seedNameSuffixes[(i+i/len(seedNamePrefixes))%len(seedNameSuffixes)]
		name := p + " " + s
		if round := i / (len(seedNamePrefixes) * len(seedNameSuffixes)); round > 0 {
			name += " " + strconv.Itoa(round+1)
		}
		if g.byName[name] != nil {
			continue
		}
		ticker := strings.ToUpper(p[:3+rng.IntN(2)]) + strings.ToUpper(s[:1])
		for n := 2; tickers[ticker]; n++ {
			ticker = strings.ToUpper(p[:3]) + strconv.Itoa(n)
		}
		tickers[ticker] = true
		add(&seedEntity{name: name, typ: seedProject, aliases: []string{ticker}})
	}
	g.buildWorld()
	return g
}

// isTicker reports whether s looks like a ticker: short, upper case and
// digits.
func isTicker(s string) bool {
	if len(s) == 0 || len(s) > 6 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func seedSlug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// pick returns an element of pool, favouring the head (a power law), so a
// few entities are very popular and most have a handful of events.
func pick(rng *rand.Rand, pool []*seedEntity) *seedEntity {
	return pool[int(float64(len(pool))*math.Pow(rng.Float64(), 2.2))]
}

// pickOther picks from pool an entity other than not.
func pickOther(rng *rand.Rand, pool []*seedEntity, not *seedEntity) *seedEntity {
	for {
		if e := pick(rng, pool); e != not || len(pool) == 1 {
			return e
		}
	}
}

func (g *seedGen) relationships() [][]any { return g.world.rows }

func (g *seedGen) references() [][]any {
	rng := rand.New(rand.NewPCG(g.seed, 0x7ef5))
	var rows [][]any
	add := func(e *seedEntity, typ, title, url string) {
		rows = append(rows, []any{int64(len(rows) + 1), e.id, typ, title, url})
	}
	for _, e := range g.entities {
		site := "https://" + e.slug + ".example"
		switch {
		case e.typ == seedProject && e.named, e.typ == seedFoundation, e.typ == seedExchange:
			add(e, "website", e.name, site)
			if e.typ == seedProject && rng.Float64() < 0.7 {
				add(e, "docs", e.name+" documentation", "https://docs."+e.slug+".example")
			}
			if e.typ == seedProject && rng.Float64() < 0.4 {
				add(e, "whitepaper", e.name+" whitepaper", site+"/whitepaper.pdf")
			}
		case e.typ == seedRegulator:
			add(e, "website", e.name, site)
			add(e, "filing", e.name+" digital asset guidance", site+"/guidance/digital-assets")
		case e.typ == seedFund && rng.Float64() < 0.6, e.typ == seedProject && rng.Float64() < 0.4:
			add(e, "website", e.name, site)
		}
	}
	return rows
}

func (g *seedGen) markets() (markets, subevents, posts [][]any) {
	rng := rand.New(rand.NewPCG(g.seed, 0x3a7e))
	var named []*seedEntity
	for _, p := range g.pools[seedProject] {
		if p.named {
			named = append(named, p)
		}
	}
	named = named[:min(60, len(named))]
	for i, p := range named {
		count := 1
		if i < 15 {
			count = 2
		}
		for range count {
			id := int64(len(markets) + 1)
			closes := g.now.AddDate(0, 0, 7+rng.IntN(174)).Truncate(24 * time.Hour)
			vars := map[byte]string{'O': p.name, 'T': p.ticker, 'N': strconv.Itoa(5 + rng.IntN(200)*5),
				'U': seedUpgrades[rng.IntN(len(seedUpgrades))], 'D': closes.Format("January 2, 2006")}
			qi := rng.IntN(len(seedMarketQuestions))
			if qi == 2 && !slices.Contains(etfAssets, p.name) {
				qi = 0 // spot funds are filed for the large assets only
			}
			question := fill(seedMarketQuestions[qi], vars)
			prob := math.Round((0.05+0.9*rng.Float64())*100) / 100
			volume := math.Round(10_000 + 5_000_000*math.Pow(rng.Float64(), 3))
			markets = append(markets, []any{id, p.id, question, fmt.Sprintf("https://markets.example/m/%d", id),
				[]string{"Yes", "No"}, &prob, &volume, &closes})
			labels := rng.Perm(len(seedSubeventLabels))[:2+rng.IntN(2)]
			for _, li := range labels {
				sid := int64(len(subevents) + 1)
				label := seedSubeventLabels[li]
				subevents = append(subevents, []any{sid, id, label, seedSubeventTypes[rng.IntN(len(seedSubeventTypes))],
					strings.ToLower(label + " " + p.ticker),
					fmt.Sprintf("%s is shaping expectations for %s: %s.", label, p.name, strings.ToLower(question))})
				for range 2 + rng.IntN(3) {
					pid := int64(len(posts) + 1)
					at := g.now.Add(-time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))).Truncate(time.Second)
					posts = append(posts, []any{pid, sid, fmt.Sprintf("%s: %s update on %s (%s).",
						seedSources[rng.IntN(len(seedSources))], label, p.name, p.ticker), at})
				}
			}
		}
	}
	return markets, subevents, posts
}

// seedEvent is one generated event as COPY rows.
type seedEvent struct {
	row       []any
	evidence  [][]any
	links     [][]any
	entityIDs []int64 // distinct entities taking part
	signal    bool
	// The parts of the ingest line Emit writes.
	title, category, subcategory, summary string
	bullets                               []string
	owner                                 *seedEntity
	participants                          []*seedEntity
	significance                          *float64
	contentType                           *string
	contents                              []string
}

// happening is one thing that happened in the demo world, told by one to
// five reports.
type happening struct {
	sub          *storySub
	owner        *seedEntity
	parts        []*seedEntity
	vars         map[byte]string
	at, date     time.Time // first report; the date set ahead, if any
	left         int       // reports still to come
	phrasing     int       // phrasing of the next report
	source       int       // source of the next report
	significance *float64
	contentType  *string
}

// pendingStep is a storyline's step due at due.
type pendingStep struct {
	due  time.Time
	seq  int
	sub  *storySub
	from *happening
}

type stepQueue []pendingStep

func (q stepQueue) Len() int { return len(q) }
func (q stepQueue) Less(i, j int) bool {
	if !q[i].due.Equal(q[j].due) {
		return q[i].due.Before(q[j].due)
	}
	return q[i].seq < q[j].seq
}
func (q stepQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *stepQueue) Push(x any)   { *q = append(*q, x.(pendingStep)) }
func (q *stepQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// reportWindow: a happening's other reports come within this time of its
// first.
const reportWindow = 30 * time.Hour

// event generates event id; calls must come in id order (one PRNG stream).
// Each id owns an equal slot of the 30 days, oldest first, and its time
// falls at random inside the slot: ids follow time like ingested ones. The
// event is another source's report of a happening still being reported,
// the next step of a storyline that is due, or a fresh happening.
func (g *seedGen) event(id int64) seedEvent {
	rng := g.events
	window := int64(30 * 24 * time.Hour)
	oldest := g.now.Add(-30 * 24 * time.Hour)
	slot := window / max(1, g.total)
	latest := oldest.Add(time.Duration(slot*(id-1) + rng.Int64N(max(1, slot)))).Truncate(time.Second)

	for len(g.open) > 0 && latest.Sub(g.open[0].at) > reportWindow {
		g.open = g.open[1:]
	}
	var h *happening
	if len(g.open) > 0 && rng.Float64() < 0.45 {
		i := rng.IntN(len(g.open))
		h = g.open[i]
		if h.left--; h.left <= 0 {
			g.open = slices.Delete(g.open, i, i+1)
		}
	} else {
		for h == nil && len(g.steps) > 0 && !g.steps[0].due.After(latest) {
			st := heap.Pop(&g.steps).(pendingStep)
			h = g.follow(rng, st, latest)
		}
		if h == nil {
			h = g.fresh(rng, latest)
		}
	}
	return g.report(rng, id, h, latest, oldest)
}

// bigStories are reported more widely and matter more.
var bigStories = map[string]bool{"exploit": true, "exchange_hack": true, "outage": true, "etf_approval": true,
	"lawsuit": true, "depeg": true, "settlement": true, "enforcement_action": true, "token_unlock": true}

// fresh draws a new happening at time at and schedules its storyline.
func (g *seedGen) fresh(rng *rand.Rand, at time.Time) *happening {
	var sub *storySub
	var owner *seedEntity
	var parts []*seedEntity
	for {
		sub = pickStory(rng)
		var ok bool
		if owner, parts, ok = sub.cast(g, rng); ok {
			break
		}
	}
	h := &happening{sub: sub, owner: owner, parts: parts, at: at}
	h.vars = map[byte]string{
		'N': strconv.Itoa(1 + int(250*math.Pow(rng.Float64(), 2))),
		'F': seedFeatures[rng.IntN(len(seedFeatures))], 'C': seedComponents[rng.IntN(len(seedComponents))],
		'U': seedUpgrades[rng.IntN(len(seedUpgrades))], 'K': seedChainComponents[rng.IntN(len(seedChainComponents))],
	}
	g.cast(h, owner, parts)
	switch {
	case sub.name == "research_report":
		h.contentType = ptr(cryptointel.ContentResearch)
	case sub.cat == "analysis":
		h.contentType = ptr(cryptointel.ContentAnalysis)
	case sub.cat == "media":
		h.contentType = ptr(cryptointel.ContentMedia)
	case rng.Float64() < 0.06:
		h.contentType = ptr(cryptointel.ContentCommentary)
	}
	if rng.Float64() < 0.3 {
		s := 1 + 9*math.Pow(rng.Float64(), 1.6)
		if bigStories[sub.name] {
			s = min(10, s+2)
		}
		s = math.Round(s*10) / 10
		h.significance = &s
	}
	g.start(rng, h)
	return h
}

// cast sets the happening's people and the placeholders they fill.
func (g *seedGen) cast(h *happening, owner *seedEntity, parts []*seedEntity) {
	h.owner, h.parts = owner, parts
	h.vars['O'], h.vars['T'], h.vars['P'], h.vars['Q'] = owner.name, owner.ticker, "", ""
	if len(parts) > 0 {
		h.vars['P'], h.vars['Q'] = parts[0].name, parts[0].ticker
	}
	h.vars['H'] = "Ethereum"
	if host := g.world.hostOf[owner]; host != nil {
		h.vars['H'] = host.name
	}
}

// start sets how many reports the happening gets, its date ahead and its
// storyline's steps.
func (g *seedGen) start(rng *rand.Rand, h *happening) {
	h.phrasing = rng.IntN(len(h.sub.titles))
	h.source = rng.IntN(len(seedSources))
	h.left = 0
	if !h.sub.single {
		r := rng.Float64()
		switch {
		case r < 0.62:
		case r < 0.80:
			h.left = 1
		case r < 0.90:
			h.left = 2
		case r < 0.96:
			h.left = 3
		default:
			h.left = 4
		}
		if bigStories[h.sub.name] {
			h.left = min(4, h.left+1)
		}
	}
	if h.left > 0 {
		g.open = append(g.open, h)
	}
	if h.sub.ahead > 0 {
		h.date = h.at.Add(h.sub.ahead/2 + time.Duration(rng.Int64N(int64(h.sub.ahead)))).Truncate(24 * time.Hour).Add(14 * time.Hour)
		h.vars['D'] = h.date.Format("January 2")
	}
	for i, st := range h.sub.next {
		if rng.Float64() >= st.prob {
			continue
		}
		due := h.at.Add(st.after/2 + time.Duration(rng.Int64N(int64(st.after))))
		if i == 0 && !h.date.IsZero() {
			due = h.date.Add(time.Duration(rng.Int64N(int64(6 * time.Hour))))
		}
		g.stepSeq++
		heap.Push(&g.steps, pendingStep{due: due, seq: g.stepSeq, sub: storyBySub[st.sub], from: h})
	}
}

// follow makes a storyline's step into a happening: the same people
// (a freeze adds the exchange that froze the funds, a probe the
// regulator), the same figures unless the step brings its own.
func (g *seedGen) follow(rng *rand.Rand, st pendingStep, at time.Time) *happening {
	from := st.from
	h := &happening{sub: st.sub, at: at, significance: from.significance, contentType: from.contentType,
		vars: maps.Clone(from.vars)}
	parts := from.parts
	switch st.sub.name {
	case "funds_frozen":
		parts = []*seedEntity{pick(rng, g.world.exchanges)}
		if n, err := strconv.Atoi(from.vars['N']); err == nil {
			h.vars['N'] = strconv.Itoa(1 + n/3)
		}
	case "probe":
		regs := g.world.regulatorsOf[from.owner]
		if len(regs) == 0 {
			return nil
		}
		parts = []*seedEntity{regs[rng.IntN(len(regs))]}
	case "settlement":
		h.vars['N'] = strconv.Itoa(1 + rng.IntN(120))
	}
	g.cast(h, from.owner, parts)
	g.start(rng, h)
	return h
}

// report writes one source's report of h as event id at latest: its own
// phrasing of the headline, and evidence posts telling it in other words.
func (g *seedGen) report(rng *rand.Rand, id int64, h *happening, latest, oldest time.Time) seedEvent {
	sub := h.sub
	vars := h.vars
	titles := sub.titles
	phr := h.phrasing
	h.phrasing++
	src := h.source
	h.source += 1 + rng.IntN(3)
	vars['S'] = seedSources[src%len(seedSources)]
	title := fill(titles[phr%len(titles)], vars)
	bulletIdx := rng.Perm(len(sub.bullets))[:2+rng.IntN(min(2, len(sub.bullets)-1))]
	bullets := make([]string, len(bulletIdx))
	for i, b := range bulletIdx {
		bullets[i] = fill(sub.bullets[b], vars)
	}
	summary := title + ". " + bullets[0] + "."

	n := 1 + rng.IntN(3)
	ev := seedEvent{title: title, category: sub.cat, subcategory: sub.name, summary: summary, bullets: bullets,
		owner: h.owner, participants: h.parts, significance: h.significance, contentType: h.contentType}
	type post struct {
		ts      time.Time
		id      int64
		content string
	}
	posts := make([]post, 0, n)
	for k := range n {
		ts := latest
		if k > 0 {
			ts = latest.Add(-time.Duration(rng.Int64N(int64(36 * time.Hour)))).Truncate(time.Second)
			if ts.Before(oldest) {
				ts = oldest
			}
		}
		// The first post is the report's own headline; the others tell the
		// story in other words.
		words := title
		if k > 0 {
			words = fill(titles[(phr+k)%len(titles)], vars)
		}
		content := fmt.Sprintf("%s: %s. %s", seedSources[(src+k)%len(seedSources)], words, bullets[k%len(bullets)])
		evidenceID := id*3 + int64(k) - 2
		posts = append(posts, post{ts, evidenceID, content})
		ev.evidence = append(ev.evidence, []any{evidenceID, id, content,
			fmt.Sprintf("https://news.example/%s/%d-%d", sub.cat, id, k+1), ts})
		ev.contents = append(ev.contents, content)
	}
	// evidence_text is the contents oldest first, exactly as ingest writes
	// it, so re-ingesting a seeded event unchanged changes nothing.
	slices.SortFunc(posts, func(a, b post) int {
		if c := a.ts.Compare(b.ts); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	texts := make([]string, len(posts))
	for i, p := range posts {
		texts[i] = p.content
	}
	ev.signal = h.significance != nil
	ev.row = []any{id, title, sub.cat, sub.name, summary, bullets, h.significance, h.contentType, latest,
		strings.Join(texts, "\n"), int64(0)}
	ev.links = append(ev.links, []any{id, h.owner.id, cryptointel.RoleOwner, 0, latest, h.significance, h.contentType, sub.cat})
	ev.entityIDs = append(ev.entityIDs, h.owner.id)
	for i, p := range h.parts {
		ev.links = append(ev.links, []any{id, p.id, cryptointel.RoleParticipant, i, latest, h.significance, h.contentType, sub.cat})
		if p != h.owner {
			ev.entityIDs = append(ev.entityIDs, p.id)
		}
	}
	return ev
}

// fill replaces {X} placeholders with vars['X'].
func fill(tmpl string, vars map[byte]string) string {
	var b strings.Builder
	b.Grow(len(tmpl) + 32)
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '{' && i+2 < len(tmpl) && tmpl[i+2] == '}' {
			if v, ok := vars[tmpl[i+1]]; ok {
				b.WriteString(v)
				i += 2
				continue
			}
		}
		b.WriteByte(tmpl[i])
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }
