package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db/dbtest"
)

// runProgress runs args in process with stderr seen as a terminal or not
// and returns stdout and stderr.
func runProgress(t *testing.T, dbURL string, tty bool, stdin string, args ...string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	m := NewMain()
	m.Stdin = strings.NewReader(stdin)
	m.Stdout, m.Stderr = &stdout, &stderr
	m.Getenv = func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	}
	m.IsTerminal = func(w io.Writer) bool { return tty && w == io.Writer(&stderr) }
	err := m.Run(context.Background(), args)
	require.NoError(t, m.Close())
	require.NoError(t, err, "stderr: %s", stderr.String())
	return stdout.String(), stderr.String()
}

func progressEntities(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"kind":"entity","id":%d,"canonicalName":"Progress %d"}`+"\n", 70000+i, i)
	}
	return b.String()
}

// TestIngestProgress: without a terminal, ingest prints a plain line every
// 10 batches on stderr; on a terminal it draws a bar (carriage returns)
// of the file's bytes. The summary stays the last line of stdout.
func TestIngestProgress(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	input := progressEntities(25)

	stdout, stderr := runProgress(t, dbURL, false, input, "ingest", "--batch-size", "1", "-")
	require.Equal(t, "ingest: 10 lines read", strings.SplitN(lines(stderr)[0], " (", 2)[0], stderr)
	require.Len(t, lines(stderr), 2, stderr) // after 10 and 20 batches
	require.Contains(t, lines(stderr)[1], "ingest: 20 lines read")
	require.NotContains(t, stderr, "\r")
	require.True(t, strings.HasPrefix(lastLine(stdout), "ingest: 25 lines; applied entity=25"), stdout)

	file := filepath.Join(t.TempDir(), "entities.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(input), 0o600))
	stdout, stderr = runProgress(t, dbURL, true, "", "ingest", "--batch-size", "5", file)
	require.Contains(t, stderr, "\r", "a bar redraws its line")
	require.Contains(t, stderr, "ingest")
	require.Contains(t, stderr, "100%", "the bar ends full")
	require.NotContains(t, stderr, "lines read", "no plain lines under a bar")
	require.True(t, strings.HasSuffix(stderr, "\n"), "the bar's line is ended")
	require.True(t, strings.HasPrefix(lastLine(stdout), "ingest: 25 lines; applied entity=0"), stdout)
	require.NotContains(t, stdout, "\r")
}

// TestSeedProgress: without a terminal, seed prints plain progress lines;
// on a terminal a bar of events written, with the later phases' lines
// below it. The result line stays on stdout.
func TestSeedProgress(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seeds the demo data twice")
	}
	dbURL := dbtest.NewURL(t)

	stdout, stderr := runProgress(t, dbURL, false, "", "seed", "--demo", "--events", "300")
	require.Contains(t, stderr, "seed: 300/300 events")
	require.Contains(t, stderr, "seed: indexes rebuilt")
	require.NotContains(t, stderr, "\r")
	require.Contains(t, lastLine(stdout), "seed: 520 entities")

	stdout, stderr = runProgress(t, dbURL, true, "", "seed", "--demo", "--events", "300", "--force")
	require.Contains(t, stderr, "\r", "a bar redraws its line")
	require.Contains(t, stderr, "seed: events")
	require.Contains(t, stderr, "100%")
	require.Contains(t, stderr, "300/300")
	require.NotContains(t, stderr, "seed: 300/300 events", "no plain event lines under a bar")
	require.Contains(t, lastLine(stderr), "seed: indexes rebuilt", "later phases print below the finished bar")
	require.Contains(t, lastLine(stdout), "seed: 520 entities")
}

// lines splits s into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
