package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/resolvers"
)

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := resolvers.NewCursorCodec("secret")
	want := resolvers.Cursor{AtMicro: 1_795_000_000_123_456, ID: 5001, Offset: 50}
	tok := c.EncodeCursor("feed|all", want)
	require.Regexp(t, `^[A-Za-z0-9_-]+$`, tok) // base64url, no padding
	got, err := c.DecodeCursor("feed|all", tok)
	require.NoError(t, err)
	require.Equal(t, want, got)

	_, err = c.DecodeCursor("feed|replay", tok)
	require.ErrorIs(t, err, resolvers.ErrCursorMismatch)
	_, err = resolvers.NewCursorCodec("other").DecodeCursor("feed|all", tok)
	require.ErrorIs(t, err, resolvers.ErrInvalidCursor)
	for i := range tok {
		b := []byte(tok)
		if b[i] == 'x' {
			b[i] = 'y'
		} else {
			b[i] = 'x'
		}
		_, err := c.DecodeCursor("feed|all", string(b))
		require.Error(t, err, "flipping byte %d must be detected", i)
		require.True(t, resolvers.IsCursorError(err))
	}
	_, err = c.DecodeCursor("feed|all", tok[:len(tok)-2])
	require.ErrorIs(t, err, resolvers.ErrInvalidCursor)
}

func BenchmarkEncodeCursor(b *testing.B) {
	c := resolvers.NewCursorCodec("secret")
	cur := resolvers.Cursor{AtMicro: 1_795_000_000_123_456, ID: 5001}
	b.ReportAllocs()
	for b.Loop() {
		c.EncodeCursor("feed|all|false|1795000000000000|\"\"", cur)
	}
}

func BenchmarkDecodeCursor(b *testing.B) {
	c := resolvers.NewCursorCodec("secret")
	const qctx = "feed|all|false|1795000000000000|\"\""
	tok := c.EncodeCursor(qctx, resolvers.Cursor{AtMicro: 1_795_000_000_123_456, ID: 5001})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.DecodeCursor(qctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}
