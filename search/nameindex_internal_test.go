package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNameIndexContainingMatchesEveryName checks Match's one search of all
// the names for those containing the name looked up (markContaining)
// against testing every name, as Match does when the index cannot search
// so (a zero byte in a name): the same candidates for names drawn from the
// names themselves (whole, starts, middles, ends, across words), their
// misspellings and strings no name holds.
func TestNameIndexContainingMatchesEveryName(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"chain", "link", "labs", "aurora", "network", "ronin", "foundation", "eth", "ether", "bit",
		"coin", "uni", "swap", "dao", "a_b", "x", "100%", "s&p", "protocol", "finance"}
	var rows []NameRow
	for i := range 600 {
		var b strings.Builder
		for j := range 1 + r.IntN(3) {
			if j > 0 {
				b.WriteString([]string{" ", "-", ".", ""}[r.IntN(4)])
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		v := b.String()
		rows = append(rows, NameRow{EntityID: int64(i / 3), Kind: []string{"canonical_name", "display_name", "alias"}[i%3],
			Value: v, Norm: v, Trigrams: asciiTrigrams(v), ValueOrder: i})
	}
	fast := BuildNameIndex(rows)
	if fast.starts == nil {
		t.Fatal("the index cannot search its names at once")
	}
	slow := BuildNameIndex(rows)
	slow.norms, slow.starts = "", nil
	queries := map[string]bool{"zzq": true, "k l": true, "in ": true, "ink": true, "a_b": true, "p 1": true}
	for _, row := range rows {
		n := row.Norm
		for range 4 {
			i := r.IntN(len(n))
			j := min(len(n), i+3+r.IntN(8))
			queries[n[i:j]] = true
		}
		queries[n] = true
		if len(n) > 4 {
			queries[n[:2]+n[3:]] = true
		}
	}
	compared := 0
	for q := range queries {
		q = CleanName(q)
		if q == "" {
			continue
		}
		want, okWant := slow.Match(q)
		got, okGot := fast.Match(q)
		if okWant != okGot || len(want) != len(got) {
			t.Fatalf("Match(%q): every name tested %v, %d entities; one search %v, %d", q, okWant, len(want), okGot, len(got))
		}
		for i := range want {
			if w, g := fmt.Sprintf("%+v", want[i]), fmt.Sprintf("%+v", got[i]); w != g {
				t.Fatalf("Match(%q), entity %d: every name tested %s; one search %s", q, i, w, g)
			}
		}
		compared++
	}
	t.Logf("%d names, %d lookups compared", len(rows), compared)

	// A zero byte in a name: the index tests every name.
	if x := BuildNameIndex(append(rows[:1:1], NameRow{EntityID: 999, Kind: "alias", Value: "a\x00b", Norm: "a\x00b"})); x.starts != nil {
		t.Fatal("an index whose names hold a zero byte searches them at once")
	}
}
