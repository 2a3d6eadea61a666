package jsonw

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMarkData: members reached without crossing a list are marked, and a
// root list's object elements and their members; each value after the
// values inside it; strings holding brackets and quotes do not confuse it.
func TestMarkData(t *testing.T) {
	t.Parallel()
	data := `{"a":{"b":[{"c":1}],"d":{"e":"x]}\""}},"l":[{"f":{"g":[2]},"h":null},3,null],"n":null}`
	b := []byte("prefix" + data)
	marks, err := MarkData(b, len("prefix"))
	require.NoError(t, err)
	var got [][2]string
	for _, m := range marks {
		got = append(got, [2]string{m.Path, string(b[m.Start:m.End])})
	}
	require.Equal(t, [][2]string{
		{"a.b", `[{"c":1}]`},
		{"a.d.e", `"x]}\""`},
		{"a.d", `{"e":"x]}\""}`},
		{"a", `{"b":[{"c":1}],"d":{"e":"x]}\""}}`},
		{"l[].f.g", `[2]`},
		{"l[].f", `{"g":[2]}`},
		{"l[].h", `null`},
		{"l[]", `{"f":{"g":[2]},"h":null}`},
		{"l", `[{"f":{"g":[2]},"h":null},3,null]`},
		{"n", `null`},
	}, got)

	for _, bad := range []string{`{"a":1`, `{"a" 1}`, `[1]`, `{"a":"x}`, `{"a":1}x`} {
		_, err := MarkData([]byte(bad), 0)
		require.Error(t, err, bad)
	}
}
