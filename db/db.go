// Package db is the storage layer over PostgreSQL: stores that read and
// write the domain types of package cryptointel, search SQL, bulk ingest
// and bulk load, embedded migrations and River job-argument types. Its
// errors are domain errors (cryptointel.Error) or wrapped driver errors,
// which it classifies as unavailable for the domain's ErrorCode. It knows
// nothing about HTTP or GraphQL.
package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/cryptointel/cryptointel"
)

// DB is the service's handle on PostgreSQL: one pgx pool shared by Bun
// (through pgx/v5/stdlib), River and any raw pgx code, so all of them use one
// driver and one error type.
type DB struct {
	// Pool is the pgx pool. River and transactional job inserts use it.
	Pool *pgxpool.Pool
	// Bun is the Bun handle over Pool. Stores use it.
	Bun *bun.DB
	// Now returns the current time. Defaults to time.Now; tests inject it.
	Now func() time.Time
}

// Options configure Open.
type Options struct {
	// MaxConns is the pool size. Defaults to 16.
	MaxConns int32
	// ConnectTimeout bounds dialing a new connection so requests fail fast
	// while the database is down. Defaults to 3 seconds.
	ConnectTimeout time.Duration
}

// Open connects to the database at url. It does not fail when the database
// is unreachable at start: connections are made lazily, so the service can
// come up first and report unavailability per request.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("error parsing database url: %w", err)
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 16
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 3 * time.Second
	}
	cfg.MaxConns = opts.MaxConns
	cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	cfg.HealthCheckPeriod = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("error creating pool: %w", err)
	}
	sqldb := openBunSQL(pool)
	bunDB := bun.NewDB(sqldb, pgdialect.New(), bun.WithDiscardUnknownColumns())
	bunDB.AddQueryHook(statementCounterHook{})
	return &DB{Pool: pool, Bun: bunDB, Now: time.Now}, nil
}

// Close closes Bun's handle and the pool.
func (d *DB) Close() error {
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
