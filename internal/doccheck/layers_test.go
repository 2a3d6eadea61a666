package doccheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/cryptointel/cryptointel"

// TestLayersHold: the layer diagram of docs/architecture.md is what go
// list shows. Each row of its first block names a layer's packages, top
// to bottom; a package may import only packages of the rows below its own
// (or its own subpackages), and every package of the module is in a row
// unless it is a test helper (a name ending in "test"), a generator (a
// main package but cmd/cryptointel), internal/… or tests/….
func TestLayersHold(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	page := Parse("docs/architecture.md", string(raw))
	var diagram string
	for _, b := range page.Blocks {
		if strings.HasPrefix(strings.TrimSpace(b.Body), "command") {
			diagram = b.Body
			break
		}
	}
	require.NotEmpty(t, diagram, "docs/architecture.md has no layer block starting with the command row")
	layer := map[string]int{}
	var rows []string
	for _, line := range strings.Split(diagram, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "─") {
			continue
		}
		rows = append(rows, f[0])
		for _, p := range f[1:] {
			if p == "cryptointel" {
				p = ""
			}
			_, dup := layer[p]
			require.False(t, dup, "the layer diagram names %q twice", p)
			layer[p] = len(rows)
		}
	}

	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	exempt := func(p, name string) bool {
		return strings.HasSuffix(name, "test") || (name == "main" && p != "cmd/cryptointel") ||
			strings.HasPrefix(p, "internal/") || p == "tests" || strings.HasPrefix(p, "tests/")
	}
	show := func(p string) string {
		if p == "" {
			return "cryptointel"
		}
		return p
	}
	var problems []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		p, _ := rel(f[0])
		if exempt(p, f[1]) {
			continue
		}
		from, ok := layer[p]
		if !ok {
			problems = append(problems, show(p)+" is in no row of the layer diagram")
			continue
		}
		for _, imp := range f[2:] {
			q, ours := rel(imp)
			if !ours {
				continue
			}
			to, ok := layer[q]
			if !ok || to > from || strings.HasPrefix(q, p+"/") {
				continue // a helper, a lower layer, or its own subpackage
			}
			kind := "sideways"
			if to < from {
				kind = "upwards"
			}
			problems = append(problems, show(p)+" ("+rows[from-1]+") imports "+show(q)+" ("+rows[to-1]+"): "+kind)
		}
	}
	require.NoError(t, sc.Err())
	require.Empty(t, problems, "imports against docs/architecture.md's layers")
}
