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

// capSite is a call that caps an integer argument in the hand-written
// code: of Bounds.Clamp or Bounds.ClampInt, or of graph.Bound (the cap of
// a GraphQL argument); where it is and the bounds of limits.go it caps
// with ("?" when they are not named there).
type capSite struct {
	file, fn, bounds string
	bound            bool // a call of graph.Bound
}

// boundsName is the name of the bounds variable of limits.go that e
// (cryptointel.X or &cryptointel.X) names, else "?".
func boundsName(e ast.Expr) string {
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = u.X
	}
	if x, ok := e.(*ast.SelectorExpr); ok {
		if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "cryptointel" {
			return x.Sel.Name
		}
	}
	return "?"
}

// capSites lists every call of Clamp, ClampInt and graph.Bound, and every
// function or method named like a clamp, in the repository's hand-written
// non-test Go files (the tests, the client libraries and generated files
// left out).
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
				if !ok {
					return true
				}
				switch {
				case sel.Sel.Name == "Clamp" || sel.Sel.Name == "ClampInt":
					calls = append(calls, capSite{file: rel, fn: fd.Name.Name, bounds: boundsName(sel.X)})
				case sel.Sel.Name == "Bound" && len(call.Args) == 3:
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "graph" {
						calls = append(calls, capSite{file: rel, fn: fd.Name.Name, bounds: boundsName(call.Args[1]), bound: true})
					}
				}
				return true
			})
		}
		return nil
	})
	require.NoError(t, err)
	return calls, clampFuncs
}

// TestLimitCapSites pins that `limit` (and every bounded argument) is
// capped once, as docs/architecture.md's request path says. The bounds of
// limits.go are applied by Bounds.Clamp and Bounds.ClampInt only, never by
// a second clamp function. An argument that reaches a resolver — from a
// /graphql document or from a /v1 parameter, which the route only parses
// (rest.Route.resolverCaps) — is capped by graph.Bound, called at exactly
// one site of the resolvers per bounds: the value served, recorded for
// the /v1 body to echo. parseValue caps only the parameters no resolver
// sees (handler routes: keys, webhook deliveries, exports; a value a
// Prepare maps itself). Nothing else caps (not db, access, mcp, nor a
// second site in graph or rest). The complexity estimates
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
	var clamps []string
	for _, c := range calls {
		where := c.file + " " + c.fn
		switch {
		case c.bound:
			require.True(t, strings.HasPrefix(c.file, "resolvers/") && c.file != "resolvers/complexity.go",
				"%s calls graph.Bound: only a resolver caps a GraphQL argument", where)
			require.True(t, argBounds[c.bounds], "%s caps with %s, which bounds no GraphQL argument", where, c.bounds)
			perBounds[c.bounds] = append(perBounds[c.bounds], where)
		case c.file == "resolvers/complexity.go":
			// estimates
		case c.file == "limits.go":
			// Clamp is ClampInt of its default
		default:
			clamps = append(clamps, where)
		}
	}
	require.Equal(t, []string{"graph/bounded.go Bound", "rest/call.go parseValue"}, clamps,
		"a served value is capped by graph.Bound (a resolver's argument) or parseValue (a /v1 parameter no resolver sees), nowhere else")
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
