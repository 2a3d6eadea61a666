package tests

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
)

// TestRESTStatementsPerRoute: every /v1 route of the golden requests,
// computed, reads what it writes in one statement beside its metering
// statement — two in all; search three (the search, then its page of
// events) — once the process's one-time reads are behind it (a key's
// first use, the category list, a query's analysis, kept per content
// version). So a route's statements cannot grow with its page unseen: the
// market views read 6 here, and 99 at a million events, before they were
// folded.
func TestRESTStatementsPerRoute(t *testing.T) {
	t.Parallel()
	s := startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, restFixture()) }, func(c *app.Config) {
		c.StatementCountHeader = true
		c.ResponseCacheTTL = -time.Second
	})
	names := make([]string, 0, len(restGoldenRequests))
	for name := range restGoldenRequests {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := restGoldenRequests[name]
		key, _ := accesstest.NewKey(t, s.store, s.plan)
		first := s.getAs(t, key, path)
		r := s.getAs(t, key, path)
		require.Equal(t, first.Status, r.Status, "%s: %s", name, r.Body)
		limit := 2
		if strings.HasPrefix(path, "/v1/search") {
			limit = 3
		}
		assert.LessOrEqual(t, r.statements(t), limit, "%s (%s): statements with metering", name, path)
	}
}
