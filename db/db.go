// Package db is the storage layer over PostgreSQL: stores that read and
// write the domain types of package cryptointel, search SQL, bulk ingest
// and bulk load, embedded migrations and River job-argument types. Its
// errors are domain errors (cryptointel.Error) or wrapped driver errors,
// which it classifies as unavailable for the domain's ErrorCode. It knows
// nothing about HTTP or GraphQL.
//
// The columns it reads and writes on pgx come from one table generated
// from the domain types' bun tags (db/gen writes columns_gen.go).
//
//go:generate go run ./gen
package db

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/search"
)

// DB is the service's handle on PostgreSQL: one pgx pool on the primary
// shared by Bun (through pgx/v5/stdlib), River and any raw pgx code, so all
// of them use one driver and one error type; and, when read URLs are set,
// one pool per streaming replica behind the Read handle (see replica.go).
type DB struct {
	// Pool is the pgx pool on the primary. River, LISTEN/NOTIFY and
	// transactional job inserts use it.
	Pool *pgxpool.Pool
	// Bun is the Bun handle over Pool. Stores use it for everything that
	// writes or must see the caller's own writes.
	Bun *bun.DB
	// Read is the Bun handle of read-only work that may run on a replica:
	// a statement goes to a healthy replica that has replayed the content
	// version its context's grant names (WithReplicaReads), else to the
	// primary. Without read URLs it is Bun itself.
	Read *bun.DB
	// Now returns the current time. Defaults to time.Now; tests inject it.
	Now func() time.Time

	tracer *poolTracer
	reads  *readPools
	// searchMemo keeps query analyses per content version (search/memo.go).
	searchMemo search.Memo
	// names keeps the name index of name resolution (nameindex.go).
	names nameIndexes
	// meter groups concurrent requests' metering (meter_group.go).
	meter meterGroups
}

// DefaultMaxConns is the size of the primary's pool and of each read pool
// unless configured (app's DB_MAX_CONNS defaults to it too).
const DefaultMaxConns = 16

// Options configure Open.
type Options struct {
	// MaxConns is the size of the primary's pool and of each read pool.
	// Defaults to DefaultMaxConns.
	MaxConns int32
	// ConnectTimeout bounds dialing a new connection so requests fail fast
	// while the database is down. Defaults to 3 seconds.
	ConnectTimeout time.Duration
	// ReadURLs are the URLs of streaming replicas of the primary that
	// read-only work may use (see DB.Read). Defaults to none.
	ReadURLs []string
	// MaxReplicaLag is the replay lag beyond which a replica is taken out
	// of reads until it catches up. Defaults to DefaultMaxReplicaLag (5
	// seconds).
	MaxReplicaLag time.Duration
	// ReplicaCheckInterval is how often each replica's state, lag and
	// replayed content version are checked. Defaults to
	// DefaultReplicaCheckInterval (500 ms).
	ReplicaCheckInterval time.Duration
	// Logger logs replicas' state changes. Defaults to slog.Default().
	Logger *slog.Logger
	// StatementTimeout is PostgreSQL's statement_timeout on every
	// connection of the pools (the database cancels a statement running
	// longer); migrations run without it. Zero: the server's setting.
	StatementTimeout time.Duration
}

// Open connects to the database at url (and to the replicas at
// opts.ReadURLs). It does not fail when a database is unreachable at
// start: connections are made lazily, so the service can come up first and
// report unavailability per request.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 3 * time.Second
	}
	if opts.MaxReplicaLag <= 0 {
		opts.MaxReplicaLag = DefaultMaxReplicaLag
	}
	if opts.ReplicaCheckInterval <= 0 {
		opts.ReplicaCheckInterval = DefaultReplicaCheckInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	tracer := &poolTracer{}
	pool, err := newPool(ctx, url, opts, tracer)
	if err != nil {
		return nil, err
	}
	connector := execModeConnector{stdlib.GetPoolConnector(pool)}
	bunDB := newBun(connector)
	d := &DB{Pool: pool, Bun: bunDB, Read: bunDB, Now: time.Now, tracer: tracer}
	if len(opts.ReadURLs) > 0 {
		d.reads, err = openReadPools(ctx, pool, connector, opts)
		if err != nil {
			bunDB.Close()
			pool.Close()
			return nil, err
		}
		d.Read = newBun(routeConnector{primary: connector, rp: d.reads})
	}
	return d, nil
}

// newPool returns a lazily connecting pgx pool on url whose statements
// tracer counts.
func newPool(ctx context.Context, url string, opts Options, tracer *poolTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("error parsing database url: %w", err)
	}
	cfg.MaxConns = opts.MaxConns
	cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	cfg.ConnConfig.Tracer = tracer
	cfg.HealthCheckPeriod = 5 * time.Second
	cfg.ConnConfig.BuildFrontend = bufferedFrontend
	// pgx prepares the service's fixed statements once per connection
	// (db/read.go, metering, ingest, River); left to choose, PostgreSQL
	// re-planned the graph's reads at every execution (their array
	// arguments made the generic plan look costlier), and planning was
	// half of their time. Their plans do not depend on the values. Bun's
	// statements carry their values in the text and are planned each time
	// whatever this says.
	// JIT compilation, which PostgreSQL starts for any plan it estimates
	// costly (a generic plan's unknown LIMIT is enough), took longer than
	// the statements: 15 ms to compile a page that reads in 3.
	for k, v := range map[string]string{"plan_cache_mode": "force_generic_plan", "jit": "off"} {
		if _, ok := cfg.ConnConfig.RuntimeParams[k]; !ok {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	if opts.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(opts.StatementTimeout.Milliseconds(), 1), 10)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("error creating pool: %w", err)
	}
	return pool, nil
}

// readBufferSize is how much a connection reads from its socket at once.
// pgx's own reader asks for 8 KiB a read system call, one per 8 KiB of a
// large result (a brief batch's statement returns about 400 KiB); what
// PostgreSQL has already sent is now taken in one call. Each connection
// holds its buffer for its life: 1 MiB for a pool of 16 (the peak RSS of
// a whole `make bench` run stayed at 143 MB).
const readBufferSize = 64 << 10

// bufferedFrontend is pgx's frontend reading through a readBufferSize
// buffer. Everything pgx reads from the connection goes through its
// frontend, so the buffer holds nothing another reader could miss (pgx's
// SyncConn, which hands the socket out, is not used by the service).
func bufferedFrontend(r io.Reader, w io.Writer) *pgproto3.Frontend {
	return pgproto3.NewFrontend(bufio.NewReaderSize(r, readBufferSize), w)
}

// newBun returns a Bun handle over the database/sql connector c.
func newBun(c driver.Connector) *bun.DB {
	sqldb := sql.OpenDB(c)
	// As stdlib.OpenDBFromPool does: idle connections belong to the pool,
	// or database/sql would keep them from its direct users.
	sqldb.SetMaxIdleConns(0)
	bunDB := bun.NewDB(sqldb, pgdialect.New(), bun.WithDiscardUnknownColumns())
	bunDB.AddQueryHook(statementCounterHook{})
	return bunDB
}

// Close stops the replica checker and closes the Bun handles and the
// pools.
func (d *DB) Close() error {
	if d.reads != nil {
		d.reads.close()
		d.Read.Close() //nolint:errcheck
	}
	err := d.Bun.Close()
	d.Pool.Close()
	return err
}

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error {
	if err := d.Pool.Ping(ctx); err != nil {
		return fmt.Errorf("error pinging database: %w", err)
	}
	return nil
}

// The domain's ErrorCode and ErrorMessage report database unavailability
// through IsUnavailable.
func init() { cryptointel.RegisterUnavailable(IsUnavailable) }

// IsUnavailable reports whether err means the database could not be
// reached (refused, reset, timed out while connecting, shutting down).
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// admin_shutdown, crash_shutdown, cannot_connect_now
		switch pgErr.Code {
		case "57P01", "57P02", "57P03":
			return true
		}
	}
	if errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	// A connection cut while a statement was in flight surfaces as an
	// (unexpected) EOF from the wire protocol.
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	return pgconn.SafeToRetry(err)
}

// statementCounterKey is the context key of a request's statement counter.
type statementCounterKey struct{}

// WithStatementCounter returns a context whose Bun statements are counted
// into the returned counter. The tests use it to assert that a request's
// statement count does not grow with page size; the load harness reports it.
func WithStatementCounter(ctx context.Context) (context.Context, *atomic.Int64) {
	c := new(atomic.Int64)
	return context.WithValue(ctx, statementCounterKey{}, c), c
}

// CountStatement adds one to ctx's statement counter, if any. Raw pgx code
// paths call it so they are counted like Bun statements.
func CountStatement(ctx context.Context) {
	if c, ok := ctx.Value(statementCounterKey{}).(*atomic.Int64); ok {
		c.Add(1)
	}
}

type statementCounterHook struct{}

func (statementCounterHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	CountStatement(ctx)
	return ctx
}

func (statementCounterHook) AfterQuery(context.Context, *bun.QueryEvent) {}
