package access

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// The door: what this process checks before it reads a request's body.
//
// A request carrying a key is refused before anything of it is read when
// this process already knows the answer: the key is unknown, revoked or
// expired (401), its rate window is spent (429, the window's statement
// already said so: the count only grows until the window ends), or its
// client address sent more invalid keys this minute than
// Config.AddressLimit allows (429). A /graphql request whose key this
// process has not seen lately has the key looked up (one read, no window
// count) before its document is read, parsed or validated. What the door
// learns comes from the metering statements themselves (a key found, a
// key refused, a window that reached its limit), kept for doorTTL in a
// bounded map.
//
// The per-address throttle counts requests without a valid key: invalid,
// revoked or expired keys on every surface, and anonymous discovery on
// /mcp (AdmitAnonymous). Its map of addresses is bounded (maxDoorAddrs);
// addresses beyond it share one count.

// DefaultAddressLimit is how many requests without a valid key one client
// address may make per minute (Config.AddressLimit).
const DefaultAddressLimit = 60

// MsgAddressThrottledFmt is the 429 message of an address over
// Config.AddressLimit: the limit, then the seconds to wait.
const MsgAddressThrottledFmt = "Too many requests without a valid API key from your address: at most %d per minute. Retry in %d seconds."

// MsgKeyBusyFmt is the 429 message of a request over its key's share of
// the database (Config.KeyShare): the share.
const MsgKeyBusyFmt = "Too many requests running at once for this API key: at most %d at a time per server. Retry shortly, or send fewer requests in parallel."

const (
	// doorTTL is how long the door trusts what it learned of a key.
	doorTTL = time.Minute
	// maxDoorKeys bounds the keys the door remembers; past it the memory
	// starts over.
	maxDoorKeys = 10_000
	// maxDoorAddrs bounds the addresses the throttle counts apart.
	maxDoorAddrs = 10_000
	// addressWindow is the throttle's fixed window.
	addressWindow = time.Minute
)

// keyFacts is what the door knows of one key.
type keyFacts struct {
	learned time.Time
	// refusal is the 401 message of an unknown, revoked or expired key;
	// "" for a usable one.
	refusal string
	// spent is the start of a rate window the key has used up (zero:
	// none).
	spent time.Time
	// res is the key's last meter result (nil before any): the headers
	// of a refusal at the door.
	res *db.MeterResult
	// refused counts the door's refusals in the spent window.
	refused int
}

// A caller refused at the door over and over (a closed loop of requests
// its spent window or its address's limit refuses) gets each further
// refusal after tarpitDelay, once it had more than its window's worth of
// them: a flood of refusals then costs the server next to no CPU, and
// other callers keep the cores. At most maxTarpit requests wait at once;
// beyond, refusals are answered at once.
const (
	tarpitDelay = 50 * time.Millisecond
	maxTarpit   = 1000
)

// tarpit waits tarpitDelay (or until ctx ends) unless maxTarpit requests
// wait already.
func (d *door) tarpit(ctx context.Context) {
	if d.tarpitting.Add(1) > maxTarpit {
		d.tarpitting.Add(-1)
		return
	}
	defer d.tarpitting.Add(-1)
	t := time.NewTimer(tarpitDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// refusedAgain counts one more refusal of the key at the door in its
// spent window and returns the count.
func (d *door) refusedAgain(hash []byte) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := hashKey(hash)
	f, ok := d.keys[k]
	if !ok {
		return 0
	}
	f.refused++
	d.keys[k] = f
	return f.refused
}

type door struct {
	addrLimit  int
	tarpitting atomic.Int32
	// version is the newest content version a metering statement of this
	// process saw: the version a request read ahead is predicted to be
	// metered at (readahead.go).
	version atomic.Int64

	mu         sync.Mutex
	keys       map[[32]byte]keyFacts
	addrWindow time.Time
	addrs      map[string]int
	overflow   int
}

func newDoor(addrLimit int) *door {
	return &door{addrLimit: addrLimit, keys: map[[32]byte]keyFacts{}, addrs: map[string]int{}}
}

func hashKey(hash []byte) (k [32]byte) {
	copy(k[:], hash)
	return k
}

// facts returns what the door knows of the key whose hash is hash.
func (d *door) facts(hash []byte, now time.Time) (keyFacts, bool) {
	return d.factsWithin(hash, now, doorTTL)
}

// factsWithin returns what the door learned of the key whose hash is hash
// within ttl before now.
func (d *door) factsWithin(hash []byte, now time.Time, ttl time.Duration) (keyFacts, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.keys[hashKey(hash)]
	if !ok || now.Sub(f.learned) > ttl || now.Before(f.learned) {
		return keyFacts{}, false
	}
	return f, true
}

func (d *door) store(hash []byte, f keyFacts) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.keys) >= maxDoorKeys {
		clear(d.keys)
	}
	d.keys[hashKey(hash)] = f
}

// learnRefused records a key refused as unknown, revoked or expired.
func (d *door) learnRefused(hash []byte, now time.Time, msg string) {
	d.store(hash, keyFacts{learned: now, refusal: msg})
}

// learnMeter records a metering statement's result for a usable key:
// windowStart is spent once the window holds limit requests.
func (d *door) learnMeter(res *db.MeterResult, now, windowStart time.Time, limit int) {
	if res == nil || res.Key.Revoked {
		return
	}
	for v := d.version.Load(); res.DataVersion > v && !d.version.CompareAndSwap(v, res.DataVersion); v = d.version.Load() {
	}
	last := *res
	f := keyFacts{learned: now, res: &last}
	if res.WindowRequests >= limit {
		f.spent = windowStart
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := hashKey(res.Key.Hash)
	if old, ok := d.keys[k]; ok && !f.spent.IsZero() && old.spent.Equal(f.spent) {
		f.refused = old.refused // the same spent window: its refusals go on counting
	}
	if len(d.keys) >= maxDoorKeys {
		clear(d.keys)
	}
	d.keys[k] = f
}

// learnUsable records a key found usable by a lookup.
func (d *door) learnUsable(hash []byte, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.keys[hashKey(hash)]; ok && f.refusal == "" && !now.Before(f.learned) && now.Sub(f.learned) <= doorTTL {
		return
	}
	if len(d.keys) >= maxDoorKeys {
		clear(d.keys)
	}
	d.keys[hashKey(hash)] = keyFacts{learned: now}
}

// countAddress counts one request without a valid key from addr and
// reports whether the address is over the limit, and the seconds until
// its window ends.
func (d *door) countAddress(addr string, now time.Time) (over bool, retry int) {
	if d.addrLimit < 0 {
		return false, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.addrCount(addr, now) + 1
	if _, ok := d.addrs[addr]; ok || len(d.addrs) < maxDoorAddrs {
		d.addrs[addr] = n
	} else {
		d.overflow = n
	}
	return n > d.addrLimit, d.addrRetry(now)
}

// addressOver reports whether addr is over the limit already, without
// counting a request.
func (d *door) addressOver(addr string, now time.Time) (over bool, retry int) {
	if d.addrLimit < 0 {
		return false, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addrCount(addr, now) >= d.addrLimit, d.addrRetry(now)
}

// addrCount is addr's count in the current window; d.mu is held.
func (d *door) addrCount(addr string, now time.Time) int {
	if w := now.UTC().Truncate(addressWindow); !w.Equal(d.addrWindow) {
		d.addrWindow = w
		clear(d.addrs)
		d.overflow = 0
	}
	if n, ok := d.addrs[addr]; ok {
		return n
	}
	if len(d.addrs) >= maxDoorAddrs {
		return d.overflow
	}
	return 0
}

func (d *door) addrRetry(now time.Time) int {
	left := d.addrWindow.Add(addressWindow).Sub(now)
	return max(int((left+time.Second-1)/time.Second), 1)
}

// addressRefusal is the 429 of an address over the limit.
func (s *Service) addressRefusal(retry int) *cryptointel.Error {
	return cryptointel.Errorf(cryptointel.ERATELIMIT, MsgAddressThrottledFmt, s.door.addrLimit, retry)
}

// refuseAddress answers 429 for an address over the limit.
func (s *Service) refuseAddress(w http.ResponseWriter, now time.Time, retry int) {
	s.setAnonymousHeaders(w.Header(), now, TierNone)
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	writeError(w, http.StatusTooManyRequests, s.addressRefusal(retry).Message)
}

// keyRefused records a key refused as unusable (msg) for a request from
// addr, and returns the refusal to answer: the 401, or the address's 429
// once it sent more than the limit.
func (s *Service) keyRefused(hash []byte, addr string, now time.Time, msg string) (status int, refusal *cryptointel.Error, retry int) {
	s.door.learnRefused(hash, now, msg)
	if over, retry := s.door.countAddress(addr, now); over {
		return http.StatusTooManyRequests, s.addressRefusal(retry), retry
	}
	return http.StatusUnauthorized, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", msg), 0
}

// atDoor answers request r, carrying the key whose hash is hash, when
// the door can refuse it before its body is read; it reports whether it
// did. A /graphql request (lookup) whose key the door does not know has
// the key looked up first.
func (s *Service) atDoor(w http.ResponseWriter, r *http.Request, p Policy, now time.Time, hash []byte, lookup bool) bool {
	addr := ClientAddress(r)
	f, known := s.door.facts(hash, now)
	switch {
	case known && f.refusal != "":
		if p.Pricing != nil && s.pay.enabled() && s.pay.hasX402(r) {
			return false // a payment sent alongside: refuseKey takes it
		}
		s.answerKeyRefusal(r.Context(), w, hash, addr, now, f.refusal)
		return true
	case known && lookup && f.res != nil && f.spent.Equal(s.windowStart(now)):
		// A document would be read, parsed and validated only to be
		// refused: refuse it now, as the operation would have been. (A
		// /v1 request is metered before its work anyway: its statement is
		// the window's.)
		if s.door.refusedAgain(hash) > s.cfg.RateLimit {
			s.door.tarpit(r.Context())
		}
		res := *f.res
		res.WindowRequests = s.cfg.RateLimit + 1
		s.setMeterHeaders(w.Header(), now, &res, 0)
		if s.cfg.OnRateLimited != nil {
			s.cfg.OnRateLimited()
		}
		w.Header().Set("Retry-After", strconv.Itoa(s.resetSeconds(now)))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"errors": []map[string]any{{
			"message":    rateLimitMessage(s.cfg.RateLimit, s.cfg.RateWindow),
			"extensions": map[string]string{"code": cryptointel.ERATELIMIT},
		}}})
		return true
	case known:
		return false
	}
	if over, retry := s.door.addressOver(addr, now); over {
		s.door.tarpit(r.Context())
		s.refuseAddress(w, now, retry)
		return true
	}
	if !lookup {
		return false
	}
	k, err := s.store.KeyByHash(r.Context(), hash)
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND || (err == nil && subtle.ConstantTimeCompare(k.Hash, hash) != 1):
		if p.Pricing != nil && s.pay.enabled() && s.pay.hasX402(r) {
			return false
		}
		s.answerKeyRefusal(r.Context(), w, hash, addr, now, MsgInvalidKey)
		return true
	case err != nil:
		s.setAnonymousHeaders(w.Header(), now, TierNone)
		s.internalError(w, r, err)
		return true
	case k.Revoked:
		if p.Pricing != nil && s.pay.enabled() && s.pay.hasX402(r) {
			return false
		}
		s.answerKeyRefusal(r.Context(), w, hash, addr, now, unusableKeyMessage(k.Expired))
		return true
	}
	s.door.learnUsable(hash, now)
	return false
}

// answerKeyRefusal answers a request whose key is unusable (msg).
func (s *Service) answerKeyRefusal(ctx context.Context, w http.ResponseWriter, hash []byte, addr string, now time.Time, msg string) {
	status, refusal, retry := s.keyRefused(hash, addr, now, msg)
	if status == http.StatusTooManyRequests {
		s.door.tarpit(ctx)
		s.refuseAddress(w, now, retry)
		return
	}
	s.setAnonymousHeaders(w.Header(), now, TierNone)
	writeError(w, status, refusal.Message)
}

// AdmitAnonymous counts one request without a key from addr (anonymous
// discovery on /mcp) against the per-address limit; it returns the 429
// refusal once the address is over it.
func (s *Service) AdmitAnonymous(addr string) error {
	if over, retry := s.door.countAddress(addr, s.now()); over {
		return &RetryAfterError{Refusal: s.addressRefusal(retry), After: retry}
	}
	return nil
}

// keyShare caps the requests one key (or, without a key, one client
// address) runs at once in this process, so that one caller cannot hold
// more than its share of the database pool: beyond it a request waits in
// a bounded queue, at most shareWait, then is refused with 429.
type keyShare struct {
	limit int // < 1: no cap
	queue int // waiters per key beyond limit

	mu    sync.Mutex
	slots map[string]*shareSlot
}

type shareSlot struct {
	sem     chan struct{}
	holders int // running or waiting
}

// shareWait bounds the wait of a queued request.
const shareWait = 5 * time.Second

func newKeyShare(limit int) *keyShare {
	return &keyShare{limit: limit, queue: 4 * limit, slots: map[string]*shareSlot{}}
}

// acquire takes a place for key; release gives it back. ok is false when
// the key's queue is full or the wait ran out (or ctx ended).
func (k *keyShare) acquire(ctx context.Context, key string) (release func(), ok bool) {
	if k == nil || k.limit < 1 {
		return func() {}, true
	}
	k.mu.Lock()
	sl := k.slots[key]
	if sl == nil {
		sl = &shareSlot{sem: make(chan struct{}, k.limit)}
		k.slots[key] = sl
	}
	if sl.holders >= k.limit+k.queue {
		k.mu.Unlock()
		return nil, false
	}
	sl.holders++
	k.mu.Unlock()
	done := func() {
		k.mu.Lock()
		sl.holders--
		if sl.holders == 0 {
			delete(k.slots, key)
		}
		k.mu.Unlock()
	}
	select {
	case sl.sem <- struct{}{}:
	default:
		t := time.NewTimer(shareWait)
		defer t.Stop()
		select {
		case sl.sem <- struct{}{}:
		case <-t.C:
			done()
			return nil, false
		case <-ctx.Done():
			done()
			return nil, false
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-sl.sem
			done()
		})
	}, true
}

// refuseBusy answers a request over its key's share.
func (s *Service) refuseBusy(w http.ResponseWriter, now time.Time) {
	s.setAnonymousHeaders(w.Header(), now, TierNone)
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusTooManyRequests, fmt.Sprintf(MsgKeyBusyFmt, s.share.limit))
}

// Screen is the door of a surface that reads its body before it meters
// (the MCP endpoint): it returns the refusal this process already knows
// for request r without reading anything — EUNAUTHORIZED for a key known
// unknown, revoked or expired (counted against the address), a
// *RetryAfterError for an address over the limit whose key is not known
// valid — or nil.
func (s *Service) Screen(r *http.Request) error {
	scheme, cred := authorization(r)
	if scheme != "bearer" || cred == "" {
		return nil
	}
	now := s.now()
	hash, _ := s.credentialHash(r.Context(), cred)
	addr := ClientAddress(r)
	f, known := s.door.facts(hash, now)
	switch {
	case known && f.refusal != "":
		if p := r.Header; p.Get("X-PAYMENT") != "" || p.Get("PAYMENT-SIGNATURE") != "" {
			return nil
		}
		status, refusal, retry := s.keyRefused(hash, addr, now, f.refusal)
		if status == http.StatusTooManyRequests {
			s.door.tarpit(r.Context())
			return &RetryAfterError{Refusal: refusal, After: retry}
		}
		return refusal
	case known:
		return nil
	}
	if over, retry := s.door.addressOver(addr, now); over {
		s.door.tarpit(r.Context())
		return &RetryAfterError{Refusal: s.addressRefusal(retry), After: retry}
	}
	return nil
}

// SpentWindow reports whether this process knows the window of the key in
// an Authorization header value to be spent, and the seconds until it
// ends: a surface making several calls for one request (an MCP batch)
// refuses them as the route would, without a statement each.
func (s *Service) SpentWindow(ctx context.Context, authorization string) (retryAfter int, spent bool) {
	scheme, cred := ParseAuthorization(authorization)
	if scheme != "bearer" || cred == "" {
		return 0, false
	}
	now := s.now()
	hash, _ := s.credentialHash(ctx, cred)
	f, known := s.door.facts(hash, now)
	if !known || f.refusal != "" || f.res == nil || !f.spent.Equal(s.windowStart(now)) {
		return 0, false
	}
	if s.door.refusedAgain(hash) > s.cfg.RateLimit {
		s.door.tarpit(ctx)
	}
	if s.cfg.OnRateLimited != nil {
		s.cfg.OnRateLimited()
	}
	return s.resetSeconds(now), true
}

// RateLimitMessage is the 429 message of the rate window.
func (s *Service) RateLimitMessage() string {
	return rateLimitMessage(s.cfg.RateLimit, s.cfg.RateWindow)
}
