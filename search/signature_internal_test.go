package search

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTSQueryClauses checks how a probe's tsquery is read as clauses of
// lexemes an event must hold all of: operators by precedence, phrases as
// conjunctions, quotes and backslashes in lexemes, weights ignored, and a
// negation or a prefix match constraining no lexeme.
func TestTSQueryClauses(t *testing.T) {
	for _, c := range []struct {
		q    string
		want [][]string
	}{
		{`'hack'`, [][]string{{"hack"}}},
		{`'hack' & 'exchang'`, [][]string{{"exchang", "hack"}}},
		{`( 'hack' | 'exploit' ) & 'exchang'`, [][]string{{"exchang", "hack"}, {"exchang", "exploit"}}},
		{`'a' & 'b' | 'c'`, [][]string{{"a", "b"}, {"c"}}},
		{`'a' | 'b' & 'c'`, [][]string{{"a"}, {"b", "c"}}},
		{`( 'lost' <-> 'peg' ) | 'depeg'`, [][]string{{"lost", "peg"}, {"depeg"}}},
		{`'price' <2> 'feed'`, [][]string{{"feed", "price"}}},
		{`'it''s' & 'a\\b'`, [][]string{{"a\\b", "it's"}}},
		{`'hack':AB & 'exchang':C`, [][]string{{"exchang", "hack"}}},
		{`'hack':* & 'exchang'`, [][]string{{"exchang"}}},
		{`!'hack' & 'exchang'`, [][]string{{"exchang"}}},
		{`'a' & 'a'`, [][]string{{"a"}}},
	} {
		got, ok := tsqueryClauses(c.q)
		require.True(t, ok, c.q)
		require.Equal(t, c.want, got, c.q)
	}
	for _, q := range []string{``, `'open`, `'a' &`, `( 'a'`, `'a' 'b'`, `'a' <-`, `&`} {
		_, ok := tsqueryClauses(q)
		require.False(t, ok, "%q", q)
	}
}

// TestProbeSignature checks a probe's signature test: a clause held whole
// by another drops the larger one, each clause sets the bits of its
// lexemes, and a probe that allows no test (a bare negation or prefix,
// more clauses than the slots, a tsquery not read) passes every event.
func TestProbeSignature(t *testing.T) {
	ha, hb := lexemeBits("hack")
	ea, eb := lexemeBits("exchang")
	a, b := probeSignature(`( 'hack' & 'exchang' ) | 'hack' | ( 'exchang' & 'hack' & 'exploit' )`)
	require.Equal(t, []int64{ha}, a)
	require.Equal(t, []int64{hb}, b)
	a, b = probeSignature(`'hack' & 'exchang'`)
	require.Equal(t, []int64{ha | ea}, a)
	require.Equal(t, []int64{hb | eb}, b)

	many := `'a1'`
	for _, l := range []string{"a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"} {
		many += ` | '` + l + `'`
	}
	for _, q := range []string{`'hack':*`, `!'hack'`, `'hack' | !'exchang'`, many, `'broken`} {
		a, b := probeSignature(q)
		require.Equal(t, []int64{0}, a, q)
		require.Equal(t, []int64{0}, b, q)
	}

	// Each probe has its slots, NULL past its clauses.
	hack, hackPrefix := `'hack'`, `'hack':*`
	sa, sb := walkSignatures([]*string{&hack, &hackPrefix})
	require.Len(t, sa, 2*walkSignatureSlots)
	require.Len(t, sb, 2*walkSignatureSlots)
	require.Equal(t, ha, *sa[0])
	require.Equal(t, hb, *sb[0])
	require.Nil(t, sa[1])
	require.Equal(t, int64(0), *sa[walkSignatureSlots])
	require.Nil(t, sa[walkSignatureSlots+1])
}

// TestHashText checks hashText against PostgreSQL 15's hashtext of the
// same strings (select hashtext(s)): empty, each tail length class, a
// whole block and one byte more, multibyte text, three blocks and one.
func TestHashText(t *testing.T) {
	for s, want := range map[string]int32{
		"":                                      -1477818771,
		"abcd":                                  -393934804,
		"hack":                                  1063853900,
		"exchang":                               -1126830586,
		"abcdefghijkl":                          -1586087212,
		"abcdefghijklm":                         405849808,
		"überweisung":                           -1647265343,
		"日本語テキスト":                               -1595187616,
		"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz": 1880094090,
	} {
		require.Equal(t, want, int32(hashText(s)), "%q", s)
	}
}
