package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/demo"
	"github.com/cryptointel/cryptointel/internal/doccheck"
)

// docBlockTimeout bounds one `run` block: its curls have --max-time 10
// each, so a block that takes longer is stuck, not slow.
const docBlockTimeout = 60 * time.Second

// docAdminToken is the ADMIN_TOKEN of the docs' server, given to the
// blocks as $ADMIN_TOKEN.
const docAdminToken = "docs-admin-token-0123456789abcdef"

// docPrelude starts every page's bash session: strict mode, and curl as a
// function that fails on an HTTP error (printing the body), is quiet but
// for errors and gives up after 10 s. In a `run stream` block a curl that
// printed something and then ran out of time (exit 28) succeeded: a stream
// ends only when its client leaves.
const docPrelude = `set -euo pipefail
curl() {
  if [[ ${DOC_STREAM:-0} == 1 ]]; then
    local out rc=0
    out=$(mktemp)
    command curl --fail-with-body -sS --max-time 10 "$@" | tee "$out" || rc=$?
    if [[ $rc == 28 && -s $out ]]; then rc=0; fi
    rm -f "$out"
    return "$rc"
  fi
  command curl --fail-with-body -sS --max-time 10 "$@"
}
`

// docMarkerRe is the line the session prints after each block it finished.
var docMarkerRe = regexp.MustCompile("\x1edoc block ([0-9]+) done\x1e\n")

// TestDocExamples runs the `run` blocks of README.md and docs/**/*.md (see
// internal/doccheck for the convention) against a server seeded with the
// demo data, as `make run` serves it: per page, in order, in one bash
// session (set -euo pipefail, so variables carry from block to block), with
// $KEY an enterprise key, $FREE_KEY a free key and $ADMIN_TOKEN the
// server's admin token, and localhost:8080 meaning the server. A block
// fails the test when a command fails (curl fails on an HTTP error) or it
// runs longer than docBlockTimeout; the message shows its output.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the docs' examples need %s", tool)
	}
	pages, err := doccheck.Pages("..")
	require.NoError(t, err)
	type count struct{ ran, illustrative, unmarked int }
	counts := map[string]*count{}
	var run []*doccheck.Page
	for _, p := range pages {
		c := &count{}
		for _, b := range p.Blocks {
			switch {
			case b.Runs():
				c.ran++
			case b.Mode == doccheck.ModeIllustrative:
				c.illustrative++
			case doccheck.ShellLanguages[b.Lang]:
				c.unmarked++
			}
		}
		if c.ran+c.illustrative+c.unmarked > 0 {
			counts[p.Path] = c
		}
		if c.ran > 0 {
			run = append(run, p)
		}
	}
	require.NotEmpty(t, run, "no page has a run block")

	srv := startDocServer(t)
	var mu sync.Mutex
	passed := map[string]bool{}
	t.Run("pages", func(t *testing.T) {
		for _, p := range run {
			t.Run(p.Path, func(t *testing.T) {
				t.Parallel()
				runDocPage(t, srv, p)
				mu.Lock()
				passed[p.Path] = true
				mu.Unlock()
			})
		}
	})
	for _, p := range pages {
		c := counts[p.Path]
		if c == nil {
			continue
		}
		state := "ran"
		if c.ran > 0 && !passed[p.Path] {
			state = "FAILED"
		}
		unmarked := ""
		if c.unmarked > 0 {
			unmarked = fmt.Sprintf(", %d unmarked shell blocks", c.unmarked)
		}
		summary(t, "%s: %d run blocks %s, %d illustrative%s", p.Path, c.ran, state, c.illustrative, unmarked)
	}
}

// docServer is the server the docs' examples talk to.
type docServer struct {
	addr  string
	store *db.DB
}

// startDocServer serves a fresh database holding the demo data (the
// default seed, as `make run` loads it) on a random loopback port, with an
// admin token.
func startDocServer(t *testing.T) *docServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, app.Config{
		DatabaseURL:     dbtest.NewURL(t),
		Logger:          testLogger(t),
		AdminToken:      docAdminToken,
		CursorSecret:    "docs-cursor-secret-0123456789abcdef0123",
		ShutdownTimeout: 15 * time.Second,
	})
	require.NoError(t, err)
	res, err := demo.Seed(ctx, a.DB, demo.Options{})
	require.NoError(t, err)
	require.False(t, res.Skipped)
	base := serveApp(t, ctx, cancel, a)
	return &docServer{addr: strings.TrimPrefix(base, "http://"), store: a.DB}
}

// docScript is a page's run blocks as one bash script: the prelude, then
// each block (localhost:8080 replaced by addr, standard input closed)
// followed by its marker.
func docScript(p *doccheck.Page, addr string) (string, []doccheck.Block) {
	var b strings.Builder
	b.WriteString(docPrelude)
	var blocks []doccheck.Block
	for _, blk := range p.Blocks {
		if !blk.Runs() {
			continue
		}
		stream := 0
		if blk.Mode == doccheck.ModeRunStream {
			stream = 1
		}
		blk.Body = strings.ReplaceAll(blk.Body, "localhost:8080", addr)
		fmt.Fprintf(&b, "DOC_STREAM=%d\n# %s:%d\n{\n%s\n} </dev/null\nprintf '\\036doc block %d done\\036\\n'\n",
			stream, p.Path, blk.Line, blk.Body, len(blocks))
		blocks = append(blocks, blk)
	}
	return b.String(), blocks
}

// docOutput collects a session's output (stdout and stderr in one pipe)
// and cuts it at the markers.
type docOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan int // a block's index at its marker; closed at EOF
	outs []string // each finished block's output
}

func (o *docOutput) read(r *os.File) {
	defer close(o.done)
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			o.mu.Lock()
			o.buf.Write(chunk[:n])
			var ids []int
			for {
				loc := docMarkerRe.FindSubmatchIndex(o.buf.Bytes())
				if loc == nil {
					break
				}
				id, _ := strconv.Atoi(string(o.buf.Bytes()[loc[2]:loc[3]]))
				o.outs = append(o.outs, string(o.buf.Bytes()[:loc[0]]))
				o.buf.Next(loc[1])
				ids = append(ids, id)
			}
			o.mu.Unlock()
			for _, id := range ids {
				o.done <- id
			}
		}
		if err != nil {
			return
		}
	}
}

// lastBytes is the end of s, at most n bytes of it: where a failing
// block's error is.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("…(%d bytes before)\n%s", len(s)-n, s[len(s)-n:])
}

// pending is the output of the block running now.
func (o *docOutput) pending() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// runDocPage runs p's run blocks in one bash session with keys of its own
// (so no page meets another's rate window), failing at the first block
// that fails or outlasts docBlockTimeout.
func runDocPage(t *testing.T, srv *docServer, p *doccheck.Page) {
	key, _ := accesstest.NewKey(t, srv.store, cryptointel.PlanEnterprise)
	freeKey, _ := accesstest.NewKey(t, srv.store, cryptointel.PlanFree)
	err := runDocSession(p, srv.addr, t.TempDir(), docBlockTimeout, t.Logf,
		"KEY="+key, "FREE_KEY="+freeKey, "ADMIN_TOKEN="+docAdminToken, "PATH="+docTools(t, p)+":"+os.Getenv("PATH"))
	require.NoError(t, err)
}

// docTools returns a directory of the commands a page's run blocks may call
// besides the system's: `npx`, which runs only the npm packages pinned
// under tests/interop at their pinned versions (a page naming another
// version fails), and `cryptointel`, built when a block calls it.
func docTools(t *testing.T, p *doccheck.Page) string {
	t.Helper()
	dir := t.TempDir()
	var runs strings.Builder
	for _, b := range p.Blocks {
		if b.Runs() {
			runs.WriteString(b.Body)
		}
	}
	pinned, err := os.ReadFile(filepath.Join(mcpInteropDir, "package.json"))
	require.NoError(t, err)
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	require.NoError(t, json.Unmarshal(pinned, &pkg))
	launcher, err := filepath.Abs(inspectorBin)
	require.NoError(t, err)
	inspector := "@modelcontextprotocol/inspector@" + pkg.Dependencies["@modelcontextprotocol/inspector"]
	shim := `#!/usr/bin/env bash
# npx for the docs' examples: only the packages pinned under tests/interop.
pkg=$1; shift
case "$pkg" in
  ` + inspector + `)
    if [[ ! -f ` + launcher + ` ]]; then
      echo "npx $pkg: tests/interop/mcp/node_modules is missing: run make interop-mcp (make test does)" >&2; exit 1
    fi
    exec node ` + launcher + ` "$@" ;;
  *) echo "npx $pkg: the docs may run only the npm packages pinned under tests/interop (here ` + inspector + `)" >&2; exit 1 ;;
esac
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "npx"), []byte(shim), 0o755))
	if strings.Contains(runs.String(), "cryptointel ") {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "cryptointel"), "../cmd/cryptointel").CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return dir
}

// TestMCPDocSnippets: every JSON block of the MCP page parses (no comment
// lines: each is pasted whole into a client's file), and the page gives the
// shape each named client reads: Cursor's mcpServers.url, VS Code's
// servers with "type": "http", Windsurf's mcpServers.serverUrl and Claude
// Desktop's mcpServers.command launching the bridge, each with the key.
func TestMCPDocSnippets(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../docs/api/mcp.md")
	require.NoError(t, err)
	p := doccheck.Parse("docs/api/mcp.md", string(text))
	type server struct {
		Type      string            `json:"type"`
		URL       string            `json:"url"`
		ServerURL string            `json:"serverUrl"`
		Command   string            `json:"command"`
		Args      []string          `json:"args"`
		Env       map[string]string `json:"env"`
		Headers   map[string]string `json:"headers"`
	}
	shapes := map[string]bool{}
	blocks := 0
	for _, b := range p.Blocks {
		if b.Lang != "json" {
			continue
		}
		blocks++
		var doc map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(b.Body), &doc), "docs/api/mcp.md:%d: not valid JSON:\n%s", b.Line, b.Body)
		for _, top := range []string{"mcpServers", "servers"} {
			raw, ok := doc[top]
			if !ok {
				continue
			}
			var servers map[string]server
			require.NoError(t, json.Unmarshal(raw, &servers), "docs/api/mcp.md:%d", b.Line)
			s, ok := servers["cryptointel"]
			require.True(t, ok, "docs/api/mcp.md:%d: no cryptointel server", b.Line)
			switch {
			case top == "servers":
				require.Equal(t, "http", s.Type, "VS Code names the transport")
				require.True(t, strings.HasSuffix(s.URL, "/mcp"))
				require.Equal(t, "Bearer ci_...", s.Headers["Authorization"])
				shapes["vscode"] = true
			case s.Command != "":
				require.Equal(t, "mcp", s.Args[0], "Claude Desktop launches the bridge")
				require.Contains(t, s.Env, "CRYPTOINTEL_API_KEY")
				shapes["claude"] = true
			case s.ServerURL != "":
				require.True(t, strings.HasSuffix(s.ServerURL, "/mcp"))
				require.Equal(t, "Bearer ci_...", s.Headers["Authorization"])
				shapes["windsurf"] = true
			case s.URL != "":
				require.True(t, strings.HasSuffix(s.URL, "/mcp"))
				require.Equal(t, "Bearer ci_...", s.Headers["Authorization"])
				shapes["cursor"] = true
			}
		}
	}
	for _, c := range []string{"cursor", "vscode", "windsurf", "claude"} {
		require.True(t, shapes[c], "docs/api/mcp.md has no %s snippet", c)
	}
	for _, client := range []string{"Cursor", "VS Code", "Windsurf", "Claude Desktop"} {
		require.Contains(t, string(text), client+" — ", "each snippet is introduced by its client's name")
	}
	summary(t, "docs/api/mcp.md: %d JSON blocks parse; client shapes for Cursor, VS Code, Windsurf and Claude Desktop", blocks)
}

// runDocSession runs p's run blocks (localhost:8080 meaning addr) in one
// bash session in dir, with env added to a minimal environment, each block
// bounded by timeout. It logs each block's output through logf, and
// returns the first failure with the block's text and output.
func runDocSession(p *doccheck.Page, addr, dir string, timeout time.Duration, logf func(string, ...any), env ...string) error {
	script, blocks := docScript(p, addr)
	path := filepath.Join(dir, "doc-session.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		return fmt.Errorf("error writing the session: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("error creating the output pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("bash", path)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "LANG=C.UTF-8"}, env...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("error starting bash: %w", err)
	}
	// kill ends the session and whatever its blocks left in the background
	// (which would otherwise hold the output pipe open).
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } //nolint:errcheck
	defer kill()
	out := &docOutput{done: make(chan int, len(blocks)+1)}
	go out.read(r)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var (
		waitErr error
		ended   bool
	)
	failure := func(i int, why string) error {
		b := blocks[i]
		return fmt.Errorf("%s:%d: block %d of %d %s\n--- block\n%s--- output\n%s", p.Path, b.Line, i+1, len(blocks), why, b.Body, lastBytes(out.pending(), 16<<10))
	}
	for i := range blocks {
		timer := time.NewTimer(timeout)
		for done := false; !done; {
			select {
			case id, ok := <-out.done:
				if !ok { // the output ended before the block's marker
					timer.Stop()
					if !ended {
						waitErr, ended = <-exited, true
					}
					return failure(i, fmt.Sprintf("failed (%v)", waitErr))
				}
				if id != i {
					timer.Stop()
					return fmt.Errorf("%s: block %d's marker came while block %d ran", p.Path, id+1, i+1)
				}
				done = true
				out.mu.Lock()
				logf("%s:%d: block %d ran; output:\n%s", p.Path, blocks[i].Line, i+1, abbreviate(out.outs[i]))
				out.mu.Unlock()
			case waitErr = <-exited:
				// bash ended: end what it left behind, so the reader
				// reaches the end of the output and its markers.
				ended, exited = true, nil
				kill()
			case <-timer.C:
				kill()
				return failure(i, fmt.Sprintf("ran longer than %s", timeout))
			}
		}
		timer.Stop()
	}
	if !ended {
		select {
		case waitErr = <-exited:
		case <-time.After(10 * time.Second):
			kill()
			return fmt.Errorf("%s: the session did not end after its last block", p.Path)
		}
	}
	if waitErr != nil {
		return fmt.Errorf("%s: the session ended with %v after its last block:\n%s", p.Path, waitErr, out.pending())
	}
	return nil
}

// TestDocRunnerFails holds the runner to its promises on pages of its own,
// against a stub server: variables carry from block to block; a failing
// command, an HTTP error and a block that runs too long each fail the page
// with the block's output, and stop it there; a `run stream` block may end
// by curl's timeout once it printed something, and only then.
func TestDocRunnerFails(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom: the body of a 500", http.StatusInternalServerError)
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")

	run := func(name, page string, timeout time.Duration) error {
		p := doccheck.Parse(name, page)
		return runDocSession(p, addr, t.TempDir(), timeout, t.Logf)
	}
	block := func(mode, body string) string { return "```sh " + mode + "\n" + body + "\n```\n\n" }

	require.NoError(t, run("carry.md", block("run", "N=2")+block("illustrative", "false")+
		block("run", `test "$N" = 2`+"\ncurl localhost:8080/ok | grep -x ok"), 30*time.Second))

	for _, c := range []struct {
		name, page string
		timeout    time.Duration
		want       []string
	}{
		{"false.md", block("run", "echo before\nfalse\necho after") + block("run", "echo never"), 30 * time.Second,
			[]string{"false.md:1: block 1 of 2 failed (exit status 1)", "--- output\nbefore\n"}},
		{"http.md", block("run", "curl localhost:8080/ok") + block("run", "curl localhost:8080/fail"), 30 * time.Second,
			[]string{"http.md:5: block 2 of 2 failed (exit status 22)", "boom: the body of a 500", "curl " + addr + "/fail"}},
		{"slow.md", block("run", "echo waiting\nsleep 30"), time.Second,
			[]string{"slow.md:1: block 1 of 1 ran longer than 1s", "--- output\nwaiting\n"}},
		{"stream-not-marked.md", block("run", "curl -N --max-time 1 localhost:8080/stream"), 30 * time.Second,
			[]string{"block 1 of 1 failed (exit status 28)", "data: 1"}},
		{"stream-silent.md", block("run stream", "curl -N --max-time 1 localhost:8080/silent"), 30 * time.Second,
			[]string{"block 1 of 1 failed (exit status 28)"}},
	} {
		err := run(c.name, c.page, c.timeout)
		require.Error(t, err, c.name)
		for _, w := range c.want {
			require.Contains(t, err.Error(), w, c.name)
		}
		require.NotContains(t, err.Error(), "never", c.name)
	}
	require.NoError(t, run("stream.md", block("run stream", "curl -N --max-time 1 localhost:8080/stream")+block("run", "echo next"), 30*time.Second))
}
