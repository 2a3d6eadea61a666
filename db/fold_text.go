package db

import (
	"encoding/binary"
	"math"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgtype"
)

// Text columns of typed rows, decoded without an allocation per value.
//
// pgx decodes each text value into a string of its own and each text[]
// into a slice through an array header and a dimension list: on a folded
// page those were about four in ten of the request's allocations (owners'
// names, aliases, evidence titles and links, bullets). rowLayout.scan
// decodes the text columns it scans into *string, **string and *[]string
// here instead: the bytes of one statement's strings are copied into
// shared chunks and each string points into its chunk, a nullable
// string's pointer and a list's elements come from shared slabs. The
// values are pgx's own: the same strings, nil for NULL, an empty non-nil
// list for an empty array (TestLayoutTextAsPgx); whatever this does not
// decode (a NULL where no NULL fits, an array with NULLs or of more than
// one dimension) goes to pgx's plan, which answers it as before.
//
// A string keeps its whole chunk alive. The rows of a statement serve
// one request and are dropped with it; what outlives a request and may
// hold a scanned string copies it (search's title word memo does).

// colDecoding says how a column is decoded.
type colDecoding uint8

const (
	byPlan           colDecoding = iota // pgx's scan plan
	textString                          // text into *string
	textNullable                        // text into **string
	textList                            // binary text[] into *[]string
	binInt64                            // binary int8 into *int64
	binInt32                            // binary int4 into *int32
	binInt                              // binary int4 into *int
	binFloat                            // binary float8 into *float64
	binFloatNullable                    // binary float8 into **float64
	binBool                             // binary bool into *bool
	binTime                             // binary timestamptz into *time.Time
)

// PostgreSQL's type OIDs of the values decoded here.
const (
	oidBool         = 16
	oidInt8         = 20
	oidInt4         = 23
	oidText         = 25
	oidFloat8       = 701
	oidVarchar      = 1043
	oidTextArray    = 1009
	oidVarcharArray = 1015
	oidTimestamptz  = 1184
)

// decodingOf is how a column of type oid in format format is decoded
// into dst.
func decodingOf(oid uint32, format int16, dst any) colDecoding {
	switch dst.(type) {
	case *string:
		if oid == oidText || oid == oidVarchar {
			return textString
		}
	case **string:
		if oid == oidText || oid == oidVarchar {
			return textNullable
		}
	case *[]string:
		if (oid == oidTextArray || oid == oidVarcharArray) && format == pgtype.BinaryFormatCode {
			return textList
		}
	}
	if format != pgtype.BinaryFormatCode {
		return byPlan
	}
	switch dst.(type) {
	case *int64:
		if oid == oidInt8 {
			return binInt64
		}
	case *int32:
		if oid == oidInt4 {
			return binInt32
		}
	case *int:
		if oid == oidInt4 {
			return binInt
		}
	case *float64:
		if oid == oidFloat8 {
			return binFloat
		}
	case **float64:
		if oid == oidFloat8 {
			return binFloatNullable
		}
	case *bool:
		if oid == oidBool {
			return binBool
		}
	case *time.Time:
		if oid == oidTimestamptz {
			return binTime
		}
	}
	return byPlan
}

// Fixed-width binary values (integers, floats, booleans, instants) are
// decoded here too: pgx's plan for each is an interface call through a
// wrapper, for a few bytes read. The values are pgx's: an instant is
// time.Unix of its microseconds, in the local zone, as pgx's
// TimestamptzCodec without a ScanLocation gives it. A NULL (except into
// **float64, which is nil), an infinite or far instant, or a value of
// another length goes to pgx's plan, which answers it (mostly with its
// error) as before.

// unixY2K is PostgreSQL's epoch, 2000-01-01 UTC, in seconds since the
// Unix epoch.
const unixY2K = 946684800

// nearMicros bounds the instants decoded here (about 950 years either side
// of 2000): pgx's range checks and infinities lie far outside it.
const nearMicros = 30_000_000_000_000_000

// fixed decodes the non-NULL binary value v into d by kind; ok is false
// when v is not one it decodes (pgx's plan then does).
func (a *rowArena) fixed(kind colDecoding, v []byte, d any) (ok bool) {
	switch kind {
	case binInt64:
		if len(v) == 8 {
			*d.(*int64) = int64(binary.BigEndian.Uint64(v))
			return true
		}
	case binInt32:
		if len(v) == 4 {
			*d.(*int32) = int32(binary.BigEndian.Uint32(v))
			return true
		}
	case binInt:
		if len(v) == 4 {
			*d.(*int) = int(int32(binary.BigEndian.Uint32(v)))
			return true
		}
	case binFloat:
		if len(v) == 8 {
			*d.(*float64) = math.Float64frombits(binary.BigEndian.Uint64(v))
			return true
		}
	case binFloatNullable:
		if len(v) == 8 {
			if len(a.floats) == 0 {
				a.floats = make([]float64, textSlab)
			}
			p := &a.floats[0]
			a.floats = a.floats[1:]
			*p = math.Float64frombits(binary.BigEndian.Uint64(v))
			*d.(**float64) = p
			return true
		}
	case binBool:
		if len(v) == 1 {
			*d.(*bool) = v[0] == 1
			return true
		}
	case binTime:
		if len(v) == 8 {
			us := int64(binary.BigEndian.Uint64(v))
			if us > -nearMicros && us < nearMicros {
				*d.(*time.Time) = time.Unix(unixY2K+us/1_000_000, us%1_000_000*1_000)
				return true
			}
		}
	}
	return false
}

// Sizes of rowArena's chunks and slabs.
const (
	textChunkMin = 2 << 10
	textChunkMax = 32 << 10
	textSlab     = 64
)

// rowArena hands out the strings (and nullable floats) of one scan.
type rowArena struct {
	chunk    []byte
	next     int // the size of the next chunk
	nullable []string
	lists    []string
	floats   []float64 // nullable floats' values
}

// str is b as a string, its bytes in the arena's chunk.
func (a *rowArena) str(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > cap(a.chunk)-len(a.chunk) {
		if n > textChunkMax/4 {
			return string(b)
		}
		a.next = min(max(a.next*2, textChunkMin), textChunkMax)
		a.chunk = make([]byte, 0, max(a.next, n))
	}
	off := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[off], n)
}

// ptr is a pointer to b as a string.
func (a *rowArena) ptr(b []byte) *string {
	if len(a.nullable) == 0 {
		a.nullable = make([]string, textSlab)
	}
	p := &a.nullable[0]
	a.nullable = a.nullable[1:]
	*p = a.str(b)
	return p
}

// list decodes the binary text[] src into *dst. ok is false, *dst
// untouched, when src is not a one-dimensional array without NULLs (or
// empty) that fits its bytes: pgx's plan decodes those.
func (a *rowArena) list(src []byte, dst *[]string) (ok bool) {
	if len(src) < 12 {
		return false
	}
	dims := binary.BigEndian.Uint32(src)
	hasNull := binary.BigEndian.Uint32(src[4:])
	switch {
	case hasNull != 0:
		return false
	case dims == 0:
		if len(src) != 12 {
			return false
		}
		*dst = []string{}
		return true
	case dims != 1 || len(src) < 20:
		return false
	}
	n := int(int32(binary.BigEndian.Uint32(src[12:])))
	rest := src[20:]
	if n <= 0 {
		if len(rest) != 0 {
			return false
		}
		*dst = []string{}
		return true
	}
	if n > len(rest)/4 {
		return false
	}
	if len(a.lists) < n {
		a.lists = make([]string, max(textSlab, n))
	}
	out := a.lists[:n:n]
	for i := range out {
		if len(rest) < 4 {
			return false
		}
		l := int(int32(binary.BigEndian.Uint32(rest)))
		rest = rest[4:]
		if l < 0 || l > len(rest) {
			return false
		}
		out[i] = a.str(rest[:l])
		rest = rest[l:]
	}
	if len(rest) != 0 {
		return false
	}
	a.lists = a.lists[n:]
	*dst = out
	return true
}
