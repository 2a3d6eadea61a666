package tests

import (
	"bytes"
	"context"
	"fmt"
	"net"
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
		ShutdownTimeout: 15 * time.Second,
	})
	require.NoError(t, err)
	res, err := demo.Seed(ctx, a.DB, demo.Options{})
	require.NoError(t, err)
	require.False(t, res.Skipped)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		a.Close() //nolint:errcheck
	})
	return &docServer{addr: ln.Addr().String(), store: a.DB}
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
	script, blocks := docScript(p, srv.addr)
	dir := t.TempDir()
	path := filepath.Join(dir, "doc-session.sh")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	key, _ := accesstest.NewKey(t, srv.store, cryptointel.PlanEnterprise)
	freeKey, _ := accesstest.NewKey(t, srv.store, cryptointel.PlanFree)

	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command("bash", path)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "LANG=C.UTF-8",
		"KEY=" + key, "FREE_KEY=" + freeKey, "ADMIN_TOKEN=" + docAdminToken,
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	w.Close()
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } //nolint:errcheck
	t.Cleanup(kill)
	out := &docOutput{done: make(chan int, len(blocks))}
	go out.read(r)

	fail := func(i int, why, output string) {
		b := blocks[i]
		t.Fatalf("%s:%d: block %d of %d %s\n--- block\n%s--- output\n%s", p.Path, b.Line, i+1, len(blocks), why, b.Body, output)
	}
	for i := range blocks {
		timer := time.NewTimer(docBlockTimeout)
		select {
		case id, ok := <-out.done:
			timer.Stop()
			if !ok {
				err := cmd.Wait()
				fail(i, fmt.Sprintf("failed (%v)", err), out.pending())
			}
			require.Equal(t, i, id, "the session's markers come in order")
			out.mu.Lock()
			t.Logf("%s:%d: block %d ran; output:\n%s", p.Path, blocks[i].Line, i+1, abbreviate(out.outs[i]))
			out.mu.Unlock()
		case <-timer.C:
			kill()
			fail(i, fmt.Sprintf("ran longer than %s", docBlockTimeout), out.pending())
		}
	}
	kill() // what a block left in the background
	for range out.done {
	}
	if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "killed") {
		t.Fatalf("%s: the session ended with %v after its last block:\n%s", p.Path, err, out.pending())
	}
}
