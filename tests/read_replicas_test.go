package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
)

// replicaReadRoutes are /v1 graph reads, one of each kind (feeds, search,
// entities, organizations, briefs, markets).
var replicaReadRoutes = []string{
	"/v1/latest?limit=3",
	"/v1/signal/byOrganizationId?id=101&limit=2",
	"/v1/radar/byCategory?category=funding&limit=2",
	"/v1/replay/global?limit=2&since=" + ts(-48*time.Hour),
	"/v1/search?q=Solana&limit=2",
	"/v1/entities/byName?name=eth",
	"/v1/entities/101/relationships",
	"/v1/organizations/byOrganizationId?id=101&include=radar,signal&includeLimit=2",
	"/v1/organizations/101/signal-history?days=3",
	"/v1/brief?id=103&limit=1&since=" + ts(-48*time.Hour),
	"/v1/brief/batch?ids=101,103&limit=1&since=" + ts(-48*time.Hour),
	"/v1/pmarket/byOrganizationId?id=101",
}

// replicaConfig points the service at readURLs, with the per-request
// statement counts on and the response cache off (every request computed).
func replicaConfig(readURLs ...string) func(*app.Config) {
	return func(c *app.Config) {
		c.DatabaseReadURLs = readURLs
		c.DatabaseReadMaxLag = time.Minute
		c.DatabaseReadCheckInterval = 100 * time.Millisecond
		c.StatementCountHeader = true
		c.ResponseCacheTTL = -time.Second
	}
}

// statements returns a response's statement counts: all, and those that
// ran on a replica.
func statements(t testing.TB, r *restResponse) (all, replica int) {
	t.Helper()
	all, err := strconv.Atoi(r.Header.Get(app.StatementCountHeader))
	require.NoError(t, err, "no %s header", app.StatementCountHeader)
	replica, err = strconv.Atoi(r.Header.Get(app.ReplicaStatementCountHeader))
	require.NoError(t, err, "no %s header", app.ReplicaStatementCountHeader)
	return all, replica
}

// readyzPool is one pool of /readyz.
type readyzPool struct {
	Name        string   `json:"name"`
	State       string   `json:"state"`
	LagSeconds  *float64 `json:"lagSeconds"`
	DataVersion *int64   `json:"dataVersion"`
	Statements  int64    `json:"statements"`
}

func readyzPools(t testing.TB, base string) (int, []readyzPool) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Status string       `json:"status"`
		Pools  []readyzPool `json:"pools"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body.Pools
}

// waitReplica waits until /readyz shows replica1 in state want, and, for
// up, caught up with the primary's content version.
func waitReplica(t testing.TB, base string, store *db.DB, want string) readyzPool {
	t.Helper()
	var last readyzPool
	var version int64
	require.NoError(t, store.Pool.QueryRow(context.Background(), "SELECT version FROM data_version").Scan(&version))
	require.Eventually(t, func() bool {
		status, pools := readyzPools(t, base)
		if status != http.StatusOK || len(pools) != 2 || pools[0].Name != "primary" || pools[1].Name != "replica1" {
			return false
		}
		last = pools[1]
		return last.State == want && (want != db.PoolUp || *last.DataVersion >= version)
	}, 3*time.Minute, 20*time.Millisecond, "replica1 never %s (last %+v)", want, last)
	return last
}

// The black-box tests run on a private primary and its streaming replica
// (startReplicaPair): the test server's replica (scripts/pg-replica-up.sh,
// used by db's tests and make bench) also replays every other test
// database of every suite running on the machine, and may fall minutes
// behind, which a test could only wait for.

// TestReadReplicaStatementSplit serves with a real streaming replica and
// shows, from the per-request statement counts, where each statement ran:
// every statement of a /v1 graph read and of a /graphql query runs on the
// replica except the access layer's metering statement (which
// authenticates the key too) on the primary; account routes (webhooks,
// usage, exports) and ingest run on the primary only. The pools' counters
// in /metrics and /readyz agree.
func TestReadReplicaStatementSplit(t *testing.T) {
	t.Parallel()
	s := startReplicaPair(t).srv

	// The access layer keeps the plans in memory for 30 seconds; the first
	// request loads them (on the primary), and so may one request when
	// they expire during the test.
	require.Equal(t, http.StatusOK, s.get(t, "/v1/latest?limit=1").Status)
	var primaryN, replicaN, accountN, planLoads int
	accessOnPrimary := func(name string, primary, want int) {
		if primary == want+1 && planLoads == 0 {
			planLoads++
			primary--
		}
		require.Equal(t, want, primary, "%s: only the access layer's statements on the primary", name)
	}
	for _, path := range replicaReadRoutes {
		r := s.get(t, path)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
		all, replica := statements(t, r)
		accessOnPrimary(path, all-replica, 1) // metering
		require.Positive(t, replica, path)
		primaryN += all - replica
		replicaN += replica
	}

	// /graphql: its metering statement, which authenticates the key too,
	// on the primary, as for /v1.
	q := `{"query":"{ entity(id: 101) { canonicalName relationships(first: 3) { relatedEntity { displayName events(first: 2) { nodes { title owners { displayName } } } } } } }"}`
	r := s.post(t, "/graphql", q)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.NotContains(t, string(r.Body), `"errors"`)
	all, replica := statements(t, r)
	accessOnPrimary("/graphql", all-replica, 1) // metering
	require.Positive(t, replica)
	primaryN += all - replica
	replicaN += replica

	// Account routes and their reads stay on the primary.
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/v1/usage", ""},
		{http.MethodGet, "/v1/webhooks", ""},
		{http.MethodGet, "/v1/export/jobs", ""},
		{http.MethodPost, "/v1/export/jobs", `{"scope":"organizations.registry","format":"csv"}`},
	} {
		r := s.send(t, c.method, c.path, c.body)
		require.Less(t, r.Status, 300, "%s %s: %s", c.method, c.path, r.Body)
		all, replica := statements(t, r)
		require.Zero(t, replica, "%s %s", c.method, c.path)
		accountN += all
	}

	var metricPrimary, metricReplica float64
	for _, line := range strings.Split(string(s.metrics(t)), "\n") {
		if v, ok := strings.CutPrefix(line, `cryptointel_db_statements_total{pool="primary"} `); ok {
			metricPrimary, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(line, `cryptointel_db_statements_total{pool="replica1"} `); ok {
			metricReplica, _ = strconv.ParseFloat(v, 64)
		}
	}
	require.GreaterOrEqual(t, metricReplica, float64(replicaN), "the replica pool's counter covers the requests' replica statements")
	require.Positive(t, metricPrimary)
	summary(t, "statement split with a streaming replica: %d read requests (%d /v1 routes + /graphql) ran %d statements on the replica and %d on the primary (metering only); 4 account requests ran all %d of theirs on the primary; /metrics: primary %.0f, replica1 %.0f (checks and background work included)",
		len(replicaReadRoutes)+1, len(replicaReadRoutes), replicaN, primaryN, accountN, metricPrimary, metricReplica)
}

// post sends a JSON body with the server's API key.
func (s *restServer) post(t testing.TB, path, body string) *restResponse {
	t.Helper()
	return s.send(t, http.MethodPost, path, body)
}

// send sends method path with an optional JSON body and the server's key.
func (s *restServer) send(t testing.TB, method, path, body string) *restResponse {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.apiKey(t))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &restResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// metrics reads /metrics.
func (s *restServer) metrics(t testing.TB) []byte {
	t.Helper()
	resp, err := http.Get(s.base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}

// TestReadYourWrites: with reads on a streaming replica, an account's next
// request sees its own write — a webhook it created, an export it
// started, the credits it was charged — and a read made right after new
// content is committed returns it, on every one of 20 tries with no wait,
// with the response cache on (a body is never computed on a replica that
// has not replayed the version the request's metering statement saw).
func TestReadYourWrites(t *testing.T) {
	t.Parallel()
	s := startReplicaPair(t, func(c *app.Config) {
		c.ResponseCacheTTL = time.Minute // on, and long: a stale body would show
		c.WebhookAllowCIDRs = "127.0.0.0/8"
	}).srv
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	send := func(method, path, body string) *restResponse {
		req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return &restResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}

	// Account writes, read back at once (and on the primary).
	r := send(http.MethodPost, "/v1/webhooks", `{"url":"https://127.0.0.1:9/hook","event_types":["radar"]}`)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	r = send(http.MethodGet, "/v1/webhooks", "")
	require.Equal(t, http.StatusOK, r.Status)
	require.Contains(t, string(r.Body), "https://127.0.0.1:9/hook")
	_, replica := statements(t, r)
	require.Zero(t, replica)
	r = send(http.MethodPost, "/v1/export/jobs", `{"scope":"organizations.registry","format":"jsonl"}`)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	var created struct{ Data struct{ ID string } }
	require.NoError(t, json.Unmarshal(r.Body, &created))
	r = send(http.MethodGet, "/v1/export/jobs", "")
	require.Equal(t, http.StatusOK, r.Status)
	require.Contains(t, string(r.Body), created.Data.ID)
	// Four requests so far, this one the fifth: usage counts them all, and
	// its credits equal the metering headers'.
	r = send(http.MethodGet, "/v1/usage", "")
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "5", fmt.Sprint(jsonPath(t, r.Body, "data", "thisMonth")))
	require.Equal(t, r.Header.Get("X-Monthly-Used"), fmt.Sprint(jsonPath(t, r.Body, "data", "budget", "used")))
	_, replica = statements(t, r)
	require.Zero(t, replica)

	// Content writes, read at once.
	var seen, onReplica, onPrimary int
	const tries = 20
	for i := range tries {
		id := 7000 + i
		ingestLines(t, s.store, []string{newEventLine(i)})
		r := send(http.MethodGet, "/v1/latest?limit=25", "")
		require.Equal(t, http.StatusOK, r.Status)
		if bytes.Contains(r.Body, []byte(fmt.Sprintf(`"id":%d,`, id))) {
			seen++
		}
		if _, replica := statements(t, r); replica > 0 {
			onReplica++
		} else {
			onPrimary++
		}
	}
	summary(t, "read-your-writes with a streaming replica: a created webhook, a started export and 5 metered requests read back at once (on the primary); %d/%d events read right after their ingest (%d computed on the replica, %d on the primary)",
		seen, tries, onReplica, onPrimary)
	require.Equal(t, tries, seen, "every read sees the content committed before it")
}

// jsonPath digs a value out of a JSON body by keys.
func jsonPath(t testing.TB, body []byte, keys ...string) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v))
	for _, k := range keys {
		m, ok := v.(map[string]any)
		require.True(t, ok, "no %s in %s", k, body)
		v = m[k]
	}
	return v
}

// replicaPair is a private primary and its streaming replica, which a
// test may stop and pause at will, and the service over them.
type replicaPair struct {
	primary, replica *pgCluster
	srv              *restServer
}

func startReplicaPair(t *testing.T, opts ...func(*app.Config)) *replicaPair {
	t.Helper()
	p := &replicaPair{primary: newPGCluster(t)}
	p.replica = newPGReplica(t, p.primary)
	p.srv = startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, restFixture()) }, append([]func(*app.Config){func(c *app.Config) {
		c.DatabaseURL = p.primary.URL
		replicaConfig(p.replica.URL)(c)
	}}, opts...)...)
	waitReplica(t, p.srv.base, p.srv.store, db.PoolUp)
	return p
}

// TestReplicaStoppedUnderLoad drives read routes from 8 clients while the
// replica is stopped (fast shutdown: its sessions are terminated mid-load)
// and later started again: no request fails — reads fall back to the
// primary at once — and once the replica is back it serves reads again.
// The counts are reported.
func TestReplicaStoppedUnderLoad(t *testing.T) {
	t.Parallel()
	p := startReplicaPair(t)
	s := p.srv

	var (
		stop                                  atomic.Bool
		total, failed, onReplica, onPrimaryOK atomic.Int64
		phase                                 atomic.Int32 // 0 before the stop, 1 stopped, 2 restarted
		perPhase                              [3][2]atomic.Int64
		wg                                    sync.WaitGroup
		firstErr                              atomic.Value
	)
	// The rate window allows 100 requests per key and minute: each key
	// serves 80 requests, and the load stops at maxRequests whatever the
	// phase, so it stays bounded.
	const perKey, maxRequests = 80, 3200
	keys := make([]string, maxRequests/perKey)
	for i := range keys {
		keys[i], _ = accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	}
	var issued atomic.Int64
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			for i := 0; !stop.Load(); i++ {
				n := issued.Add(1) - 1
				if n >= maxRequests {
					return
				}
				path := replicaReadRoutes[(c+i)%len(replicaReadRoutes)]
				req, _ := http.NewRequest(http.MethodGet, s.base+path, nil)
				req.Header.Set("Authorization", "Bearer "+keys[n/perKey])
				ph := phase.Load()
				resp, err := client.Do(req)
				total.Add(1)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%s: %d %s", path, resp.StatusCode, body))
					continue
				}
				if n, _ := strconv.Atoi(resp.Header.Get(app.ReplicaStatementCountHeader)); n > 0 {
					onReplica.Add(1)
					perPhase[ph][1].Add(1)
				} else {
					onPrimaryOK.Add(1)
					perPhase[ph][0].Add(1)
				}
			}
		}()
	}
	// Each phase lasts a number of requests, not a time.
	waitCount := func(n int64) {
		deadline := time.Now().Add(2 * time.Minute)
		for total.Load() < n && issued.Load() < maxRequests && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitCount(150)
	phase.Store(1)
	p.replica.stop(t, "fast")
	at := total.Load()
	waitCount(at + 150)
	phase.Store(2)
	p.replica.start(t)
	waitReplica(t, s.base, s.store, db.PoolUp)
	at = total.Load()
	waitCount(at + 150)
	stop.Store(true)
	wg.Wait()

	msg, _ := firstErr.Load().(string)
	summary(t, "replica stopped under load: %d requests from 8 clients, %d failed; before the stop %d on the replica / %d on the primary, while stopped %d / %d, after the restart %d / %d",
		total.Load(), failed.Load(), perPhase[0][1].Load(), perPhase[0][0].Load(), perPhase[1][1].Load(), perPhase[1][0].Load(), perPhase[2][1].Load(), perPhase[2][0].Load())
	require.Zero(t, failed.Load(), "first failure: %s", msg)
	require.Positive(t, perPhase[0][1].Load(), "the replica served reads before the stop")
	require.Positive(t, perPhase[1][0].Load(), "the primary served reads while the replica was stopped")
	require.Positive(t, perPhase[2][1].Load(), "the replica served reads again after its restart")
}

// TestStaleReadsRefusedWhileReplayPaused pauses the replica's replay
// (pg_wal_replay_pause()): content committed on the primary afterwards is
// never missing from a read — the replica has not replayed the version the
// request's metering statement saw, so the read runs on the primary — and
// once the replay lag passes DATABASE_READ_MAX_LAG the replica is taken out
// (lagging in /readyz and /metrics) until replay resumes and it catches up.
func TestStaleReadsRefusedWhileReplayPaused(t *testing.T) {
	t.Parallel()
	p := startReplicaPair(t, func(c *app.Config) { c.DatabaseReadMaxLag = time.Second })
	s := p.srv
	key := s.apiKey(t)

	r := s.doAs(t, key, http.MethodGet, "/v1/latest?limit=25")
	_, replica := statements(t, r)
	require.Positive(t, replica, "reads on the replica before the pause")

	p.replica.exec(t, "SELECT pg_wal_replay_pause()")
	var stale, fresh int
	for i := range 5 {
		id := 7100 + i
		ingestLines(t, s.store, []string{newEventLine(100 + i)})
		r := s.doAs(t, key, http.MethodGet, "/v1/latest?limit=25")
		require.Equal(t, http.StatusOK, r.Status)
		_, replica := statements(t, r)
		require.Zero(t, replica, "a replica behind the request's content version is not read")
		if bytes.Contains(r.Body, []byte(fmt.Sprintf(`"id":%d,`, id))) {
			fresh++
		} else {
			stale++
		}
	}
	require.Zero(t, stale)

	// Paused past the bound: taken out for every read.
	lagging := waitReplica(t, s.base, s.store, db.PoolLagging)
	require.Greater(t, *lagging.LagSeconds, 1.0)
	require.Contains(t, string(s.metrics(t)), `cryptointel_db_replica_state{pool="replica1",state="lagging"} 1`)
	r = s.doAs(t, key, http.MethodGet, "/v1/entities/byName?name=eth")
	require.Equal(t, http.StatusOK, r.Status)
	_, replica = statements(t, r)
	require.Zero(t, replica)

	p.replica.exec(t, "SELECT pg_wal_replay_resume()")
	back := waitReplica(t, s.base, s.store, db.PoolUp)
	r = s.doAs(t, key, http.MethodGet, "/v1/latest?limit=25")
	_, replica = statements(t, r)
	require.Positive(t, replica, "back on the replica once caught up")
	require.Contains(t, string(r.Body), `"id":7104,`)
	summary(t, "replay paused: %d reads right after an ingest, %d stale, %d fresh (all on the primary); replica reported lagging at %.1fs lag, up again after resume at data version %d",
		stale+fresh, stale, fresh, *lagging.LagSeconds, *back.DataVersion)
}

// cutProxy is a TCP proxy in front of a PostgreSQL server that, when
// armed, cuts the next connection whose result reaches its second data
// row: the client has rows of the result and then loses the server, as
// when a replica stops while a large result streams.
type cutProxy struct {
	ln     net.Listener
	target string
	armed  atomic.Bool
	cuts   atomic.Int32
}

// proxyReplica returns a config option that sends the service's replica
// reads through a cutProxy, and the proxy.
func proxyReplica(t *testing.T) (func(*app.Config), *cutProxy) {
	p := &cutProxy{}
	return func(c *app.Config) {
		require.Len(t, c.DatabaseReadURLs, 1)
		u, err := url.Parse(c.DatabaseReadURLs[0])
		require.NoError(t, err)
		p.target = u.Host
		p.ln, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { p.ln.Close() })
		go p.serve()
		u.Host = p.ln.Addr().String()
		c.DatabaseReadURLs = []string{u.String()}
	}, p
}

func (p *cutProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(client)
	}
}

// pipe forwards one connection, reading the server's side as the
// protocol's messages (a type byte and a length: the URL asks for no TLS).
func (p *cutProxy) pipe(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		io.Copy(server, client) //nolint:errcheck
		server.Close()
	}()
	r := bufio.NewReader(server)
	rows := 0
	for {
		var head [5]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return
		}
		msg := make([]byte, 5+binary.BigEndian.Uint32(head[1:])-4)
		copy(msg, head[:])
		if _, err := io.ReadFull(r, msg[5:]); err != nil {
			return
		}
		if _, err := client.Write(msg); err != nil {
			return
		}
		if head[0] != 'D' {
			rows = 0
			continue
		}
		if rows++; rows == 2 && p.armed.CompareAndSwap(true, false) {
			p.cuts.Add(1)
			return
		}
	}
}

// TestReplicaLostMidResult cuts the replica's connection in the middle of
// a result (two rows delivered, then the connection closed), of a /v1
// route and of a /graphql query: the reader cannot take those rows back,
// so the operation runs again on the primary and the client gets the same
// data, not a 503 or an error; the replica is taken out until its next
// check and serves again after it.
func TestReplicaLostMidResult(t *testing.T) {
	t.Parallel()
	opt, proxy := proxyReplica(t)
	s := startReplicaPair(t, opt).srv
	key := s.apiKey(t)

	const query = `{"query":"{ events(first: 25, sort: RECENCY, window: \"30d\") { nodes { id title latestEvidenceTimestamp owners { id label } evidence { id url } } } }"}`
	for _, c := range []struct {
		name string
		do   func() *restResponse
	}{
		{"/v1/latest", func() *restResponse { return s.doAs(t, key, http.MethodGet, "/v1/latest?limit=25") }},
		{"/graphql", func() *restResponse { return s.post(t, "/graphql", query) }},
	} {
		onReplica := func() *restResponse {
			var r *restResponse
			require.Eventually(t, func() bool {
				r = c.do()
				require.Equal(t, http.StatusOK, r.Status, "%s: %s", c.name, r.Body)
				require.NotContains(t, string(r.Body), `"errors"`, c.name)
				_, replica := statements(t, r)
				return replica > 0
			}, time.Minute, 200*time.Millisecond, "%s never read the replica", c.name)
			return r
		}
		first := onReplica()
		data := jsonPath(t, first.Body, "data")
		if c.name == "/graphql" {
			data = jsonPath(t, first.Body, "data", "events", "nodes")
		}
		require.Greater(t, len(data.([]any)), 2, "%s: the page has rows to cut between", c.name)

		cuts := proxy.cuts.Load()
		proxy.armed.Store(true)
		cut := c.do()
		require.Equal(t, cuts+1, proxy.cuts.Load(), "%s: the replica's result was cut", c.name)
		require.Equal(t, http.StatusOK, cut.Status, "%s: %s", c.name, cut.Body)
		require.NotContains(t, string(cut.Body), `"errors"`, c.name)
		require.Equal(t, jsonPath(t, first.Body, "data"), jsonPath(t, cut.Body, "data"), c.name)

		// The replica comes back at its next check and serves again.
		waitReplica(t, s.base, s.store, db.PoolUp)
		require.Equal(t, jsonPath(t, first.Body, "data"), jsonPath(t, onReplica().Body, "data"), c.name)
	}
}
