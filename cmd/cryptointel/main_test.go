package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// ingestLines has one bad line (3: unknown entity id).
const ingestLines = `{"kind":"entity","id":9001,"canonicalName":"Test Chain","aliases":["TSTC"]}
{"kind":"event","id":900001,"title":"Test Chain mainnet goes live","eventCategory":"technology","owners":[9001],"participants":[101],"evidence":[{"id":900001,"content":"Mainnet is live","url":"https://news.example/1","timestamp":"2026-11-20T10:00:00Z"}],"significance":6.5}
{"kind":"event","id":900002,"title":"Ghost","eventCategory":"technology","owners":[424242],"evidence":[{"id":900002,"content":"x","timestamp":"2026-11-20T10:00:00Z"}]}
`

// threeHopQuery is the README's first query: entity → relationships →
// relatedEntity → events → owners.
const threeHopQuery = `{
  entity(id: 101) {
    canonicalName
    relationships(first: 25) {
      relationshipType
      direction
      relatedEntity {
        displayName
        events(first: 25) { nodes { title owners { id displayName } } }
      }
    }
  }
}`

type cliBundle struct {
	env map[string]string
}

func setupCLI(t *testing.T) *cliBundle {
	t.Helper()
	return &cliBundle{env: map[string]string{"DATABASE_URL": dbtest.NewURL(t)}}
}

// migratedCLI is setupCLI's bundle after its migrate command, with a store
// on its database for checking what the commands wrote.
func migratedCLI(t *testing.T) (*cliBundle, *db.DB) {
	t.Helper()
	b := setupCLI(t)
	ctx := context.Background()
	_, _, err := b.run(t, ctx, "", "migrate")
	require.NoError(t, err)
	store, err := db.Open(ctx, b.env["DATABASE_URL"], db.Options{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	return b, store
}

// run executes args in process and returns stdout, stderr and the error.
func (b *cliBundle) run(t *testing.T, ctx context.Context, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := NewMain()
	m.Stdin = strings.NewReader(stdin)
	m.Stdout, m.Stderr = &stdout, &stderr
	m.Getenv = func(k string) string { return b.env[k] }
	err := m.Run(ctx, args)
	require.NoError(t, m.Close())
	return stdout.String(), stderr.String(), err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestCLIEndToEnd(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	ctx := context.Background()

	out, _, err := b.run(t, ctx, "", "migrate")
	require.NoError(t, err)
	require.Contains(t, out, "migrations applied")

	out, stderr, err := b.run(t, ctx, "", "seed", "--demo", "--events", "400")
	require.NoError(t, err)
	require.Contains(t, out, "seed: 520 entities")
	require.Contains(t, out, "400 events")
	require.Contains(t, stderr, "seed: 400/400 events")
	out, _, err = b.run(t, ctx, "", "seed", "--demo")
	require.NoError(t, err)
	require.Contains(t, out, "nothing seeded")
	_, _, err = b.run(t, ctx, "", "seed")
	require.ErrorContains(t, err, "pass --demo")

	// Keys: the key alone on the last line; a second key joins the account.
	out, _, err = b.run(t, ctx, "", "keys", "create", "--plan", "enterprise", "--account", "acme")
	require.NoError(t, err)
	key := lastLine(out)
	require.Regexp(t, `^ci_[A-Za-z0-9_-]{43}$`, key)
	require.Contains(t, out, "account: acme (plan enterprise)")
	out, _, err = b.run(t, ctx, "", "keys", "create", "--plan", "enterprise", "--account", "acme", "--json")
	require.NoError(t, err)
	var created struct {
		Account string `json:"account"`
		Plan    string `json:"plan"`
		KeyID   int64  `json:"keyId"`
		Key     string `json:"key"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	require.Equal(t, "acme", created.Account)
	require.Equal(t, "enterprise", created.Plan)
	require.Positive(t, created.KeyID)
	require.NotEqual(t, key, created.Key)
	_, _, err = b.run(t, ctx, "", "keys", "create", "--plan", "gold")
	require.ErrorContains(t, err, `unknown plan "gold"`)
	_, _, err = b.run(t, ctx, "", "keys", "create")
	require.ErrorContains(t, err, `required flag(s) "plan" not set`)

	// Ingest: the bad line is reported by number, the rest applied, the
	// command fails; the same input from stdin changes nothing.
	file := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(ingestLines), 0o600))
	out, stderr, err = b.run(t, ctx, "", "ingest", file)
	require.ErrorContains(t, err, "1 of 3 lines failed")
	require.Contains(t, stderr, "line 3: unknown entity id 424242 (owners)")
	require.Contains(t, out, "applied entity=1 relationship=0 reference=0 market=0 event=1")
	out, _, err = b.run(t, ctx, ingestLines, "ingest", "--json", "-")
	require.Error(t, err)
	var summary struct {
		Unchanged   int `json:"unchanged"`
		FailedCount int `json:"failedCount"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &summary))
	require.Equal(t, 2, summary.Unchanged)
	require.Equal(t, 1, summary.FailedCount)

	// Serve on a random port; the key reads demo data three hops deep and
	// the admin token ingests.
	b.env["ADDR"] = "127.0.0.1:0"
	b.env["ADMIN_TOKEN"] = "admin-secret"
	b.env["CURSOR_SECRET"] = "cli-test-cursor-secret-0123456789abcdef"
	b.env["EXPORT_URL_SECRET"] = "cli-test-export-secret-0123456789abcdef"
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		m := NewMain()
		m.Stdout, m.Stderr = io.Discard, io.Discard
		m.Getenv = func(k string) string { return b.env[k] }
		m.OnListen = func(a net.Addr) { addrc <- a }
		err := m.Run(serveCtx, []string{"serve", "--shutdown-timeout", "5s"})
		done <- errors.Join(err, m.Close())
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a.String()
	case err := <-done:
		t.Fatalf("serve stopped early: %v", err)
	}

	body, _ := json.Marshal(map[string]string{"query": threeHopQuery})
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	var gql struct {
		Data struct {
			Entity struct {
				CanonicalName string
				Relationships []struct {
					RelationshipType string
					RelatedEntity    struct {
						DisplayName string
						Events      struct {
							Nodes []struct {
								Title  string
								Owners []struct{ ID int }
							}
						}
					}
				}
			}
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal(raw, &gql), string(raw))
	require.Empty(t, gql.Errors, string(raw))
	require.Equal(t, "Ethereum", gql.Data.Entity.CanonicalName)
	require.NotEmpty(t, gql.Data.Entity.Relationships)
	owners := 0
	for _, r := range gql.Data.Entity.Relationships {
		for _, n := range r.RelatedEntity.Events.Nodes {
			owners += len(n.Owners)
		}
	}
	require.Positive(t, owners, string(raw))

	req, err = http.NewRequest(http.MethodPost, base+"/admin/ingest", strings.NewReader(ingestLines))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer admin-secret")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	require.Contains(t, string(raw), `"unchanged":2`)

	// Graceful shutdown on cancel (what SIGINT/SIGTERM do).
	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()

	parse := func(t *testing.T, env map[string]string, args ...string) (*app.Config, error) {
		t.Helper()
		cfg := new(app.Config)
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		bindings := bindConfig(fs, cfg, nil)
		require.NoError(t, fs.Parse(args))
		return cfg, applyEnv(bindings, func(k string) string { return env[k] })
	}

	cfg, err := parse(t, map[string]string{"DB_MAX_CONNS": "7", "ADDR": "127.0.0.1:9", "SHUTDOWN_TIMEOUT": "3s"}, "--db-max-conns", "5")
	require.NoError(t, err)
	require.Equal(t, 5, cfg.DBMaxConns)       // flag beats env
	require.Equal(t, "127.0.0.1:9", cfg.Addr) // env beats default
	require.Equal(t, 3*time.Second, cfg.ShutdownTimeout)
	require.Equal(t, app.DefaultConfig().CursorSecret, cfg.CursorSecret) // default

	_, err = parse(t, map[string]string{"DB_MAX_CONNS": "many"})
	require.ErrorContains(t, err, `invalid DB_MAX_CONNS="many"`)

	// Every setting of a supported type has a flag named after its env.
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	bindConfig(fs, new(app.Config), nil)
	for _, s := range app.Settings() {
		if s.Field == "Logger" || strings.HasSuffix(s.Field, "TLSConfig") {
			continue
		}
		f := fs.Lookup(strings.ToLower(strings.ReplaceAll(s.Env, "_", "-")))
		require.NotNil(t, f, "no flag for Config.%s", s.Field)
		require.Contains(t, f.Usage, "[env "+s.Env+"]")
	}
}

// TestBinary builds the real binary and checks what only a process shows:
// exit statuses, and the help listing every setting with its env name.
func TestBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	bin := filepath.Join(t.TempDir(), "cryptointel")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	dbURL := dbtest.NewURL(t)

	run := func(stdin string, args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return string(out), exitErr.ExitCode()
		}
		require.NoError(t, err, string(out))
		return string(out), 0
	}

	out, code := run("", "version")
	require.Zero(t, code)
	require.Contains(t, out, "cryptointel ")

	out, code = run("", "serve", "--help")
	require.Zero(t, code)
	for _, want := range []string{"[env DATABASE_URL]", "[env ADDR]", `(default ":8080")`, "[env ADMIN_TOKEN]", "[env SHUTDOWN_TIMEOUT]", "Examples:"} {
		require.Contains(t, out, want)
	}

	out, code = run(`{"kind":"entity","id":1,"canonicalName":"One"}`+"\n"+`{"kind":"nope"}`+"\n", "ingest", "-")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "line 2: unknown kind")
	require.Contains(t, out, "error: 1 of 2 lines failed")

	out, code = run(`{"kind":"entity","id":1,"canonicalName":"One"}`+"\n", "ingest", "-")
	require.Zero(t, code, out)

	cmd := exec.Command(bin, "keys", "create", "--plan", "free", "--account", "bin")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL)
	stdout, err := cmd.Output()
	require.NoError(t, err)
	require.Regexp(t, `^ci_[A-Za-z0-9_-]{43}$`, lastLine(string(stdout)))

	_, code = run("", "no-such-command")
	require.Equal(t, 1, code)
}

// TestServeRefusesForgeableSecrets: outside demo mode serve does not start
// with a signing secret unset, short or a published development value (a
// cursor, an export link or a payment challenge could then be forged);
// --demo starts with secrets generated for the process.
func TestServeRefusesForgeableSecrets(t *testing.T) {
	t.Parallel()
	const good = "0123456789abcdef0123456789abcdef"
	base := map[string]string{"DATABASE_URL": "postgres://unused.invalid/x", "ADDR": "127.0.0.1:0"}
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"none set", nil, "refusing to serve: CURSOR_SECRET is not set; EXPORT_URL_SECRET is not set. Set each to a random value of at least 32 characters"},
		{"cursor only", map[string]string{"CURSOR_SECRET": good}, "refusing to serve: EXPORT_URL_SECRET is not set."},
		{"development values", map[string]string{"CURSOR_SECRET": "cryptointel-development-cursor-secret", "EXPORT_URL_SECRET": "cryptointel-development-export-secret"},
			"CURSOR_SECRET is a published development value; EXPORT_URL_SECRET is a published development value."},
		{"short", map[string]string{"CURSOR_SECRET": good, "EXPORT_URL_SECRET": "short"}, "EXPORT_URL_SECRET is shorter than 32 characters."},
		{"payments without MPP_SECRET", map[string]string{"CURSOR_SECRET": good, "EXPORT_URL_SECRET": good,
			"PAYMENT_PAY_TO": "0x2222222222222222222222222222222222222222", "X402_FACILITATOR_URL": "http://facilitator.invalid"}, "MPP_SECRET is not set."},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &cliBundle{env: map[string]string{}}
			for k, v := range base {
				b.env[k] = v
			}
			for k, v := range c.env {
				b.env[k] = v
			}
			_, _, err := b.run(t, context.Background(), "", "serve")
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
			require.Contains(t, err.Error(), "cryptointel serve --demo")
		})
	}

	// Demo mode starts without any, and says so.
	b := setupCLI(t)
	b.env["ADDR"] = "127.0.0.1:0"
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncBuffer
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		m := NewMain()
		m.Stdout, m.Stderr = io.Discard, &logs
		m.Getenv = func(k string) string { return b.env[k] }
		m.OnListen = func(a net.Addr) { addrc <- a }
		err := m.Run(ctx, []string{"serve", "--demo", "--shutdown-timeout", "5s"})
		done <- errors.Join(err, m.Close())
	}()
	select {
	case <-addrc:
	case err := <-done:
		t.Fatalf("serve --demo stopped early: %v", err)
	}
	stop()
	require.NoError(t, <-done)
	require.Contains(t, logs.String(), "demo mode: secrets generated for this process")
	require.Contains(t, logs.String(), "CURSOR_SECRET,EXPORT_URL_SECRET")
}

// syncBuffer is a bytes.Buffer safe for a server's concurrent loggers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
