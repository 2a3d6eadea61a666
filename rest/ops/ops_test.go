package ops

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestExecutableStripsTheFacade: the document the executor runs has no
// facade directive and no @param field, and one that still holds a facade
// directive fails the load instead of reaching the executor.
func TestExecutableStripsTheFacade(t *testing.T) {
	src := `query Q($id: Int!) {
  limit @param
  data: entity(id: $id) @notFound(resource: "Entity") @flatten {
    ...EntitySummaryFields @group(key: "entity")
    # Newest first.
    events @nonNull @schema(name: "X") {
      id
    }
  }
}
`
	got := executable(src)
	for _, d := range FacadeDirectives {
		if strings.Contains(got, "@"+d) {
			t.Fatalf("@%s left in %s", d, got)
		}
	}
	if strings.Contains(got, "limit") {
		t.Fatalf("the @param field is left in %s", got)
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: got})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkExecutable("q", doc); err != nil {
		t.Fatal(err)
	}

	// A facade directive that reached the executable document fails.
	doc, err = parser.ParseQuery(&ast.Source{Input: src})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkExecutable("q", doc); err == nil {
		t.Fatal("a document with facade directives passed")
	}
}

// TestLoadKeepsTheShape: every operation loads with its shape (directives
// and comments) beside the executable document.
func TestLoadKeepsTheShape(t *testing.T) {
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	feed := all["feed"]
	if feed == nil || feed.Shape == nil || !strings.Contains(feed.Query, "nextCursor") || strings.Contains(feed.Query, "@flatten") {
		t.Fatalf("feed loads without its shape or with its facade: %+v", feed)
	}
}
