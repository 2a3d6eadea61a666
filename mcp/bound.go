package mcp

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// MaxResultBytes bounds a tool's structured result (48 KB, some 12,000
// tokens; the text rendering beside it is smaller): well under the 25,000
// tokens clients allow a tool result. A larger result keeps the first
// items of its lists, as many as fit, and its hint says so.
const MaxResultBytes = 48 << 10

// bound returns result within max bytes: every list cut to the largest
// number of items that fits (its first ones), and a note saying so; or
// result itself when it fits.
func bound(result []byte, max int) ([]byte, string) {
	if len(result) <= max {
		return result, ""
	}
	v := gjson.ParseBytes(result)
	longest := longestList(v)
	lo, hi := 0, longest-1 // the largest k in [lo, hi] whose cut fits
	best, bestK := capLists(nil, v, 0), 0
	for lo <= hi {
		k := (lo + hi) / 2
		cut := capLists(nil, v, k)
		if len(cut) <= max {
			best, bestK, lo = cut, k, k+1
		} else {
			hi = k - 1
		}
	}
	return best, "This result was cut to fit the output budget: each list keeps its first " + strconv.Itoa(bestK) +
		` items. Call again with detail="summary", a smaller limit or fewer ids to get all of it.`
}

// longestList is the length of the longest list in v.
func longestList(v gjson.Result) int {
	n := 0
	if v.IsArray() {
		n = int(v.Get("#").Int())
	}
	if v.IsArray() || v.IsObject() {
		v.ForEach(func(_, e gjson.Result) bool {
			n = max(n, longestList(e))
			return true
		})
	}
	return n
}

// capLists appends v to dst with every list cut to its first k items.
func capLists(dst []byte, v gjson.Result, k int) []byte {
	switch {
	case v.IsObject():
		dst = append(dst, '{')
		first := true
		v.ForEach(func(key, e gjson.Result) bool {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, key.Raw...)
			dst = append(dst, ':')
			dst = capLists(dst, e, k)
			return true
		})
		return append(dst, '}')
	case v.IsArray():
		dst = append(dst, '[')
		i := 0
		v.ForEach(func(_, e gjson.Result) bool {
			if i == k {
				return false
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			i++
			dst = capLists(dst, e, k)
			return true
		})
		return append(dst, ']')
	}
	return append(dst, v.Raw...)
}
