package rest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithLegacyAliases(t *testing.T) {
	t.Parallel()

	full := `{"id":1,"title":"T","summary":"S","bullets":["a"],"owners":[{"id":2,"label":"O"}],` +
		`"participants":[],"evidence":[{"id":3,"content":"c\"}"}],"latestEvidenceTimestamp":"2026-11-20T10:00:00.000Z","significance":0.5}`
	fullOut := `{"id":1,"title":"T","summary":"S","bullets":["a"],"owners":[{"id":2,"label":"O"}],` +
		`"participants":[],"evidence":[{"id":3,"content":"c\"}"}],"latestEvidenceTimestamp":"2026-11-20T10:00:00.000Z","significance":0.5,` +
		`"globalSummary":"S","bulletSummary":["a"],"eventOwner":[{"id":2,"label":"O"}],"eventParticipants":[],` +
		`"posts":[{"id":3,"content":"c\"}"}],"latestPostTimestamp":"2026-11-20T10:00:00.000Z","signal":0.5}`

	tests := []struct {
		name, in, want string
	}{
		{"no event", `{"data":{"entity":{"id":1,"aliases":["x"]}}}`, `{"data":{"entity":{"id":1,"aliases":["x"]}}}`},
		{"full event", full, fullOut},
		{"events in a list in an object", `{"events":{"nodes":[` + full + `,` + full + `],"limit":2}}`,
			`{"events":{"nodes":[` + fullOut + `,` + fullOut + `],"limit":2}}`},
		{"compact event", `{"id":1,"summary":"S","latestEvidenceTimestamp":"t","significance":null}`,
			`{"id":1,"summary":"S","latestEvidenceTimestamp":"t","significance":null,"globalSummary":"S","latestPostTimestamp":"t","signal":null}`},
		{"members after significance stay after the aliases", `{"summary":"S","latestEvidenceTimestamp":"t","significance":1,"sourceType":"radar_event"}`,
			`{"summary":"S","latestEvidenceTimestamp":"t","significance":1,"globalSummary":"S","latestPostTimestamp":"t","signal":1,"sourceType":"radar_event"}`},
		{"no significance: after the marker", `{"latestEvidenceTimestamp":"t","title":"x"}`,
			`{"latestEvidenceTimestamp":"t","latestPostTimestamp":"t","title":"x"}`},
		{"a selected legacy field is not repeated", `{"latestEvidenceTimestamp":"t","significance":2,"signal":2}`,
			`{"latestEvidenceTimestamp":"t","significance":2,"latestPostTimestamp":"t","signal":2}`},
		{"a brief's signal list and counts are not events", `{"brief":{"signal":[{"latestEvidenceTimestamp":"t"}],"counts":{"signal":1}}}`,
			`{"brief":{"signal":[{"latestEvidenceTimestamp":"t","latestPostTimestamp":"t"}],"counts":{"signal":1}}}`},
		{"the marker inside a string is no event", `{"title":"\"latestEvidenceTimestamp\":","x":[]}`, `{"title":"\"latestEvidenceTimestamp\":","x":[]}`},
		{"a source after the aliases", `{"latestEvidenceTimestamp":"t","significance":1,"summary":"S"}`,
			`{"latestEvidenceTimestamp":"t","significance":1,"globalSummary":"S","latestPostTimestamp":"t","signal":1,"summary":"S"}`},
		{"null data", `null`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := withLegacyAliases([]byte(tt.in))
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
			require.True(t, json.Valid(got))
		})
	}

	t.Run("data without events is returned as it is", func(t *testing.T) {
		t.Parallel()
		in := []byte(`{"a":[1,2,{"b":"c"}]}`)
		got, err := withLegacyAliases(in)
		require.NoError(t, err)
		require.Same(t, &in[0], &got[0])
	})

	t.Run("not compact JSON is an error", func(t *testing.T) {
		t.Parallel()
		for _, in := range []string{
			`{"latestEvidenceTimestamp": "t"}`,
			`{"latestEvidenceTimestamp":"t"`,
			`{"latestEvidenceTimestamp":"t"}x`,
			`[{"latestEvidenceTimestamp":"t"} ]`,
		} {
			_, err := withLegacyAliases([]byte(in))
			require.ErrorIs(t, err, errNotCompact, in)
		}
	})
}

// FuzzWithLegacyAliases checks on any JSON document that the result is
// valid JSON, unchanged without events, and that in every event object each
// legacy member equals its canonical one.
func FuzzWithLegacyAliases(f *testing.F) {
	f.Add(`{"nodes":[{"summary":"S","bullets":["a"],"owners":[{"id":1}],"latestEvidenceTimestamp":"t","significance":0.1}]}`)
	f.Add(`[{"latestEvidenceTimestamp":"t","evidence":[{"latestEvidenceTimestamp":"u"}]}]`)
	f.Add(`{"signal":[],"counts":{"signal":0}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(doc)) != nil {
			return
		}
		in := buf.Bytes()
		out, err := withLegacyAliases(in)
		require.NoError(t, err, "%s", in)
		require.True(t, json.Valid(out), "%s", out)
		if !bytes.Contains(in, eventMarker) {
			require.Equal(t, string(in), string(out))
			return
		}
		var v any
		require.NoError(t, json.Unmarshal(out, &v))
		checkLegacyAliases(t, in, v)
	})
}

// checkLegacyAliases checks that every event object in v has each legacy
// member whose canonical member it has, with the same value unless the
// input document named that legacy member itself.
func checkLegacyAliases(t *testing.T, in []byte, v any) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			checkLegacyAliases(t, in, e)
		}
	case map[string]any:
		if _, ok := x[eventMarkerKey]; ok {
			for _, a := range legacyAliases {
				c, ok := x[a.canonical]
				if !ok {
					continue
				}
				require.Contains(t, x, a.legacy)
				if !bytes.Contains(in, []byte(`"`+a.legacy+`"`)) {
					require.Equal(t, c, x[a.legacy], a.legacy)
				}
			}
		}
		for _, e := range x {
			checkLegacyAliases(t, in, e)
		}
	}
}

func BenchmarkWithLegacyAliases(b *testing.B) {
	ev := `{"id":1,"title":"A partnership","eventCategory":"partnership","eventSubcategory":"integration","summary":"` +
		strings.Repeat("s", 300) + `","bullets":["one","two","three"],"owners":[{"id":2,"label":"O","type":"project","aliases":["o"]}],` +
		`"participants":[{"id":3,"label":"P","type":"project","aliases":[]}],"evidence":[{"id":4,"content":"` + strings.Repeat("c", 400) +
		`","url":"https://x.example/1","timestamp":"2026-11-20T10:00:00.000Z"},{"id":5,"content":"` + strings.Repeat("c", 400) +
		`","url":"https://x.example/2","timestamp":"2026-11-20T10:00:00.000Z"}],"latestEvidenceTimestamp":"2026-11-20T10:00:00.000Z","significance":0.7}`
	page := []byte(`{"events":{"window":"24h","nodes":[` + strings.Repeat(ev+",", 24) + ev + `]}}`)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := withLegacyAliases(page); err != nil {
			b.Fatal(err)
		}
	}
}
