package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRootPackageIsTheDomain holds the root package (package cryptointel)
// to the domain: its non-test Go files, `ls *.go | grep -v _test | xargs
// wc -l`, stay within 800 lines. What is not domain (the error table, the
// export and webhook vocabularies, the key views) lives with its owner.
func TestRootPackageIsTheDomain(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "*.go"))
	require.NoError(t, err)
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines += bytes.Count(b, []byte("\n"))
	}
	t.Logf("root package: %d lines in %d files", lines, len(files))
	require.LessOrEqual(t, lines, 800, "the root package holds the domain only (docs/architecture.md's layer table)")
}
