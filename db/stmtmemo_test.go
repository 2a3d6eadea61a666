package db

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// A shape's text is built once and then served as built; past the bound
// texts are built every time and not kept.
func TestStmtMemo(t *testing.T) {
	var m stmtMemo[int]
	builds := 0
	text := func(k int) string {
		return m.text(k, func() string { builds++; return "SELECT " + strconv.Itoa(k) })
	}
	require.Equal(t, "SELECT 1", text(1))
	require.Equal(t, "SELECT 1", text(1))
	require.Equal(t, 1, builds, "built once")
	for k := 2; k <= maxMemoTexts+10; k++ {
		require.Equal(t, "SELECT "+strconv.Itoa(k), text(k))
	}
	require.Len(t, m.m, maxMemoTexts)
	builds = 0
	require.Equal(t, "SELECT "+strconv.Itoa(maxMemoTexts+5), text(maxMemoTexts+5))
	require.Equal(t, 1, builds, "past the bound: built, not kept")
}

// The kept texts are the texts their builders give.
func TestKeptStatementTextsAsBuilt(t *testing.T) {
	for _, long := range []bool{false, true} {
		for _, refs := range []bool{false, true} {
			sql := resolveFoldedTexts.text([2]bool{long, refs}, func() string { return resolveFoldedSQL(long, refs) })
			require.Equal(t, resolveFoldedSQL(long, refs), sql)
		}
	}
	for _, c := range []EventChildren{{}, {Roles: true}, {Roles: true, Evidence: true, NoText: true, NoContent: true}} {
		page := "SELECT " + eventColumns + " FROM events e WHERE e.id = ANY($1)"
		require.Equal(t, buildFoldPage(page, "e.id", c), foldPage(page, "e.id", c))
		require.Equal(t, buildFoldPage(page, "e.id", c), foldPage(page, "e.id", c), "kept")
	}
	require.Equal(t, pageLayout.buildSelectList(pageRoleKind, roleRowColumns), pageLayout.selectList(pageRoleKind, roleRowColumns))
}
