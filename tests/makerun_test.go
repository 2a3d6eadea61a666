package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestMakeRun runs the README's first command, `make run`, against a fresh
// database: it must migrate, seed the demo data, print one labelled key per
// plan and serve on loopback, and the printed enterprise key must return demo data for
// the README's 3-hop query (entity → relationships → relatedEntity →
// events → owners). A second run prints the same keys and creates none.
// Bringing up a stopped cluster is scripts/pg-up.sh's
// part, exercised by every `make test`.
func TestMakeRun(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is required: %v", err)
	}
	addr := freeLoopbackAddr(t)
	bin := filepath.Join(t.TempDir(), "cryptointel")
	dbURL := dbtest.NewURL(t)
	keys, _, stop := startMakeRun(t, addr, bin, dbURL)

	base := "http://" + addr

	query := `{ entity(id: 101) { canonicalName relationships(first: 3) { relationshipType relatedEntity { displayName events(first: 2) { nodes { title owners { id displayName } } } } } } }`
	body, err := json.Marshal(map[string]string{"query": query})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+keys["enterprise"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	var out struct {
		Data struct {
			Entity struct {
				CanonicalName string `json:"canonicalName"`
				Relationships []struct {
					RelatedEntity struct {
						DisplayName string `json:"displayName"`
						Events      struct {
							Nodes []struct {
								Title  string `json:"title"`
								Owners []struct {
									ID int `json:"id"`
								} `json:"owners"`
							} `json:"nodes"`
						} `json:"events"`
					} `json:"relatedEntity"`
				} `json:"relationships"`
			} `json:"entity"`
		} `json:"data"`
		Errors []any `json:"errors"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Empty(t, out.Errors)
	require.Equal(t, "Ethereum", out.Data.Entity.CanonicalName)
	require.Len(t, out.Data.Entity.Relationships, 3)
	owners := 0
	for _, rel := range out.Data.Entity.Relationships {
		require.NotEmpty(t, rel.RelatedEntity.DisplayName)
		for _, ev := range rel.RelatedEntity.Events.Nodes {
			require.NotEmpty(t, ev.Title)
			owners += len(ev.Owners)
		}
	}
	require.Positive(t, owners, "the 3-hop query returned no events with owners")
	t.Logf("make run served on %s; 3-hop query returned %s owners across %d relationships",
		addr, strconv.Itoa(owners), len(out.Data.Entity.Relationships))

	// The demo server listens on loopback only.
	host, _, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", host)

	// A second make run on the same database prints the same four keys and
	// creates none: the demo accounts still hold one key each.
	stop()
	again, _, stop2 := startMakeRun(t, addr, bin, dbURL)
	defer stop2()
	require.Equal(t, keys, again, "a rerun of make run printed other keys")
	store := openStore(t, dbURL)
	var n int
	require.NoError(t, store.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE a.name LIKE 'demo-%'`).Scan(&n))
	require.Equal(t, 4, n, "demo keys multiplied across runs")
	summary(t, "make run: rerun reused the 4 demo keys (%d keys on the demo accounts)", n)
}

// TestMakeRunPortTaken: make run on an address already in use stops before
// it creates anything (no migration run, no account, no key) and says which
// ADDR= to use instead.
func TestMakeRunPortTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	addr := ln.Addr().String()
	dbURL := dbtest.NewURL(t)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "run",
		"ADDR="+addr, "BIN="+filepath.Join(t.TempDir(), "cryptointel"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "make run succeeded on a taken port:\n%s", out)
	require.Contains(t, string(out), "already in use")
	require.Contains(t, string(out), "make run ADDR=127.0.0.1:")
	require.NotContains(t, string(out), "ci_", "a key was printed")
	store := openStore(t, dbURL)
	var keys, accounts int
	require.NoError(t, store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys`).Scan(&keys))
	require.NoError(t, store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM accounts`).Scan(&accounts))
	require.Zero(t, keys, "make run created keys before finding the port taken")
	require.Zero(t, accounts, "make run created accounts before finding the port taken")
}

// startMakeRun runs `make run` on addr with the binary bin and the database
// dbURL, and returns the keys it printed by plan, its stderr so far, and a
// function that stops it (also run at cleanup).
func startMakeRun(t *testing.T, addr, bin, dbURL string) (map[string]string, *bytes.Buffer, func()) {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "run", "ADDR="+addr, "BIN="+bin)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) //nolint:errcheck
		cmd.Wait()                                      //nolint:errcheck
		cancel()
	}
	t.Cleanup(stop)

	// Read the printed keys: "  <plan>  ci_…" lines after the banner.
	keys := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && len(keys) < 4 {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && strings.HasPrefix(f[1], "ci_") {
			keys[f[0]] = f[1]
		}
	}
	go io.Copy(io.Discard, stdout) //nolint:errcheck
	require.Len(t, keys, 4, "make run printed no key per plan; stderr:\n%s", stderr.String())
	for _, plan := range []string{"free", "pro", "business", "enterprise"} {
		require.Contains(t, keys, plan)
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 2*time.Minute, 100*time.Millisecond, "server did not come up; stderr:\n%s", stderr.String())
	return keys, &stderr, stop
}

// openStore opens dbURL for a test's own queries; closed at cleanup.
func openStore(t *testing.T, dbURL string) *db.DB {
	t.Helper()
	store, err := db.Open(context.Background(), dbURL, db.Options{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	return store
}

// TestMakeTestQuickSaysWhatItBuilds: `make test-quick` builds SeaweedFS
// only for the packages that need it (exportstore), and says so before the
// first, long build; a narrower PKG skips it. The build here is made to
// fail at once (a version that does not exist, an empty cache), so the test
// costs no build.
func TestMakeTestQuickSaysWhatItBuilds(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	run := func(pkg string) (string, error) {
		cmd := exec.Command("make", "--no-print-directory", "test-quick", "PKG="+pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "SEAWEEDFS_CACHE="+t.TempDir(), "SEAWEEDFS_VERSION=v0.0.0-20000101000000-000000000000",
			"GOPROXY=off", "WEED_BIN=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("./internal/doccheck")
	require.NoError(t, err, out)
	require.Contains(t, out, "SeaweedFS not needed")
	require.NotContains(t, out, "building SeaweedFS")

	out, err = run("./exportstore")
	require.Error(t, err, "the bogus SeaweedFS version must not build:\n%s", out)
	require.Contains(t, out, "test-quick: building SeaweedFS, the S3 server the exportstore tests use, once")
}
