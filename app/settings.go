package app

import (
	_ "embed"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"unicode"
)

// configSource is config.go itself: the field comments of Config are the
// one place each setting is documented, and the CLI's help and the
// configuration reference (docs/operations/configuration.md)
// are generated from them.
//
//go:embed config.go
var configSource []byte

// Setting documents one field of Config.
type Setting struct {
	// Field is the Go field name, for example "DBMaxConns".
	Field string
	// Env is the environment variable that sets it: the "(env NAME)" of the
	// field comment, or the field name in UPPER_SNAKE_CASE when the comment
	// names none.
	Env string
	// Doc is the field comment as one line, without the field name and the
	// env note.
	Doc string
}

var envNote = regexp.MustCompile(`\s*\(env\s+([A-Z][A-Z0-9_]*)\)`)

// Settings lists every field of Config in declaration order with its env
// name and documentation, read from the comments in config.go.
func Settings() []Setting {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "config.go", configSource, parser.ParseComments)
	if err != nil {
		panic("app: config.go does not parse: " + err.Error())
	}
	var out []Setting
	ast.Inspect(file, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Config" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		for _, f := range st.Fields.List {
			for _, name := range f.Names {
				out = append(out, newSetting(name.Name, f.Doc.Text()))
			}
		}
		return false
	})
	return out
}

func newSetting(field, comment string) Setting {
	s := Setting{Field: field, Env: EnvName(field)}
	doc := strings.Join(strings.Fields(comment), " ")
	if m := envNote.FindStringSubmatch(doc); m != nil {
		s.Env = m[1]
		doc = envNote.ReplaceAllString(doc, "")
	}
	doc = strings.TrimPrefix(doc, field+" ")
	doc = strings.TrimPrefix(doc, "is ")
	doc = strings.TrimPrefix(doc, "are ")
	if doc != "" {
		r := []rune(doc)
		r[0] = unicode.ToUpper(r[0])
		doc = string(r)
	}
	s.Doc = doc
	return s
}

// EnvName turns a Go field name into UPPER_SNAKE_CASE, keeping acronyms
// together: DatabaseURL → DATABASE_URL, DBMaxConns → DB_MAX_CONNS.
func EnvName(field string) string {
	r := []rune(field)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prevLower := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1]) && !(r[i+1] == 's' && i+2 == len(r))
			if prevLower || (unicode.IsUpper(r[i-1]) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToUpper(c))
	}
	return b.String()
}

// DefaultConfig returns a Config with every default applied: what New uses
// for each field left zero.
func DefaultConfig() Config {
	var c Config
	c.setDefaults()
	return c
}
