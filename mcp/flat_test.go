package mcp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/graph/jsonw"
)

// TestSameEventsAsTheFlatPass: events read against the last event's
// members (sameEvent) give the body, text and counts the flat pass gives
// reading each on its own, and the general pass too: lists of several
// events alike and unlike, at detail full and summary, with and without
// the legacy aliases, lists the text shows that are empty, null, or hold
// items that are not objects or lack a member, strings holding quotes,
// braces and the event marker, and a nested event.
func TestSameEventsAsTheFlatPass(t *testing.T) {
	lean := sampleEvent[:strings.Index(sampleEvent, `,"globalSummary"`)] + `,"matchedVia":"text"}`
	owners := `"owners":[{"id":1,"label":"Acme","type":"project","aliases":[]}]`
	evidence := `"evidence":[{"id":9,"content":"c","url":"https://x/9","timestamp":"2026-11-20T10:00:00.000Z"}]`
	variant := func(ev string, pairs ...string) string { return strings.NewReplacer(pairs...).Replace(ev) }
	events := []string{
		lean,
		variant(lean, `"id":7,`, `"id":8,`, `"title":"T <b>"`, `"title":"quote \" brace } ] marker \"latestEvidenceTimestamp\":"`),
		variant(lean, owners, `"owners":[{"id":1,"label":"Acme","type":"project","aliases":["A}","B\\\\"]},{"type":"token","aliases":[],"label":"X","id":2}]`),
		variant(lean, owners, `"owners":[]`, `"participants":[]`, `"participants":null`),
		variant(lean, owners, `"owners":[7,{"id":1}]`),
		variant(lean, evidence, `"evidence":[{"id":9,"content":"c ] }","timestamp":"t"},{"url":"https://x/10"},3]`),
		variant(lean, evidence, `"evidence":[]`, `"bullets":["b1"]`, `"bullets":[]`),
		variant(lean, evidence, `"evidence":[5,{"url":"u"}]`, `"significance":0.5`, `"significance":null`),
		variant(lean, `"bullets":["b1"]`, `"bullets":["a \" ], b",7,{"x":"]"},"c"]`),
		variant(lean, `"bullets":["b1"]`, `"bullets":null`),
		variant(lean, `"matchedVia":"text"`, `"matchedVia":"entity","matchType":"exact","matchedTerms":["x"],"alsoReportedAs":[]`),
		variant(lean, `"matchedVia":"text"`, `"matchedVia":"text","related":[`+lean+`]`),
		sampleEvent,
		variant(sampleEvent, `"id":7,`, `"id":9,`),
		lean,
	}
	var bodies []string
	for i := range events {
		for j := i; j < len(events); j++ {
			bodies = append(bodies, `{"limit":2,"data":[`+events[i]+`,`+events[j]+`,`+events[i]+`]}`+"\n")
		}
	}
	bodies = append(bodies, `{"query":"q","data":[`+strings.Join(events, ",")+`],"nested":{"organizations":[{"label":"A","radar":[`+lean+`,`+lean+`]}]}}`)
	walks := 0
	for _, body := range bodies {
		for _, summary := range []bool{false, true} {
			for _, text := range []bool{false, true} {
				sameEvents = false
				want, wantOK := walk([]byte(body), summary, text)
				flatEvents = false
				general, _ := walk([]byte(body), summary, text)
				flatEvents, sameEvents = true, true
				got, gotOK := walk([]byte(body), summary, text)
				require.Equal(t, wantOK, gotOK, body)
				require.Equal(t, string(want.body), string(got.body), body)
				require.Equal(t, string(want.text), string(got.text), body)
				require.Equal(t, want.count("data"), got.count("data"), body)
				require.Equal(t, string(general.body), string(got.body), body)
				require.Equal(t, string(general.text), string(got.text), body)
				walks++
			}
		}
	}
	require.Greater(t, walks, 300)
}

// TestSameEventsRead: the events after the first of a list are read by
// sameEvent (the test above would pass without it).
func TestSameEventsRead(t *testing.T) {
	body := latestBody()
	l := leaner{src: body, dst: body, alias: true, text: true, top: map[string]topMember{}}
	l.tx = append(l.tx, '"')
	i := strings.Index(string(body), `"data":[`) + len(`"data":[`)
	l.depth, l.n = 1, i // read in place: the bytes before it are the body's
	_, ok, done := l.sameEvent(i)
	require.False(t, ok || done, "no event read yet: nothing to compare with")
	end, ok, done := l.event(i, 0)
	require.True(t, ok && done)
	end, ok, done = l.sameEvent(end + 1)
	require.True(t, ok && done, "the second event is read against the first's members")
	require.Equal(t, byte(','), body[end])
}

// TestMarkers: the marker is found and counted as bytes.Contains and
// bytes.Count find and count it.
func TestMarkers(t *testing.T) {
	for _, b := range []string{"", `"latest`, `EvidenceTimestamp":`, eventMemberPrefix, `x"latestEvidenceTimestamp":"latestEvidenceTimestamp":`,
		`"latesEvidenceTimestamp": latestEvidenceTimestamp": "latestEvidenceTimestamp" "latestEvidenceTimestamp":1`, sampleEvent, string(latestBody())} {
		require.Equal(t, strings.Contains(b, eventMemberPrefix), hasEvents([]byte(b)), b)
		require.Equal(t, strings.Count(b, eventMemberPrefix), countMarkers([]byte(b)), b)
	}
}

// TestStringEndAsAReader: stringEnd finds the end a reader of the string
// finds, escapes included, whatever the string's length and wherever its
// quotes and backslashes fall (its first bytes are read eight at a time).
func TestStringEndAsAReader(t *testing.T) {
	reference := func(b []byte, i int) (int, bool) {
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return len(b), false
	}
	pieces := []string{"a", "é", `\"`, `\\`, `\n`, "<", "\x01", "ab"}
	n := 0
	for length := 0; length < 40; length++ {
		for seed := range 40 {
			var sb strings.Builder
			sb.WriteByte('"')
			for k := 0; sb.Len() < length+1; k++ {
				sb.WriteString(pieces[(seed*7+k*k*3+k)%len(pieces)])
			}
			body := sb.String()
			for _, tail := range []string{`"`, `"x":1}`, `","y":"z"}`, ``, `\"`} {
				b := []byte("xx" + body + tail)
				wantEnd, wantOK := reference(b, 2)
				gotEnd, gotOK := stringEnd(b, 2)
				require.Equal(t, wantOK, gotOK, "%q", b)
				if wantOK {
					require.Equal(t, wantEnd, gotEnd, "%q", b)
				}
				n++
			}
		}
	}
	require.Greater(t, n, 5000)
}

// TestElementSpansAsTheScan: a pass given the spans of the body's list
// elements (as a route called in process hands them over), all or some,
// writes what the pass without them writes.
func TestElementSpansAsTheScan(t *testing.T) {
	lean := sampleEvent[:strings.Index(sampleEvent, `,"globalSummary"`)] + `,"matchedVia":"text"}`
	two := strings.Replace(lean, `"evidence":[{"id":9,"content":"c","url":"https://x/9","timestamp":"2026-11-20T10:00:00.000Z"}]`,
		`"evidence":[{"id":9,"content":"c } ]","url":"https://x/9","timestamp":"t"},{"id":10,"content":"d \" {","url":"https://x/10"},7,{"x":[{"y":1}]}]`, 1)
	two = strings.Replace(two, `"participants":[]`, `"participants":[{"id":2,"label":"B","type":"token","aliases":["b }"]},{"type":"t","id":3,"label":"C"}]`, 1)
	for _, body := range []string{
		string(latestBody()),
		`{"limit":3,"data":[` + lean + `,` + two + `,` + two + `,` + lean + `]}` + "\n",
	} {
		spans := elementSpans([]byte(body))
		require.NotEmpty(t, spans)
		for _, summary := range []bool{false, true} {
			want, _ := walk([]byte(body), summary, true)
			for _, keep := range []func(int) bool{
				func(int) bool { return true },
				func(k int) bool { return k%2 == 0 },
				func(k int) bool { return k%3 != 1 },
			} {
				var some []jsonw.Span
				for k, s := range spans {
					if keep(k) {
						some = append(some, s)
					}
				}
				got, _ := walkInto([]byte(body), summary, true, nil, some)
				require.Equal(t, string(want.body), string(got.body))
				require.Equal(t, string(want.text), string(got.text))
			}
		}
	}
}

// elementSpans returns the spans of the object elements of every list in
// the compact JSON b, in the order they end.
func elementSpans(b []byte) []jsonw.Span {
	var spans []jsonw.Span
	var value func(i int) int
	value = func(i int) int {
		switch b[i] {
		case '{', '[':
			closing := byte('}')
			if b[i] == '[' {
				closing = ']'
			}
			list := b[i] == '['
			i++
			for b[i] != closing {
				if !list {
					i, _ = stringEnd(b, i)
					i++ // the colon
				}
				start := i
				i = value(i)
				if list && b[start] == '{' {
					spans = append(spans, jsonw.Span{Start: int32(start), End: int32(i)})
				}
				if b[i] == ',' {
					i++
				}
			}
			return i + 1
		}
		return valueEnd(b, i)
	}
	value(0)
	return spans
}

// TestElementSpansRead: sameEvent steps over the elements it has spans of.
func TestElementSpansRead(t *testing.T) {
	body := latestBody()
	spans := elementSpans(body)
	l := leaner{src: body, dst: body, alias: true, text: true, top: map[string]topMember{}, elements: spanCursor{spans: spans}}
	l.tx = append(l.tx, '"')
	i := strings.Index(string(body), `"data":[`) + len(`"data":[`)
	l.depth, l.n = 1, i
	end, ok, done := l.event(i, 0)
	require.True(t, ok && done)
	second := end + 1
	end, ok, done = l.sameEvent(second)
	require.True(t, ok && done)
	require.Equal(t, byte(','), body[end])
	require.Greater(t, l.elements.from, int32(second), "an element of the second event found by its span")
	require.Less(t, l.elements.to, int32(end))
	require.Equal(t, 2, l.lists.evidence)
}
