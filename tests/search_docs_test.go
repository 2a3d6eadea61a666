package tests

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/search"
)

// docQueryRe finds the real queries docs/api/search.md shows: the query in
// backquotes at the start of a paragraph, a dash, prose quoting the first
// hits' titles, then the report as a JSON block.
var docQueryRe = regexp.MustCompile("(?s)\n`([^`\n]+)` — (.*?)```json\n(.*?)```")

// TestSearchDocsReports runs the queries docs/api/search.md reads on the
// demo data (the evaluation data, 6,000 events, the clock at 2026-11-01
// 12:00 UTC) and checks the report shown is the search's — the words
// searched, the words dropped and why, the filters — and that every title
// the prose quotes is among the first three hits.
func TestSearchDocsReports(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/api/search.md")
	require.NoError(t, err)
	found := docQueryRe.FindAllStringSubmatch(string(raw), -1)
	require.Len(t, found, 3, "the page shows three real queries")

	ctx := context.Background()
	store := dbtest.New(t)
	loadEvalFixture(t, store)
	type term struct {
		Text string `json:"text"`
	}
	type report struct {
		UnmatchedTerms []string `json:"unmatchedTerms"`
		Report         struct {
			Searched []term              `json:"searched"`
			Dropped  []map[string]string `json:"dropped"`
			Filters  []map[string]string `json:"filters"`
		} `json:"report"`
	}
	for _, m := range found {
		query, prose, block := m[1], strings.Join(strings.Fields(m[2]), " "), m[3]
		var want report
		require.NoError(t, json.Unmarshal([]byte(block), &want), "%q: %s", query, block)
		res, err := db.SearchEventsWith(ctx, store.Pool, query, search.SearchOptions{
			Since: evalNow.Add(-30 * 24 * time.Hour), SinceDefault: true, Limit: 10, Now: evalNow})
		require.NoError(t, err, query)

		var got report
		got.UnmatchedTerms = res.UnmatchedTerms
		for _, tm := range res.Terms {
			got.Report.Searched = append(got.Report.Searched, term{tm.Text})
		}
		for _, d := range res.Dropped {
			got.Report.Dropped = append(got.Report.Dropped, map[string]string{"text": d.Text, "reason": d.Reason})
		}
		for _, f := range res.Filters {
			got.Report.Filters = append(got.Report.Filters, map[string]string{"name": f.Name, "value": f.Value, "source": f.Source, "text": f.Text})
		}
		require.Equal(t, want, got, "%q: the report docs/api/search.md shows", query)

		var titles []string
		for _, hit := range res.Matches[:min(3, len(res.Matches))] {
			var title string
			require.NoError(t, store.Pool.QueryRow(ctx, "SELECT title FROM events WHERE id = $1", hit.EventID).Scan(&title))
			titles = append(titles, title)
		}
		quoted := regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(prose, -1)
		require.NotEmpty(t, quoted, "%q: the prose quotes the first hits", query)
		for _, q := range quoted {
			require.Contains(t, titles, q[1], "%q: a title the docs quote is not among the first three hits", query)
		}
	}
}
