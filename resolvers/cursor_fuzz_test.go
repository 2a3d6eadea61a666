package resolvers_test

import (
	"errors"
	"testing"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/resolvers"
)

// FuzzDecodeCursor decodes arbitrary tokens. It must never panic; a
// refusal is one of the two cursor errors; an accepted token is exactly
// the token the codec issues for the decoded position (no second spelling
// of a cursor is accepted: tokens are not malleable).
func FuzzDecodeCursor(f *testing.F) {
	codec := resolvers.NewCursorCodec("fuzz-secret")
	const queryContext = "feed|all|RADAR|2026-11-19T00:00:00Z"
	genuine := codec.EncodeCursor(queryContext, resolvers.Cursor{AtMicro: 1_795_000_000_123_456, ID: 5001, Offset: 50})
	for _, seed := range []string{
		genuine, genuine[:len(genuine)-1], genuine + "A", genuine + "==", "", "AAAA", "garbage", "%00",
		codec.EncodeCursor("other", resolvers.Cursor{ID: 1}),
		resolvers.NewCursorCodec("other-secret").EncodeCursor(queryContext, resolvers.Cursor{ID: 1}),
		codec.EncodeCursor(queryContext, resolvers.Cursor{AtMicro: -1, ID: -1, Offset: -1}),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		cur, err := codec.DecodeCursor(queryContext, token)
		if err != nil {
			if !errors.Is(err, resolvers.ErrInvalidCursor) && !errors.Is(err, resolvers.ErrCursorMismatch) {
				t.Fatalf("unexpected error for %q: %v", token, err)
			}
			return
		}
		if cur.Offset < 0 {
			t.Fatalf("negative offset accepted from %q", token)
		}
		if again := codec.EncodeCursor(queryContext, cur); again != token {
			t.Fatalf("token %q accepted but the cursor's token is %q", token, again)
		}
	})
}

// FuzzCursorRoundTrip encodes arbitrary positions: decoding gives the
// position back under the same context and refuses it under another.
func FuzzCursorRoundTrip(f *testing.F) {
	f.Add(int64(1_795_000_000_123_456), int64(5001), int64(50), "feed|all")
	f.Add(int64(0), int64(0), int64(0), "")
	f.Add(int64(-1<<63), int64(1), int64(0), "feed|all")
	f.Add(cryptointel.MinInstant.UnixMicro()-1, int64(1), int64(0), "feed|all")
	f.Add(cryptointel.MaxInstant.UnixMicro()+1, int64(1), int64(0), "feed|all")
	f.Add(int64(1_795_000_000_123_456), int64(-1), int64(0), "feed|all")
	codec := resolvers.NewCursorCodec("fuzz-secret")
	f.Fuzz(func(t *testing.T, at, id, offset int64, queryContext string) {
		if offset < 0 {
			offset = -offset
		}
		if offset < 0 {
			offset = 0
		}
		want := resolvers.Cursor{AtMicro: at, ID: id, Offset: offset}
		tok := codec.EncodeCursor(queryContext, want)
		got, err := codec.DecodeCursor(queryContext, tok)
		if id < 0 || !cryptointel.InstantMicrosInRange(at) {
			// No page ends there: even a genuinely signed token is refused.
			if !errors.Is(err, resolvers.ErrInvalidCursor) {
				t.Fatalf("position %+v outside the bounds decoded: %+v, %v", want, got, err)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("round trip of %+v: %+v, %v", want, got, err)
		}
		if _, err := codec.DecodeCursor(queryContext+"x", tok); !errors.Is(err, resolvers.ErrCursorMismatch) {
			t.Fatalf("token accepted under another context: %v", err)
		}
	})
}
