package db

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The kept texts are the texts their builders give.
func TestKeptStatementTextsAsBuilt(t *testing.T) {
	for _, long := range []bool{false, true} {
		for _, refs := range []bool{false, true} {
			sql := resolveFoldedTexts.Get([2]bool{long, refs}, func() string { return resolveFoldedSQL(long, refs) })
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
