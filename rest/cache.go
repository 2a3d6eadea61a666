package rest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/singleflight"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/observe"
)

// Defaults of the response cache (see CacheConfig).
const (
	DefaultCacheTTL     = time.Second
	DefaultCacheEntries = 256
	DefaultCacheMaxBody = 256 << 10
)

// CacheConfig configures the response cache of the graph-read routes.
type CacheConfig struct {
	// TTL is how long an encoded response is reused, and the width of the
	// time bucket in its key; zero or negative disables the cache.
	TTL time.Duration
	// Entries bounds the number of responses kept (least recently used go
	// first); zero or negative disables the cache.
	Entries int
	// MaxBody is the largest encoded body stored; larger responses are
	// computed for every request. Defaults to DefaultCacheMaxBody.
	MaxBody int
}

// responseCache keeps the encoded bodies of graph-read responses, so that
// the identical requests feeds are polled with (dashboards and bots asking
// for /v1/latest every few seconds) cost one metering statement instead of
// an operation, its loads and the encoding.
//
// It changes nothing a client can see beyond a request's own latency:
//   - A response is only reused for the same route, operation, parsed
//     parameters and variables, and the same plan (fields gated by plan
//     cannot leak to a lower one).
//   - The key holds the content version the request's metering statement
//     read (access.Caller.DataVersion). Every write to the content tables
//     bumps it in the writing transaction, so once new content is
//     committed no request metered after it can be given an older body,
//     whichever server process built it. Requests whose version is unknown
//     (paid per request, /graphql) are never cached.
//   - The key holds the request time's TTL bucket: windows relative to now
//     ("the last 24h") move on at least every TTL.
//   - Metering and every access header stay per request: the cache sits
//     inside the access layer.
//
// Identical requests that miss at the same time share one computation
// (singleflight); errors are never stored.
type responseCache struct {
	ttl     time.Duration
	maxBody int
	lru     *expirable.LRU[string, *cachedBody]
	flight  singleflight.Group
}

// cachedBody is an encoded response body (newline included) and its ETag
// value (without quotes), computed once. A pooled body is in a buffer of
// jsonw's pool that nothing else keeps: the frame gives it back once it has
// written it.
type cachedBody struct {
	body   []byte
	tag    string
	pooled bool
}

// newResponseCache returns the cache cfg describes, or nil when it is
// disabled.
func newResponseCache(cfg CacheConfig) *responseCache {
	if cfg.TTL <= 0 || cfg.Entries <= 0 {
		return nil
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultCacheMaxBody
	}
	return &responseCache{
		ttl:     cfg.TTL,
		maxBody: cfg.MaxBody,
		lru:     expirable.NewLRU[string, *cachedBody](cfg.Entries, nil, cfg.TTL),
	}
}

// key returns the cache key of call c, and false when c must not be
// cached.
func (rc *responseCache) key(ctx context.Context, c *Call) (string, bool) {
	caller, ok := access.CallerFrom(ctx)
	if !ok || caller.DataVersion <= 0 || caller.Paid {
		return "", false
	}
	params, err := json.Marshal(struct {
		Values map[string]any  `json:"v"`
		Given  map[string]bool `json:"g"`
		Vars   map[string]any  `json:"q"`
	}{c.Values, c.Given, c.Vars})
	if err != nil {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(params) + len(c.Route.Path) + len(c.Operation) + 64)
	b.WriteString(strconv.FormatInt(caller.DataVersion, 10))
	b.WriteByte('|')
	b.WriteString(strconv.FormatInt(c.Now.UnixNano()/int64(rc.ttl), 10))
	b.WriteByte('|')
	b.WriteString(caller.Plan.Name)
	b.WriteByte('|')
	b.WriteString(c.Route.Method)
	b.WriteByte(' ')
	b.WriteString(c.Route.Path)
	b.WriteByte('|')
	b.WriteString(c.Operation)
	b.WriteByte('|')
	b.Write(params)
	return b.String(), true
}

// get returns the body of c, from the cache when it holds one, otherwise
// computed by compute (once for all identical requests in flight) and
// stored when it fits.
func (rc *responseCache) get(ctx context.Context, c *Call, compute func(context.Context) ([]byte, error)) (*cachedBody, error) {
	key, ok := rc.key(ctx, c)
	if !ok {
		body, err := compute(ctx)
		if err != nil {
			return nil, err
		}
		return &cachedBody{body: body}, nil
	}
	if cb, ok := rc.lru.Get(key); ok {
		observe.ResponseCache("hit")
		return cb, nil
	}
	v, err, shared := rc.flight.Do(key, func() (any, error) {
		body, err := compute(ctx)
		if err != nil {
			return nil, err
		}
		cb := &cachedBody{body: body, tag: bodyTag(body)}
		if len(body) <= rc.maxBody {
			rc.lru.Add(key, cb)
			observe.ResponseCache("miss")
		} else {
			observe.ResponseCache("skip")
		}
		return cb, nil
	})
	if err != nil {
		// The request that computed it may have been cancelled (its
		// client went away): that is no reason to fail this one.
		if shared && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) && ctx.Err() == nil {
			body, err := compute(ctx)
			if err != nil {
				return nil, err
			}
			return &cachedBody{body: body}, nil
		}
		return nil, err
	}
	if shared {
		observe.ResponseCache("shared")
	}
	return v.(*cachedBody), nil
}

// bodyTag is the strong ETag value of body (without quotes): its length
// and its 64-bit xxHash, base64url. A validator needs no cryptographic
// hash (a client only ever compares tags of one URL), and SHA-256 over
// every computed page was 6% of a computed /v1/latest request's CPU.
func bodyTag(body []byte) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(len(body)))
	binary.BigEndian.PutUint64(b[4:], xxhash.Sum64(body))
	return base64.RawURLEncoding.EncodeToString(b[:])
}
