package search

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/internal/memo"
)

// storyTitles are reports of a few stories in other words, with stop
// words, figures, case and repeated words.
var storyTitles = []string{
	"Hackers drain $106M from Orbit bridge",
	"Orbit bridge hacked: attackers steal $106M",
	"Orbit Bridge exploit drains $106M; bridge paused",
	"Attackers drained the Orbit bridge of $106M",
	"Solana mainnet outage halts block production",
	"Solana suffers outage as block production halts",
	"Block production on Solana stalls for five hours",
	"SEC sues Binance over unregistered securities",
	"Binance sued by the SEC for unregistered securities offering",
	"Coinbase lists new token",
	"Coinbase to list a new token",
	"",
	"the of and",
}

// titleKeysAsSets is how titleKeys and sameTitle read titles before the
// keys became sorted lists: a set of keys per title.
func titleKeysAsSets(title string) map[string]bool {
	out := map[string]bool{}
	th := searchThesaurus
	for _, w := range queryWords(title) {
		lw := strings.ToLower(w)
		if titleStopWords[lw] {
			continue
		}
		k := th.normalizeForms([]string{lw})[0]
		if gs := th.byKey[k]; len(gs) > 0 {
			k = "\x00" + strconv.Itoa(slices.Min(gs))
		}
		out[k] = true
	}
	return out
}

func sameTitleAsSets(kx, ky map[string]bool) bool {
	if len(kx) == 0 || len(ky) == 0 {
		return false
	}
	common, figure := 0, false
	for k := range kx {
		if ky[k] {
			common++
			figure = figure || strings.ContainsAny(k, "0123456789")
		}
	}
	if common < storyCommonWords {
		return false
	}
	sim := float64(common) / float64(len(kx)+len(ky)-common)
	return sim >= storyTitleSimilarity || figure && sim >= storyFigureSimilarity
}

// TestTitleKeysAreTheSets checks that a title's keys, as a sorted list
// read through the word memo, are the set of keys it had, and that two
// titles tell one story exactly when their sets said so.
func TestTitleKeysAreTheSets(t *testing.T) {
	same, apart := 0, 0
	for _, x := range storyTitles {
		kx := titleKeys(x)
		require.True(t, slices.IsSorted(kx), x)
		require.Equal(t, slices.Sorted(maps.Keys(titleKeysAsSets(x))), append([]string(nil), kx...), x)
		// Again, now from the memo.
		require.Equal(t, kx, titleKeys(x), x)
		for _, y := range storyTitles {
			want := sameTitleAsSets(titleKeysAsSets(x), titleKeysAsSets(y))
			require.Equal(t, want, sameTitle(kx, titleKeys(y)), "%q / %q", x, y)
			if want {
				same++
			} else {
				apart++
			}
		}
	}
	// Both answers occur, beyond a title with itself.
	require.Greater(t, same, len(storyTitles))
	require.Positive(t, apart)
}

// TestKeptTitleWordKey checks that a title word's key read through a memo
// is titleWordKey's, and that the memo keeps at most its bound.
func TestKeptTitleWordKey(t *testing.T) {
	m := memo.Bounded[string, string]{Max: 2}
	for _, w := range []string{"Hacked", "drains", "the", "outage", "Hacked"} {
		require.Equal(t, titleWordKey(w), keptTitleWordKey(&m, w), w)
	}
	require.Equal(t, 2, m.Len())
	require.Equal(t, "", keptTitleWordKey(&m, "the"), "a stop word has no key")
}

// TestQueryWordsASCII checks that queryWords splits ASCII text as
// queryWordsUnicode does, over random text of letters, digits, separators,
// punctuation kept inside names, and control characters.
func TestQueryWordsASCII(t *testing.T) {
	const alphabet = "aZ09 \t\n\v\f\r\x00\x1f\x7f.-'$_" + queryWordSeparators
	r := rand.New(rand.NewPCG(40, 42))
	words := 0
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		got := queryWords(s)
		require.Equal(t, queryWordsUnicode(s), got, "%q", s)
		words += len(got)
	}
	require.Greater(t, words, 10000)
	for _, s := range storyTitles {
		require.Equal(t, queryWordsUnicode(s), queryWords(s), s)
	}
	// Text that is not ASCII takes the general path.
	require.Equal(t, []string{"Zürich", "ETF", "approuvé"}, queryWords("Zürich: ETF approuvé!"))
}

func BenchmarkTitleKeys(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		titleKeys(storyTitles[i%len(storyTitles)])
	}
}
