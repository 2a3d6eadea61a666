package access

import "net/http"

// headerSet sets a response's headers of one kind from one array: each
// value is its own one-element slice of it, under its key written in its
// canonical form once (as http.Header.Set writes it, without the key's
// conversion and the value's slice on every response).
type headerSet struct {
	keys []string
}

// newHeaderSet is the set of keys, canonicalized.
func newHeaderSet(keys ...string) headerSet {
	for i, k := range keys {
		keys[i] = http.CanonicalHeaderKey(k)
	}
	return headerSet{keys: keys}
}

// set sets h's keys of s to vals, in order.
func (s headerSet) set(h http.Header, vals ...string) {
	if len(vals) != len(s.keys) {
		panic("access: header values do not match their keys")
	}
	for i, k := range s.keys {
		h[k] = vals[i : i+1 : i+1]
	}
}

// The headers a metered response carries.
var (
	policyHeaders = newHeaderSet("X-Api-Surface", "X-Access-Layer", "X-Endpoint-Policy", "X-Credit-Cost")
	rateHeaders   = newHeaderSet("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit")
	meterHeaders  = newHeaderSet("X-Monthly-Limit", "X-Monthly-Used", "X-Monthly-Remaining", "X-Plan-Tier", "X-Credit-Cost")
)
