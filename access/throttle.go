package access

import (
	"math"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultMaxFailedPayments is how many refused payments one client
// address, or one payer, may present per minute by default
// (PaymentConfig.MaxFailedPayments).
const DefaultMaxFailedPayments = 30

// msgPaymentThrottledFmt refuses a client address or payer over its
// refused payments: the bound per minute, the seconds to wait.
const msgPaymentThrottledFmt = "Too many refused payments from your address or payer: at most %d per minute. Retry in %d seconds."

// FailureThrottle counts failures per key (a client address, a payer) in
// fixed windows aligned to the clock; past max in a window, the key is
// refused until the window ends. It is kept in memory, per process, and
// holds at most 8,192 keys. The payments and /admin/ingest's wrong tokens
// use it.
type FailureThrottle struct {
	max    int // 0 or negative: no throttle
	window time.Duration

	mu     sync.Mutex
	counts map[string]failureCount
}

type failureCount struct {
	start time.Time
	n     int
}

// NewFailureThrottle returns a throttle of maxFailures per window (0 or
// negative: no throttle).
func NewFailureThrottle(maxFailures int, window time.Duration) *FailureThrottle {
	return &FailureThrottle{max: maxFailures, window: window, counts: map[string]failureCount{}}
}

// Blocked returns the whole seconds (at least 1) key must wait, or 0 when
// it may try.
func (f *FailureThrottle) Blocked(key string, now time.Time) int64 {
	if f == nil || f.max <= 0 || key == "" {
		return 0
	}
	start := now.Truncate(f.window)
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.counts[key]
	if !c.start.Equal(start) || c.n < f.max {
		return 0
	}
	return max(int64(math.Ceil(start.Add(f.window).Sub(now).Seconds())), 1)
}

// Fail counts a failure of key.
func (f *FailureThrottle) Fail(key string, now time.Time) {
	if f == nil || f.max <= 0 || key == "" {
		return
	}
	start := now.Truncate(f.window)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.counts) > 8192 {
		for k, c := range f.counts { // forget past windows
			if !c.start.Equal(start) {
				delete(f.counts, k)
			}
		}
		if len(f.counts) > 8192 {
			clear(f.counts) // a flood of distinct keys: start over rather than grow
		}
	}
	c := f.counts[key]
	if !c.start.Equal(start) {
		c = failureCount{start: start}
	}
	c.n++
	f.counts[key] = c
}

// MaxEcho is how much of a client's own input a message quotes, in bytes.
const MaxEcho = 64

// Clip returns s cut to MaxEcho bytes (on a rune boundary) with an
// ellipsis: a message quotes what a client sent, never all of it. Every
// message that quotes a client's input, here and in the facades above,
// goes through it.
func Clip(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
