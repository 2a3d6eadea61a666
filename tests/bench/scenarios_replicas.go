package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// The read-replica rows: the computed /v1/latest page and the 3-hop
// /graphql query served by a server whose content reads go to a streaming
// replica of the benchmark database (DATABASE_READ_URLS), each measured
// right after the same request on a server that reads the primary alone,
// and where each request's statements ran.

// readURL is the replica's URL of the benchmark database.
var readURL = flag.String("read-url", os.Getenv("BENCH_DATABASE_READ_URL"),
	"URL of the benchmark database on a streaming replica of its cluster (env BENCH_DATABASE_READ_URL; make bench sets it from scripts/pg-replica-up.sh): the read-replica rows read from it; empty skips them")

// replicaStatementHeader is how many of a response's X-Statement-Count
// statements ran on a replica.
const replicaStatementHeader = "X-Statement-Count-Replica"

func init() {
	registerSuite(suite{name: "read replicas", order: 200, run: runReplicas})
}

// runReplicas measures the replica rows.
func runReplicas(ctx context.Context, env *benchEnv) (*section, error) {
	sec := &section{title: "Read replicas (DATABASE_READ_URLS), computed"}
	if *readURL == "" {
		log.Printf("read replicas: not measured: no replica URL")
		sec.markdown = "Not measured: no replica URL (`-read-url` or `BENCH_DATABASE_READ_URL`; `make bench` sets it from `scripts/pg-replica-up.sh`)."
		return sec, nil
	}
	var picked []scenario
	for _, sc := range scenarios(env.fx) {
		if sc.name == latestRoute || sc.name == threeHopRoute {
			picked = append(picked, sc)
		}
	}
	computed := "RESPONSE_CACHE_TTL=-1s"
	primary, err := env.startServer(ctx, "server-primary-only.log", computed)
	if err != nil {
		return nil, err
	}
	defer primary.stop()
	replica, err := env.startServer(ctx, "server-replica.log", computed, "DATABASE_READ_URLS="+*readURL)
	if err != nil {
		return nil, err
	}
	defer replica.stop()
	if err := waitReplicaCaughtUp(ctx, env, replica.base, 5*time.Minute); err != nil {
		return nil, err
	}

	var split strings.Builder
	for _, sc := range picked {
		for _, c := range env.opts.concs {
			for _, s := range []struct {
				p    *proc
				name string
			}{{primary, sc.name + " (primary only)"}, {replica, sc.name + " (reads on the replica)"}} {
				row := sc
				row.name = s.name
				res, err := env.measure(ctx, s.p.base, row, c, s.p.pid())
				if err != nil {
					return nil, err
				}
				log.Print(res.logLine())
				sec.rows = append(sec.rows, res)
			}
		}
		all, onReplica, err := statementSplit(ctx, env, replica.base, sc)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&split, "| %s | %d | %d | %d |\n", sc.name, all, onReplica, all-onReplica)
	}
	sec.markdown = "Each request computed (`RESPONSE_CACHE_TTL=-1s`) by two servers on the same benchmark database: one reading the primary alone, one with `DATABASE_READ_URLS` set to its streaming replica (`" + redactURL(*readURL) + "`, the cluster `scripts/pg-replica-up.sh` keeps), whose content reads run there once the replica has replayed what the request's metering saw. Both share this machine's cores with the replica's PostgreSQL, so these rows show what routing costs and that it works, not the scale-out a replica on its own machine gives. PG CPU counts the backends of both clusters serving the database (not the replica's WAL replay); xacts/req counts the primary's transactions only.\n\n" +
		"Where one request's statements ran (`X-Statement-Count`, `X-Statement-Count-Replica`):\n\n| request | statements | on the replica | on the primary |\n|---|--:|--:|--:|\n" + split.String()
	return sec, nil
}

// waitReplicaCaughtUp waits until the server at base reports its replica
// up and caught up with the primary's content version (its /readyz), or
// gives up after limit.
func waitReplicaCaughtUp(ctx context.Context, env *benchEnv, base string, limit time.Duration) error {
	var version int64
	if err := env.stats.QueryRow(ctx, "SELECT version FROM data_version").Scan(&version); err != nil {
		return fmt.Errorf("error reading the content version: %w", err)
	}
	deadline := time.Now().Add(limit)
	last := "no answer"
	for {
		state, replayed, err := replicaState(ctx, env.client, base)
		if err == nil && state == "up" && replayed >= version {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("state %s, replayed content version %d of %d", state, replayed, version)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replica did not catch up within %s (%s)", limit, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// replicaState reads the first replica's state and replayed content
// version from the server's /readyz.
func replicaState(ctx context.Context, client *http.Client, base string) (string, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Pools []struct {
			Name        string `json:"name"`
			State       string `json:"state"`
			DataVersion *int64 `json:"dataVersion"`
		} `json:"pools"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", 0, fmt.Errorf("error reading /readyz: %w", err)
	}
	for _, p := range body.Pools {
		if p.Name != "primary" {
			var v int64
			if p.DataVersion != nil {
				v = *p.DataVersion
			}
			return p.State, v, nil
		}
	}
	return "", 0, fmt.Errorf("/readyz lists no replica")
}

// statementSplit sends sc's first request to base twice and returns the
// statements of the answer that ran fewer on the primary (the access layer
// reloads its plans every 30 seconds, one statement on whichever request
// finds them stale): all of them, and those on the replica.
func statementSplit(ctx context.Context, env *benchEnv, base string, sc scenario) (all, onReplica int, err error) {
	baseURL, err := url.Parse(base)
	if err != nil {
		return 0, 0, err
	}
	best := -1
	for range 2 {
		req, err := sc.next(&worker{rng: rand.New(rand.NewPCG(1, 1))})
		if err != nil {
			return 0, 0, err
		}
		req.URL.Scheme, req.URL.Host, req.Host = baseURL.Scheme, baseURL.Host, baseURL.Host
		if sc.key {
			req.Header.Set("Authorization", "Bearer "+env.fx.keys.get())
		}
		resp, err := env.client.Do(req.WithContext(ctx))
		if err != nil {
			return 0, 0, fmt.Errorf("error probing %s: %w", sc.name, err)
		}
		io.Copy(io.Discard, resp.Body) //nolint:errcheck
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("error probing %s: status %d", sc.name, resp.StatusCode)
		}
		n, _ := strconv.Atoi(resp.Header.Get(statementHeader))
		r, _ := strconv.Atoi(resp.Header.Get(replicaStatementHeader))
		if best < 0 || n-r < best {
			best, all, onReplica = n-r, n, r
		}
	}
	return all, onReplica, nil
}

// redactURL is u without its password.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "?"
	}
	return p.Redacted()
}
