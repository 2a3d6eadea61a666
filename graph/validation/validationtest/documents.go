// Package validationtest builds the hostile GraphQL documents the tests of
// the validation walks send: documents small to write whose naive
// validation costs exponential or high-polynomial time.
package validationtest

import (
	"fmt"
	"strings"
)

// FragmentBomb returns root followed by a chain of n fragments on typ that
// each spread the next twice, the last selecting leaf: 2^n copies of leaf
// once expanded, in about 40 bytes a level. root spreads ...F0 (or nothing,
// for a bomb no operation uses).
func FragmentBomb(root, typ, leaf string, n int) string {
	var b strings.Builder
	b.WriteString(root + "\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "fragment F%d on %s { ...F%d ...F%d }\n", i, typ, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on %s { %s }\n", n, typ, leaf)
	return b.String()
}

// RepeatedNesting returns the selections of an Entity repeated k times per
// level, d levels deep (relationships { relatedEntity { … } }), ending in
// id: a pairwise field-merging check compares k^(2d) fields.
func RepeatedNesting(d, k int) string {
	if d == 0 {
		return "id"
	}
	return strings.Repeat("relationships { relatedEntity { "+RepeatedNesting(d-1, k)+" } } ", k)
}
