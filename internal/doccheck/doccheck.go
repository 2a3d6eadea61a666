// Package doccheck reads the project's Markdown pages (README.md and
// docs/**/*.md) the way GitHub renders them, for the tests that keep them
// true: relative links and their #anchors resolve, and every code block that
// is a command or a request is either run by a test or marked illustrative.
//
// The code-block convention: a fenced block whose language (the first word
// of its info string) is one of ShellLanguages carries a second word, its
// mode — "run" (the docs runner executes it against a demo-seeded server),
// "run stream" (the same, and the block may end by curl's --max-time once it
// printed something) or "illustrative" (not executed). GitHub highlights by
// the first word only, so the mode does not show. Other languages (json, go,
// python, js, graphql, yaml, text, or none) take no mode.
package doccheck

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// ShellLanguages are the info-string languages of commands and requests:
// a block in one of them must carry a mode.
var ShellLanguages = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true, "http": true}

// Modes of a shell block.
const (
	ModeRun          = "run"
	ModeRunStream    = "run stream"
	ModeIllustrative = "illustrative"
)

// Page is one Markdown file, its path relative to the repository root in
// slash form.
type Page struct {
	Path   string
	Lines  []string
	Blocks []Block
	Links  []Link
	// Anchors are the fragment ids GitHub gives the page: one per heading
	// (github-slugger rules, duplicates suffixed -1, -2, …) and each
	// explicit <a name|id="…">.
	Anchors map[string]bool
}

// Block is a fenced code block.
type Block struct {
	// Line is the 1-based line of the opening fence.
	Line int
	// Info is the fence's info string, trimmed.
	Info string
	// Lang is Info's first word, lowercased; Mode the rest, its words
	// joined by one space.
	Lang, Mode string
	// Body is the block's text, each line's fence indentation removed.
	Body string
}

// Runs reports whether the docs runner executes b: a shell block marked
// run or run stream.
func (b Block) Runs() bool {
	return ShellLanguages[b.Lang] && (b.Mode == ModeRun || b.Mode == ModeRunStream)
}

// Link is a link of the page outside code: an inline [text](target), an
// image, a reference definition or an HTML href.
type Link struct {
	Line   int
	Target string
}

// Pages reads README.md and every docs/**/*.md under root, sorted by path.
func Pages(root string) ([]*Page, error) {
	paths := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("error walking docs: %w", err)
	}
	sort.Strings(paths[1:])
	pages := make([]*Page, 0, len(paths))
	for _, p := range paths {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, fmt.Errorf("error reading %s: %w", p, err)
		}
		pages = append(pages, Parse(p, string(raw)))
	}
	return pages, nil
}

var (
	fenceRe   = regexp.MustCompile("^([ \t]*)(`{3,}|~{3,})(.*)$")
	headingRe = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	// inlineLinkRe finds [text](target "title") and ![alt](target); the
	// target ends at whitespace or the closing parenthesis.
	inlineLinkRe = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDefRe     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	hrefRe       = regexp.MustCompile(`(?i)<a\s[^>]*href="([^"]*)"`)
	htmlAnchorRe = regexp.MustCompile(`(?i)<a\s[^>]*(?:name|id)="([^"]*)"`)
)

// Parse reads a page's blocks, links and anchors.
func Parse(pagePath, text string) *Page {
	p := &Page{Path: pagePath, Lines: strings.Split(text, "\n"), Anchors: map[string]bool{}}
	seen := map[string]int{}
	var open *Block
	var fence, indent string
	var body []string
	for i, line := range p.Lines {
		n := i + 1
		if open != nil {
			m := fenceRe.FindStringSubmatch(line)
			if m != nil && m[2][0] == fence[0] && len(m[2]) >= len(fence) && strings.TrimSpace(m[3]) == "" {
				open.Body = strings.Join(body, "\n")
				if len(body) > 0 {
					open.Body += "\n"
				}
				p.Blocks = append(p.Blocks, *open)
				open, body = nil, nil
				continue
			}
			body = append(body, strings.TrimPrefix(line, indent))
			continue
		}
		if m := fenceRe.FindStringSubmatch(line); m != nil && !(m[2][0] == '`' && strings.Contains(m[3], "`")) {
			info := strings.TrimSpace(m[3])
			words := strings.Fields(info)
			b := &Block{Line: n, Info: info}
			if len(words) > 0 {
				b.Lang = strings.ToLower(words[0])
				b.Mode = strings.Join(words[1:], " ")
			}
			open, fence, indent = b, m[2], m[1]
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil {
			slug := Slug(m[2])
			if k := seen[slug]; k > 0 {
				p.Anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				p.Anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range htmlAnchorRe.FindAllStringSubmatch(line, -1) {
			p.Anchors[m[1]] = true
		}
		prose := stripCodeSpans(line)
		for _, re := range []*regexp.Regexp{inlineLinkRe, refDefRe, hrefRe} {
			for _, m := range re.FindAllStringSubmatch(prose, -1) {
				p.Links = append(p.Links, Link{Line: n, Target: m[1]})
			}
		}
	}
	if open != nil { // an unclosed fence runs to the end of the page
		open.Body = strings.Join(body, "\n")
		p.Blocks = append(p.Blocks, *open)
	}
	return p
}

// stripCodeSpans removes a line's code spans: a run of n backticks up to
// the next run of exactly n.
func stripCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(line) && line[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 { // no closing run: literal backticks
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		i = end
	}
	return b.String()
}

var (
	mdLinkTextRe = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRe    = regexp.MustCompile(`<[^>]+>`)
)

// Slug is the fragment id GitHub gives a heading's text (github-slugger):
// the rendered text (code spans' contents, links' text, no HTML tags),
// lowercased, with every character that is not a letter, a digit, a mark,
// '-' or '_' dropped and each space turned into '-'.
func Slug(heading string) string {
	s := mdLinkTextRe.ReplaceAllString(heading, "$1")
	s = htmlTagRe.ReplaceAllString(s, "")
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Problem is one finding of a check, at a page's line.
type Problem struct {
	Page string
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.Page, p.Line, p.Msg) }

// CheckLinks reports every relative link of pages whose file or directory
// does not exist under root (or lies outside it), and every #anchor that
// the target page (or, for "#x", the page itself) does not define. Links
// with a scheme (https:, mailto:) are not followed.
func CheckLinks(root string, pages []*Page) []Problem {
	byPath := map[string]*Page{}
	for _, p := range pages {
		byPath[p.Path] = p
	}
	var out []Problem
	for _, p := range pages {
		for _, l := range p.Links {
			if msg := checkLink(root, byPath, p, l.Target); msg != "" {
				out = append(out, Problem{p.Path, l.Line, msg})
			}
		}
	}
	return out
}

var schemeRe = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

func checkLink(root string, byPath map[string]*Page, from *Page, target string) string {
	if target == "" {
		return "empty link target"
	}
	if schemeRe.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	file, anchor, hasAnchor := strings.Cut(target, "#")
	if i := strings.IndexByte(file, '?'); i >= 0 {
		file = file[:i]
	}
	to := from.Path
	if file != "" {
		if strings.HasPrefix(file, "/") {
			to = path.Clean(strings.TrimPrefix(file, "/"))
		} else {
			to = path.Join(path.Dir(from.Path), file)
		}
		if to == ".." || strings.HasPrefix(to, "../") {
			return fmt.Sprintf("link %q leaves the repository", target)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(to))); err != nil {
			return fmt.Sprintf("link %q: %s does not exist", target, to)
		}
	}
	if !hasAnchor || !strings.HasSuffix(to, ".md") {
		return ""
	}
	page := byPath[to]
	if page == nil {
		raw, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(to)))
		if err != nil {
			return fmt.Sprintf("link %q: %v", target, err)
		}
		page = Parse(to, string(raw))
		byPath[to] = page
	}
	if !page.Anchors[anchor] {
		return fmt.Sprintf("link %q: %s has no heading or anchor #%s", target, to, anchor)
	}
	return ""
}

// commandLineRe finds a line of an unlabelled or text block that starts,
// unindented or after a "$ " prompt, with a command: the block should then
// be a shell block with a mode. (Indented lines are diagrams and output.)
var commandLineRe = regexp.MustCompile(`^(?:\$\s+)?(?:curl|make|cryptointel|bin/cryptointel|go|podman|docker|podman-compose|systemctl|psql|pg_dump|pg_restore|npm|npx|git|openssl|export)\s`)

// CheckBlocks reports every block breaking the convention: a shell block
// without a mode or with an unknown one, a mode on a block of another
// language (only shell blocks run), and an unlabelled or text block holding
// a command line (label it sh and give it a mode).
func CheckBlocks(pages []*Page) []Problem {
	var out []Problem
	for _, p := range pages {
		for _, b := range p.Blocks {
			switch {
			case ShellLanguages[b.Lang]:
				switch b.Mode {
				case ModeRun, ModeRunStream, ModeIllustrative:
				case "":
					out = append(out, Problem{p.Path, b.Line, fmt.Sprintf("```%s block without a mode: write ```%s run (a test runs it) or ```%s illustrative", b.Lang, b.Lang, b.Lang)})
				default:
					out = append(out, Problem{p.Path, b.Line, fmt.Sprintf("```%s block with the unknown mode %q: the modes are run, run stream and illustrative", b.Info, b.Mode)})
				}
			case b.Mode != "":
				out = append(out, Problem{p.Path, b.Line, fmt.Sprintf("```%s: only %s blocks take a mode", b.Info, shellList())})
			case b.Lang == "" || b.Lang == "text":
				for i, l := range strings.Split(b.Body, "\n") {
					if commandLineRe.MatchString(l) {
						out = append(out, Problem{p.Path, b.Line + 1 + i, fmt.Sprintf("a command in a block labelled %q: label the block sh run or sh illustrative", b.Lang)})
						break
					}
				}
			}
		}
	}
	return out
}

func shellList() string {
	var l []string
	for k := range ShellLanguages {
		l = append(l, k)
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}
