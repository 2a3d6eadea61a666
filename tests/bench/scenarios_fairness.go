package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel/db"
)

// The fairness suite: another key's entity lookup while one key floods the
// server with what a spent rate window, the door and the key's share of
// the database pool must bound — 10 KB nested-literal /graphql documents
// (refused once its window is spent, before they are parsed), MCP batches
// of 20 latest_events topic feeds over 30 days, and /v1/latest topic
// feeds. The target: the lookup's p99 under the flood at most
// fairnessTarget times its idle p99 (`-only fairness`).

// fairnessTarget is the most the victim's p99 may grow under the flood.
const fairnessTarget = 3.0

// fairnessAccount owns the flooding key: an account of its own, so that
// its spent window is nobody else's.
const fairnessAccount = "bench fairness flooder"

func init() {
	registerSuite(suite{name: "fairness", order: 260, run: runFairness})
}

// runFairness measures the lookup idle, then under the flood.
func runFairness(ctx context.Context, env *benchEnv) (*section, error) {
	sec := &section{title: "Fairness: one key flooding, another key's lookups"}
	store, err := db.Open(ctx, env.opts.databaseURL, db.Options{MaxConns: 2})
	if err != nil {
		return nil, err
	}
	flooder, _, err := db.CreateAPIKey(ctx, store.Bun, fairnessAccount, "enterprise")
	store.Close()
	if err != nil {
		return nil, fmt.Errorf("error creating the flooding key: %w", err)
	}
	p, err := env.startServer(ctx, "server-fairness.log", "RESPONSE_CACHE_TTL=-1s")
	if err != nil {
		return nil, err
	}
	defer p.stop()

	lookup := func(name string) scenario {
		return scenario{name: name, key: true, next: func(w *worker) (*http.Request, error) {
			id := env.fx.entityIDs[pick(w, len(env.fx.entityIDs))]
			return http.NewRequest(http.MethodGet, "/v1/entities/byId?id="+strconv.FormatInt(id, 10), nil)
		}}
	}
	const c = 1
	idle, err := env.measure(ctx, p.base, lookup("GET /v1/entities/byId (idle)"), c, p.pid())
	if err != nil {
		return nil, err
	}
	log.Print(idle.logLine())

	floodCtx, stopFlood := context.WithCancel(ctx)
	fl := &flood{base: p.base, key: flooder, client: env.client, statuses: map[string]map[int]int{}}
	var wg sync.WaitGroup
	for kind, n := range map[string]int{"graphql 10 KB nested documents": 4, "MCP batch of 20 latest_events topic feeds": 2, "GET /v1/latest topic feed 30d": 2} {
		for i := range n {
			wg.Go(func() { fl.run(floodCtx, kind, i) })
		}
	}
	time.Sleep(time.Second) // the flood under way
	busy, err := env.measure(ctx, p.base, lookup("GET /v1/entities/byId (one key flooding)"), c, p.pid())
	stopFlood()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	log.Print(busy.logLine())
	sec.rows = append(sec.rows, idle, busy)

	ratio := 0.0
	if p99 := idle.pct(0.99); p99 > 0 {
		ratio = float64(busy.pct(0.99)) / float64(p99)
	}
	met := "✅"
	if ratio == 0 || ratio > fairnessTarget {
		met = "❌"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A server computing every request (`RESPONSE_CACHE_TTL=-1s`, `DB_MAX_CONNS=%d`, `DB_KEY_SHARE` half of it) answers "+
		"`GET /v1/entities/byId` for keys of the bench account at concurrency %d, idle and then while one key of another account "+
		"floods it with eight closed-loop clients: four sending 10 KB nested-literal `/graphql` documents, two MCP batches of 20 "+
		"`latest_events` topic feeds over 30 days (protocol 2025-03-26), two `/v1/latest` topic feeds over 30 days. "+
		"Its window is spent within the first second: what follows is refused at the door.\n\n", env.opts.dbMaxConns, c)
	fmt.Fprintf(&b, "| lookup p99 idle | p99 under the flood | ratio | target | met |\n|--:|--:|--:|--:|:-:|\n| %s | %s | %.2f× | ≤ %.0f× | %s |\n\n",
		fmtMs(idle.pct(0.99)), fmtMs(busy.pct(0.99)), ratio, fairnessTarget, met)
	b.WriteString("The flood's answers (status: count):\n\n| flood | statuses |\n|---|---|\n")
	for _, kind := range fl.kinds() {
		fmt.Fprintf(&b, "| %s | %s |\n", kind, fl.summary(kind))
	}
	sec.markdown = b.String()
	return sec, nil
}

// fmtMs formats d in milliseconds.
func fmtMs(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// flood is the flooding key's clients.
type flood struct {
	base, key string
	client    *http.Client

	mu       sync.Mutex
	statuses map[string]map[int]int
}

// nestedLiteralDocument is a /graphql document of about 10 KB whose
// argument is a deeply nested list literal.
var nestedLiteralDocument = func() string {
	depth := (10<<10 - 40) / 2
	return "{ __typename(x: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + ") }"
}()

// fairnessTopics are the topic feeds' words.
var fairnessTopics = []string{"staking", "exchange listing", "funding round", "stablecoin", "layer 2", "governance vote"}

func (f *flood) run(ctx context.Context, kind string, id int) {
	for iter := 0; ctx.Err() == nil; iter++ {
		req, err := f.request(kind, id, iter)
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+f.key)
		status := 0
		resp, err := f.client.Do(req.WithContext(ctx))
		if err == nil {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			status = resp.StatusCode
		} else if ctx.Err() != nil {
			return
		}
		f.mu.Lock()
		if f.statuses[kind] == nil {
			f.statuses[kind] = map[int]int{}
		}
		f.statuses[kind][status]++
		f.mu.Unlock()
	}
}

func (f *flood) request(kind string, id, iter int) (*http.Request, error) {
	topic := fairnessTopics[(id*7+iter)%len(fairnessTopics)]
	switch {
	case strings.HasPrefix(kind, "graphql"):
		body, _ := json.Marshal(map[string]string{"query": "# " + strconv.Itoa(id) + "-" + strconv.Itoa(iter) + "\n" + nestedLiteralDocument})
		req, err := http.NewRequest(http.MethodPost, f.base+"/graphql", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, err
	case strings.HasPrefix(kind, "MCP"):
		calls := make([]map[string]any, 20)
		for i := range calls {
			calls[i] = map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{
				"name": "latest_events", "arguments": map[string]any{"topic": topic, "window": "30d", "limit": 25, "detail": "full"}}}
		}
		body, _ := json.Marshal(calls)
		req, err := http.NewRequest(http.MethodPost, f.base+"/mcp", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		}
		return req, err
	}
	return http.NewRequest(http.MethodGet, f.base+"/v1/latest?window=30d&limit=25&topic="+strings.ReplaceAll(topic, " ", "+"), nil)
}

func (f *flood) kinds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.statuses {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (f *flood) summary(kind string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var codes []int
	for c := range f.statuses[kind] {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		label := strconv.Itoa(c)
		if c == 0 {
			label = "transport error"
		}
		parts = append(parts, fmt.Sprintf("%s: %d", label, f.statuses[kind][c]))
	}
	return strings.Join(parts, ", ")
}
