package search_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/search"
)

// TestSearchTermFrequencyIsTsRankCD checks that the weighted frequency the
// service reads from a candidate's search vector is what PostgreSQL's
// ts_rank_cd('{0.1,0.25,0.5,1}', vector, alternative, 0) returns, for words
// and phrases (with skipped stop words) over texts in every field weight.
func TestSearchTermFrequencyIsTsRankCD(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	words := []string{"bridge", "exploit", "drains", "funds", "lost", "its", "peg", "stablecoin", "the", "exchange",
		"traded", "fund", "spot", "etf", "layer-2", "cross-chain", "went", "down", "chain", "a"}
	r := rand.New(rand.NewPCG(1, 2))
	text := func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return strings.Join(out, " ")
	}
	alts := []string{"bridge", "exploit", "lost its peg", "exchange traded fund", "spot etf", "layer-2", "cross-chain",
		"went down", "stablecoin lost its peg", "the bridge", "funds", "zebra"}
	compared := 0
	for range 60 {
		title, summary, bullets, evidence := text(1+r.IntN(6)), text(r.IntN(12)), text(r.IntN(10)), text(r.IntN(30))
		for _, alt := range alts {
			var (
				tsq  string
				want float64
			)
			rows, err := b.store.Pool.Query(b.ctx, `
				WITH v AS (SELECT setweight(to_tsvector('english', $1), 'A') || setweight(to_tsvector('english', $2), 'B') ||
				                  setweight(to_tsvector('english', $3), 'C') || setweight(to_tsvector('english', $4), 'D') AS search)
				SELECT v.search, phraseto_tsquery('english', $5)::text, ts_rank_cd('{0.1,0.25,0.5,1}', v.search, phraseto_tsquery('english', $5), 0)
				FROM v`, title, summary, bullets, evidence, alt)
			require.NoError(t, err)
			require.True(t, rows.Next())
			require.NoError(t, rows.Scan(nil, &tsq, &want))
			vec := append([]byte(nil), rows.RawValues()[0]...)
			rows.Close()
			require.NoError(t, rows.Err())
			got, ok := search.TermFrequencyForTest(vec, tsq)
			require.True(t, ok, "%q reads as %q", alt, tsq)
			require.InDelta(t, want, got, 1e-6, "%q in %q | %q | %q | %q", alt, title, summary, bullets, evidence)
			compared++
		}
	}
	require.Equal(t, 60*len(alts), compared)
}

// TestSearchBucketsAgreeWithTheIndex checks that the time buckets the
// service names are the ones search_buckets (the index's key) gives, at
// bucket boundaries, between them and before 1970.
func TestSearchBucketsAgreeWithTheIndex(t *testing.T) {
	t.Parallel()
	b := setupSearch(t)
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var times []time.Time
	for _, d := range []time.Duration{0, time.Second, -time.Second, time.Microsecond, -time.Microsecond, 599 * time.Second,
		600 * time.Second, 3599*time.Second + 999*time.Millisecond, 86399 * time.Second, 7 * 24 * time.Hour} {
		times = append(times, base.Add(d), time.Date(1969, 12, 31, 23, 59, 59, 500, time.UTC).Add(d))
	}
	for _, at := range times {
		var codes []int32
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, "SELECT search_buckets($1)", at).Scan(&codes))
		require.Len(t, codes, 4)
		for level, code := range codes {
			require.Equal(t, code, search.BucketCodeForTest(level, at), "%s level %d", at, level)
		}
	}
}
