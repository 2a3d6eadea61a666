package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel/tests/bench/queries"
)

// PostGraphile 5 beside the service: `make bench` installs it from npm
// (tests/bench/postgraphile: package.json and its committed
// package-lock.json, with Node 22 from the npm package `node`, since the
// system Node may be older) into the ignored node_modules folder there,
// serves the same benchmark database with it, measures the equivalent
// queries below next to the service's, and checks that both sides return
// the same data.

// pglDir is the PostGraphile package's folder, absolute (commands run in
// it).
func pglDir(o options) string {
	dir := filepath.Join(o.repo, "tests", "bench", "postgraphile")
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// installPostGraphile runs `npm ci` in the PostGraphile folder unless its
// node_modules was installed from the same package-lock.json.
func installPostGraphile(ctx context.Context, o options) error {
	dir := pglDir(o)
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return fmt.Errorf("error reading the PostGraphile lock file: %w", err)
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	marker := filepath.Join(dir, "node_modules", ".installed-from-lock")
	if got, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(got)) == want {
		if _, err := os.Stat(pglNode(o)); err == nil {
			return nil
		}
	}
	log.Printf("installing PostGraphile 5 and Node 22 from npm into %s/node_modules (once per package-lock.json)", dir)
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("error installing PostGraphile (npm ci in %s): %w", dir, err)
	}
	if _, err := os.Stat(pglNode(o)); err != nil {
		return fmt.Errorf("npm ci in %s left no Node 22 binary: %w", dir, err)
	}
	return os.WriteFile(marker, []byte(want+"\n"), 0o644)
}

// pglNode is the Node 22 binary the npm package `node` installed.
func pglNode(o options) string {
	return filepath.Join(pglDir(o), "node_modules", "node", "bin", "node")
}

// startPostGraphile serves the benchmark database with PostGraphile on a
// free loopback port and waits until it answers.
func startPostGraphile(ctx context.Context, o options) (*proc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := pglDir(o)
	cmd := exec.Command(pglNode(o), filepath.Join(dir, "node_modules", "postgraphile", "dist", "cli-run.js"), "-C", filepath.Join(dir, "graphile.config.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+o.databaseURL,
		"PORT="+strconv.Itoa(port),
		"POOL_SIZE="+strconv.Itoa(o.dbMaxConns),
		"NODE_ENV=production",
		"GRAPHILE_ENV=production",
	)
	logPath := filepath.Join(cacheDir(o), "postgraphile.log")
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// PostGraphile prints no machine-readable line when it listens: the
	// address is ours, and readiness is a query that answers.
	p, err := startProc(ctx, cmd, logPath, nil)
	if err != nil {
		return nil, err
	}
	p.base = base
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
		if err == nil {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("PostGraphile exited before answering; see %s", logPath)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("PostGraphile did not answer within two minutes; see %s", logPath)
		}
	}
}

// freePort returns a loopback port nothing listens on.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("error finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// A query pair: the service's document and PostGraphile's equivalent one
// (same rows, same order, PostGraphile's own names: rowId, the generated
// relations, orderBy on indexed columns).
type queryPair struct {
	name             string
	service, pgl     string
	shape            func(body []byte, pgl bool) (string, error) // ids and counts, for the same-data check
	sampleArgs       func(fx *fixtures) []int64                  // ids the same-data check compares
	serviceVarsForID func(id int64) map[string]any
	pglVarsForID     func(id int64) map[string]any
}

// latest25Service is the service's side of the pair (queries.Latest25).
const latest25Service = queries.Latest25

const latest25PostGraphile = `query Latest25 {
  allEvents(first: 25, orderBy: [LATEST_EVIDENCE_AT_DESC, ROW_ID_DESC]) {
    nodes {
      rowId title latestEvidenceAt significance
      eventEntitiesByEventId(condition: {role: "owner"}) { nodes { entityByEntityId { rowId displayName } } }
      evidencesByEventId(orderBy: [TS_DESC, ROW_ID_ASC]) { nodes { rowId url ts } }
    }
  }
}`

// threeHopPostGraphile is threeHopQuery for PostGraphile: an entity's
// outbound relationships (the harness picks entities with at least five,
// so the service's outbound-first page holds the same five), each related
// entity's events newest first (from event_entities, as the service reads
// them), and each event's owners, participants and evidence.
const threeHopPostGraphile = `query ThreeHop($id: BigInt!, $n: Int) {
  entityByRowId(rowId: $id) {
    rowId
    canonicalName
    relationshipsBySourceEntityId(first: $n, orderBy: [RELATIONSHIP_TYPE_ASC, TARGET_ENTITY_ID_ASC]) {
      nodes {
        relationshipType
        entityByTargetEntityId {
          rowId
          displayName
          eventEntitiesByEntityId(first: $n, orderBy: [LATEST_EVIDENCE_AT_DESC, EVENT_ID_DESC]) {
            nodes {
              eventByEventId {
                rowId title significance latestEvidenceAt
                owners: eventEntitiesByEventId(condition: {role: "owner"}) { nodes { entityByEntityId { rowId displayName aliases } } }
                participants: eventEntitiesByEventId(condition: {role: "participant"}) { nodes { entityByEntityId { rowId displayName } } }
                evidencesByEventId(orderBy: [TS_DESC, ROW_ID_ASC]) { nodes { rowId url ts } }
              }
            }
          }
        }
      }
    }
  }
}`

// graphqlRequest builds a POST of query and vars to path.
func graphqlRequest(query string, vars map[string]any) (*http.Request, error) {
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// The same-data check reduces each side's response to its ids and counts,
// in PostGraphile's and the service's common order, and compares the text.

type j = map[string]any

func arr(v any) []any {
	a, _ := v.([]any)
	return a
}

func obj(v any) j {
	m, _ := v.(map[string]any)
	return m
}

// idOf reads an id, a JSON number on the service, a BigInt string on
// PostGraphile.
func idOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatInt(int64(x), 10)
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

// nodes is a PostGraphile connection's nodes.
func nodes(v any) []any { return arr(obj(v)["nodes"]) }

// sortedIDs lists ids sorted (the order of owners and evidence differs
// between the two sides' natural orders; the check compares the sets).
func sortedIDs(ids []string) string {
	sort.Strings(ids)
	return "[" + strings.Join(ids, ",") + "]"
}

func decodeData(body []byte) (j, error) {
	var resp struct {
		Data   j               `json:"data"`
		Errors json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("error decoding a response: %w", err)
	}
	if len(resp.Errors) > 0 && string(resp.Errors) != "null" {
		return nil, fmt.Errorf("the response has errors: %s", resp.Errors)
	}
	return resp.Data, nil
}

// eventShape is one event's id, owners (and participants) and evidence.
func eventShape(b *strings.Builder, ev j, pgl, participants bool) {
	if pgl {
		var owners, parts, evidence []string
		for _, n := range nodes(ev["owners"]) {
			owners = append(owners, idOf(obj(obj(n)["entityByEntityId"])["rowId"]))
		}
		for _, n := range nodes(ev["eventEntitiesByEventId"]) {
			owners = append(owners, idOf(obj(obj(n)["entityByEntityId"])["rowId"]))
		}
		for _, n := range nodes(ev["participants"]) {
			parts = append(parts, idOf(obj(obj(n)["entityByEntityId"])["rowId"]))
		}
		for _, n := range nodes(ev["evidencesByEventId"]) {
			evidence = append(evidence, idOf(obj(n)["rowId"]))
		}
		eventLine(b, idOf(ev["rowId"]), owners, parts, evidence, participants)
		return
	}
	var owners, parts, evidence []string
	for _, o := range arr(ev["owners"]) {
		owners = append(owners, idOf(obj(o)["id"]))
	}
	for _, o := range arr(ev["participants"]) {
		parts = append(parts, idOf(obj(o)["id"]))
	}
	for _, e := range arr(ev["evidence"]) {
		evidence = append(evidence, idOf(obj(e)["id"]))
	}
	eventLine(b, idOf(ev["id"]), owners, parts, evidence, participants)
}

// eventLine writes the line both servers' events are compared by.
func eventLine(b *strings.Builder, id string, owners, parts, evidence []string, participants bool) {
	fmt.Fprintf(b, "event %s owners %s", id, sortedIDs(owners))
	if participants {
		fmt.Fprintf(b, " participants %s", sortedIDs(parts))
	}
	fmt.Fprintf(b, " evidence %s\n", sortedIDs(evidence))
}

func latest25Shape(body []byte, pgl bool) (string, error) {
	data, err := decodeData(body)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if pgl {
		for _, ev := range nodes(data["allEvents"]) {
			eventShape(&b, obj(ev), true, false)
		}
	} else {
		for _, ev := range arr(obj(data["events"])["nodes"]) {
			eventShape(&b, obj(ev), false, false)
		}
	}
	return b.String(), nil
}

func threeHopShape(body []byte, pgl bool) (string, error) {
	data, err := decodeData(body)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if pgl {
		e := obj(data["entityByRowId"])
		fmt.Fprintf(&b, "entity %s\n", idOf(e["rowId"]))
		for _, r := range nodes(e["relationshipsBySourceEntityId"]) {
			rel := obj(obj(r)["entityByTargetEntityId"])
			fmt.Fprintf(&b, " related %s\n", idOf(rel["rowId"]))
			for _, ee := range nodes(rel["eventEntitiesByEntityId"]) {
				b.WriteString("  ")
				eventShape(&b, obj(obj(ee)["eventByEventId"]), true, true)
			}
		}
		return b.String(), nil
	}
	e := obj(data["entity"])
	fmt.Fprintf(&b, "entity %s\n", idOf(e["id"]))
	for _, r := range arr(e["relationships"]) {
		rel := obj(obj(r)["relatedEntity"])
		fmt.Fprintf(&b, " related %s\n", idOf(rel["id"]))
		for _, ev := range arr(obj(rel["events"])["nodes"]) {
			b.WriteString("  ")
			eventShape(&b, obj(ev), false, true)
		}
	}
	return b.String(), nil
}

// queryPairs are the measured pairs.
func queryPairs() []queryPair {
	return []queryPair{
		{
			name: "25 latest events with owners and evidence", service: latest25Service, pgl: latest25PostGraphile,
			serviceVarsForID: func(int64) map[string]any { return nil },
			pglVarsForID:     func(int64) map[string]any { return nil },
			sampleArgs:       func(*fixtures) []int64 { return []int64{0} },
			shape:            latest25Shape,
		},
		{
			name: "3 hops, 5 per level", service: threeHopQuery, pgl: threeHopPostGraphile,
			serviceVarsForID: func(id int64) map[string]any { return map[string]any{"id": id, "n": 5} },
			pglVarsForID:     func(id int64) map[string]any { return map[string]any{"id": strconv.FormatInt(id, 10), "n": 5} },
			sampleArgs: func(fx *fixtures) []int64 {
				if len(fx.hopIDs) > 5 {
					return fx.hopIDs[:5]
				}
				return fx.hopIDs
			},
			shape: threeHopShape,
		},
	}
}

// sameData is the outcome of the same-data check of one pair.
type sameData struct {
	pair      string
	documents int
	same      bool
	detail    string
}

// checkSameData sends each pair's sample documents to both sides (the
// service with a key) and compares their ids and counts.
func checkSameData(ctx context.Context, client *http.Client, serviceBase, pglBase string, fx *fixtures) ([]sameData, error) {
	send := func(base, query string, vars map[string]any, key bool) ([]byte, error) {
		req, err := graphqlRequest(query, vars)
		if err != nil {
			return nil, err
		}
		u := base + "/graphql"
		req.URL, err = req.URL.Parse(u)
		if err != nil {
			return nil, err
		}
		req.Host = req.URL.Host
		if key {
			req.Header.Set("Authorization", "Bearer "+fx.keys.get())
		}
		resp, err := client.Do(req.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("status %d: %.300s", resp.StatusCode, body)
		}
		return body, nil
	}
	var out []sameData
	for _, qp := range queryPairs() {
		res := sameData{pair: qp.name, same: true}
		for _, id := range qp.sampleArgs(fx) {
			sb, err := send(serviceBase, qp.service, qp.serviceVarsForID(id), true)
			if err != nil {
				return nil, fmt.Errorf("error running %s on the service: %w", qp.name, err)
			}
			pb, err := send(pglBase, qp.pgl, qp.pglVarsForID(id), false)
			if err != nil {
				return nil, fmt.Errorf("error running %s on PostGraphile: %w", qp.name, err)
			}
			ss, err := qp.shape(sb, false)
			if err != nil {
				return nil, fmt.Errorf("service, %s: %w", qp.name, err)
			}
			ps, err := qp.shape(pb, true)
			if err != nil {
				return nil, fmt.Errorf("PostGraphile, %s: %w", qp.name, err)
			}
			res.documents++
			if ss == "" {
				res.same, res.detail = false, "the service returned no data"
			} else if ss != ps && res.same {
				res.same, res.detail = false, firstDifference(ss, ps)
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// firstDifference names the first line where the two shapes differ.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: service %q, PostGraphile %q", i+1, x, y)
		}
	}
	return ""
}

// pglScenarios are PostGraphile's rows (no key: it has no access layer).
func pglScenarios(fx *fixtures) []scenario {
	return []scenario{
		{name: "PostGraphile 5: 25 latest events with owners and evidence", next: func(w *worker) (*http.Request, error) {
			return graphqlRequest(latest25PostGraphile, nil)
		}},
		{name: "PostGraphile 5: 3 hops, 5 per level", next: func(w *worker) (*http.Request, error) {
			id := fx.hopIDs[pick(w, len(fx.hopIDs))]
			return graphqlRequest(threeHopPostGraphile, map[string]any{"id": strconv.FormatInt(id, 10), "n": 5})
		}},
	}
}
