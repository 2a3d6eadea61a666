package resolvers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
)

// A batch of briefs that writes its events' owners, participants and
// evidence is one statement (db.BriefsFolded), whatever the number of
// organizations, and answers with each organization's own pages and each
// event's own children: an event on two organizations' pages (the hub
// takes part in every event) or on both pages of one is written whole
// each time.
func TestBriefsAreOneStatement(t *testing.T) {
	t.Parallel()
	b := setup(t, 6)
	q := `query($s: Time!) { briefs(ids: [101, 999999, 1, 102], since: $s, first: 3) {
	  organizationId label error counts { radar signal }
	  radar { id owners { id } participants { id } evidence { id } posts { id } }
	  signal { id significance eventOwner { id } evidence { id } }
	} }`
	ctx, counter := db.WithStatementCounter(context.Background())
	data, errs := b.run(t, ctx, q, map[string]any{"s": b.now.Add(-24 * time.Hour).Format(time.RFC3339)})
	require.Empty(t, errs)
	require.EqualValues(t, 1, counter.Load())

	ids := func(list any) []float64 {
		var out []float64
		for _, x := range list.([]any) {
			out = append(out, x.(map[string]any)["id"].(float64))
		}
		return out
	}
	bs := dig(data, "briefs").([]any)
	require.Len(t, bs, 4)
	require.EqualValues(t, 101, dig(bs, 0, "organizationId"))
	require.Equal(t, "Related 1", dig(bs, 0, "label"))
	require.Equal(t, []float64{1001, 1002, 1003}, ids(dig(bs, 0, "radar")))
	require.Equal(t, []float64{1002, 1004, 1006}, ids(dig(bs, 0, "signal")))
	require.Equal(t, []float64{101}, ids(dig(bs, 0, "radar", 0, "owners")))
	require.Equal(t, []float64{hubID}, ids(dig(bs, 0, "radar", 0, "participants")))
	require.Equal(t, []float64{10010, 10011}, ids(dig(bs, 0, "radar", 0, "evidence")))
	require.Equal(t, []float64{10010, 10011}, ids(dig(bs, 0, "radar", 0, "posts")))
	require.Equal(t, []float64{10020, 10021}, ids(dig(bs, 0, "signal", 0, "evidence")))
	require.Equal(t, []float64{101}, ids(dig(bs, 0, "signal", 0, "eventOwner")))
	require.EqualValues(t, 3, dig(bs, 0, "counts", "radar"))

	require.EqualValues(t, 999999, dig(bs, 1, "organizationId"))
	require.NotEmpty(t, dig(bs, 1, "error"))
	require.Empty(t, dig(bs, 1, "radar"))

	require.EqualValues(t, hubID, dig(bs, 2, "organizationId"))
	require.Equal(t, []float64{1001, 1002, 1003}, ids(dig(bs, 2, "radar")))
	require.Equal(t, []float64{101}, ids(dig(bs, 2, "radar", 0, "owners")))
	require.Equal(t, []float64{10010, 10011}, ids(dig(bs, 2, "radar", 0, "evidence")))
	require.Equal(t, []float64{2002, 2004, 2006}, ids(dig(bs, 3, "signal")))
	require.Equal(t, []float64{102}, ids(dig(bs, 3, "signal", 2, "eventOwner")))
}
