package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigReferenceIsCurrent holds docs/operations/configuration.md to
// Config: a setting added, removed, renamed, re-documented or re-defaulted
// without `go generate ./tools/configdoc` fails here.
func TestConfigReferenceIsCurrent(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "docs", "operations", "configuration.md"))
	if err != nil {
		t.Fatalf("reading the configuration reference: %v (run go generate ./tools/configdoc)", err)
	}
	if want := ConfigReference(); string(got) != want {
		t.Fatalf("docs/operations/configuration.md is not what app.Config generates: run go generate ./tools/configdoc")
	}
	for _, s := range ConfigSettings() {
		if !strings.Contains(string(got), "## "+s.Env+"\n") {
			t.Errorf("the reference lacks %s", s.Env)
		}
		if s.Doc == "" {
			t.Errorf("Config.%s has no doc comment", s.Field)
		}
	}
}
