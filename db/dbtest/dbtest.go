// Package dbtest gives tests their own PostgreSQL database, created from a
// migrated template (CREATE DATABASE … TEMPLATE … is fast), so test packages
// and tests run in parallel against real Postgres.
//
// The server to use is read from TEST_DATABASE_URL, then DATABASE_URL; the
// database named in the URL is only used to connect for administration.
package dbtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel/db"
)

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// AdminURL returns the server URL tests connect to.
func AdminURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://cryptointel:cryptointel@127.0.0.1:5432/postgres?sslmode=disable"
}

// withDatabase returns baseURL with its database name replaced.
func withDatabase(baseURL, name string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		panic(fmt.Sprintf("invalid database url: %v", err))
	}
	u.Path = "/" + name
	return u.String()
}

// migrationsHash names the template after the migrations' contents, so a
// changed migration gets a fresh template.
func migrationsHash() string {
	h := sha256.New()
	fs.WalkDir(db.MigrationFS(), ".", func(path string, d fs.DirEntry, err error) error { //nolint:errcheck
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(db.MigrationFS(), path)
			h.Write([]byte(path))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

func ensureTemplate(ctx context.Context) (string, error) {
	templateOnce.Do(func() {
		templateName = "cryptointel_tpl_" + migrationsHash()
		admin, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			templateErr = fmt.Errorf("error connecting to test server (is Postgres up? run 'make test'): %w", err)
			return
		}
		defer admin.Close(ctx)
		// Serialize template creation across test packages.
		if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(72620)"); err != nil {
			templateErr = fmt.Errorf("error taking template lock: %w", err)
			return
		}
		defer admin.Exec(ctx, "SELECT pg_advisory_unlock(72620)") //nolint:errcheck
		var exists bool
		if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", templateName).Scan(&exists); err != nil {
			templateErr = fmt.Errorf("error checking template: %w", err)
			return
		}
		if exists {
			return
		}
		building := templateName + "_building"
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+building) //nolint:errcheck
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+building); err != nil {
			templateErr = fmt.Errorf("error creating template: %w", err)
			return
		}
		d, err := db.Open(ctx, withDatabase(AdminURL(), building), db.Options{MaxConns: 2})
		if err != nil {
			templateErr = err
			return
		}
		err = d.Migrate(ctx)
		d.Close()
		if err != nil {
			templateErr = fmt.Errorf("error migrating template: %w", err)
			return
		}
		if _, err := admin.Exec(ctx, "ALTER DATABASE "+building+" RENAME TO "+templateName); err != nil {
			templateErr = fmt.Errorf("error publishing template: %w", err)
		}
	})
	return templateName, templateErr
}

// NewURL creates a fresh, migrated database for t and returns its URL. The
// database is dropped when t ends.
func NewURL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tpl, err := ensureTemplate(ctx)
	if err != nil {
		t.Fatalf("test database: %v", err)
	}
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		t.Fatalf("test database: %v", err)
	}
	defer admin.Close(ctx)
	name := fmt.Sprintf("ci_test_%s_%d", sanitize(t.Name()), time.Now().UnixNano())
	if len(name) > 60 {
		name = name[len(name)-60:]
		name = "t" + strings.TrimLeft(name, "_0123456789")
	}
	// CREATE DATABASE … TEMPLATE fails while another session is connected to
	// the template; retry briefly.
	for i := 0; ; i++ {
		_, err = admin.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", pgx.Identifier{name}.Sanitize(), tpl))
		if err == nil || i > 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("test database: error creating %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			return
		}
		defer admin.Close(ctx)
		admin.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", pgx.Identifier{name}.Sanitize())) //nolint:errcheck
	})
	return withDatabase(AdminURL(), name)
}

// New creates a fresh, migrated database for t and returns an open handle;
// both are closed and dropped when t ends.
func New(t testing.TB) *db.DB {
	t.Helper()
	d, err := db.Open(context.Background(), NewURL(t), db.Options{MaxConns: 8})
	if err != nil {
		t.Fatalf("test database: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ReadAdminURL returns the URL of the test server's streaming replica:
// TEST_DATABASE_READ_URL (`make test` sets it from
// scripts/pg-replica-up.sh), else that script's default, port 5433.
func ReadAdminURL() string {
	if u := os.Getenv("TEST_DATABASE_READ_URL"); u != "" {
		return u
	}
	return "postgres://cryptointel:cryptointel@127.0.0.1:5433/postgres?sslmode=disable"
}

// NewReadURL returns the URL on the test server's streaming replica of the
// database primaryURL names (one NewURL made). A database created on the
// primary appears on the replica once it has replayed its creation;
// NewReadURL waits for that, up to five minutes (the replica replays every
// suite running on the machine, and may lag while several do).
func NewReadURL(t testing.TB, primaryURL string) string {
	t.Helper()
	pu, err := url.Parse(primaryURL)
	if err != nil {
		t.Fatalf("test replica: %v", err)
	}
	readURL := withDatabase(ReadAdminURL(), strings.TrimPrefix(pu.Path, "/"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		err := func() error {
			conn, err := pgx.Connect(ctx, readURL)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			var v int64
			return conn.QueryRow(ctx, "SELECT version FROM data_version").Scan(&v)
		}()
		if err == nil {
			return readURL
		}
		if ctx.Err() != nil {
			t.Fatalf("test replica: the database of %s is not readable on the replica %s (is it up? run 'make test' or scripts/pg-replica-up.sh): %v",
				pu.Path, ReadAdminURL(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
