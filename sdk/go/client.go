package cryptointel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Version is the client's version; it follows the API's (1.0.x).
const Version = "1.0.0"

// DefaultBaseURL is the local demo server that `make run` serves.
const DefaultBaseURL = "http://localhost:8080"

// RouteInfo describes one /v1 route of the OpenAPI document (Routes).
type RouteInfo struct {
	Method, Path, OperationID string
	// Legacy: the route takes `legacy` (events in the full or lean shape).
	Legacy bool
	// Cursor: the route walks pages with `cursor` and next_cursor.
	Cursor bool
}

// RetryPolicy bounds the retries of a request answered 429 or 503, or
// failing to connect. Other statuses are never retried: a 4xx that
// retrying cannot fix is returned at once.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt (0: none).
	MaxRetries int
	// BaseDelay is the first backoff; each retry doubles it, up to MaxDelay,
	// and waits a random duration up to it (full jitter).
	BaseDelay, MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits for; a
	// longer one is returned as the error at once.
	MaxRetryAfter time.Duration
}

// DefaultRetry is the retry policy of a new client.
var DefaultRetry = RetryPolicy{MaxRetries: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 8 * time.Second, MaxRetryAfter: 60 * time.Second}

// Meta is what the headers of a response say about the caller's limits:
// the rate window, the monthly credits, the request id.
type Meta struct {
	StatusCode       int
	RequestID        string
	PlanTier         string
	CreditCost       int
	RateLimit        int // requests per window
	RateRemaining    int // requests left in the window
	RateReset        int // seconds until the window resets
	MonthlyLimit     int
	MonthlyUsed      int
	MonthlyRemaining int
	// Attempts is how many times the request was sent (retries + 1).
	Attempts int
}

func headerInt(h http.Header, name string) int {
	n, _ := strconv.Atoi(h.Get(name))
	return n
}

func metaOf(resp *http.Response, attempts int) Meta {
	h := resp.Header
	return Meta{
		StatusCode: resp.StatusCode, RequestID: h.Get("X-Request-Id"), PlanTier: h.Get("X-Plan-Tier"),
		CreditCost: headerInt(h, "X-Credit-Cost"), RateLimit: headerInt(h, "X-RateLimit-Limit"),
		RateRemaining: headerInt(h, "X-RateLimit-Remaining"), RateReset: headerInt(h, "X-RateLimit-Reset"),
		MonthlyLimit: headerInt(h, "X-Monthly-Limit"), MonthlyUsed: headerInt(h, "X-Monthly-Used"),
		MonthlyRemaining: headerInt(h, "X-Monthly-Remaining"), Attempts: attempts,
	}
}

// Client calls the cryptointel API. Its embedded ClientWithResponses has
// one method per /v1 route (generated from the OpenAPI document: typed
// parameters, typed results in JSON200 or JSON201); any answer other than
// a success comes back as an *APIError. Client adds the cursor walks
// (Walk), the event stream (Stream), GraphQL (Query) and LastMeta.
type Client struct {
	*ClientWithResponses
	base    *url.URL
	key     string
	http    *http.Client
	retry   RetryPolicy
	payer   Payer
	lean    bool
	sleep   func(context.Context, time.Duration) error
	mu      sync.Mutex
	last    Meta
	headers http.Header
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as the Bearer credential.
func WithAPIKey(key string) Option { return func(c *Client) { c.key = key } }

// WithHTTP sends requests with hc (its Timeout bounds each attempt).
func WithHTTP(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithTimeout bounds each attempt of a request (default 30s).
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		hc := *c.http
		hc.Timeout = d
		c.http = &hc
	}
}

// WithRetry replaces the retry policy.
func WithRetry(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithPayer answers a 402 with p and sends the request again, paid.
func WithPayer(p Payer) Option { return func(c *Client) { c.payer = p } }

// WithLegacy asks for the contract's full event shape (canonical and legacy
// names) instead of the lean one, on every route that has both.
func WithLegacy() Option { return func(c *Client) { c.lean = false } }

// WithHeader adds a header to every request.
func WithHeader(name, value string) Option { return func(c *Client) { c.headers.Add(name, value) } }

// New returns a client of the API at baseURL ("" for DefaultBaseURL).
func New(baseURL string, opts ...Option) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("cryptointel: invalid base URL: %w", err)
	}
	c := &Client{base: u, http: &http.Client{Timeout: 30 * time.Second}, retry: DefaultRetry, lean: true,
		sleep: sleepCtx, headers: http.Header{}}
	for _, o := range opts {
		o(c)
	}
	c.ClientWithResponses, err = NewClientWithResponses(u.String(), WithHTTPClient(doer{c}))
	if err != nil {
		return nil, err
	}
	return c, nil
}

// doer is the generated client's transport: the client's Do.
type doer struct{ c *Client }

// Do sends the generated client's request through the client's policy.
func (d doer) Do(req *http.Request) (*http.Response, error) { return d.c.Do(req) }

// LastMeta returns the headers' facts of the last response (rate window,
// credits, request id).
func (c *Client) LastMeta() Meta {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// routeOf finds the route of method and path (a concrete path), without
// allocating: it runs on every request.
func routeOf(method, path string) *RouteInfo {
	for i := range Routes {
		r := &Routes[i]
		if r.Method == method && pathMatches(r.Path, path) {
			return r
		}
	}
	return nil
}

// pathMatches reports whether path fills the template tmpl ({name}
// segments match any one segment).
func pathMatches(tmpl, path string) bool {
	for {
		ts, trest, tmore := strings.Cut(tmpl, "/")
		ps, prest, pmore := strings.Cut(path, "/")
		if !(strings.HasPrefix(ts, "{") && ps != "") && ts != ps {
			return false
		}
		if tmore != pmore {
			return false
		}
		if !tmore {
			return true
		}
		tmpl, path = trest, prest
	}
}

// prepare sets the credential, the client's headers and, on a route with
// both shapes, legacy=false unless the caller chose.
func (c *Client) prepare(req *http.Request) {
	if c.key != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("User-Agent", "cryptointel-go/"+Version)
	for k, v := range c.headers {
		req.Header[k] = v
	}
	if c.lean && !strings.Contains(req.URL.RawQuery, "legacy=") {
		if r := routeOf(req.Method, req.URL.Path); r != nil && r.Legacy {
			if req.URL.RawQuery == "" {
				req.URL.RawQuery = "legacy=false"
			} else {
				req.URL.RawQuery += "&legacy=false"
			}
		}
	}
}

// Do sends req with the client's credential, retries and payer. A success
// (2xx or 304) is returned as is; any other status is an *APIError (the
// body read and closed).
func (c *Client) Do(req *http.Request) (*http.Response, error) { return c.doWith(c.http, req) }

func (c *Client) doWith(hc *http.Client, req *http.Request) (*http.Response, error) {
	c.prepare(req)
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	ctx := req.Context()
	paid := false
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 || paid || body != nil {
			r = req.Clone(ctx) // a retry sends a copy, with the body again
		}
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		resp, err := hc.Do(r)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			cerr := &ConnectionError{Err: err}
			if !retryableNetErr(err) || attempt >= c.retry.MaxRetries {
				return nil, cerr
			}
			if err := c.sleep(ctx, c.backoff(attempt)); err != nil {
				return nil, err
			}
			continue
		}
		m := metaOf(resp, attempt+1)
		c.mu.Lock()
		c.last = m
		c.mu.Unlock()
		if resp.StatusCode < 400 {
			return resp, nil
		}
		apiErr := newAPIError(resp, m)
		if resp.StatusCode == http.StatusPaymentRequired && c.payer != nil && !paid {
			pr, perr := ParsePaymentRequired(resp.Header.Get("PAYMENT-REQUIRED"))
			if perr != nil {
				return nil, fmt.Errorf("%w (%v)", apiErr, perr)
			}
			header, perr := c.payer.Pay(ctx, pr)
			if perr != nil {
				return nil, fmt.Errorf("cryptointel: paying for %s: %w", req.URL.Path, perr)
			}
			req.Header.Set("PAYMENT-SIGNATURE", header)
			paid = true
			attempt--
			continue
		}
		if !apiErr.Retryable() || attempt >= c.retry.MaxRetries {
			return nil, apiErr
		}
		wait := c.backoff(attempt)
		if apiErr.RetryAfter > 0 {
			if apiErr.RetryAfter > c.retry.MaxRetryAfter {
				return nil, apiErr
			}
			wait = apiErr.RetryAfter
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// backoff is the jittered exponential delay before retry attempt+1.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.retry.BaseDelay << attempt
	if d <= 0 || d > c.retry.MaxDelay {
		d = c.retry.MaxDelay
	}
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

// retryableNetErr: a failure to connect or a connection cut before an
// answer; a timeout of the whole attempt is not retried (the server may be
// working on it).
func retryableNetErr(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

// parseRetryAfter reads Retry-After: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// WithJSONBody sends v as the request's JSON body in place of the one the
// method was given: every route's body is typed (PostV1WebhooksJSONRequestBody
// and the like), and this is for a body the types cannot say, e.g. a field
// a newer server accepts:
//
//	c.PatchV1WebhooksIdWithResponse(ctx, id, cryptointel.PatchV1WebhooksIdJSONRequestBody{},
//		cryptointel.WithJSONBody(map[string]any{"active": true, "new_field": 1}))
func WithJSONBody(v any) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		req.Header.Set("Content-Type", "application/json")
		return nil
	}
}
