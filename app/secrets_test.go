package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoFixedSecretDefaults: a Config left without secrets gets random ones
// for the process (New fills them) — never a fixed value anyone could sign with — and demo
// mode fills exactly the unset ones.
func TestNoFixedSecretDefaults(t *testing.T) {
	t.Parallel()
	a, b := DefaultConfig(), DefaultConfig()
	require.Empty(t, a.CursorSecret, "no fixed default")
	require.Empty(t, a.ExportURLSecret, "no fixed default")
	a.FillDemoSecrets()
	b.FillDemoSecrets()
	require.Len(t, a.CursorSecret, 64)
	require.Len(t, a.ExportURLSecret, 64)
	require.NotEqual(t, a.CursorSecret, b.CursorSecret)
	require.NotEqual(t, a.ExportURLSecret, b.ExportURLSecret)
	require.NotEqual(t, a.CursorSecret, a.ExportURLSecret)

	c := Config{ExportURLSecret: "0123456789abcdef0123456789abcdef"}
	require.ErrorContains(t, c.CheckSecrets(), "CURSOR_SECRET is not set.")
	require.Equal(t, []string{"CURSOR_SECRET", "MPP_SECRET"}, c.FillDemoSecrets())
	require.Equal(t, "0123456789abcdef0123456789abcdef", c.ExportURLSecret)
	require.NoError(t, c.CheckSecrets())
}
