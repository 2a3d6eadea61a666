package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

const sampleEvent = `{"id":7,"title":"T <b>","eventCategory":"funding","eventSubcategory":"seed","summary":"S","bullets":["b1"],` +
	`"owners":[{"id":1,"label":"Acme","type":"project","aliases":[]}],"participants":[],"evidence":[{"id":9,"content":"c","url":"https://x/9","timestamp":"2026-11-20T10:00:00.000Z"}],` +
	`"latestEvidenceTimestamp":"2026-11-20T10:00:00.000Z","significance":0.5,` +
	`"globalSummary":"S","bulletSummary":["b1"],"eventOwner":[{"id":1,"label":"Acme","type":"project","aliases":[]}],"eventParticipants":[],` +
	`"posts":[{"id":9,"content":"c","url":"https://x/9","timestamp":"2026-11-20T10:00:00.000Z"}],"latestPostTimestamp":"2026-11-20T10:00:00.000Z","signal":0.5,"matchedVia":"text"}`

func TestLeanDropsAliasesAndProjectsSummaries(t *testing.T) {
	body := []byte(`{"query":"q","data":[` + sampleEvent + `],"nested":{"organizations":[{"label":"A","radar":[` + sampleEvent + `]}]}}` + "\n")
	full := leanBody(body, false)
	var m map[string]any
	require.NoError(t, json.Unmarshal(full, &m), "%s", full)
	ev := m["data"].([]any)[0].(map[string]any)
	for _, legacy := range []string{"globalSummary", "bulletSummary", "eventOwner", "eventParticipants", "posts", "latestPostTimestamp", "signal"} {
		require.NotContains(t, ev, legacy)
	}
	require.Contains(t, ev, "evidence")
	require.Equal(t, "text", ev["matchedVia"], "members that are not event fields stay")
	require.Contains(t, string(full), `"title":"T <b>"`, "values are copied byte for byte")
	require.NotContains(t, string(full), "eventOwner", "nested events too")

	summary := leanBody(body, true)
	require.NoError(t, json.Unmarshal(summary, &m))
	ev = m["data"].([]any)[0].(map[string]any)
	require.ElementsMatch(t, []string{"id", "title", "eventCategory", "eventSubcategory", "summary", "latestEvidenceTimestamp", "significance", "matchedVia"}, keys(ev))
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRenderEvents(t *testing.T) {
	res := leanBody([]byte(`{"limit":1,"data":[`+sampleEvent+`],"x":{"organizations":[{"label":"Acme","radar":[`+sampleEvent+`]}]}}`), false)
	text := renderText(res)
	event := "1. #7 · 2026-11-20 10:00Z · funding/seed · significance 0.5 · matchedVia text\n   T <b>\n   S\n   owners: Acme (1)\n   • b1\n   evidence: 1 post, newest https://x/9\n"
	require.Equal(t, "limit: 1\ndata:\n"+event+"x.organizations[0].label: Acme\nx.organizations[0].radar:\n"+event, text)
	two := strings.Replace(sampleEvent, `"evidence":[{`, `"evidence":[{"url":"https://x/8"},{`, 1)
	require.Contains(t, renderText([]byte(`{"data":[`+two+`]}`)), "   evidence: 2 posts, newest https://x/8\n")
	require.Nil(t, render([]byte(`{"a":1}`)), "a result without events has no rendering (its text is its JSON)")
	summary, _ := walk([]byte(`{"data":[`+sampleEvent+`]}`), true, true)
	require.NotContains(t, string(summary.text), "owners", "the text shows what the result keeps")
	quoted, _ := walk([]byte(`{"note":"a \"b\"\n","n":{"x":"y"},"data":[`+sampleEvent+`]}`), false, true)
	require.True(t, strings.HasPrefix(unquote(append(append([]byte{'"'}, quoted.text...), '"')), "note: a \"b\"\n\nn: {\"x\":\"y\"}\ndata:\n1. #7"),
		"escaped once: %s", quoted.text)
	require.Equal(t, "a\n\\", unquote([]byte(`"`+string(trimNewlines([]byte(`a\n\\\n\n`)))+`"`)), "only escaped newlines are trimmed")
	require.Equal(t, `a\\n`, string(trimNewlines([]byte(`a\\n`))), "an escaped backslash and an n are no newline")
	require.Equal(t, 1, summary.count("data"))
}

func TestBoundKeepsTheFirstItemsThatFit(t *testing.T) {
	items := make([]string, 50)
	for i := range items {
		items[i] = `{"i":` + strings.Repeat("1", 1) + `,"pad":"` + strings.Repeat("x", 100) + `"}`
	}
	body := []byte(`{"limit":50,"data":[` + strings.Join(items, ",") + `]}`)
	out, note := bound(body, 1000)
	require.LessOrEqual(t, len(out), 1000)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	n := len(m["data"].([]any))
	require.Greater(t, n, 0)
	require.Contains(t, note, "keeps its first "+itoa(n)+" items")
	same, note := bound(body, len(body))
	require.Equal(t, body, same)
	require.Empty(t, note)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestBridgeEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8080":       "http://localhost:8080/mcp",
		"https://api.example.com/":    "https://api.example.com/mcp",
		"https://api.example.com/mcp": "https://api.example.com/mcp",
		"https://example.com/x/mcp":   "https://example.com/x/mcp",
	} {
		got, err := bridgeEndpoint(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, bad := range []string{"", "localhost:8080", "ftp://x", "http://"} {
		_, err := bridgeEndpoint(bad)
		require.Error(t, err, bad)
	}
	require.Equal(t, "https://api.example.com/mcp/x402", keylessEndpoint("https://api.example.com/mcp"))
	require.Equal(t, "https://api.example.com/mcp/x402", keylessEndpoint("https://api.example.com/mcp/x402"))
}

func TestSSEData(t *testing.T) {
	got := sseData([]byte("event: message\nid: 1\ndata: {\"a\":1}\n\ndata: {\"b\":\ndata: 2}\r\n\r\n"))
	require.Equal(t, []string{`{"a":1}`, "{\"b\":\n2}"}, []string{string(got[0]), string(got[1])})
}

func TestParseArgs(t *testing.T) {
	lo, hi := 1, 20
	spec := []*argSpec{
		{name: "query", param: "query", kind: "string", required: true},
		{name: "limit", param: "limit", kind: "integer", min: &lo, max: &hi, def: 10},
		{name: "ids", param: "ids", kind: "integers", maxItems: 2},
	}
	a, err := parseArgs("t", spec, json.RawMessage(`{"query":"x","limit":3.0,"ids":[1,2]}`))
	require.NoError(t, err)
	require.Equal(t, 3, a.int("limit"))
	require.Equal(t, "1,2", a.raw("ids"))
	require.Equal(t, map[string]string{"query": "x", "limit": "3", "ids": "1,2"}, a.params("query", "limit", "ids"))
	a, err = parseArgs("t", spec, json.RawMessage(`{"query":"x","limit":null}`))
	require.NoError(t, err)
	require.Equal(t, 10, a.int("limit"), "null is absent: the default")
	require.Equal(t, map[string]string{"query": "x"}, a.params("query", "limit"), "a default is the route's to apply")
	a, err = parseArgs("t", spec, json.RawMessage(`{"query":"x","limit":2147483648}`))
	require.NoError(t, err, "out of range, not \"not an integer\"")
	require.Equal(t, 20, a.int("limit"), "capped, as the route caps it")
	a, err = parseArgs("t", spec, json.RawMessage(`{"query":"x","limit":-5}`))
	require.NoError(t, err)
	require.Equal(t, 1, a.int("limit"), "raised to the minimum, as the route does")
	_, err = parseArgs("t", spec, json.RawMessage(`"x"`))
	require.EqualError(t, err, "arguments must be a JSON object")
	_, err = parseArgs("t", spec, json.RawMessage(`{"query":"x"`))
	require.EqualError(t, err, "arguments must be a JSON object")
	for raw, want := range map[string]string{`{"query":"a","query":"b"}`: "b", `{"query":"café","query":"c\u00e9"}`: "cé", `{"qu\u0065ry":"d"}`: "d"} {
		a, err = parseArgs("t", spec, json.RawMessage(raw))
		require.NoError(t, err, raw)
		require.Equal(t, want, a.raw("query"), "as json.Unmarshal reads %s", raw)
	}
}

func TestStringEnd(t *testing.T) {
	for in, want := range map[string]int{`"a"x`: 3, `"a\"b"x`: 6, `"a\\"x`: 5, `"a\\\"b"x`: 8, `""`: 2} {
		got, ok := stringEnd([]byte(in), 0)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	_, ok := stringEnd([]byte(`"abc\"`), 0)
	require.False(t, ok)
}

// TestTextReadsMembersAsJSONDoes: the text's readers of list items and
// object members (eachItem, firstItem, memberValue) find what a JSON
// parser finds, escapes and nesting included.
func TestTextReadsMembersAsJSONDoes(t *testing.T) {
	lists := []string{
		`[]`, `["a"]`, `["a\"],b","c\\"]`, `[{"id":1,"label":"A \"x\" ]}","aliases":["[",{"k":"}"}]},{"label":"B","id":22}]`,
		`[1,true,null,{"a":[[],{}]},"\u003c"]`,
	}
	for _, raw := range lists {
		var want []string
		gjson.Parse(raw).ForEach(func(_, v gjson.Result) bool { want = append(want, v.Raw); return true })
		var got []string
		eachItem([]byte(raw), func(item []byte) { got = append(got, string(item)) })
		require.Equal(t, want, got, raw)
		got = nil
		eachItemWith([]byte(raw), "label", "id", func(item, label, id []byte) {
			got = append(got, string(item))
			require.Equal(t, string(memberValue(item, "label")), string(label), item)
			require.Equal(t, string(memberValue(item, "id")), string(id), item)
		})
		require.Equal(t, want, got, raw)
		for _, item := range want {
			for _, name := range []string{"id", "label", "aliases", "k", "url"} {
				v := gjson.Get(item, name)
				if !gjson.Parse(item).IsObject() || !v.Exists() {
					require.Nil(t, memberValue([]byte(item), name), "%s in %s", name, item)
					continue
				}
				require.Equal(t, v.Raw, string(memberValue([]byte(item), name)), "%s in %s", name, item)
			}
		}
	}
	require.Equal(t, `A \"x\" ]}`, string(appendText(nil, memberValue([]byte(`{"label":"A \"x\" ]}"}`), "label"))), "as escaped as it came")
	require.Equal(t, `{\"k\":\"}\"}`, string(appendText(nil, []byte(`{"k":"}"}`))), "another value as its JSON, escaped")
}

// renderText is the text render writes for result, unescaped.
func renderText(result []byte) string {
	return unquote(append(append([]byte{'"'}, render(result)...), '"'))
}

// TestLeanBodyReadInPlace: at detail full, a body in the lean shape (no
// legacy alias, as the tools ask their routes for) is its own structured
// content, read in place and not copied, with the same text as a body
// the pass has to rewrite.
func TestLeanBodyReadInPlace(t *testing.T) {
	lean := sampleEvent[:strings.Index(sampleEvent, `,"globalSummary"`)] + `,"matchedVia":"text"}`
	body := []byte(`{"limit":1,"data":[` + lean + `]}` + "\n")
	r, ok := walk(body, false, true)
	require.True(t, ok)
	require.Equal(t, string(bytes.TrimSpace(body)), string(r.body))
	require.Same(t, &body[0], &r.body[0], "read in place")
	src := []byte(`{"limit":1,"data":[` + sampleEvent + `]}`)
	withLegacy, _ := walk(src, false, true)
	require.NotSame(t, &src[0], &withLegacy.body[0], "a body with aliases to drop is copied")
	require.Equal(t, string(r.body), string(withLegacy.body))
	require.Equal(t, string(withLegacy.text), string(r.text))
	require.Equal(t, 1, r.count("data"))
	hinted := withMember(r.body, "hint", "h")
	require.Equal(t, string(bytes.TrimSpace(body)), string(r.body), "adding the hint leaves the route's body as it was")
	require.True(t, strings.HasSuffix(string(hinted), `,"hint":"h"}`))
}

// TestFlatEventsAsTheGeneralPass: an event copied flat, without entering
// its values, gives the body and text the general pass gives, and an
// event holding another event under a member the wire table does not name
// is left to the general pass.
func TestFlatEventsAsTheGeneralPass(t *testing.T) {
	lean := sampleEvent[:strings.Index(sampleEvent, `,"globalSummary"`)] + `,"matchedVia":"text"}`
	nested := lean[:len(lean)-1] + `,"related":[` + sampleEvent + `]}`
	bodies := []string{
		`{"limit":1,"data":[` + sampleEvent + `]}`,
		`{"limit":2,"data":[` + lean + `,` + sampleEvent + `]}` + "\n",
		`{"query":"q","data":[` + lean + `],"nested":{"organizations":[{"label":"A","radar":[` + sampleEvent + `]}]}}`,
		`{"data":[` + nested + `]}`,
		`{"data":[{"id":1,"title":"not an event","x":[{"a":"b"}]}]}`,
		`{"data":[` + strings.Replace(lean, `"evidence":[{`, `"evidence":[{"x":1},{`, 1) + `]}`,
		`{"data":[` + strings.Replace(lean, `"owners":[{"id":1,"label":"Acme","type":"project","aliases":[]}]`, `"owners":null`, 1) + `,` +
			strings.Replace(lean, `"participants":[]`, `"participants":[{"id":2,"type":"token"},{"label":"B \"b\"","id":3}]`, 1) + `]}`,
		`{"data":[` + strings.Replace(strings.Replace(lean, `"owners":[{"id":1,"label":"Acme","type":"project","aliases":[]}]`, `"owners":7`, 1),
			`"participants":[]`, `"participants":[{"label":"C","id":4,"label":"D"}]`, 1) + `]}`,
		`{"data":[` + strings.Replace(lean, `"evidence":[{"id":9,"content":"c","url":"https://x/9","timestamp":"2026-11-20T10:00:00.000Z"}]`, `"evidence":[]`, 1) + `,` +
			strings.Replace(lean, `"evidence":[{"id":9,"content":"c","url":"https://x/9","timestamp":"2026-11-20T10:00:00.000Z"}]`, `"evidence":null`, 1) + `]}`,
	}
	for _, body := range bodies {
		for _, summary := range []bool{false, true} {
			for _, text := range []bool{false, true} {
				flatEvents = false
				want, wantOK := walk([]byte(body), summary, text)
				flatEvents = true
				got, gotOK := walk([]byte(body), summary, text)
				require.Equal(t, wantOK, gotOK, body)
				require.Equal(t, string(want.body), string(got.body), body)
				require.Equal(t, string(want.text), string(got.text), body)
				require.Equal(t, want.count("data"), got.count("data"), body)
				if text && !summary && strings.Contains(body, `"label":"D"`) {
					require.Contains(t, string(got.text), `participants: C (4)`, "the first label, as a JSON parser reads it")
				}
			}
		}
	}
	r, _ := walk([]byte(bodies[3]), false, true)
	require.NotContains(t, string(r.body), "globalSummary", "the nested event made lean as the general pass does")
}

// memberValue is the raw value of the member name of the compact JSON
// object obj (a name without escapes), nil when it has none.
func memberValue(obj []byte, name string) []byte {
	if len(obj) < 2 || obj[0] != '{' {
		return nil
	}
	for i := 1; i < len(obj) && obj[i] == '"'; {
		keyEnd, ok := stringEnd(obj, i)
		if !ok || keyEnd >= len(obj) || obj[keyEnd] != ':' {
			return nil
		}
		end := valueEnd(obj, keyEnd+1)
		if string(obj[i+1:keyEnd-1]) == name {
			return obj[keyEnd+1 : end]
		}
		i = end
		if i < len(obj) && obj[i] == ',' {
			i++
		}
	}
	return nil
}
