package main

import (
	"os"
	"testing"
)

// TestDocumentIsCommitted: sdk/openapi.json is the document the table
// builds, byte for byte. The routes' response schemas are derived from
// their operations at startup, so a change to an operation's selection
// that changes the documented shape fails here until the document (and
// the client libraries generated from it) are regenerated.
func TestDocumentIsCommitted(t *testing.T) {
	doc, err := document()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../sdk/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != string(committed) {
		t.Fatal("sdk/openapi.json is not the document the route table builds: run go generate ./tools/openapidoc and regenerate the client libraries")
	}
}
