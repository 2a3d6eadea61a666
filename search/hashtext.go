package search

import (
	"encoding/binary"
	"math/bits"
)

// hashText is PostgreSQL's hashtext of s under a deterministic collation:
// hash_bytes (src/common/hashfn.c, Bob Jenkins' lookup3) of its bytes, as
// PostgreSQL computes it on a little-endian machine.
func hashText(s string) uint32 {
	k := []byte(s)
	n := uint32(len(k))
	a := 0x9e3779b9 + n + 3923095
	b, c := a, a
	for len(k) >= 12 {
		a += binary.LittleEndian.Uint32(k)
		b += binary.LittleEndian.Uint32(k[4:])
		c += binary.LittleEndian.Uint32(k[8:])
		a, b, c = hashMix(a, b, c)
		k = k[12:]
	}
	// The rest, the lowest byte of c left out (lookup3's length byte).
	var tail [12]byte
	copy(tail[:], k)
	switch {
	case len(k) > 8:
		c += binary.LittleEndian.Uint32(tail[8:]) << 8
		fallthrough
	case len(k) > 4:
		b += binary.LittleEndian.Uint32(tail[4:])
		fallthrough
	case len(k) > 0:
		a += binary.LittleEndian.Uint32(tail[:])
	}
	_, _, c = hashFinal(a, b, c)
	return c
}

func hashMix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= bits.RotateLeft32(c, 4)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 6)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 8)
	b += a
	a -= c
	a ^= bits.RotateLeft32(c, 16)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 19)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 4)
	b += a
	return a, b, c
}

func hashFinal(a, b, c uint32) (uint32, uint32, uint32) {
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return a, b, c
}
