// Package demo generates the deterministic demo dataset that `cryptointel
// seed --demo` (and so `make run`) and the tests load: entities with
// tickers and relationships, references, radar events and signals with
// evidence, and prediction markets. The rows are bulk-loaded through db.
package demo

import (
	"cmp"
	"context"
	"fmt"
	"io"
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

// Seed fills an empty database with a deterministic, realistic demo
// dataset: real-world-style projects with tickers (two tickers deliberately
// shared), foundations (FOUNDATION_OF, searchExpand), exchanges (LISTED_ON),
// funds (INVESTED_IN), regulators (REGULATES), partnerships (PARTNER_OF) and
// BUILT_ON edges; references; radar events across categories and
// subcategories with 1–3 evidence posts over the last 30 days (relative to
// store.Now, truncated to the minute), about 30% of them signals with
// significance 1–10, research, commentary, analysis and media items; and
// prediction markets with sub-events and posts.
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

func (g *seedGen) relationships() [][]any {
	rng := rand.New(rand.NewPCG(g.seed, 0x5e1a7))
	seen := map[string]bool{}
	var rows [][]any
	add := func(src, dst *seedEntity, typ string, expand bool) {
		if src == dst {
			return
		}
		key := fmt.Sprintf("%d:%d:%s", src.id, dst.id, typ)
		if seen[key] {
			return
		}
		seen[key] = true
		rows = append(rows, []any{src.id, dst.id, typ, "active", expand})
	}
	projects, exchanges, funds := g.pools[seedProject], g.pools[seedExchange], g.pools[seedFund]
	for _, f := range g.pools[seedFoundation] {
		if p := g.byName[f.of]; p != nil {
			add(f, p, "FOUNDATION_OF", true)
		}
	}
	for i, p := range projects {
		n := rng.IntN(3)
		if p.named {
			n = 2 + rng.IntN(3)
			if i < 10 {
				n += 3
			}
		}
		for range n {
			add(p, pick(rng, exchanges), "LISTED_ON", false)
		}
	}
	for _, f := range funds {
		for range 6 + rng.IntN(9) {
			add(f, pick(rng, projects), "INVESTED_IN", false)
		}
	}
	for _, r := range g.pools[seedRegulator] {
		for range 3 + rng.IntN(5) {
			add(r, pick(rng, exchanges), "REGULATES", false)
		}
		for range rng.IntN(3) {
			add(r, pick(rng, projects), "REGULATES", false)
		}
	}
	for range len(projects) / 2 {
		a := pick(rng, projects)
		add(a, pickOther(rng, projects, a), "PARTNER_OF", false)
	}
	chains := []string{"Ethereum", "Solana", "Arbitrum", "Base", "Polygon", "Avalanche", "Sui", "Aptos", "Near Protocol", "Cosmos", "Optimism", "Toncoin"}
	for _, p := range projects {
		if !p.named {
			add(p, g.byName[chains[rng.IntN(len(chains))]], "BUILT_ON", false)
		}
	}
	return rows
}

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
			question := fill(seedMarketQuestions[rng.IntN(len(seedMarketQuestions))], vars)
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
}

// event generates event id; calls must come in id order (one PRNG stream).
func (g *seedGen) event(id int64) seedEvent {
	rng := g.events
	cat := pickCategory(rng)
	sub := cat.subs[rng.IntN(len(cat.subs))]
	owner := pick(rng, g.pools[sub.owner])
	var participants []*seedEntity
	if sub.participant != "" {
		participants = append(participants, pickOther(rng, g.pools[sub.participant], owner))
		if rng.Float64() < 0.15 {
			if p := pickOther(rng, g.pools[sub.participant], owner); p != participants[0] {
				participants = append(participants, p)
			}
		}
	} else if rng.Float64() < 0.2 {
		participants = append(participants, pickOther(rng, g.pools[seedProject], owner))
	}
	pName := ""
	if len(participants) > 0 {
		pName = participants[0].name
	}
	vars := map[byte]string{
		'O': owner.name, 'P': pName, 'T': owner.ticker, 'N': strconv.Itoa(1 + rng.IntN(250)),
		'F': seedFeatures[rng.IntN(len(seedFeatures))], 'C': seedComponents[rng.IntN(len(seedComponents))],
		'U': seedUpgrades[rng.IntN(len(seedUpgrades))],
	}
	title := fill(sub.titles[rng.IntN(len(sub.titles))], vars)
	summary := title + ". " + fill(seedSummaryTails[rng.IntN(len(seedSummaryTails))], vars)
	bulletIdx := rng.Perm(len(cat.bullets))[:2+rng.IntN(2)]
	bullets := make([]string, len(bulletIdx))
	for i, b := range bulletIdx {
		bullets[i] = fill(cat.bullets[b], vars)
	}

	var contentType *string
	switch {
	case sub.name == "research_report":
		contentType = ptr(cryptointel.ContentResearch)
	case cat.name == "analysis":
		contentType = ptr(cryptointel.ContentAnalysis)
	case cat.name == "media":
		contentType = ptr(cryptointel.ContentMedia)
	case rng.Float64() < 0.06:
		contentType = ptr(cryptointel.ContentCommentary)
	}
	var significance *float64
	if rng.Float64() < 0.3 {
		s := math.Round((1+9*math.Pow(rng.Float64(), 1.6))*10) / 10
		significance = &s
	}

	window := int64(30 * 24 * time.Hour)
	oldest := g.now.Add(-30 * 24 * time.Hour)
	// Each id owns an equal slot of the 30 days, oldest first, and its time
	// falls at random inside the slot: ids follow time like ingested ones.
	slot := window / max(1, g.total)
	latest := oldest.Add(time.Duration(slot*(id-1) + rng.Int64N(max(1, slot)))).Truncate(time.Second)
	n := 1 + rng.IntN(3)
	ev := seedEvent{}
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
		content := fmt.Sprintf("%s: %s. %s", seedSources[rng.IntN(len(seedSources))], title, bullets[k%len(bullets)])
		evidenceID := id*3 + int64(k) - 2
		posts = append(posts, post{ts, evidenceID, content})
		ev.evidence = append(ev.evidence, []any{evidenceID, id, content,
			fmt.Sprintf("https://news.example/%s/%d-%d", cat.name, id, k+1), ts})
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
	ev.signal = significance != nil
	ev.row = []any{id, title, cat.name, sub.name, summary, bullets, significance, contentType, latest,
		strings.Join(texts, "\n"), int64(0)}
	ev.links = append(ev.links, []any{id, owner.id, cryptointel.RoleOwner, 0, latest, significance, contentType, cat.name})
	ev.entityIDs = append(ev.entityIDs, owner.id)
	for i, p := range participants {
		ev.links = append(ev.links, []any{id, p.id, cryptointel.RoleParticipant, i, latest, significance, contentType, cat.name})
		if p != owner {
			ev.entityIDs = append(ev.entityIDs, p.id)
		}
	}
	return ev
}

var seedCategoryWeight = func() int {
	total := 0
	for _, c := range seedCategories {
		total += c.weight
	}
	return total
}()

func pickCategory(rng *rand.Rand) *seedCategory {
	n := rng.IntN(seedCategoryWeight)
	for i := range seedCategories {
		if n < seedCategories[i].weight {
			return &seedCategories[i]
		}
		n -= seedCategories[i].weight
	}
	return &seedCategories[len(seedCategories)-1]
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
