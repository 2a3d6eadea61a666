package app

import (
	"net/http"
	"net/url"
	"strings"
)

// corsExposed are the response headers a browser page may read: the rate
// window, the month's credits, the plan, the request id, the route's
// policy, caching, pagination and payment headers.
var corsExposed = strings.Join([]string{
	"X-Request-Id",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy", "Retry-After",
	"X-Monthly-Limit", "X-Monthly-Used", "X-Monthly-Remaining", "X-Credit-Cost", "X-Plan-Tier",
	"X-Api-Surface", "X-Access-Layer", "X-Endpoint-Policy",
	"ETag", "Link", "Location", "WWW-Authenticate", "PAYMENT-REQUIRED", "PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE",
}, ", ")

// corsAllowedHeaders are the request headers a page may send.
var corsAllowedHeaders = strings.Join([]string{
	"Authorization", "Content-Type", "Accept", "Last-Event-ID", "If-None-Match", "X-Request-Id",
	"X-PAYMENT", "PAYMENT-SIGNATURE",
}, ", ")

// corsMethods are the methods a page may use.
const corsMethods = "GET, HEAD, POST, PATCH, DELETE"

// corsMaxAge is how long a browser may keep a preflight's answer, in
// seconds.
const corsMaxAge = "600"

// corsPath reports whether path is served to other origins: /v1 (with
// /v1/stream) and /graphql.
func corsPath(path string) bool {
	return path == "/graphql" || path == "/v1" || strings.HasPrefix(path, "/v1/")
}

// normalizeOrigin returns origin as browsers send it: lower-case scheme
// and host, no path, no trailing slash; "" when it is not an origin.
func normalizeOrigin(origin string) string {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// withCORS answers the browsers of the allowed origins on the CORS paths:
// a preflight (OPTIONS with Access-Control-Request-Method) gets 204 with
// the methods and headers allowed, before the access layer, so it needs no
// key and costs nothing; every other response gets
// Access-Control-Allow-Origin (the origin itself) and the headers it may
// read. Credentials (cookies) are never involved: the key travels in
// Authorization. Other origins, and other paths, get nothing: their
// browsers refuse to let the page read the answer.
func withCORS(origins []string, next http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, o := range origins {
		if n := normalizeOrigin(o); n != "" {
			allowed[n] = true
		}
	}
	if len(allowed) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !corsPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin == "" || !allowed[normalizeOrigin(origin)] {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowedHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExposed)
		next.ServeHTTP(w, r)
	})
}

// streamOrigins are the host patterns whose pages may open streams: those
// of STREAM_ALLOWED_ORIGINS and the hosts of CORS_ALLOWED_ORIGINS.
func (c *Config) streamOrigins() []string {
	out := append([]string(nil), c.StreamAllowedOrigins...)
	for _, o := range c.CORSAllowedOrigins {
		if n := normalizeOrigin(o); n != "" {
			u, _ := url.Parse(n)
			out = append(out, u.Host)
		}
	}
	return out
}
