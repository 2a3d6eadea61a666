package cryptointel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

func TestParseInstant(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Time{
		"2026-11-20T10:00:00Z":                time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		"2026-11-20T12:00:00.5+02:00":         time.Date(2026, 11, 20, 10, 0, 0, 500_000_000, time.UTC),
		"2026-11-20T10:00:00":                 time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		"2026-11-20T10:00":                    time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		"2026-11-20":                          time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC),
		"0001-01-01T00:00:00Z":                cryptointel.MinInstant,
		"0001-01-01T00:00:00-14:00":           time.Date(1, 1, 1, 14, 0, 0, 0, time.UTC),
		"9999-12-31T23:59:59.999999Z":         cryptointel.MaxInstant,
		"9999-12-31T23:59:59.999999999+00:00": time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
	} {
		got, err := cryptointel.ParseInstant(in)
		if in == "9999-12-31T23:59:59.999999999+00:00" {
			// Beyond the microsecond the database keeps: past the last instant.
			require.ErrorIs(t, err, cryptointel.ErrInstantRange, in)
			_ = want
			continue
		}
		require.NoError(t, err, in)
		require.True(t, want.Equal(got), "%s: %s", in, got)
		require.Equal(t, time.UTC, got.Location())
	}
	// The last instant is the last microsecond (the database's precision).
	for _, in := range []string{"0000-01-01T00:00:00Z", "0000-12-31", "0001-01-01T00:00:00+14:00", "9999-12-31T23:00:00-14:00",
		"9999-12-31T23:59:59.9999991Z", "9999-12-31T23:59:59.999999999+00:00"} {
		_, err := cryptointel.ParseInstant(in)
		require.ErrorIs(t, err, cryptointel.ErrInstantRange, in)
		require.True(t, cryptointel.IsInstantRange(err))
		require.Equal(t, cryptointel.EINVALID, cryptointel.ErrorCode(err))
	}
	for _, in := range []string{"", "yesterday", "10000-01-01T00:00:00Z", "+10000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z",
		"2026-11-20T10:00:00+99:00", "2026-13-01", "1763640000", "2026-11-20T10:00:00Z\x00"} {
		_, err := cryptointel.ParseInstant(in)
		require.ErrorIs(t, err, cryptointel.ErrInstantSyntax, in)
		require.False(t, cryptointel.IsInstantRange(err))
	}
	require.True(t, cryptointel.InstantMicrosInRange(cryptointel.MinInstant.UnixMicro()))
	require.True(t, cryptointel.InstantMicrosInRange(cryptointel.MaxInstant.UnixMicro()))
	require.False(t, cryptointel.InstantMicrosInRange(cryptointel.MinInstant.UnixMicro()-1))
	require.False(t, cryptointel.InstantMicrosInRange(cryptointel.MaxInstant.UnixMicro()+1))
}
