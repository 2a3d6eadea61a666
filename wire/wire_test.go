package wire_test

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/wire"
)

// marshalStd is encoding/json's encoding of v, HTML-escaped or not, without
// the Encoder's trailing newline.
func marshalStd(t testing.TB, v any, escapeHTML bool) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var stringCases = []string{
	"", "plain", `quote " and \ backslash`, "<tag> & amp", "line\nbreak\ttab\r\b\f", "\x00\x01\x1f\x7f",
	"ünïcödé ✓", "sep\u2028para\u2029", "bad utf8 \xff\xfe end", "\xc3", "emoji 😀", "</script>",
}

// FuzzAppendString checks AppendString against encoding/json on any
// string, with and without HTML escaping.
func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, esc := range []bool{true, false} {
			require.Equal(t, string(marshalStd(t, s, esc)), string(wire.AppendString(nil, s, esc)), "escapeHTML=%v %q", esc, s)
		}
	})
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	cases := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 7.25, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789e15, math.MaxFloat64, math.SmallestNonzeroFloat64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		cases = append(cases, math.Float64frombits(rng.Uint64()), rng.NormFloat64()*math.Pow(10, float64(rng.IntN(60)-30)))
	}
	for _, f := range cases {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			_, err := wire.AppendFloat(nil, f)
			require.ErrorIs(t, err, wire.ErrUnsupportedValue)
			continue
		}
		got, err := wire.AppendFloat(nil, f)
		require.NoError(t, err)
		require.Equal(t, string(marshalStd(t, f, true)), string(got), "%v", f)
	}
	got, err := wire.AppendNullableFloat(nil, nil)
	require.NoError(t, err)
	require.Equal(t, "null", string(got))
}

func TestAppendTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 20, 10, 0, 0, 120_000_000, time.FixedZone("x", 3600))
	// The webhook's layout is time.Time's own JSON form (in UTC).
	for _, ns := range []int{0, 1, 120_000_000, 123_456_789, 999_999_999} {
		v := at.Add(time.Duration(ns)).UTC()
		got, err := wire.AppendTime(nil, v, wire.Webhook.TimeLayout)
		require.NoError(t, err)
		require.Equal(t, string(marshalStd(t, v, true)), string(got))
	}
	got, err := wire.AppendTime(nil, at, wire.API.TimeLayout)
	require.NoError(t, err)
	require.Equal(t, `"2026-11-20T09:00:00.120Z"`, string(got))
	_, err = wire.AppendTime(nil, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), wire.TimeLayout)
	require.ErrorIs(t, err, wire.ErrUnsupportedValue)
}

// stdEvent is the event as encoding/json writes it in an encoding, built
// from the tables by reflection, independently of the generated encoder:
// canonical members in table order, then the legacy aliases.
func stdEvent(t *testing.T, e *wire.Event, enc *wire.Encoding, onRequest bool) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteByte('{')
	var legacy bytes.Buffer
	for i, f := range wire.EventFields {
		if f.OnRequest && !onRequest {
			continue
		}
		v := fieldValue(t, e, f, enc)
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalStd(t, f.Name, true))
		b.WriteByte(':')
		b.Write(v)
		if f.Legacy != "" && enc.Legacy {
			legacy.WriteByte(',')
			legacy.Write(marshalStd(t, f.Legacy, true))
			legacy.WriteByte(':')
			legacy.Write(v)
		}
	}
	b.Write(legacy.Bytes())
	b.WriteByte('}')
	return b.Bytes()
}

func fieldValue(t *testing.T, e *wire.Event, f wire.Field, enc *wire.Encoding) []byte {
	t.Helper()
	switch f.Name {
	case "id":
		return marshalStd(t, e.ID, enc.EscapeHTML)
	case "title":
		return marshalStd(t, e.Title, enc.EscapeHTML)
	case "eventCategory":
		return marshalStd(t, e.EventCategory, enc.EscapeHTML)
	case "eventSubcategory":
		return marshalStd(t, e.EventSubcategory, enc.EscapeHTML)
	case "summary":
		return marshalStd(t, e.Summary, enc.EscapeHTML)
	case "bullets":
		return marshalStd(t, wire.NonNil(e.Bullets), enc.EscapeHTML)
	case "owners", "participants":
		refs := e.Owners
		if f.Name == "participants" {
			refs = e.Participants
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i, r := range refs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"id":` + string(marshalStd(t, r.ID, true)) + `,"label":` + string(marshalStd(t, r.Label, enc.EscapeHTML)) +
				`,"type":` + string(marshalStd(t, r.Type, enc.EscapeHTML)) + `,"aliases":` + string(marshalStd(t, wire.NonNil(r.Aliases), enc.EscapeHTML)) + `}`)
		}
		b.WriteByte(']')
		return b.Bytes()
	case "evidence":
		var b bytes.Buffer
		b.WriteByte('[')
		for i, x := range e.Evidence {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"id":` + string(marshalStd(t, x.ID, true)) + `,"content":` + string(marshalStd(t, x.Content, enc.EscapeHTML)) +
				`,"url":` + string(marshalStd(t, x.URL, enc.EscapeHTML)) + `,"timestamp":"` + x.Timestamp.UTC().Format(enc.TimeLayout) + `"}`)
		}
		b.WriteByte(']')
		return b.Bytes()
	case "latestEvidenceTimestamp":
		return []byte(`"` + e.LatestEvidenceTimestamp.UTC().Format(enc.TimeLayout) + `"`)
	case "significance":
		return marshalStd(t, e.Significance, enc.EscapeHTML)
	}
	t.Fatalf("the test does not know field %q: add it here", f.Name)
	return nil
}

func sampleEvent() *wire.Event {
	sig := 7.25
	at := time.Date(2026, 11, 20, 10, 0, 0, 123_456_789, time.UTC)
	return &wire.Event{
		ID: 42, Title: `<b>"T"</b> & co` + "\u2028", EventCategory: "funding", EventSubcategory: "grants",
		Summary: "S\nline", Bullets: []string{"a", "b <c>"},
		Owners:                  []wire.EntityRef{{ID: 1, Label: "A&B", Type: "project", Aliases: []string{"AB"}}, {ID: 2, Label: "C", Type: "fund"}},
		Participants:            nil,
		Evidence:                []wire.Evidence{{ID: 7, Content: "post <1>", URL: "https://x/?a=1&b=2", Timestamp: at}},
		LatestEvidenceTimestamp: at, Significance: &sig,
	}
}

// TestAppendJSONMatchesTheTables checks the generated JSON encoder of every
// JSON encoding against an encoding built from the tables with
// encoding/json.
func TestAppendJSONMatchesTheTables(t *testing.T) {
	t.Parallel()
	e := sampleEvent()
	for _, enc := range []*wire.Encoding{&wire.API, &wire.Webhook, &wire.JSONL} {
		for _, onRequest := range []bool{true, false} {
			got, err := e.AppendJSON(nil, enc, onRequest)
			require.NoError(t, err)
			require.True(t, json.Valid(got), "%s", got)
			require.Equal(t, string(stdEvent(t, e, enc, onRequest)), string(got), "%s onRequest=%v", enc.Name, onRequest)
		}
	}
	nan := math.NaN()
	e.Significance = &nan
	_, err := e.AppendJSON(nil, &wire.Webhook, true)
	require.ErrorIs(t, err, wire.ErrUnsupportedValue)
}

func TestAppendCSV(t *testing.T) {
	t.Parallel()
	e := sampleEvent()
	var sb strings.Builder
	rec := e.AppendCSV(nil, &sb)
	require.Len(t, wire.EventCSVHeader, len(wire.EventFields))
	for i, f := range wire.EventFields {
		require.Equal(t, f.Name, wire.EventCSVHeader[i])
	}
	require.Equal(t, []string{"42", e.Title, "funding", "grants", "S\nline", "a | b <c>", "1:A&B|2:C", "", "7:https://x/?a=1&b=2",
		"2026-11-20T10:00:00.123Z", "7.25"}, rec)
	e.Significance = nil
	require.Equal(t, "", e.AppendCSV(nil, &sb)[10])
}

// TestTables checks the tables' own rules: unique names and aliases,
// Go names, an event marker, encodings that differ only where said.
func TestTables(t *testing.T) {
	t.Parallel()
	for _, o := range wire.Objects {
		seen := map[string]bool{}
		for _, f := range o.Fields {
			for _, n := range []string{f.Name, f.Legacy} {
				if n == "" {
					continue
				}
				require.False(t, seen[n], "%s: %s twice", o.Name, n)
				seen[n] = true
			}
			require.NotEmpty(t, f.Description, "%s.%s", o.Name, f.Name)
			require.NotEmpty(t, f.Source, "%s.%s", o.Name, f.Name)
		}
	}
	require.Equal(t, "ID", wire.EventFields[0].GoName())
	require.Equal(t, "LatestEvidenceTimestamp", wire.Field{Name: "latestEvidenceTimestamp"}.GoName())
	require.Equal(t, time.RFC3339Nano, wire.Webhook.TimeLayout, "webhooks keep full precision")
	for _, enc := range wire.Encodings {
		if enc != &wire.Webhook {
			require.Equal(t, wire.TimeLayout, enc.TimeLayout, "%s writes the API's instants", enc.Name)
		}
	}
}

// TestGeneratedUpToDate regenerates event_gen.go and the /v1 fragments into
// a temporary directory and compares: the generated code is the tables'.
func TestGeneratedUpToDate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "event_gen.go")
	run := func(args ...string) {
		cmd := exec.Command("go", append([]string{"run", "./gen"}, args...)...)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
	}
	run("-o", out)
	want, err := os.ReadFile(out)
	require.NoError(t, err)
	got, err := os.ReadFile("event_gen.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "event_gen.go is stale: run go generate ./wire")

	frag := filepath.Join(dir, "fragments")
	require.NoError(t, os.Mkdir(frag, 0o755))
	run("-fragments", frag)
	entries, err := os.ReadDir(frag)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(frag, e.Name()))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("..", "rest", "ops", "fragments", e.Name()))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "rest/ops/fragments/%s is stale: run go generate ./rest", e.Name())
	}
}

// TestAppendTimeLayout: the API's instant form is written as
// t.UTC().AppendFormat(TimeLayout) writes it, whatever the zone, the
// sub-millisecond part or the year.
func TestAppendTimeLayout(t *testing.T) {
	t.Parallel()
	zone := time.FixedZone("x", -5*3600-30*60)
	for _, tm := range []time.Time{
		time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, zone),
		time.Date(1, 1, 1, 0, 0, 0, 1_000_000, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 123_456_789, time.UTC),
		time.Date(12345, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-3, 1, 1, 0, 0, 0, 0, time.UTC),
		{},
	} {
		require.Equal(t, tm.UTC().Format(wire.TimeLayout), string(wire.AppendTimeLayout(nil, tm)), tm.String())
	}
}
