package memo_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/internal/memo"
)

// A key's value is computed once and then served as kept; past the bound
// values are computed every time and not kept.
func TestBounded(t *testing.T) {
	for _, c := range []struct {
		m     *memo.Bounded[int, string]
		bound int
	}{{&memo.Bounded[int, string]{}, memo.DefaultMax}, {&memo.Bounded[int, string]{Max: 3}, 3}} {
		builds := 0
		get := func(k int) string {
			return c.m.Get(k, func() string { builds++; return "SELECT " + strconv.Itoa(k) })
		}
		require.Equal(t, "SELECT 1", get(1))
		require.Equal(t, "SELECT 1", get(1))
		require.Equal(t, 1, builds, "computed once")
		for k := 2; k <= c.bound+10; k++ {
			require.Equal(t, "SELECT "+strconv.Itoa(k), get(k))
		}
		require.Equal(t, c.bound, c.m.Len())
		builds = 0
		require.Equal(t, "SELECT "+strconv.Itoa(c.bound+5), get(c.bound+5))
		require.Equal(t, 1, builds, "past the bound: computed, not kept")
		_, kept := c.m.Load(c.bound + 5)
		require.False(t, kept)
		c.m.Store(c.bound+6, "x")
		_, kept = c.m.Load(c.bound + 6)
		require.False(t, kept, "Store past the bound keeps nothing")
	}
}
