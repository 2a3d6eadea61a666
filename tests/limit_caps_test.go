package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

// capSite is a call of Bounds.Clamp or Bounds.ClampInt in the hand-written
// code: where it is and what it caps with.
type capSite struct {
	file, fn, bounds string
}

// capSites lists every call of Clamp and ClampInt, and every function or
// method named like a clamp, in the repository's hand-written non-test Go
// files (the tests, the client libraries and generated files left out).
func capSites(t *testing.T, root string) (calls []capSite, clampFuncs []string) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case "sdk", "tests", "node_modules", ".git", "testdata":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || generated(t, path) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if strings.Contains(strings.ToLower(fd.Name.Name), "clamp") {
				clampFuncs = append(clampFuncs, rel+": "+fd.Name.Name)
			}
			ast.Inspect(fd, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Clamp" && sel.Sel.Name != "ClampInt") {
					return true
				}
				bounds := "?"
				if x, ok := sel.X.(*ast.SelectorExpr); ok {
					if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "cryptointel" {
						bounds = x.Sel.Name
					}
				}
				calls = append(calls, capSite{file: rel, fn: fd.Name.Name, bounds: bounds})
				return true
			})
		}
		return nil
	})
	require.NoError(t, err)
	return calls, clampFuncs
}

// TestLimitCapSites pins where `limit` (and every bounded argument) is
// capped, as docs/architecture.md's request path says: the bounds of
// limits.go are applied by Bounds.Clamp and Bounds.ClampInt only, never by
// a second clamp function; a GraphQL argument's bounds by its resolver, at
// one call site; a /v1 parameter's by parseValue, the route layer's one
// call site (the value its body echoes and its price reads); and nowhere
// else (not db, graph, access or mcp). The complexity estimates
// (resolvers/complexity.go) read the same bounds to price a document
// before it runs; they cap no value that is served. A new cap site fails
// here.
func TestLimitCapSites(t *testing.T) {
	t.Parallel()
	calls, clampFuncs := capSites(t, repoRoot(t))
	require.Equal(t, []string{"limits.go: Clamp", "limits.go: ClampInt"}, clampFuncs,
		"a clamp is Bounds.Clamp or Bounds.ClampInt (limits.go), never a second function")

	argBounds := map[string]bool{}
	for coord, b := range cryptointel.Limits {
		if strings.HasPrefix(coord, "GET ") {
			continue // REST-only: capped by its route
		}
		for name, v := range boundsByName() {
			if v == b {
				argBounds[name] = true
			}
		}
	}
	perBounds := map[string][]string{}
	var rest []string
	for _, c := range calls {
		where := c.file + " " + c.fn
		switch {
		case c.file == "resolvers/complexity.go":
			// estimates
		case strings.HasPrefix(c.file, "resolvers/"):
			require.True(t, argBounds[c.bounds], "%s caps with %s, which bounds no GraphQL argument", where, c.bounds)
			perBounds[c.bounds] = append(perBounds[c.bounds], where)
		case strings.HasPrefix(c.file, "rest/"):
			rest = append(rest, where)
		case c.file == "limits.go":
			// Clamp is ClampInt of its default
		default:
			t.Errorf("%s caps with %s: only the resolvers (a GraphQL argument) and parseValue (a /v1 parameter) cap", where, c.bounds)
		}
	}
	require.Equal(t, []string{"rest/call.go parseValue"}, rest, "the /v1 layer caps at one place: parseValue, with the bounds its parameter was declared with")
	names := make([]string, 0, len(argBounds))
	for name := range argBounds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		require.Len(t, perBounds[name], 1, "%s is capped at exactly one call site of the resolvers: %v", name, perBounds[name])
	}
	require.True(t, slices.Contains(perBounds["EventsFirst"], "resolvers/query.go Events"), "Query.events' first (/v1/latest's limit) is capped by the Events resolver: %v", perBounds["EventsFirst"])
}

// boundsByName maps the name of each bounds variable of limits.go to it.
func boundsByName() map[string]*cryptointel.Bounds {
	return map[string]*cryptointel.Bounds{
		"EventsFirst": &cryptointel.EventsFirst, "EventsOffset": &cryptointel.EventsOffset,
		"TopSignalsFirst": &cryptointel.TopSignalsFirst, "SignalsByCategoryFirst": &cryptointel.SignalsByCategoryFirst,
		"RadarByCategoryFirst": &cryptointel.RadarByCategoryFirst, "FeedFirst": &cryptointel.FeedFirst, "FeedOffset": &cryptointel.FeedOffset,
		"ResolveEntitiesFirst": &cryptointel.ResolveEntitiesFirst, "ResolveEntitiesOffset": &cryptointel.ResolveEntitiesOffset,
		"SearchEventsFirst": &cryptointel.SearchEventsFirst, "OrganizationsByNameFirst": &cryptointel.OrganizationsByNameFirst,
		"OrganizationsFirst": &cryptointel.OrganizationsFirst, "OrganizationsOffset": &cryptointel.OrganizationsOffset,
		"BriefFirst": &cryptointel.BriefFirst, "BriefsFirst": &cryptointel.BriefsFirst,
		"MarketViewsFirst": &cryptointel.MarketViewsFirst, "MarketViewsOffset": &cryptointel.MarketViewsOffset,
		"RelationshipsFirst": &cryptointel.RelationshipsFirst, "RelationshipsOffset": &cryptointel.RelationshipsOffset,
		"EntityEventsFirst": &cryptointel.EntityEventsFirst, "EntityEventsOffset": &cryptointel.EntityEventsOffset,
		"TimelineFirst": &cryptointel.TimelineFirst, "ContentFirst": &cryptointel.ContentFirst, "ContentOffset": &cryptointel.ContentOffset,
		"OrganizationEventsFirst": &cryptointel.OrganizationEventsFirst, "SignalHistoryDays": &cryptointel.SignalHistoryDays,
	}
}
