package jsonw_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/graph/jsonw"
)

// TestReleaseMarksClearsPaths checks that a list of marks given back holds
// no path any more (the pool keeps no string of a response alive) and that
// a list from the pool starts empty.
func TestReleaseMarksClearsPaths(t *testing.T) {
	m := jsonw.Marks()
	require.Empty(t, m)
	m = append(m, jsonw.Mark{Path: "data", Start: 1, End: 9}, jsonw.Mark{Path: "data[]", Start: 2, End: 8})
	kept := m[:2]
	jsonw.ReleaseMarks(m)
	require.Equal(t, []jsonw.Mark{{}, {}}, kept)
	require.Empty(t, jsonw.Marks())
}
