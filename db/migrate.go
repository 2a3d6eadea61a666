package db

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/uptrace/bun/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations is the embedded set of the service's SQL migrations.
var Migrations = func() *migrate.Migrations {
	m := migrate.NewMigrations()
	if err := m.Discover(migrationFS); err != nil {
		panic(fmt.Sprintf("error discovering migrations: %v", err))
	}
	return m
}()

// migrateLockID is the advisory lock key that serializes migrations across
// processes starting at once.
const migrateLockID = 7_262_011_001

// Migrate applies River's migrations and the service's own, under a
// session-level advisory lock so concurrent starts don't race.
func (d *DB) Migrate(ctx context.Context) error {
	// Migrations (an index over a large table) may run far longer than
	// the pools' statement_timeout: they get a pool of their own without
	// it.
	cfg := d.Pool.Config()
	if v, ok := cfg.ConnConfig.RuntimeParams["statement_timeout"]; ok && v != "0" {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = "0"
		cfg.MaxConns = 2
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return fmt.Errorf("error creating migration pool: %w", err)
		}
		defer pool.Close()
		m := &DB{Pool: pool, Bun: newBun(execModeConnector{stdlib.GetPoolConnector(pool)})}
		defer m.Bun.Close()
		return m.Migrate(ctx)
	}
	conn, err := d.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("error acquiring connection for migration: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockID); err != nil {
		return fmt.Errorf("error taking migration lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockID) //nolint:errcheck

	riverMigrator, err := rivermigrate.New(riverpgxv5.New(d.Pool), nil)
	if err != nil {
		return fmt.Errorf("error creating river migrator: %w", err)
	}
	if _, err := riverMigrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("error running river migrations: %w", err)
	}

	migrator := migrate.NewMigrator(d.Bun, Migrations)
	if err := migrator.Init(ctx); err != nil {
		return fmt.Errorf("error initializing migrations: %w", err)
	}
	if _, err := migrator.Migrate(ctx); err != nil {
		return fmt.Errorf("error running migrations: %w", err)
	}
	return nil
}

// MigrationsCurrent reports whether every embedded migration has been
// applied. /readyz uses it.
func (d *DB) MigrationsCurrent(ctx context.Context) (bool, error) {
	migrator := migrate.NewMigrator(d.Bun, Migrations)
	ms, err := migrator.MigrationsWithStatus(ctx)
	if err != nil {
		return false, fmt.Errorf("error reading migration status: %w", err)
	}
	return len(ms.Unapplied()) == 0, nil
}

// MigrationFS returns the embedded migration files.
func MigrationFS() fs.FS { return migrationFS }
