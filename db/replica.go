package db

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// Read pools.
//
// DB.Read is the Bun handle of read-only work that may run on a streaming
// replica. Each statement sent through it picks its pool when it takes a
// connection (the database/sql connector below sees the statement's
// context):
//
//   - a replica, when the context carries a replica-read grant
//     (WithReplicaReads) and a replica is up: reachable, in recovery,
//     replaying within MaxReplicaLag, and having replayed at least the
//     content version the grant names — the version the request's own
//     metering statement read on the primary, so a response is never older
//     than what that statement saw (every write to the content bumps it in
//     its own transaction). Replicas are taken in turn;
//   - the primary otherwise: no grant (every write path and every read of
//     an account's own records: keys, usage, webhooks, exports, River), no
//     replica up, or none caught up with the version yet.
//
// A replica that fails to connect or loses a statement's connection is
// marked down at once and the statement is retried on the primary (the
// connector answers driver.ErrBadConn, which database/sql retries on a new
// connection), so a replica stopping under load fails no request. A
// checker polls every replica (ReplicaCheckInterval) for its state, replay
// lag and replayed content version, and brings it back when healthy.

// Replica states, as DB.PoolStates and /readyz report them.
const (
	// PoolUp is a pool in use: the primary, or a replica reachable, in
	// recovery and replaying within the lag bound.
	PoolUp = "up"
	// PoolStarting is a replica not checked yet.
	PoolStarting = "starting"
	// PoolLagging is a replica whose replay lag exceeds the bound.
	PoolLagging = "lagging"
	// PoolDown is a replica that does not answer or lost a connection.
	PoolDown = "down"
	// PoolNotStandby is a read URL whose server is not in recovery (a
	// primary, or a promoted replica): it is never read from, since its
	// data may have diverged from the primary's.
	PoolNotStandby = "not_standby"
)

// Defaults of the read pool options.
const (
	DefaultMaxReplicaLag        = 5 * time.Second
	DefaultReplicaCheckInterval = 500 * time.Millisecond
)

// PoolState is one pool's state, for /readyz and /metrics.
type PoolState struct {
	// Name is "primary", or "replica1", "replica2", … in the order of the
	// read URLs.
	Name string
	// Replica is true for a read pool.
	Replica bool
	// State is PoolUp, PoolStarting, PoolLagging, PoolDown or
	// PoolNotStandby.
	State string
	// Lag is the replica's replay lag at the last check: zero when it had
	// replayed everything the primary had written, otherwise the time since
	// the last transaction it replayed committed; -1s when unknown.
	Lag time.Duration
	// DataVersion is the content version the replica had replayed at the
	// last check.
	DataVersion int64
	// Statements counts the statements sent to the pool.
	Statements int64
	// Fallbacks counts, on the primary's entry, the statements allowed on a
	// replica that ran on the primary because no replica was up and caught
	// up with the request's version, or the replica failed them.
	Fallbacks int64
	// CheckedAt is when the replica was last checked (zero for the
	// primary).
	CheckedAt time.Time
	// Error is the last check's or connection's error, if any.
	Error string
	// Stat is the pgx pool's statistics.
	Stat *pgxpool.Stat
}

// readGrant is a request's permission to read from a replica.
type readGrant struct {
	// version is the content version a replica must have replayed; -1
	// until known (a deferred grant).
	version atomic.Int64
	// primaryOnly is set once a replica failed one of the request's
	// statements: the rest of the request reads the primary.
	primaryOnly atomic.Bool
}

// ReplicaFailed reports whether a replica failed one of the statements of
// ctx's request (so that the rest of it reads the primary): a caller that
// got an error from a read may then run its work again, on the primary,
// instead of failing the request for a replica's fault. False without a
// grant (WithReplicaReads).
func ReplicaFailed(ctx context.Context) bool {
	g, ok := ctx.Value(readGrantKey{}).(*readGrant)
	return ok && g.primaryOnly.Load()
}

type readGrantKey struct{}

// WithReplicaReads returns a context whose statements through DB.Read may
// run on a replica that has replayed content version version (the one the
// request's metering statement read on the primary; 0 when the request has
// none, e.g. one paid per request, which needs no more than a replica
// within the lag bound). Without it every statement runs on the primary.
func WithReplicaReads(ctx context.Context, version int64) context.Context {
	g := new(readGrant)
	g.version.Store(max(version, 0))
	return context.WithValue(ctx, readGrantKey{}, g)
}

// WithDeferredReplicaReads is WithReplicaReads for a request whose content
// version is known only later (a /graphql request is metered once its
// operation is parsed): statements read the primary until set is called
// with the version.
func WithDeferredReplicaReads(ctx context.Context) (context.Context, func(version int64)) {
	g := new(readGrant)
	g.version.Store(-1)
	return context.WithValue(ctx, readGrantKey{}, g), func(version int64) { g.version.Store(max(version, 0)) }
}

// replicaStatementsKey is the context key of a request's replica statement
// counter.
type replicaStatementsKey struct{}

// WithReplicaStatementCounter returns a context whose statements that run
// on a replica are counted into the returned counter (its other statements
// ran on the primary). The tests and the load harness read it to show
// where a request's statements ran.
func WithReplicaStatementCounter(ctx context.Context) (context.Context, *atomic.Int64) {
	c := new(atomic.Int64)
	return context.WithValue(ctx, replicaStatementsKey{}, c), c
}

type statementHookKey struct{}

// WithStatementHook returns ctx whose statements call hook with their SQL
// as they start, on the goroutine that sends them: a test traces the Go
// call path of a request to its SQL with it (tests/request_path_test.go).
func WithStatementHook(ctx context.Context, hook func(sql string)) context.Context {
	return context.WithValue(ctx, statementHookKey{}, hook)
}

// poolTracer counts the statements sent to one pool (pgx's query tracer
// sees every statement: Bun's, raw pgx, River's).
type poolTracer struct {
	statements atomic.Int64
	replica    bool
}

func (t *poolTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, q pgx.TraceQueryStartData) context.Context {
	t.statements.Add(1)
	if hook, ok := ctx.Value(statementHookKey{}).(func(string)); ok {
		hook(q.SQL)
	}
	if t.replica {
		if c, ok := ctx.Value(replicaStatementsKey{}).(*atomic.Int64); ok {
			c.Add(1)
		}
	}
	return ctx
}

func (t *poolTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// replicaStatus is one check's outcome (immutable once published).
type replicaStatus struct {
	state     string
	lag       time.Duration
	version   int64
	checkedAt time.Time
	err       string
}

// replica is one read pool.
type replica struct {
	name      string
	pool      *pgxpool.Pool
	tracer    *poolTracer
	connector driver.Connector
	status    atomic.Pointer[replicaStatus]
}

func (r *replica) usable(version int64) bool {
	st := r.status.Load()
	return st.state == PoolUp && st.version >= version
}

// readPools routes DB.Read's statements and checks the replicas.
type readPools struct {
	primary   *pgxpool.Pool
	replicas  []*replica
	next      atomic.Uint32
	fallbacks atomic.Int64
	maxLag    time.Duration
	interval  time.Duration
	logger    *slog.Logger
	kick      chan struct{}
	stop      context.CancelFunc
	done      chan struct{}
}

// pick returns the replica the statement in ctx may run on, or nil for
// the primary.
func (rp *readPools) pick(ctx context.Context) *replica {
	g, ok := ctx.Value(readGrantKey{}).(*readGrant)
	if !ok || g.primaryOnly.Load() {
		return nil
	}
	v := g.version.Load()
	if v < 0 {
		return nil
	}
	n := uint32(len(rp.replicas))
	start := rp.next.Add(1)
	for i := range n {
		if r := rp.replicas[(start+i)%n]; r.usable(v) {
			return r
		}
	}
	rp.fallbacks.Add(1)
	for _, r := range rp.replicas {
		if st := r.status.Load(); st.state == PoolUp && st.version < v {
			// Behind the request's version: look again soon rather
			// than at the next tick.
			select {
			case rp.kick <- struct{}{}:
			default:
			}
		}
	}
	return nil
}

// markDown takes r out until its next successful check.
func (rp *readPools) markDown(r *replica, err error) {
	old := r.status.Load()
	if old.state == PoolDown {
		return
	}
	st := *old
	st.state, st.err = PoolDown, err.Error()
	if r.status.CompareAndSwap(old, &st) {
		rp.logger.Warn("read replica taken out", "pool", r.name, "error", err)
	}
}

// run checks every replica each interval (or sooner when kicked) until
// stop.
func (rp *readPools) run(ctx context.Context) {
	defer close(rp.done)
	t := time.NewTicker(rp.interval)
	defer t.Stop()
	for {
		rp.checkAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-rp.kick:
		}
	}
}

// checkTimeout bounds one replica check.
const checkTimeout = 2 * time.Second

func (rp *readPools) checkAll(ctx context.Context) {
	// The primary's WAL position first: a replica that has replayed up to
	// it is fully caught up, whatever its last replayed commit's age.
	pctx, cancel := context.WithTimeout(ctx, checkTimeout)
	var primaryLSN string
	err := rp.primary.QueryRow(pctx, "SELECT pg_current_wal_lsn()::text").Scan(&primaryLSN)
	cancel()
	if err != nil {
		primaryLSN = "" // unknown: judge lag by replay timestamps only
	}
	var wg sync.WaitGroup
	for _, r := range rp.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rp.check(ctx, r, primaryLSN)
		}()
	}
	wg.Wait()
}

// replicaCheckSQL reads whether the server is a standby, whether it has
// replayed the primary's WAL position $1, the age of the last transaction
// it replayed (NULL when none since it started) and the content version it
// has replayed.
const replicaCheckSQL = `
SELECT pg_is_in_recovery(),
	coalesce($1::text <> '' AND pg_last_wal_replay_lsn() >= nullif($1::text, '')::pg_lsn, false),
	extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8,
	(SELECT version FROM data_version)`

func (rp *readPools) check(ctx context.Context, r *replica, primaryLSN string) {
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	before := r.status.Load()
	var (
		inRecovery, caughtUp bool
		age                  *float64
		version              int64
	)
	err := r.pool.QueryRow(cctx, replicaCheckSQL, primaryLSN).Scan(&inRecovery, &caughtUp, &age, &version)
	st := &replicaStatus{checkedAt: time.Now(), lag: -time.Second}
	switch {
	case ctx.Err() != nil:
		return
	case err != nil:
		st.state, st.err = PoolDown, err.Error()
		st.version = before.version
	case !inRecovery:
		st.state, st.version = PoolNotStandby, version
	default:
		st.version = version
		switch {
		case caughtUp:
			st.lag = 0
		case age != nil:
			st.lag = time.Duration(*age * float64(time.Second))
		}
		st.state = PoolUp
		if st.lag < 0 || st.lag > rp.maxLag {
			st.state = PoolLagging
		}
	}
	// A failure reported while the check ran (markDown) wins over what
	// the check saw before it.
	if !r.status.CompareAndSwap(before, st) {
		return
	}
	old := before
	if old == nil || old.state != st.state {
		from := ""
		if old != nil {
			from = old.state
		}
		level := slog.LevelInfo
		if st.state != PoolUp {
			level = slog.LevelWarn
		}
		rp.logger.Log(ctx, level, "read replica state", "pool", r.name, "from", from, "to", st.state,
			"lag", st.lag.String(), "data_version", st.version, "error", st.err)
	}
}

// replicaRetryable reports whether err, from a statement on a replica,
// should be retried on the primary: the replica is unreachable or shutting
// down, or it cancelled the statement for a conflict with recovery.
func replicaRetryable(err error) (retry, down bool) {
	if err == nil {
		return false, false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001": // serialization_failure: a conflict with recovery
			return true, false
		case "57P04": // database_dropped
			return true, true
		}
	}
	if IsUnavailable(err) {
		return true, true
	}
	return false, false
}

// routeConnector is the database/sql connector of DB.Read: it hands out a
// replica's connection when the statement's context may read a replica
// and one is usable, the primary's otherwise.
type routeConnector struct {
	primary driver.Connector
	rp      *readPools
}

func (c routeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if r := c.rp.pick(ctx); r != nil {
		conn, err := r.connector.Connect(ctx)
		if err == nil {
			return &replicaConn{execModeConn: conn.(execModeConn), r: r, rp: c.rp}, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		c.rp.markDown(r, err)
		c.rp.fallbacks.Add(1)
	}
	return c.primary.Connect(ctx)
}

func (c routeConnector) Driver() driver.Driver { return c.primary.Driver() }

// replicaConn is a replica's connection: a statement that fails because of
// the replica is answered with driver.ErrBadConn, so database/sql retries
// it on a new connection, which the request's grant, now primary-only,
// takes from the primary.
type replicaConn struct {
	execModeConn
	r  *replica
	rp *readPools
}

func (c *replicaConn) fail(ctx context.Context, err error) error {
	if !c.rp.failed(ctx, c.r, err) {
		return err
	}
	return driver.ErrBadConn
}

func (c *replicaConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.execModeConn.QueryContext(ctx, query, args)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	return rows, nil
}

func (c *replicaConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.execModeConn.ExecContext(ctx, query, args)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	return res, nil
}

// openReadPools opens one pool per read URL (lazily connected, like the
// primary's) and starts the checker.
func openReadPools(ctx context.Context, primary *pgxpool.Pool, primaryConnector driver.Connector, opts Options) (*readPools, error) {
	rp := &readPools{
		primary:  primary,
		maxLag:   opts.MaxReplicaLag,
		interval: opts.ReplicaCheckInterval,
		logger:   opts.Logger,
		kick:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	for i, url := range opts.ReadURLs {
		name := "replica" + strconv.Itoa(i+1)
		tracer := &poolTracer{replica: true}
		pool, err := newPool(ctx, url, opts, tracer)
		if err != nil {
			rp.closePools()
			return nil, fmt.Errorf("error opening read pool %s: %w", name, err)
		}
		r := &replica{name: name, pool: pool, tracer: tracer,
			connector: execModeConnector{stdlib.GetPoolConnector(pool)}}
		r.status.Store(&replicaStatus{state: PoolStarting, lag: -time.Second})
		rp.replicas = append(rp.replicas, r)
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	rp.stop = stop
	go rp.run(runCtx)
	return rp, nil
}

func (rp *readPools) close() {
	rp.stop()
	<-rp.done
	rp.closePools()
}

func (rp *readPools) closePools() {
	for _, r := range rp.replicas {
		r.pool.Close()
	}
}

// PoolStates returns the state of the primary and of every read pool.
func (d *DB) PoolStates() []PoolState {
	out := []PoolState{{Name: "primary", State: PoolUp, Statements: d.tracer.statements.Load(), Stat: d.Pool.Stat()}}
	if d.reads == nil {
		return out
	}
	out[0].Fallbacks = d.reads.fallbacks.Load()
	for _, r := range d.reads.replicas {
		st := r.status.Load()
		out = append(out, PoolState{
			Name: r.name, Replica: true, State: st.state, Lag: st.lag, DataVersion: st.version,
			Statements: r.tracer.statements.Load(), CheckedAt: st.checkedAt, Error: st.err, Stat: r.pool.Stat(),
		})
	}
	return out
}

// HasReadPools reports whether the DB was opened with read URLs.
func (d *DB) HasReadPools() bool { return d != nil && d.reads != nil }

// CheckReplicas checks every replica now (the checker does it every
// ReplicaCheckInterval) and returns their states.
func (d *DB) CheckReplicas(ctx context.Context) []PoolState {
	if d.reads != nil {
		d.reads.checkAll(ctx)
	}
	return d.PoolStates()
}
