package access

import (
	"context"
	"crypto/subtle"
	"net/http"
	"slices"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// Reading ahead: a read whose key this process knows as good is served
// while it is metered, not after. Its metering statement and its reads
// then take one round trip's time instead of two in a row. The response is
// held in memory and sent only once the metering statement admitted the
// request as the key it was read for (same key, account, plan, scopes,
// restriction) at the content version it was read at; otherwise the held
// response is dropped and the request goes the usual way (metered, then
// served, or refused). A refused request is never served.
//
// Only a key whose last request this process metered within doorTTL was
// admitted (charged, window not spent) is read ahead: a key refused for
// its plan, its scopes, its rate window or its credits does not make the
// database read for requests it then refuses. Only reads (GET and HEAD) of
// the content surfaces (aheadSurfaces) whose policy the key's plan grants
// are read ahead; /graphql, streams, writes and the account's own routes
// (keys, usage: they read what their own metering writes) never are.

// aheadSurfaces are the surfaces read ahead: reads of the content.
var aheadSurfaces = []string{"lookup", "query", "feed", "timeline", "replay", "brief"}

// aheadFacts returns the last meter result of the key whose hash is hash
// when a request of policy p may be read ahead, else nil.
func (s *Service) aheadFacts(r *http.Request, p Policy, plans []cryptointel.Plan, hash []byte, now time.Time) *db.MeterResult {
	if p.CostByComplexity || !slices.Contains(aheadSurfaces, p.Surface) || IsWrite(r) || refusedAhead(r.Context()) {
		return nil
	}
	f, known := s.door.facts(hash, now)
	if !known || f.refusal != "" || f.res == nil {
		return nil
	}
	last := f.res
	if !last.Charged || last.Key.Revoked || !f.spent.IsZero() || last.WindowRequests >= s.cfg.RateLimit ||
		subtle.ConstantTimeCompare(last.Key.Hash, hash) != 1 {
		return nil
	}
	if keyRefusal(last.Key, p.Surface, false) != nil || !planAllows(plans, planNamed(plans, last.Key.Plan), p.Layer, p.Feature, p.MinPlan) {
		return nil
	}
	return last
}

// sameCaller reports whether a request metered as res is the caller last
// was, at the same content version: what was read for last is what res
// would have read.
func sameCaller(last, res *db.MeterResult) bool {
	return res.Key.ID == last.Key.ID && res.Key.AccountID == last.Key.AccountID && res.Key.Plan == last.Key.Plan &&
		slices.Equal(res.Key.Scopes, last.Key.Scopes) && slices.Equal(res.Key.Surfaces, last.Key.Surfaces) &&
		(res.Key.Surfaces == nil) == (last.Key.Surfaces == nil) && res.DataVersion == last.DataVersion
}

// serveAhead serves request r, metered with mp, while its metering
// statement runs (see aheadFacts); last is the key's last meter result.
// The handler runs at once; its response waits at its first byte (or
// status, or flush) for the metering's answer, then goes through as it is
// written, or is dropped.
func (s *Service) serveAhead(w http.ResponseWriter, r *http.Request, p Policy, next http.Handler, now time.Time,
	hash []byte, plans []cryptointel.Plan, mp db.MeterParams, cost int64, last *db.MeterResult) {
	ctx := r.Context()
	gate := &aheadGate{done: make(chan struct{})}
	aw := &aheadWriter{w: w, header: w.Header().Clone(), gate: gate}
	plan := planNamed(plans, last.Key.Plan)
	actx := WithCaller(ctx, keyCaller(last, plan, plans, s))
	if s.replicaReads(r, p) {
		actx = db.WithReplicaReads(actx, last.DataVersion)
	}
	var hw http.ResponseWriter = aw
	var rw *refundingWriter
	if cost > 0 {
		rw = &refundingWriter{ResponseWriter: aw, s: s, now: now, listed: int64(p.CreditCost),
			rec: charge{s: s, keyID: last.Key.ID, credits: cost, day: mp.Day, month: mp.Month, admitted: gate.wait}}
		actx = context.WithValue(actx, chargeKey{}, &rw.rec)
		actx = context.WithValue(actx, notModifiedKey{}, rw)
		rw.ctx, hw = actx, rw
	}
	aw.open = func(res *db.MeterResult) {
		s.door.learnMeter(res, now, mp.WindowStart, s.cfg.RateLimit)
		s.setMeterHeaders(w.Header(), now, res, int64(p.CreditCost))
		h := w.Header()
		for k, v := range aw.header { // a refund's headers among them
			h[k] = v
		}
	}
	go func() {
		res, err := s.store.Meter(ctx, mp)
		gate.res, gate.err = res, err
		gate.admitted = err == nil && subtle.ConstantTimeCompare(res.Key.Hash, hash) == 1 && !res.Key.Revoked &&
			sameCaller(last, res) && res.Charged && res.WindowRequests <= s.cfg.RateLimit &&
			keyRefusal(res.Key, p.Surface, false) == nil
		if gate.admitted && rw != nil {
			rw.res = res
		}
		close(gate.done)
	}()
	next.ServeHTTP(hw, r.WithContext(actx))
	if aw.opened() {
		return
	}
	// Refused, or admitted for another caller or content version than the
	// one read for: what the handler wrote was dropped; the usual way,
	// from the meter answer.
	s.servedMetered(w, r, p, next, now, hash, plans, mp, cost, gate.res, gate.err)
}

// aheadGate is the metering answer of a request read ahead. A refund (a
// refused or 304 answer) waits for it, and happens only when the request
// was admitted.
type aheadGate struct {
	done     chan struct{}
	res      *db.MeterResult
	err      error
	admitted bool
}

func (g *aheadGate) wait() bool {
	<-g.done
	return g.admitted
}

// aheadWriter is the response writer of a request read ahead: its handler
// writes headers into a map of its own; at the first status, byte or
// flush it waits for the metering's answer, then writes through to w
// (open: the access headers, then the handler's) or drops everything.
type aheadWriter struct {
	w      http.ResponseWriter
	header http.Header
	gate   *aheadGate
	open   func(res *db.MeterResult)
	// decided is set at the first write: pass says whether writes go
	// through.
	decided, pass bool
}

// decide waits for the metering's answer once.
func (a *aheadWriter) decide() bool {
	if !a.decided {
		a.decided = true
		if a.pass = a.gate.wait(); a.pass {
			a.open(a.gate.res)
		}
	}
	return a.pass
}

// opened waits for the answer, opening the response if the handler wrote
// nothing, and reports whether it was served.
func (a *aheadWriter) opened() bool { return a.decide() }

// Header implements http.ResponseWriter.
func (a *aheadWriter) Header() http.Header { return a.header }

// WriteHeader implements http.ResponseWriter.
func (a *aheadWriter) WriteHeader(code int) {
	if a.decide() {
		a.w.WriteHeader(code)
	}
}

// Write implements http.ResponseWriter.
func (a *aheadWriter) Write(b []byte) (int, error) {
	if a.decide() {
		return a.w.Write(b)
	}
	return len(b), nil
}

// Flush implements http.Flusher when the underlying writer does.
func (a *aheadWriter) Flush() {
	if a.decide() {
		if f, ok := a.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}
