package doccheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/ingest"
)

// root is the repository root, where README.md and docs/ live.
const root = "../.."

func checked(t *testing.T) []*Page {
	t.Helper()
	pages, err := Pages(root)
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	return pages
}

func problems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// TestDocLinks: every relative link of README.md and docs/**/*.md names a
// file or directory of the repository, and every #anchor a heading (or an
// explicit anchor) of the page it points into, as GitHub renders them.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	pages, err := Pages(root)
	require.NoError(t, err)
	found := CheckLinks(root, pages)
	require.Empty(t, found, "broken links:%s", problems(found))
}

// TestDocCodeBlocks: every sh, bash, shell, console or http block of
// README.md and docs/**/*.md says whether the docs runner runs it (run,
// run stream) or not (illustrative); no other block carries a mode, and no
// unlabelled or text block hides a command.
func TestDocCodeBlocks(t *testing.T) {
	t.Parallel()
	found := CheckBlocks(checked(t))
	require.Empty(t, found, "code blocks breaking the convention (see internal/doccheck):%s", problems(found))
}

// TestDocsHoldTheFacts keeps the pages that document the code's tables in
// step with them: the configuration reference names every setting of
// app.Config, the ingest page has a section per ingest kind, and exactly
// one page quotes the plans' stream caps, as cryptointel.PlanStreamCaps
// owns them.
func TestDocsHoldTheFacts(t *testing.T) {
	t.Parallel()
	read := func(p string) string {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		require.NoError(t, err)
		return string(raw)
	}
	config := read("docs/operations/configuration.md")
	for _, s := range app.Settings() {
		if s.Field == "Logger" || strings.HasSuffix(s.Field, "TLSConfig") {
			continue
		}
		require.Contains(t, config, "\n## "+s.Env+"\n", "docs/operations/configuration.md lacks %s (Config.%s): run go generate ./tools/configdoc", s.Env, s.Field)
	}
	ingestPage := read("docs/operations/ingest.md")
	for _, kind := range ingest.Kinds {
		require.Contains(t, ingestPage, "\n### `"+kind+"`\n", "docs/operations/ingest.md lacks the section of the %s line", kind)
	}

	pages, err := Pages(root)
	require.NoError(t, err)
	row := "| Open streams per key | " + cryptointel.StreamCapsText() + " (`plans.max_streams`)"
	var holders []string
	for _, p := range pages {
		if strings.Contains(strings.Join(p.Lines, "\n"), row) {
			holders = append(holders, p.Path)
		}
	}
	require.Len(t, holders, 1, "exactly one page (the live-push page) quotes the plans' stream caps as %q; found in %v", row, holders)
}

// The checks find what they are for: a page with broken links and blocks
// breaking the convention.
func TestChecksFindProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docs", "ops"), 0o755))
	write := func(p, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), []byte(text), 0o644))
	}
	write("README.md", "# Title\n\nSee [ops](docs/ops/a.md#the-one-place), [gone](docs/gone.md), [self](#title), [bad self](#nope),\n"+
		"[up](../outside.md), [web](https://example.com/x#y), `[code](not/a/link.md)`.\n\n[ref]: docs/ops/a.md#missing\n")
	write("docs/ops/a.md", "# A\n\n## The one place\n\n## Twice\n\n## Twice\n\n"+
		"[back](../../README.md#title) [twice](#twice-1) [thrice](#twice-2) [dir](../ops) <a href=\"../nowhere.md\">x</a>\n\n"+
		"```sh\nmake test\n```\n\n```bash run\ncurl localhost:8080/healthz\n```\n\n```sh illustrative\nmake run\n```\n\n"+
		"```sh ran\nmake run\n```\n\n```json run\n{}\n```\n\n```\n$ curl localhost:8080/readyz\n```\n\n```text\nplain output\n```\n\n"+
		"````markdown\n```sh\ninside a four-backtick block\n```\n````\n\n  ```http\n  GET /healthz\n  ```\n")
	pages, err := Pages(dir)
	require.NoError(t, err)
	require.Len(t, pages, 2)

	var links []string
	for _, p := range CheckLinks(dir, pages) {
		links = append(links, p.String())
	}
	require.Equal(t, []string{
		`README.md:3: link "docs/gone.md": docs/gone.md does not exist`,
		`README.md:3: link "#nope": README.md has no heading or anchor #nope`,
		`README.md:4: link "../outside.md" leaves the repository`,
		`README.md:6: link "docs/ops/a.md#missing": docs/ops/a.md has no heading or anchor #missing`,
		`docs/ops/a.md:9: link "#twice-2": docs/ops/a.md has no heading or anchor #twice-2`,
		`docs/ops/a.md:9: link "../nowhere.md": docs/nowhere.md does not exist`,
	}, links)

	var blocks []string
	for _, p := range CheckBlocks(pages) {
		blocks = append(blocks, p.String())
	}
	require.Equal(t, []string{
		"docs/ops/a.md:11: ```sh block without a mode: write ```sh run (a test runs it) or ```sh illustrative",
		"docs/ops/a.md:23: ```sh ran block with the unknown mode \"ran\": the modes are run, run stream and illustrative",
		"docs/ops/a.md:27: ```json run: only bash, console, http, sh, shell blocks take a mode",
		`docs/ops/a.md:32: a command in a block labelled "": label the block sh run or sh illustrative`,
		"docs/ops/a.md:45: ```http block without a mode: write ```http run (a test runs it) or ```http illustrative",
	}, blocks)

	var runs []string
	for _, b := range pages[1].Blocks {
		if b.Runs() {
			runs = append(runs, b.Body)
		}
	}
	require.Equal(t, []string{"curl localhost:8080/healthz\n"}, runs)
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for heading, want := range map[string]string{
		"Two commands":                           "two-commands",
		"`entity`":                               "entity",
		"MCP: tools for agents":                  "mcp-tools-for-agents",
		"Playground, metrics, logs and health":   "playground-metrics-logs-and-health",
		"DATABASE_URL":                           "database_url",
		"Architecture: one executor — one owner": "architecture-one-executor--one-owner",
		"See [the page](x.md) now":               "see-the-page-now",
		"Résumé 2.0 (x402 v1/v2)":                "résumé-20-x402-v1v2",
	} {
		require.Equal(t, want, Slug(heading), heading)
	}
}

// TestDocNamesExist: every file, test, fuzz target and benchmark a page
// names in a code span exists (README.md, docs/**, and the package and
// tool READMEs; the bench journals and the changelog record history and
// may name what is gone).
func TestDocNamesExist(t *testing.T) {
	t.Parallel()
	repo, err := ScanRepo(root)
	require.NoError(t, err)
	pages := checked(t)
	for _, extra := range []string{"rest/README.md", "tests/interop/payments/README.md", "tests/bench/SOAK.md", "tests/bench/STREAM.md"} {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(extra)))
		require.NoError(t, err)
		pages = append(pages, Parse(extra, string(raw)))
	}
	if ps := CheckNames(repo, pages); len(ps) > 0 {
		t.Errorf("pages name files or tests that do not exist:%s", problems(ps))
	}
	// The check finds what it is for.
	bad := Parse("docs/x.md", "See `rest/legacy.go`, `nosuchfile.go` and `FuzzWithLegacyAliases`; `rest/call.go` and `FuzzParseCall` exist.\n")
	require.Len(t, CheckNames(repo, []*Page{bad}), 3)
}

// TestFuzzTargetsListed: the Makefile's FUZZ_TARGETS is every fuzz
// function of the repository, each in the package that declares it, and
// docs/development.md names each one.
func TestFuzzTargetsListed(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	mk := strings.ReplaceAll(string(raw), "\\\n", " ")
	var listed []string
	for _, line := range strings.Split(mk, "\n") {
		if rest, ok := strings.CutPrefix(line, "FUZZ_TARGETS :="); ok {
			listed = strings.Fields(rest)
		}
	}
	require.NotEmpty(t, listed, "the Makefile has no FUZZ_TARGETS line")
	declared := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || (strings.HasPrefix(d.Name(), ".") && p != root)) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		for _, m := range testFuncRe.FindAllStringSubmatch(string(src), -1) {
			if strings.HasPrefix(m[1], "Fuzz") {
				declared["./"+filepath.ToSlash(rel)+":"+m[1]] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	dev, err := os.ReadFile(filepath.Join(root, "docs", "development.md"))
	require.NoError(t, err)
	for _, l := range listed {
		require.True(t, declared[l], "FUZZ_TARGETS names %s, which no _test.go of that package declares", l)
	}
	for d := range declared {
		require.Contains(t, listed, d, "%s is not in the Makefile's FUZZ_TARGETS", d)
		_, name, _ := strings.Cut(d, ":")
		require.Contains(t, string(dev), "`"+name+"`", "docs/development.md does not name the fuzz target %s", name)
	}
}
