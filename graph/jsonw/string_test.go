package jsonw

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
)

// FuzzString: String writes gqlgen's MarshalString bytes, and under HTML
// what encoding/json's HTML-safe compaction makes of them.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "tab\there\nnew\rline\x01\x1f", "<b>&amp;</b>", "line\u2028sep\u2029end", "\xe2\x80", "\xff\xfe invalid", "é – ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		graphql.MarshalString(s).MarshalGQL(&want)
		var w Writer
		w.String(s)
		require.Equal(t, want.String(), string(w.B))
		var html bytes.Buffer
		json.HTMLEscape(&html, want.Bytes())
		h := Writer{HTML: true}
		h.String(s)
		require.Equal(t, html.String(), string(h.B))
	})
}
