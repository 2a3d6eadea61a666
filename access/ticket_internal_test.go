package access

import (
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
)

// TestTicketBindsKeyRouteQueryAndTime: a ticket opens its own route and
// query (in any order) until it expires, with the key's hash; another
// route, query or secret, or a later time, is refused.
func TestTicketBindsKeyRouteQueryAndTime(t *testing.T) {
	t.Parallel()
	tk := newTickets("ticket-test-secret")
	hash := db.HashAPIKey("ci_test-key")
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	ticket, exp := tk.mint(hash, "/v1/stream", url.Values{"surface": {"signal"}, "category": {"defi"}}, now)
	require.Equal(t, now.Add(TicketTTL), exp)
	require.NotContains(t, ticket, "ci_test-key")
	check := func(target string, at time.Time) bool {
		got, ok := tk.check(httptest.NewRequest("GET", target, nil), at)
		require.True(t, !ok || string(got) == string(hash))
		return ok
	}
	q := "&ticket=" + url.QueryEscape(ticket)
	require.True(t, check("/v1/stream?surface=signal&category=defi"+q, now))
	require.True(t, check("/v1/stream?category=defi&surface=signal"+q, exp.Add(-time.Second)))
	require.False(t, check("/v1/stream?category=defi&surface=signal"+q, exp), "expired")
	require.False(t, check("/v1/stream?surface=signal"+q, now), "another query")
	require.False(t, check("/graphql?surface=signal&category=defi"+q, now), "another route")
	other, _ := newTickets("another-secret").mint(hash, "/v1/stream", url.Values{"surface": {"signal"}, "category": {"defi"}}, now)
	require.False(t, check("/v1/stream?surface=signal&category=defi&ticket="+url.QueryEscape(other), now), "another secret")
	require.Nil(t, newTickets(""), "no secret, no tickets")
}
