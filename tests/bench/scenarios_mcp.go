package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The MCP rows: the search and the latest-events tools called over /mcp
// (Streamable HTTP, one tools/call per request, as a stateless client
// makes it) beside the /v1 routes they run, with the same parameters and
// the same data (detail full), on the service as shipped (response cache
// on) and computing every request. A tool call is its route run in
// process plus the protocol: the target is server CPU per call at most
// 1.1 times the route's, computed.

// mcpTargetRatio is the most server CPU a tool call may cost per call, as
// a multiple of its route's.
const mcpTargetRatio = 1.1

func init() {
	registerSuite(suite{name: "mcp tools", order: 150, run: runMCP})
}

// mcpPair is a route and the tool call that runs it.
type mcpPair struct {
	route, tool scenario
}

// mcpPairs are the measured pairs: the same parameters per worker and
// iteration on both sides.
func mcpPairs(fx *fixtures) []mcpPair {
	call := func(tool string, args map[string]any) (*http.Request, error) {
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": tool, "arguments": args}})
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		return req, nil
	}
	get := func(path string, q url.Values) (*http.Request, error) {
		return http.NewRequest(http.MethodGet, path+"?"+q.Encode(), nil)
	}
	return []mcpPair{
		{
			route: scenario{name: "GET /v1/search?q=…", key: true, next: func(w *worker) (*http.Request, error) {
				return get("/v1/search", url.Values{"q": {fx.names[pick(w, len(fx.names))]}})
			}},
			tool: scenario{name: "MCP search_events (detail full)", key: true, check: mcpCheck, next: func(w *worker) (*http.Request, error) {
				return call("search_events", map[string]any{"query": fx.names[pick(w, len(fx.names))], "detail": "full"})
			}},
		},
		{
			route: scenario{name: "GET /v1/latest?limit=25", key: true, next: func(w *worker) (*http.Request, error) {
				return get("/v1/latest", url.Values{"limit": {"25"}})
			}},
			tool: scenario{name: "MCP latest_events limit 25 (detail full)", key: true, check: mcpCheck, next: func(w *worker) (*http.Request, error) {
				return call("latest_events", map[string]any{"limit": 25, "detail": "full"})
			}},
		},
	}
}

// mcpCheck fails a tool call answered with a JSON-RPC error or a tool
// error (both come with status 200). A response that starts as a result
// with structured content and is no tool error passes without being
// decoded: the client's own CPU, on the machine the server runs on, stays
// near what the route rows' client spends (they decode nothing).
func mcpCheck(body []byte) error {
	if bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":1,"result":{`)) && !bytes.Contains(body, []byte(`"isError":true`)) &&
		bytes.Contains(body, []byte(`"structuredContent":{`)) {
		return nil
	}
	var r struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("not a JSON-RPC response: %w", err)
	}
	switch {
	case r.Error != nil:
		return errors.New("JSON-RPC error: " + r.Error.Message)
	case r.Result == nil:
		return errors.New("no result")
	case r.Result.IsError:
		msg := ""
		if len(r.Result.Content) > 0 {
			msg = r.Result.Content[0].Text
		}
		return errors.New("tool error: " + msg)
	case len(r.Result.StructuredContent) == 0:
		return errors.New("no structured content")
	}
	return nil
}

// runMCP measures each pair at each concurrency on a server as shipped
// (route, tool, tool, route once) and on one computing every request
// (-mcp-rounds times over: the target's rows).
func runMCP(ctx context.Context, env *benchEnv) (*section, error) {
	sec := &section{title: "MCP tools beside their /v1 routes"}
	rounds := max(env.opts.mcpRounds, 1)
	var ratios strings.Builder
	for _, srv := range []struct {
		label, env string
		rounds     int
	}{{"as shipped", "", 1}, {"computed", "RESPONSE_CACHE_TTL=-1s", rounds}} {
		var extra []string
		if srv.env != "" {
			extra = append(extra, srv.env)
		}
		pprofAddr := mcpPprofAddr(env.opts.pprofAddr)
		if pprofAddr != "" {
			extra = append(extra, "PPROF_ADDR="+pprofAddr)
		}
		p, err := env.startServer(ctx, "server-mcp-"+strings.ReplaceAll(srv.label, " ", "-")+".log", extra...)
		if err != nil {
			return nil, err
		}
		for _, pair := range mcpPairs(env.fx) {
			for _, c := range env.opts.concs {
				// Route, tool, tool, route, srv.rounds times: each side's
				// CPU per request over all its measurements, so that a load
				// on the machine that drifts meanwhile weighs on both alike;
				// and each round's own ratio, to show how far one reading
				// strays.
				var cpuTotal [2]time.Duration
				var requests [2]int
				var roundCPU [2]time.Duration
				var roundReqs [2]int
				var perRound []float64
				for k := range 4 * srv.rounds {
					i := []int{0, 1, 1, 0}[k%4]
					sc := []scenario{pair.route, pair.tool}[i]
					row := sc
					row.name = fmt.Sprintf("%s (%s, %d)", sc.name, srv.label, k/2+1)
					done := mcpProfile(env, pprofAddr, row.name, c)
					res, err := env.measure(ctx, p.base, row, c, p.pid())
					done()
					if err != nil {
						p.stop()
						return nil, err
					}
					log.Print(res.logLine())
					sec.rows = append(sec.rows, res)
					cpuTotal[i] += res.cpu
					requests[i] += res.requests
					roundCPU[i] += res.cpu
					roundReqs[i] += res.requests
					if k%4 == 3 {
						perRound = append(perRound, cpuRatio(roundCPU, roundReqs))
						roundCPU, roundReqs = [2]time.Duration{}, [2]int{}
					}
				}
				var cpu [2]float64
				for i := range cpu {
					if requests[i] > 0 {
						cpu[i] = float64((cpuTotal[i] / time.Duration(requests[i])).Microseconds()) / 1000
					}
				}
				ratio := cpuRatio(cpuTotal, requests)
				met := "✅"
				if ratio > mcpTargetRatio || ratio == 0 {
					met = "❌"
				}
				if srv.env == "" {
					met = "(not the target's)"
				}
				readings := make([]string, len(perRound))
				for i, r := range perRound {
					readings[i] = fmt.Sprintf("%.2f", r)
				}
				fmt.Fprintf(&ratios, "| %s | %s | %d | %.2f | %.2f | %.2f× | %s | %s |\n", pair.tool.name, srv.label, c, cpu[0], cpu[1], ratio,
					strings.Join(readings, ", "), met)
			}
		}
		p.stop()
	}
	sec.markdown = "Each tool call is one `tools/call` POST to `/mcp` (Streamable HTTP, stateless, JSON response) with the key as a Bearer key, " +
		"running its /v1 route in process with the same parameters (`detail` full: the same events, without their legacy aliases); " +
		"the route rows are the plain GETs on the same server, measured route, tool, tool, route (a round; the rows are numbered) " +
		fmt.Sprintf("%d times over on the server computing every request and once on the server as shipped, so that a load ", rounds) +
		"drifting on the machine weighs on both alike. Server CPU per call of the tool over the route's, each over all its measurements " +
		fmt.Sprintf("(target ≤ %.1f×, computed), and each round's own ratio:\n\n", mcpTargetRatio) +
		"| tool | server | c | route CPU ms/req | tool CPU ms/req | ratio | rounds | met |\n|---|---|--:|--:|--:|--:|---|:-:|\n" + ratios.String()
	return sec, nil
}

// cpuRatio is the tool's server CPU per request over the route's (index 0
// the route, 1 the tool); 0 when either side served nothing.
func cpuRatio(cpu [2]time.Duration, requests [2]int) float64 {
	if requests[0] == 0 || requests[1] == 0 || cpu[0] == 0 {
		return 0
	}
	return (float64(cpu[1]) / float64(requests[1])) / (float64(cpu[0]) / float64(requests[0]))
}

// mcpPprofAddr is the pprof address of the suite's servers when the run
// profiles (-pprof-addr): the next port, as the core server holds the one
// given.
func mcpPprofAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if addr == "" || err != nil {
		return ""
	}
	n, err := strconv.Atoi(port)
	if err != nil || n == 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// mcpProfile takes a CPU profile of the server at pprofAddr over one row's
// measurement (its warm-up included: the same load) into
// tests/bench/.cache/mcp-<row>-c<c>.pprof; the returned func waits for it.
// No address, no profile.
func mcpProfile(env *benchEnv, pprofAddr, row string, c int) func() {
	if pprofAddr == "" {
		return func() {}
	}
	secs := int(math.Ceil((env.opts.warmup + env.opts.duration).Seconds())) + 2
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, row)
	path := filepath.Join(cacheDir(env.opts), fmt.Sprintf("mcp-%s-c%d.pprof", name, c))
	done := make(chan struct{})
	go func() {
		defer close(done)
		var resp *http.Response
		var err error
		for try := 0; try < 30; try++ { // a server just started may not listen for pprof yet
			if resp, err = http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, secs)); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			log.Printf("profile of %s: %v", row, err)
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode == http.StatusOK {
			err = os.WriteFile(path, b, 0o644)
		}
		if err != nil {
			log.Printf("profile of %s: %v", row, err)
			return
		}
		log.Printf("profile of %s c=%d: %s", row, c, path)
	}()
	return func() { <-done }
}
