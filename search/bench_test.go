package search_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/search"
)

// The search benchmarks run on a generated database of SEARCH_BENCH_EVENTS
// events (default 20,000; the README figures use 1,000,000):
//
//	SEARCH_BENCH_EVENTS=1000000 go test ./db -run '^$' -bench Search -benchtime 400x -v
//
// The database is built once with bulk SQL (generate_series) and kept,
// named after its size and the generator version, so later runs start at
// once; drop it with DROP DATABASE to rebuild.

// searchBenchGenVersion names the generator; bump it when the data changes.
const searchBenchGenVersion = 2

// searchBenchEntity is a named entity of the benchmark data, with tickers that
// collide on purpose.
type searchBenchEntity struct {
	name, typ string
	aliases   []string
	// foundationOf is the name of the project a foundation stewards.
	foundationOf string
}

var searchBenchEntities = []searchBenchEntity{
	{"Ethereum", "project", []string{"ETH", "Ether"}, ""},
	{"Ethereum Foundation", "foundation", []string{"EF"}, "Ethereum"},
	{"Bitcoin", "project", []string{"BTC", "XBT"}, ""},
	{"Solana", "project", []string{"SOL"}, ""},
	{"Solana Foundation", "foundation", nil, "Solana"},
	{"Uniswap", "project", []string{"UNI", "Uniswap Protocol"}, ""},
	{"Uniswap Foundation", "foundation", nil, "Uniswap"},
	{"Optimism", "project", []string{"OP", "OP Mainnet"}, ""},
	{"Optimism Foundation", "foundation", nil, "Optimism"},
	{"Arbitrum", "project", []string{"ARB"}, ""},
	{"Arbitrum Foundation", "foundation", nil, "Arbitrum"},
	{"Chainlink", "project", []string{"LINK"}, ""},
	{"Aave", "project", []string{"AAVE"}, ""},
	{"Polygon", "project", []string{"POL", "MATIC"}, ""},
	{"Avalanche", "project", []string{"AVAX"}, ""},
	{"Cardano", "project", []string{"ADA"}, ""},
	{"Cardano Foundation", "foundation", nil, "Cardano"},
	{"Polkadot", "project", []string{"DOT"}, ""},
	{"Web3 Foundation", "foundation", nil, "Polkadot"},
	{"Terra", "project", []string{"LUNA"}, ""},
	{"Terra Classic", "project", []string{"LUNC", "LUNA"}, ""},
	{"Lido", "project", []string{"LDO", "Lido DAO"}, ""},
	{"MakerDAO", "project", []string{"MKR", "Maker", "Sky"}, ""},
	{"Tether", "project", []string{"USDT"}, ""},
	{"Circle", "project", []string{"USDC"}, ""},
	{"Coinbase", "exchange", []string{"COIN"}, ""},
	{"Binance", "exchange", []string{"BNB"}, ""},
	{"Kraken", "exchange", nil, ""},
	{"U.S. Securities and Exchange Commission", "government_institution", []string{"SEC"}, ""},
	{"Commodity Futures Trading Commission", "government_institution", []string{"CFTC"}, ""},
	{"a16z crypto", "fund", []string{"a16z", "Andreessen Horowitz"}, ""},
	{"Paradigm", "fund", nil, ""},
	{"Société Générale FORGE", "project", []string{"SG Forge", "SG-FORGE"}, ""},
	{"Near Protocol", "project", []string{"NEAR"}, ""},
	{"NEAR Foundation", "foundation", nil, "Near Protocol"},
	{"Ether.fi", "project", []string{"ETHFI"}, ""},
	{"Ethena", "project", []string{"ENA", "USDe"}, ""},
	{"Optimus AI", "project", []string{"OP"}, ""},
	{"Harmony", "project", []string{"ONE"}, ""},
	{"Celestia", "project", []string{"TIA"}, ""},
}

// searchBenchSeedSQL generates the benchmark data after the named entities are in
// (ids 1..len(searchBenchEntities)): synthetic entities from syllables with
// three-letter tickers (many collide), events over 35 days with an owner
// drawn with a skew towards popular entities, a participant for 40% of
// them, templated titles, summaries, bullets and evidence text, then
// event_entities and event counts. ?0 is the event count, ?1 the synthetic
// entity count, ?2 the named entity count.
const searchBenchSeedSQL = `
SELECT setseed(0.42);
INSERT INTO entities (id, canonical_name, display_name, entity_type, aliases)
SELECT 1000 + i, name, name, (ARRAY['project','project','project','fund','exchange'])[1 + i % 5], ARRAY[upper(left(s1, 2) || left(s2, 1))]
FROM (
	SELECT i, s1, s2,
	       initcap(s1 || s2) || (ARRAY['', ' Protocol', ' Finance', ' Labs', ' Network', ' DAO', ' Chain', ' Swap'])[1 + (i / 900) % 8] AS name
	FROM (
		SELECT i,
		       (ARRAY['zor','vel','kai','nex','lum','tar','qua','ori','sol','mer','dra','pix','fen','gal','hel','ion','jad','kor','lyr','mon',
		              'nov','oct','pra','rho','syn','tho','umb','vor','wyn','xen'])[1 + i % 30] AS s1,
		       (ARRAY['ba','dex','fi','gon','lix','mo','nar','pex','quo','ris'])[1 + (i / 30) % 10] AS s2
		FROM generate_series(1, ?1) AS i
	) s
) n;
INSERT INTO entity_names (entity_id, kind, value, norm)
SELECT id, 'canonical_name', canonical_name, norm_text(canonical_name) FROM entities
UNION
SELECT id, 'display_name', display_name, norm_text(display_name) FROM entities
UNION
SELECT id, 'alias', a, norm_text(a) FROM entities, unnest(aliases) AS a
ON CONFLICT DO NOTHING;
CREATE TEMP TABLE bench_ent AS
SELECT row_number() OVER (ORDER BY id) AS n, id, display_name AS name, coalesce(aliases[1], display_name) AS ticker FROM entities;
CREATE UNIQUE INDEX ON bench_ent (n);
-- Ids follow time, as ingest assigns them, so the heap is in time order.
CREATE TEMP TABLE bench_ev AS
SELECT row_number() OVER (ORDER BY at, i) AS id, r.*
FROM (
SELECT i,
       -- Half the events belong to the named entities, skewed to the first.
       CASE WHEN random() < 0.5 THEN 1 + floor(?2 * random() ^ 2)::int
            ELSE ?2 + 1 + floor((SELECT count(*) - ?2 FROM bench_ent) * random() ^ 1.5)::int END AS owner_n,
       CASE WHEN random() < 0.4 THEN 1 + floor((SELECT count(*) FROM bench_ent) * random())::int END AS part_n,
       floor(random() * 8)::int AS cat,
       floor(random() * 12)::int AS topic,
       random() < 0.6 AS named,
       now() - random() * interval '35 days' AS at,
       CASE WHEN random() < 0.4 THEN round((random() * 10)::numeric, 2)::float8 END AS sig,
       floor(random() * 900 + 10)::int AS amount
FROM generate_series(1, ?0) AS i
) r;
INSERT INTO events (id, title, category, subcategory, summary, bullets, significance, content_type, latest_evidence_at, evidence_text, ingest_seq)
SELECT ev.id,
       CASE WHEN ev.named THEN o.name || ' ' ELSE '' END ||
       (ARRAY['partners with ' || coalesce(p.name, 'a payments firm'),
              'raises $' || ev.amount || 'M in a funding round',
              'token listed on ' || coalesce(p.name, 'a major exchange'),
              'ships mainnet upgrade v' || (ev.amount % 9 + 1),
              'suffers exploit; $' || ev.amount || 'M drained from bridge',
              'faces regulatory scrutiny over staking',
              'governance vote approves treasury grant',
              'research report on ' || (ARRAY['restaking','stablecoins','rollups','MEV','tokenomics','liquidity'])[1 + ev.topic % 6]])[1 + ev.cat],
       (ARRAY['partnership','funding','listing','technology','security','regulation','governance','analysis'])[1 + ev.cat],
       (ARRAY['integration','series_a','exchange_listing','upgrade','exploit','enforcement','grants','research_report'])[1 + ev.cat],
       'The ' || (ARRAY['protocol','team','network','foundation','community','developers'])[1 + ev.topic % 6] || ' said the ' ||
       (ARRAY['partnership','raise','listing','upgrade','incident','inquiry','proposal','report'])[1 + ev.cat] ||
       ' concerns ' || (ARRAY['restaking','stablecoins','rollups','MEV','tokenomics','liquidity','custody','bridges','oracles','airdrops','validators','wallets'])[1 + ev.topic] ||
       ' and ' || o.ticker || ' holders.',
       ARRAY['Announced ' || to_char(ev.at, 'Mon DD'), 'Affects ' || (ARRAY['DeFi','L2s','exchanges','stakers','traders','developers'])[1 + (ev.topic + ev.cat) % 6]],
       ev.sig,
       CASE WHEN ev.cat = 7 THEN (ARRAY['research','commentary','analysis','media'])[1 + ev.topic % 4] END,
       ev.at,
       'Post: ' || o.name || ' ' || (ARRAY['confirms','announces','denies','teases'])[1 + ev.topic % 4] || ' ' ||
       (ARRAY['partnership','funding','listing','upgrade','exploit','lawsuit','vote','report'])[1 + ev.cat] ||
       ' #' || o.ticker || ' via @' || replace(lower(o.name), ' ', '') || ' more at example.com/' || ev.id,
       ev.id
FROM bench_ev ev JOIN bench_ent o ON o.n = ev.owner_n LEFT JOIN bench_ent p ON p.n = ev.part_n
ORDER BY ev.id;
INSERT INTO event_entities (event_id, entity_id, role, position, latest_evidence_at, significance, content_type, category)
SELECT ev.id, o.id, 'owner', 0, e.latest_evidence_at, e.significance, e.content_type, e.category
FROM bench_ev ev JOIN bench_ent o ON o.n = ev.owner_n JOIN events e ON e.id = ev.id
UNION ALL
SELECT ev.id, p.id, 'participant', 0, e.latest_evidence_at, e.significance, e.content_type, e.category
FROM bench_ev ev JOIN bench_ent p ON p.n = ev.part_n JOIN bench_ent o ON o.n = ev.owner_n JOIN events e ON e.id = ev.id
WHERE p.id <> o.id;
UPDATE entities e SET event_count = c.n
FROM (SELECT entity_id, count(*) AS n FROM event_entities GROUP BY entity_id) c WHERE c.entity_id = e.id;
`

// searchBenchStore returns the benchmark database for SEARCH_BENCH_EVENTS events,
// building it on first use.
func searchBenchStore(b *testing.B) (*db.DB, int) {
	b.Helper()
	events := 20000
	if v := os.Getenv("SEARCH_BENCH_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			b.Fatalf("SEARCH_BENCH_EVENTS must be a number >= 100, got %q", v)
		}
		events = n
	}
	ctx := context.Background()
	name := fmt.Sprintf("ci_searchbench_%d_v%d", events, searchBenchGenVersion)
	admin, err := pgx.Connect(ctx, dbtest.AdminURL())
	if err != nil {
		b.Fatalf("error connecting: %v", err)
	}
	defer admin.Close(ctx)
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if !exists {
		building := name + "_building"
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+building) //nolint:errcheck
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+building); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := buildSearchBenchDB(ctx, searchBenchURL(b, building), events); err != nil {
			b.Fatalf("error building benchmark database: %v", err)
		}
		if _, err := admin.Exec(ctx, "ALTER DATABASE "+building+" RENAME TO "+name); err != nil {
			b.Fatal(err)
		}
		b.Logf("built %s in %s", name, time.Since(start).Round(time.Second))
	}
	store, err := db.Open(ctx, searchBenchURL(b, name), db.Options{MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	if err := store.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	return store, events
}

func searchBenchURL(b *testing.B, name string) string {
	u, err := url.Parse(dbtest.AdminURL())
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// buildSearchBenchDB migrates and fills the database at dbURL: the indexes of the
// bulk-loaded tables are dropped during the load and rebuilt after.
func buildSearchBenchDB(ctx context.Context, dbURL string, events int) error {
	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 2})
	if err != nil {
		return err
	}
	defer store.Close()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	conn, err := store.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var indexDefs []string
	rows, err := conn.Query(ctx, `
		SELECT i.indexname, i.indexdef FROM pg_indexes i
		WHERE i.schemaname = 'public' AND i.tablename IN ('events', 'event_entities', 'entity_names')
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n, def string
		if err := rows.Scan(&n, &def); err != nil {
			return err
		}
		names, indexDefs = append(names, n), append(indexDefs, def)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := conn.Exec(ctx, "DROP INDEX "+pgx.Identifier{n}.Sanitize()); err != nil {
			return err
		}
	}
	if _, err := conn.Exec(ctx, "SET maintenance_work_mem = '512MB'"); err != nil {
		return err
	}
	// Named entities first, foundations linked to their projects with
	// search expansion.
	ids := map[string]int64{}
	for i, e := range searchBenchEntities {
		id := int64(i + 1)
		ids[e.name] = id
		if _, err := conn.Exec(ctx, `INSERT INTO entities (id, canonical_name, display_name, entity_type, aliases) VALUES ($1, $2, $2, $3, $4)`,
			id, e.name, e.typ, append([]string{}, e.aliases...)); err != nil {
			return err
		}
	}
	for _, e := range searchBenchEntities {
		if e.foundationOf != "" {
			if _, err := conn.Exec(ctx, `INSERT INTO relationships (source_entity_id, target_entity_id, relationship_type, search_expand) VALUES ($1, $2, 'FOUNDATION_OF', true)`,
				ids[e.name], ids[e.foundationOf]); err != nil {
				return err
			}
		}
	}
	synthetic := max(events/200, 500)
	sql := strings.NewReplacer("?0", strconv.Itoa(events), "?1", strconv.Itoa(synthetic), "?2", strconv.Itoa(len(searchBenchEntities))).Replace(searchBenchSeedSQL)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("error generating data: %w", err)
	}
	for _, def := range indexDefs {
		if _, err := conn.Exec(ctx, def); err != nil {
			return fmt.Errorf("error rebuilding index (%s): %w", def, err)
		}
	}
	_, err = conn.Exec(ctx, "VACUUM ANALYZE")
	return err
}

// searchBenchNames and searchBenchQueries are the workloads: exact names,
// tickers (some ambiguous), prefixes, words, typos and topics.
var (
	searchBenchNames   = []string{"Ethereum", "eth", "LUNA", "OP", "Solana Foundation", "Etherium", "Chainlnk", "uniswap", "foundation", "societe generale forge", "Zorba", "velfi protocol", "sec", "a"}
	searchBenchQueries = []string{"Ethereum", "ETH", "Etherium", "Solana exploit", "bridge exploit", "stablecoins", "Uniswap Foundation", "LUNA", "funding round", "restaking research", "Arbitrum governance vote", "SEC staking", "Zorba", "mainnet upgrade", "Kraken listing"}
)

// searchLatencies runs op once per iteration over the workload and reports p50
// and p99 per operation.
func searchLatencies(b *testing.B, workload []string, op func(string) error) {
	b.Helper()
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := op(workload[i%len(workload)]); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	pct := func(p float64) float64 {
		return float64(d[min(len(d)-1, int(p*float64(len(d))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// searchExplain logs the plan of each statement (with -v), so the README can
// show the plans relied on.
func searchExplain(b *testing.B, store *db.DB, label string, sql string) {
	b.Helper()
	var plan []string
	if err := store.Bun.NewRaw("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) "+sql).Scan(context.Background(), &plan); err != nil {
		b.Fatalf("%s: %v", label, err)
	}
	b.Logf("plan: %s\n%s", label, strings.Join(plan, "\n"))
}

func BenchmarkResolveEntities(b *testing.B) {
	store, events := searchBenchStore(b)
	ctx := context.Background()
	if b.N == 1 {
		for _, n := range []string{"eth", "Etherium", "foundation"} {
			searchExplain(b, store, fmt.Sprintf("resolve %q (%d events)", n, events), search.ResolveSQLForTest(n, 50, 0))
		}
	}
	searchLatencies(b, searchBenchNames, func(name string) error {
		_, err := db.ResolveEntities(ctx, store.Pool, name, 50, 0)
		return err
	})
}

func BenchmarkSearchEvents(b *testing.B) {
	store, events := searchBenchStore(b)
	ctx := context.Background()
	since := time.Now().Add(-30 * 24 * time.Hour)
	if b.N == 1 {
		for _, q := range []string{"Solana exploit", "stablecoins"} {
			analyze, rank, err := search.SearchStatementsForTest(ctx, store.Pool, q, since, 10)
			if err != nil {
				b.Fatal(err)
			}
			searchExplainArgs(b, store, fmt.Sprintf("analyze %q (%d events)", q, events), analyze)
			searchExplainArgs(b, store, fmt.Sprintf("rank %q (%d events)", q, events), rank)
		}
	}
	searchLatencies(b, searchBenchQueries, func(q string) error {
		_, err := db.SearchEvents(ctx, store.Pool, q, since, 10)
		return err
	})
}

// searchExplainArgs logs the plan of a statement with its arguments.
func searchExplainArgs(b *testing.B, store *db.DB, label string, st search.SearchStatementForTest) {
	b.Helper()
	rows, err := store.Pool.Query(context.Background(), "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) "+st.SQL, st.Args...)
	if err != nil {
		b.Fatalf("%s: %v", label, err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatalf("%s: %v", label, err)
	}
	b.Logf("plan: %s\n%s", label, strings.Join(plan, "\n"))
}

// BenchmarkSearchEventsParallel runs the search workload from GOMAXPROCS
// goroutines (a loaded server), reporting throughput only.
func BenchmarkSearchEventsParallel(b *testing.B) {
	store, _ := searchBenchStore(b)
	ctx := context.Background()
	since := time.Now().Add(-30 * 24 * time.Hour)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := db.SearchEvents(ctx, store.Pool, searchBenchQueries[i%len(searchBenchQueries)], since, 10); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "goroutines")
}
