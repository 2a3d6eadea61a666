package resolvers

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"sync"

	"github.com/cryptointel/cryptointel"
)

// Cursor is the position a page ended at, carried by an opaque token.
type Cursor struct {
	// AtMicro is the latest_evidence_at of the last row, in Unix
	// microseconds (the database's precision, so positions are exact).
	AtMicro int64
	// ID is the id of the last row.
	ID int64
	// Offset is the number of rows already returned, for orders that are
	// not keyset-walkable (significance order).
	Offset int64
}

// Cursor errors. Both are EINVALID with the exact messages of the contract.
var (
	// ErrInvalidCursor is returned for a token that does not decode or whose
	// signature does not verify.
	ErrInvalidCursor = &cryptointel.Error{Code: cryptointel.EINVALID, Message: "invalid cursor"}
	// ErrCursorMismatch is returned for a genuine token used with another
	// query than the one it was issued for.
	ErrCursorMismatch = &cryptointel.Error{Code: cryptointel.EINVALID, Message: "cursor does not match this query (different route, since or filters)"}
)

const (
	cursorVersion = 1
	// version(1) + context hash(16) + at(8) + id(8) + offset(8)
	cursorPayloadLen = 1 + 16 + 8 + 8 + 8
	cursorMACLen     = 16
)

// cursorEncoding is unpadded base64url that refuses non-zero trailing bits.
var cursorEncoding = base64.RawURLEncoding.Strict()

// cursorTokenLen is the length of every token.
var cursorTokenLen = cursorEncoding.EncodedLen(cursorPayloadLen + cursorMACLen)

// CursorCodec signs and verifies cursors with HMAC-SHA256 under the server
// secret. A token is base64url(payload || mac): the payload holds the
// position and a hash of the query context it was issued for (route,
// surface, since, filters, entity id), so it cannot be forged, altered or
// replayed against another query.
type CursorCodec struct {
	pool sync.Pool
}

// NewCursorCodec returns a codec keyed by secret.
func NewCursorCodec(secret string) *CursorCodec {
	key := []byte(secret)
	c := &CursorCodec{}
	c.pool.New = func() any { return hmac.New(sha256.New, key) }
	return c
}

func contextHash(queryContext string) [16]byte {
	sum := sha256.Sum256([]byte(queryContext))
	var out [16]byte
	copy(out[:], sum[:16])
	return out
}

func (c *CursorCodec) mac(payload []byte) []byte {
	h := c.pool.Get().(hash.Hash)
	h.Reset()
	h.Write(payload)
	sum := h.Sum(nil)
	c.pool.Put(h)
	return sum[:cursorMACLen]
}

// EncodeCursor returns the token for position cur in the query identified by
// queryContext.
func (c *CursorCodec) EncodeCursor(queryContext string, cur Cursor) string {
	var buf [cursorPayloadLen + cursorMACLen]byte
	buf[0] = cursorVersion
	h := contextHash(queryContext)
	copy(buf[1:17], h[:])
	binary.BigEndian.PutUint64(buf[17:25], uint64(cur.AtMicro))
	binary.BigEndian.PutUint64(buf[25:33], uint64(cur.ID))
	binary.BigEndian.PutUint64(buf[33:41], uint64(cur.Offset))
	copy(buf[cursorPayloadLen:], c.mac(buf[:cursorPayloadLen]))
	return base64.RawURLEncoding.EncodeToString(buf[:])
}

// DecodeCursor verifies token and returns its position. It returns
// ErrInvalidCursor when the token is undecodable or tampered with, and
// ErrCursorMismatch when it was issued for another query context.
func (c *CursorCodec) DecodeCursor(queryContext, token string) (Cursor, error) {
	// Exactly one spelling of a cursor is accepted: the decoder would
	// otherwise skip inserted newlines and ignore the unused low bits of the
	// last character, so altered tokens would still verify.
	if len(token) != cursorTokenLen {
		return Cursor{}, ErrInvalidCursor
	}
	buf, err := cursorEncoding.DecodeString(token)
	if err != nil || len(buf) != cursorPayloadLen+cursorMACLen || buf[0] != cursorVersion {
		return Cursor{}, ErrInvalidCursor
	}
	if !hmac.Equal(buf[cursorPayloadLen:], c.mac(buf[:cursorPayloadLen])) {
		return Cursor{}, ErrInvalidCursor
	}
	h := contextHash(queryContext)
	if !hmac.Equal(buf[1:17], h[:]) {
		return Cursor{}, ErrCursorMismatch
	}
	cur := Cursor{
		AtMicro: int64(binary.BigEndian.Uint64(buf[17:25])),
		ID:      int64(binary.BigEndian.Uint64(buf[25:33])),
		Offset:  int64(binary.BigEndian.Uint64(buf[33:41])),
	}
	// Signed positions are the server's own, but a position no page can
	// end at is refused all the same rather than reaching a query.
	if cur.Offset < 0 || cur.ID < 0 || !cryptointel.InstantMicrosInRange(cur.AtMicro) {
		return Cursor{}, ErrInvalidCursor
	}
	return cur, nil
}

// IsCursorError reports whether err is one of the cursor errors.
func IsCursorError(err error) bool {
	return errors.Is(err, ErrInvalidCursor) || errors.Is(err, ErrCursorMismatch)
}
