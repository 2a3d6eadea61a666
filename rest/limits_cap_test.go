package rest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

// TestGraphParamsCappedByResolver pins the one cap of a /v1 parameter that
// feeds a GraphQL argument: the route only parses it (a value above its
// maximum reaches the variable as sent) and the argument's resolver caps
// it with the bounds the parameter was declared with, which must be a
// GraphQL argument's bounds of limits.go (else no resolver would cap it,
// nor record the value the body echoes). A bounded parameter no resolver
// sees is capped by parseValue.
func TestGraphParamsCappedByResolver(t *testing.T) {
	t.Parallel()
	argBounds := map[*cryptointel.Bounds]bool{}
	for coord, b := range cryptointel.Limits {
		if !strings.HasPrefix(coord, "GET ") {
			argBounds[b] = true
		}
	}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	seen := 0
	for _, r := range Routes() {
		for i := range r.Params {
			p := &r.Params[i]
			if p.Bounds == nil {
				continue
			}
			if !r.resolverCaps(p) {
				require.True(t, p.Var == "" || r.Handler != nil, "%s %s: a bounded parameter of a graph route that feeds $%s is capped by its resolver", r.Path, p.Name, p.Var)
				continue
			}
			seen++
			require.True(t, argBounds[p.Bounds], "%s %s feeds $%s with bounds no GraphQL argument has: no resolver caps it", r.Path, p.Name, p.Var)
			if r.Method != "GET" || p.In != "query" {
				continue
			}
			over := p.Bounds.Max + 1000
			path := strings.ReplaceAll(r.Path, "{id}", "101")
			q := "?" + p.Name + "=" + strconv.Itoa(over)
			for _, rp := range r.Params {
				if rp.Required && rp.In == "query" {
					q += "&" + rp.Name + "=" + sampleValue(rp, now)
				}
			}
			req := httptest.NewRequest("GET", path+q, nil)
			req.SetPathValue("id", "101")
			c, err := parseCall(&r, req, now)
			require.NoError(t, err, "%s%s", path, q)
			require.Equal(t, over, c.Vars[p.Var], "%s: the route passes %s as parsed; the resolver caps it", r.Path, p.Name)
		}
	}
	require.Positive(t, seen)

	// A bounded parameter of a handler route is capped where it is parsed.
	rt := &Route{Method: "GET", Path: "/v1/test", Handler: func(http.ResponseWriter, *http.Request) error { return nil }, Params: []Param{limitParam(&cryptointel.KeysLimit)}}
	c, err := parseCall(rt, httptest.NewRequest("GET", "/v1/test?limit=100000", nil), now)
	require.NoError(t, err)
	require.Equal(t, cryptointel.KeysLimit.Max, c.Int("limit"))
}
