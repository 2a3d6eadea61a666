package rest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The envelope's fast paths (raw members copied, objects split by a byte
// scanner) write and read exactly what encoding/json would.
func TestObjectMarshalMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	raws := []string{
		`{"a":1}`, `[]`, `null`, `"x"`, `12.5e-3`, `true`,
		`{"title":"<b>Tom & Jerry</b>","q":"say \"hi\" \\ back\\"}`,
		`{"s":"line\u2028sep\u2029end","u":"\u00e9t\u00e9 – ok","n":[1,{"x":[]},"]"]}`,
		`[{"id":1,"posts":[{"content":"a}b{c]d[","url":"https://x/?a=1&b=2"}]}]`,
	}
	for _, raw := range raws {
		o := object{{"k", json.RawMessage(raw)}, {"n", 3}, {"s", "a<b"}, {"inner", object{{"r", json.RawMessage(raw)}}}}
		want, err := json.Marshal(o)
		require.NoError(t, err)
		got, err := o.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), raw)
	}
	// A nil raw member is null, as json.Marshal writes it.
	got, err := object{{"d", json.RawMessage(nil)}}.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, `{"d":null}`, string(got))
}

func TestMembersMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{}`,
		`{"events":{"window":"24h","limit":25,"since":null,"nodes":[{"id":1,"t":"a\"}b","x":[[],{}]}]},"more":-1.5e+3,"b":false}`,
		`{"a":"\\","b":"\\\""}`,
		// Not compact, or keys with escapes: the slow path decodes them.
		`{ "a" : 1 }`,
		`{"a\u0062":1}`,
		`{"a":[1, 2]}`,
	} {
		var want map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(raw), &want), raw)
		got, err := members(json.RawMessage(raw))
		require.NoError(t, err, raw)
		require.Equal(t, len(want), len(got), raw)
		for k, v := range want {
			require.JSONEq(t, string(v), string(got[k]), "%s: member %s", raw, k)
		}
	}
	// Invalid JSON is still an error.
	for _, raw := range []string{`{"a":}`, `{"a":1`, `{"a" 1}`, `{"a":"x}`, `{1:2}`} {
		_, err := members(json.RawMessage(raw))
		require.Error(t, err, raw)
	}
	m, err := members(json.RawMessage(`null`))
	require.NoError(t, err)
	require.Nil(t, m)
}

// TestFlattenMatchesMatchesEncodingJSON checks that the split of a compact
// array of matches gives what encoding/json's decoding gives, and that
// anything else still decodes (or fails) as before.
func TestFlattenMatchesMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	slow := func(raw string) []json.RawMessage {
		var items []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(raw), &items), raw)
		var out []json.RawMessage
		for _, it := range items {
			merged, err := splice(it["event"], object{{"matchRank", it["matchRank"]}, {"matchedTerms", it["matchedTerms"]}})
			require.NoError(t, err)
			out = append(out, merged)
		}
		return out
	}
	for _, raw := range []string{
		`[]`,
		`[{"event":{"id":1,"title":"a\"],[{b"},"matchRank":0.5,"matchedTerms":["x","]"]}]`,
		`[{"matchRank":1,"event":{"id":2,"posts":[{"u":"}"}]},"matchedTerms":[]},{"event":{},"matchRank":2e-3,"matchedTerms":null}]`,
		// Not compact: the slow path.
		`[ {"event":{"id":3},"matchRank":1,"matchedTerms":[]} ]`,
		`[{"event":{"id":4}, "matchRank":1,"matchedTerms":[]}]`,
	} {
		got, err := flattenMatches(json.RawMessage(raw), "event", "matchRank", "matchedTerms")
		require.NoError(t, err, raw)
		want := slow(raw)
		require.Equal(t, len(want), len(got), raw)
		for i := range want {
			require.JSONEq(t, string(want[i]), string(got[i]), raw)
		}
	}
	for _, raw := range []string{`[{"event":{"id":1}`, `[{"event":}]`, `[1,2]`, `{"event":{}}`} {
		_, err := flattenMatches(json.RawMessage(raw), "event", "matchRank")
		require.Error(t, err, raw)
	}
	got, err := flattenMatches(json.RawMessage(`null`), "event", "matchRank")
	require.NoError(t, err)
	require.Empty(t, got)
}
