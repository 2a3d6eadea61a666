package tests

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
)

// pgBinDir holds the PostgreSQL 15 server binaries.
const pgBinDir = "/usr/lib/postgresql/15/bin"

// pgCluster is a private PostgreSQL 15 cluster for one test, which the test
// may stop and start at will. The shared cluster every other test uses is
// never touched.
type pgCluster struct {
	dir  string // data directory, also the socket directory
	port int
	// URL is the migrated database's URL.
	URL string
}

// newPGCluster initializes a throwaway cluster in a temporary directory
// owned by the postgres user, starts it on a free loopback port, creates
// and migrates the database "cryptointel", and removes everything when t
// ends (pg_ctl stop -m immediate). initdb refuses to run as root, so the
// cluster runs as postgres through runuser: the test needs root.
func newPGCluster(t *testing.T) *pgCluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("newPGCluster needs root: it runs a private PostgreSQL cluster as the postgres user through runuser")
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		t.Fatal("newPGCluster needs runuser (util-linux) to run initdb and pg_ctl as the postgres user")
	}
	if _, err := os.Stat(filepath.Join(pgBinDir, "initdb")); err != nil {
		t.Fatalf("newPGCluster needs PostgreSQL 15 server binaries in %s: %v", pgBinDir, err)
	}
	c := newPGDir(t, "pgc")
	out, err := c.asPostgres(filepath.Join(pgBinDir, "initdb"), "-D", c.dir, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C")
	require.NoError(t, err, "initdb: %s", out)

	c.start(t)

	ctx := context.Background()
	admin, err := pgx.Connect(ctx, c.url("postgres"))
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "CREATE DATABASE cryptointel")
	admin.Close(ctx)
	require.NoError(t, err)
	c.URL = c.url("cryptointel")
	store, err := db.Open(ctx, c.URL, db.Options{MaxConns: 2})
	require.NoError(t, err)
	defer store.Close()
	require.NoError(t, store.Migrate(ctx))
	return c
}

// newPGDir returns a cluster, not created yet, whose data directory is in
// a new temporary directory owned by the postgres user, with a free
// loopback port; it is stopped (immediate) and removed when t ends.
func newPGDir(t *testing.T, prefix string) *pgCluster {
	t.Helper()
	pgUser, err := user.Lookup("postgres")
	require.NoError(t, err, "a private cluster needs the postgres system user")
	uid, _ := strconv.Atoi(pgUser.Uid)
	gid, _ := strconv.Atoi(pgUser.Gid)
	// A short path: the socket path must fit in 107 bytes.
	root, err := os.MkdirTemp("", prefix)
	require.NoError(t, err)
	require.NoError(t, os.Chown(root, uid, gid))
	c := &pgCluster{dir: filepath.Join(root, "data")}
	t.Cleanup(func() {
		c.pgctl("stop", "-m", "immediate") //nolint:errcheck
		os.RemoveAll(root)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return c
}

// newPGReplica makes a streaming replica of the private cluster primary
// (pg_basebackup -R, a hot standby in a temporary directory on a free
// loopback port), starts it and waits until it streams. Its URL names the
// same database "cryptointel". Like newPGCluster it needs root.
func newPGReplica(t *testing.T, primary *pgCluster) *pgCluster {
	t.Helper()
	r := newPGDir(t, "pgr")
	out, err := r.asPostgres(filepath.Join(pgBinDir, "pg_basebackup"), "-h", "127.0.0.1", "-p", strconv.Itoa(primary.port), "-U", "postgres",
		"-D", r.dir, "-R", "-X", "stream", "-c", "fast", "--no-sync")
	require.NoError(t, err, "pg_basebackup: %s", out)
	// The backup carries the primary's port and socket settings; start
	// puts its own on the command line.
	r.start(t)
	r.URL = r.url("cryptointel")
	ctx := context.Background()
	require.Eventually(t, func() bool {
		conn, err := pgx.Connect(ctx, r.url("postgres"))
		if err != nil {
			return false
		}
		defer conn.Close(ctx)
		var status string
		return conn.QueryRow(ctx, "SELECT status FROM pg_stat_wal_receiver").Scan(&status) == nil && status == "streaming"
	}, time.Minute, 50*time.Millisecond, "the replica does not stream; log:\n%s", readLog(filepath.Join(r.dir, "server.log")))
	return r
}

// exec runs one statement on the cluster's database as the superuser.
func (c *pgCluster) exec(t *testing.T, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	require.NoError(t, err)
}

func (c *pgCluster) url(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, database)
}

func (c *pgCluster) asPostgres(name string, args ...string) ([]byte, error) {
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	cmd.Dir = os.TempDir()
	return cmd.CombinedOutput()
}

func (c *pgCluster) pgctl(args ...string) ([]byte, error) {
	return c.asPostgres(filepath.Join(pgBinDir, "pg_ctl"), append([]string{"-D", c.dir}, args...)...)
}

// start starts the cluster and waits until it accepts connections.
func (c *pgCluster) start(t *testing.T) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 -c shared_buffers=32MB", c.port, c.dir)
	out, err := c.pgctl("-o", opts, "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "60", "start")
	require.NoError(t, err, "pg_ctl start: %s", out)
}

// stop stops the cluster with the given shutdown mode ("fast",
// "immediate").
func (c *pgCluster) stop(t *testing.T, mode string) {
	t.Helper()
	out, err := c.pgctl("-m", mode, "-w", "-t", "60", "stop")
	require.NoError(t, err, "pg_ctl stop: %s", out)
}

// TestPGClusterStopStart proves the helper: a private cluster answers,
// refuses connections while stopped and answers again after a start.
func TestPGClusterStopStart(t *testing.T) {
	t.Parallel()
	c := newPGCluster(t)
	ctx := context.Background()
	ping := func() error {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		conn, err := pgx.Connect(pctx, c.URL)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		var n int
		return conn.QueryRow(pctx, "SELECT count(*) FROM plans").Scan(&n)
	}
	require.NoError(t, ping())
	c.stop(t, "fast")
	require.Error(t, ping())
	c.start(t)
	require.NoError(t, ping())
}
