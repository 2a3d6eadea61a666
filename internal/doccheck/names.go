package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// A page names the code it describes in code spans: `rest/call.go`,
// `legacy.go`, `FuzzParseCall`. CheckNames keeps those names true: a
// renamed or deleted file, test, fuzz target or benchmark fails the check
// instead of leaving the page describing code that is gone.
//
//   - a span that is a file name with one of fileExts and a slash is a
//     path from the repository root (or from the page's directory) that
//     must exist;
//   - one without a slash must be the name of some file of the repository;
//   - a span that is a Test, Fuzz or Benchmark function name (optionally
//     followed by /subtest) must be declared by a _test.go file.
//
// Spans with a wildcard, a placeholder (<…>, {…}, NNN) or a scheme, dot
// files and folders (a user's `.cursor/mcp.json`, the suffix `.down.sql`),
// what a build writes (bin/) and the files of other programs (outside) are
// not names of this repository's files and are skipped.

// outside are file names the pages give that belong to other programs or
// to the contract beside the repository.
var outside = map[string]bool{
	"claude_desktop_config.json": true,
	"shared/spec/api-spec.md":    true,
}

var (
	codeSpanRe = regexp.MustCompile("`([^`]+)`")
	fileNameRe = regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_./-]*\.(go|sql|sh|graphql|graphqls|tmpl|mjs|js|ts|py|json|yml|yaml|md|toml)$`)
	testNameRe = regexp.MustCompile(`^((?:Test|Fuzz|Benchmark)[A-Z0-9_]\w*)(?:/\S*)?$`)
	testFuncRe = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w*)\(`)
)

// Repo is what CheckNames checks names against: the repository's files
// (slash paths from the root and their base names) and the test functions
// its _test.go files declare.
type Repo struct {
	Paths map[string]bool
	Bases map[string]bool
	Tests map[string]bool
}

// ScanRepo walks root (skipping .git, node_modules and other dot or
// ignored build folders) for the files and test functions CheckNames
// needs.
func ScanRepo(root string) (*Repo, error) {
	r := &Repo{Paths: map[string]bool{}, Bases: map[string]bool{}, Tests: map[string]bool{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		r.Paths[rel] = true
		r.Bases[name] = true
		if !d.IsDir() && strings.HasSuffix(name, "_test.go") {
			src, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("error reading %s: %w", rel, err)
			}
			for _, m := range testFuncRe.FindAllSubmatch(src, -1) {
				r.Tests[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("error walking the repository: %w", err)
	}
	return r, nil
}

// CheckNames reports each code span of the pages' prose (outside fenced
// blocks) that names a file, test, fuzz target or benchmark the
// repository does not have.
func CheckNames(repo *Repo, pages []*Page) []Problem {
	var out []Problem
	for _, p := range pages {
		inBlock := map[int]bool{}
		for _, b := range p.Blocks {
			for i := b.Line; i <= b.Line+strings.Count(b.Body, "\n")+1; i++ {
				inBlock[i] = true
			}
		}
		for i, line := range p.Lines {
			n := i + 1
			if inBlock[n] {
				continue
			}
			for _, m := range codeSpanRe.FindAllStringSubmatch(line, -1) {
				if msg := repo.check(p.Path, strings.TrimSpace(m[1])); msg != "" {
					out = append(out, Problem{Page: p.Path, Line: n, Msg: msg})
				}
			}
		}
	}
	return out
}

func (r *Repo) check(page, span string) string {
	if strings.ContainsAny(span, "*?<>{}$~ ") || strings.Contains(span, "://") || strings.Contains(span, "NNN") {
		return ""
	}
	if outside[span] || strings.HasPrefix(span, ".") || strings.Contains(span, "/.") || strings.HasPrefix(span, "bin/") {
		return ""
	}
	if m := testNameRe.FindStringSubmatch(span); m != nil {
		if !r.Tests[m[1]] {
			return fmt.Sprintf("`%s` names a test function no _test.go declares", span)
		}
		return ""
	}
	if !fileNameRe.MatchString(span) {
		return ""
	}
	clean := strings.TrimPrefix(span, "./")
	if !strings.Contains(clean, "/") {
		if !r.Bases[clean] {
			return fmt.Sprintf("`%s` names a file the repository does not have", span)
		}
		return ""
	}
	if r.Paths[path.Clean(clean)] || r.Paths[path.Join(path.Dir(page), clean)] {
		return ""
	}
	return fmt.Sprintf("`%s` names a path the repository does not have", span)
}
