package tests

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// paidErrorKinds are /graphql requests that end in every kind of GraphQL
// error: refused before they are priced (the document, its limits, a field
// a payer may not read) — nothing may be paid or served — or run and
// answered with errors beside (or instead of) data — paid for, settled
// exactly once, never served again for the same credential.
func paidErrorKinds() []struct {
	name string
	body map[string]any
	ran  bool
} {
	var deep strings.Builder
	deep.WriteString("{ entity(id: 101) { ")
	for i := 0; i < 9; i++ {
		deep.WriteString("relationships(first: 1) { relatedEntity { ")
	}
	deep.WriteString("id")
	deep.WriteString(strings.Repeat(" } }", 9) + " } }")
	ids := make([]string, 25)
	for i := range ids {
		ids[i] = fmt.Sprint(i + 1)
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	q := func(query string) map[string]any { return map[string]any{"query": query} }
	return []struct {
		name string
		body map[string]any
		ran  bool
	}{
		{"parse error", q("{ entity(id: 101) { canonicalName }"), false},
		{"unknown field", q("{ entity(id: 101) { password } }"), false},
		{"unknown operation name", map[string]any{"query": "query A { entity(id: 101) { id } }", "operationName": "B"}, false},
		{"missing variable", q("query($id: Int!) { entity(id: $id) { canonicalName } }"), false},
		{"subscription over POST", q("subscription { events { id } }"), false},
		{"depth limit", q(deep.String()), false},
		{"alias limit", q(aliased("entity(id: 101) { canonicalName }", 101)), false},
		{"complexity limit", q("{ entities(ids: [" + strings.Join(ids, ",") + "]) { relationships(first: 50) { relatedEntity { events(first: 25) { nodes { id } } } } } }"), false},
		{"introspection limit", q("{ a: __schema { types { name } } b: __schema { types { name } } }"), false},
		{"a field the payer may not read", q(`{ entity(id: 101) { canonicalName } brief(id: 101, since: "` + since + `") { label } }`), false},
		{"field error beside data", q(`{ entity(id: 101) { canonicalName events(after: "garbage") { nodes { id } } } }`), true},
		{"field error nulling data", q(`{ a: entity(id: 101) { canonicalName } b: searchEvents(query: "") { matchType } }`), true},
		{"nothing found", q(`{ entity(id: 99999) { canonicalName } }`), true},
	}
}

// servesData reports whether a GraphQL response body carries data.
func servesData(t *testing.T, body string) bool {
	t.Helper()
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(body), &m) != nil {
		return strings.Contains(body, "canonicalName")
	}
	d, ok := m["data"]
	return ok && strings.TrimSpace(string(d)) != "null"
}

// TestPaidGraphQLErrorsSettleOrServeNothing pays /graphql with each
// protocol's own client for every kind of GraphQL error: a request refused
// before it is priced is answered with its errors alone (no 402, nothing
// signed, settled or served); one that ran is settled exactly once before
// it is served, with its data and its errors. Replaying the credential
// is refused when it was settled and serves nothing when it was not; the
// payee receives exactly the prices of the responses served. (A paid
// query with one field the payer could not read once served its data 20
// times on one x402 authorization, settling none.)
func TestPaidGraphQLErrorsSettleOrServeNothing(t *testing.T) {
	t.Parallel()
	e := startPaymentsInterop(t)
	start := e.balance(t, e.fac.PayTo)
	var charged int64
	var settledRuns, refusedRuns int
	for _, client := range []string{"x402-fetch", "x402-v2", "mppx"} {
		for _, k := range paidErrorKinds() {
			name := client + ": " + k.name
			raw, err := json.Marshal(k.body)
			require.NoError(t, err)
			body := string(raw)
			var price int64
			if k.ran {
				price = e.price(t, "POST", "/graphql", body)
			}
			before, _ := e.settlements(t)
			res := e.pay(t, client, "POST", "/graphql", body, nil)
			after, _ := e.settlements(t)
			if !k.ran {
				require.Equal(t, before, after, "%s: settled", name)
				require.GreaterOrEqual(t, res.Status, 400, "%s: %s", name, res.Body)
				require.Less(t, res.Status, 500, "%s: %s", name, res.Body)
				require.NotEqual(t, http.StatusPaymentRequired, res.Status, "%s: refused before pricing, not offered a price: %s", name, res.Body)
				require.False(t, servesData(t, res.Body), "%s served data: %s", name, res.Body)
				for _, s := range res.Sent {
					for _, h := range []string{"x-payment", "payment-signature"} {
						require.Empty(t, s.Headers[h], "%s: the client paid", name)
					}
					require.False(t, strings.HasPrefix(s.Headers["authorization"], "Payment "), "%s: the client paid", name)
				}
				refusedRuns++
				continue
			}
			require.Equal(t, before+1, after, "%s: settled once: %s", name, res.Body)
			require.Equal(t, http.StatusOK, res.Status, "%s: %s", name, res.Body)
			require.Contains(t, res.Body, `"data"`, "%s", name)
			charged += price
			settledRuns++
			// The credential that paid cannot pay again.
			hn, hv := res.payment(t)
			r := e.send(t, "POST", "/graphql", body, http.Header{hn: {hv}})
			require.Equal(t, http.StatusPaymentRequired, r.status, "%s replayed: %s", name, r.body)
			require.False(t, servesData(t, string(r.body)), "%s replayed served data", name)
			got, _ := e.settlements(t)
			require.Equal(t, after, got, "%s replayed: settled again", name)
		}
	}
	paid := new(big.Int).Sub(e.balance(t, e.fac.PayTo), start)
	require.Equal(t, big.NewInt(charged).String(), paid.String(), "the payee received exactly the prices served")
	summary(t, "paid GraphQL errors: 3 clients × %d kinds of error: %d refused before pricing (nothing signed, settled or served), %d ran and settled once before being served (replays refused)",
		len(paidErrorKinds()), refusedRuns, settledRuns)
}
