package db

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// execModeConnector hands out connections of a pgx pool (through
// stdlib.GetPoolConnector) on which every query Bun sends executes in pgx's
// exec mode.
//
// Bun writes its arguments into the SQL text, so almost every statement it
// sends is a new text. Under pgx's default mode (cache_statement) each new
// text is prepared as a named statement first (an extra round trip) and
// kept, 512 per connection, in the client's cache and in the PostgreSQL
// backend, which grows by tens of megabytes per connection. The exec mode
// sends such a statement in one round trip through the unnamed statement
// and keeps nothing. The raw pgx statements of the service (metering,
// ingest, River) keep the default: their texts are fixed, so preparing
// them once per connection is what makes them cheap.
type execModeConnector struct{ driver.Connector }

func (c execModeConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close() //nolint:errcheck
		return nil, fmt.Errorf("error connecting: unexpected driver connection %T", conn)
	}
	return execModeConn{sc}, nil
}

// execModeConn is a stdlib connection whose queries without arguments (all
// of Bun's) carry pgx.QueryExecModeExec as their option argument. A query
// with arguments keeps the default, whose parameter encoding follows the
// statement's types rather than the Go types. Statements without a result
// (ExecContext) and without arguments already take the simple protocol,
// in one round trip.
type execModeConn struct{ *stdlib.Conn }

var execModeArg = []driver.NamedValue{{Value: pgx.QueryExecModeExec}}

func (c execModeConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) == 0 {
		args = execModeArg
	}
	return c.Conn.QueryContext(ctx, query, args)
}
