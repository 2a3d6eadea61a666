package tests

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
)

// tracedStatement is one statement a request sent, with the Go call stack
// that sent it.
type tracedStatement struct {
	sql    string
	frames []runtime.Frame
}

// TestRequestPathFiles runs a computed GET /v1/latest?limit=25 (the
// response cache off) through the whole service against PostgreSQL,
// records the Go call stack of each statement it sends as the statement
// starts (db.WithStatementHook), and lists the hand-written (not
// generated) files of this repository on the stack of its read: the
// request's path from the HTTP server to its SQL. docs/architecture.md
// lists the same files, in the same order, between its request-path
// markers.
func TestRequestPathFiles(t *testing.T) {
	s := startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, restFixture()) },
		func(c *app.Config) { c.ResponseCacheTTL = -time.Second })

	var (
		mu    sync.Mutex
		trace []tracedStatement
	)
	hook := func(sql string) {
		pcs := make([]uintptr, 256)
		n := runtime.Callers(2, pcs)
		frames := runtime.CallersFrames(pcs[:n])
		st := tracedStatement{sql: sql}
		for {
			f, more := frames.Next()
			st.frames = append(st.frames, f)
			if !more {
				break
			}
		}
		mu.Lock()
		trace = append(trace, st)
		mu.Unlock()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.app.Handler.ServeHTTP(w, r.WithContext(db.WithStatementHook(r.Context(), hook)))
	}))
	defer srv.Close()

	key := s.apiKey(t)
	get := func() {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/v1/latest?limit=25", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	}
	// The first request fills the caches every later one finds (plans,
	// the operation's document and plan); the second is the path of every
	// computed request.
	get()
	mu.Lock()
	trace = nil
	mu.Unlock()
	get()

	root := repoRoot(t)
	mu.Lock()
	defer mu.Unlock()
	var got []string
	seen := map[string]bool{}
	reads := 0
	for _, st := range trace {
		if !slices.ContainsFunc(st.frames, func(f runtime.Frame) bool { return strings.HasPrefix(f.File, root+"/resolvers/") }) {
			continue // not the operation's read (a statement of the access layer)
		}
		reads++
		// Outermost first: from the HTTP server to the statement. A read
		// run beside the metering statement (access/readahead.go) runs in
		// a goroutine of its own: its path is the request's own from the
		// HTTP server to where the access layer started it (the stack of
		// the request's metering statement, down to serveHash), then the
		// goroutine's.
		frames := slices.Clone(st.frames)
		slices.Reverse(frames)
		if slices.ContainsFunc(frames, func(f runtime.Frame) bool { return strings.Contains(f.Function, "access.(*Service).readAhead.func") }) {
			frames = append(requestFramesTo(t, trace, "access.(*Service).serveHash"), frames...)
		}
		for _, f := range frames {
			rel, ok := strings.CutPrefix(f.File, root+"/")
			if !ok || strings.HasSuffix(rel, "_test.go") || strings.HasSuffix(f.Function, "(*poolTracer).TraceQueryStart") || seen[rel] {
				continue
			}
			seen[rel] = true
			if generated(t, f.File) {
				t.Logf("%s (generated)", rel)
				continue
			}
			got = append(got, rel)
		}
	}
	require.Equal(t, 1, reads, "a computed /v1/latest sends one read")
	t.Logf("%d hand-written files from the HTTP server to the SQL of GET /v1/latest?limit=25: %s", len(got), strings.Join(got, " "))
	require.Equal(t, documentedRequestPath(t, filepath.Join(root, "docs", "architecture.md")), got,
		"docs/architecture.md's request path (between <!-- request-path:begin --> and <!-- request-path:end -->) is not the traced one")
	require.LessOrEqual(t, len(got), 15, "a computed GET /v1/latest passes through at most 15 hand-written files before its SQL")
}

// requestFramesTo is the stack, outermost first, of a traced statement
// sent from function fn's goroutine, down to fn's frame.
func requestFramesTo(t *testing.T, trace []tracedStatement, fn string) []runtime.Frame {
	t.Helper()
	for _, st := range trace {
		i := slices.IndexFunc(st.frames, func(f runtime.Frame) bool { return strings.HasSuffix(f.Function, fn) })
		if i < 0 {
			continue
		}
		frames := slices.Clone(st.frames[i:])
		slices.Reverse(frames)
		return frames
	}
	require.Failf(t, "no statement sent from "+fn, "%d statements traced", len(trace))
	return nil
}

// repoRoot is the repository's directory (the parent of tests/).
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Dir(filepath.Dir(file))
}

// generatedHeader is Go's marker of a generated file.
var generatedHeader = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// generated reports whether the Go file at path carries the generated
// marker before its package clause.
func generated(t *testing.T, path string) bool {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if generatedHeader.MatchString(line) {
			return true
		}
		if strings.HasPrefix(line, "package ") {
			return false
		}
	}
	require.NoError(t, sc.Err())
	return false
}

// requestPathItem is one file of the documented request path: a numbered
// list item that starts with the file's path in backquotes.
var requestPathItem = regexp.MustCompile("^\\d+\\. `([^`]+)`")

// documentedRequestPath is the list of files between the request-path
// markers of the architecture page.
func documentedRequestPath(t *testing.T, page string) []string {
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "<!-- request-path:begin -->")
	require.True(t, ok, "%s has no <!-- request-path:begin --> marker", page)
	section, _, ok := strings.Cut(rest, "<!-- request-path:end -->")
	require.True(t, ok, "%s has no <!-- request-path:end --> marker", page)
	var files []string
	for _, line := range strings.Split(section, "\n") {
		if m := requestPathItem.FindStringSubmatch(line); m != nil {
			files = append(files, m[1])
		}
	}
	return files
}
