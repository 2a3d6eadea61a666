package db

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Reader runs raw pgx reads the way DB.Read runs Bun's: a statement goes to
// a replica when its context's grant allows it (WithReplicaReads) and a
// replica is up and caught up with the grant's content version, to the
// primary otherwise; a statement that fails because of its replica before
// returning a row is run again on the primary, and the rest of the request
// stays there. One that fails so after returning rows fails (its rows are
// the caller's already): ReplicaFailed tells the caller, which may run its
// whole work again, now on the primary. Without read URLs every statement
// runs on the primary pool.
type Reader struct{ d *DB }

// Reader returns the routed querier of raw pgx reads (see Reader).
func (d *DB) Reader() *Reader { return &Reader{d: d} }

// Query runs sql on the pool the context allows.
func (r *Reader) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rp := r.d.reads
	if rp == nil {
		return r.d.Pool.Query(ctx, sql, args...)
	}
	rep := rp.pick(ctx)
	if rep == nil {
		return r.d.Pool.Query(ctx, sql, args...)
	}
	rows, err := rep.pool.Query(ctx, sql, args...)
	if err != nil {
		if !rp.failed(ctx, rep, err) {
			return nil, err
		}
		return r.d.Pool.Query(ctx, sql, args...)
	}
	return &retryRows{Rows: rows, ctx: ctx, r: r, rep: rep, sql: sql, args: args}, nil
}

// QueryRow is Query for one row.
func (r *Reader) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := r.Query(ctx, sql, args...)
	return rowOf{rows: rows, err: err}
}

// failed handles a statement that failed on replica rep: it reports
// whether to run it again on the primary (the replica's fault, the
// context still live), taking the replica out when it is unreachable and
// keeping the rest of the request on the primary.
func (rp *readPools) failed(ctx context.Context, rep *replica, err error) bool {
	retry, down := replicaRetryable(err)
	if !retry || ctx.Err() != nil {
		return false
	}
	if g, ok := ctx.Value(readGrantKey{}).(*readGrant); ok {
		g.primaryOnly.Store(true)
	}
	if down {
		rp.markDown(rep, err)
	}
	rp.fallbacks.Add(1)
	return true
}

// retryRows are a replica's rows: pgx reports most failures of a query
// (a terminated session, a conflict with recovery) on the first Next, so
// when the first Next fails that way, before any row was returned, the
// statement runs again on the primary and its rows take over. A failure
// after a row (a replica stopped while a large result streams) is reported
// as it is, and recorded as the replica's (ReplicaFailed).
type retryRows struct {
	pgx.Rows
	ctx     context.Context
	r       *Reader
	rep     *replica
	sql     string
	args    []any
	started bool
}

func (rr *retryRows) Next() bool {
	if rr.started {
		if rr.Rows.Next() {
			return true
		}
		if err := rr.Rows.Err(); err != nil {
			rr.r.d.reads.failed(rr.ctx, rr.rep, err)
		}
		return false
	}
	rr.started = true
	if rr.Rows.Next() {
		return true
	}
	err := rr.Rows.Err()
	if err == nil || !rr.r.d.reads.failed(rr.ctx, rr.rep, err) {
		return false
	}
	rr.Rows.Close()
	rows, err := rr.r.d.Pool.Query(rr.ctx, rr.sql, rr.args...)
	if err != nil {
		rr.Rows = errRows{err: err}
		return false
	}
	rr.Rows = rows
	return rows.Next()
}

// errRows are rows that failed before the first one.
type errRows struct {
	pgx.Rows
	err error
}

func (e errRows) Close()                                       {}
func (e errRows) Err() error                                   { return e.err }
func (e errRows) Next() bool                                   { return false }
func (e errRows) CommandTag() pgconn.CommandTag                { return pgconn.CommandTag{} }
func (e errRows) FieldDescriptions() []pgconn.FieldDescription { return nil }

// rowOf is pgx.Row over Reader's rows.
type rowOf struct {
	rows pgx.Rows
	err  error
}

func (r rowOf) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
