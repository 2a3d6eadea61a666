package access

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// Reading ahead. A keyed request's metering statement and its read ran one
// after the other, each a round trip to PostgreSQL: at low concurrency
// the metering statement was a third to a half of the time a cheap read
// took to answer. A route whose work is a read that writes nothing (the
// router's graph routes on GET and HEAD) gives it to the access layer
// (WithReadAhead); when the door knows the key from its last metering
// statement as usable, admitted and with room left in its window, the
// read runs beside the request's metering statement, under the caller
// that statement predicts (the key, account, plan, scopes and surfaces it
// found, at the newest content version this process has metered at).
//
// Nothing is written before the request is admitted: the handler runs, as
// before, once the metering statement admitted the request, and takes the
// result read ahead (ReadAheadResult) only when the caller it was admitted
// as is the predicted one; otherwise the result is dropped and the handler
// reads again. A refused request is answered as before and its read is
// dropped, and a key the door last saw refused, spent or unknown is never
// read ahead for, so refused requests do not cost reads. A request that
// may read a replica is not read ahead: its read waits for the content
// version its metering statement saw, which the replica must have
// replayed.

// ReadAheadFunc is a route's read: it runs under ctx's caller and returns
// its result and how to let it go when it is not used (nil: nothing to
// let go). Any error is the result's own; the handler decides.
type ReadAheadFunc func(ctx context.Context) (result any, drop func())

type readAheadKey struct{}

// WithReadAhead returns ctx carrying read, the whole work of ctx's request
// but its writing: the route layer sets it before the access layer runs,
// only for a request whose work writes nothing.
func WithReadAhead(ctx context.Context, read ReadAheadFunc) context.Context {
	return context.WithValue(ctx, readAheadKey{}, read)
}

type readAheadResultKey struct{}

// ReadAheadResult returns what the request of ctx read ahead under the
// caller it was admitted as (WithReadAhead), if anything. The handler
// that takes it owns it (its drop is then the handler's to call, if
// anything must be let go).
func ReadAheadResult(ctx context.Context) (any, bool) {
	a, ok := ctx.Value(readAheadResultKey{}).(*readingAhead)
	if !ok {
		return nil, false
	}
	return a.take()
}

// readingAhead is one request's read running beside its metering.
type readingAhead struct {
	caller *Caller
	cancel context.CancelFunc
	done   chan struct{}
	result any
	drop   func()
	failed bool // the read panicked: nothing to use
	taken  bool
	report func(outcome string)
}

// readAhead starts the read of r's request (WithReadAhead) under the
// caller the door predicts for the key whose hash is hash, or returns nil
// when the request is not read ahead.
func (s *Service) readAhead(r *http.Request, p Policy, now time.Time, hash []byte, plans []cryptointel.Plan, mp db.MeterParams) *readingAhead {
	ctx := r.Context()
	read, ok := ctx.Value(readAheadKey{}).(ReadAheadFunc)
	// A request that may read a replica waits for the content version its
	// metering statement saw: read ahead at the version before, it would
	// read a replica that has not replayed the request's.
	if !ok || read == nil || mp.Write || refusedAhead(ctx) || (r.Method != http.MethodGet && r.Method != http.MethodHead) ||
		s.replicaReads(r, p) {
		return nil
	}
	pred, ok := s.predict(p, now, hash, plans, mp)
	if !ok {
		return nil
	}
	plan := planNamed(plans, pred.Key.Plan)
	a := &readingAhead{caller: keyCaller(pred, plan, plans, s), done: make(chan struct{}), report: s.cfg.OnReadAhead}
	rctx, cancel := context.WithCancel(WithCaller(ctx, a.caller))
	a.cancel = cancel
	go func() {
		defer close(a.done)
		defer func() {
			// A read that panics is read again by the handler, in the
			// request's own goroutine, where the frame answers the panic.
			if recover() != nil {
				a.failed = true
			}
		}()
		a.result, a.drop = read(rctx)
	}()
	return a
}

// predictTTL is how old a key's last meter result may be to predict its
// next: longer than the door trusts it to refuse (doorTTL), since a
// prediction is checked against the request's own metering statement
// before anything is written, and a wrong one costs a read (once: the
// door then learns the key's new answer).
const predictTTL = 10 * time.Minute

// predict is the meter result the door expects for the key whose hash is
// hash, when it expects the request to be admitted: the key's last one
// (within predictTTL), usable, admitted and short of its window's limit (a
// window whose limit it reached is spent: learnMeter), at the newest
// content version this process metered at.
func (s *Service) predict(p Policy, now time.Time, hash []byte, plans []cryptointel.Plan, mp db.MeterParams) (*db.MeterResult, bool) {
	f, known := s.door.factsWithin(hash, now, predictTTL)
	if !known || f.refusal != "" || f.res == nil || !f.res.Charged || !f.spent.IsZero() {
		return nil, false
	}
	pred := *f.res
	pred.DataVersion = max(pred.DataVersion, s.door.version.Load())
	if keyRefusal(pred.Key, p.Surface, mp.Write) != nil ||
		!planAllows(plans, planNamed(plans, pred.Key.Plan), p.Layer, p.Feature, p.MinPlan) {
		return nil, false
	}
	return &pred, true
}

// admittedAs hands the read to the handler when the request was admitted
// as the predicted caller (c): the result is put in the returned context.
// Otherwise the read is stopped and dropped and ctx is returned as is.
func (a *readingAhead) admittedAs(ctx context.Context, c *Caller) context.Context {
	if a == nil {
		return ctx
	}
	if !sameCaller(a.caller, c) {
		a.finish()
		return ctx
	}
	return context.WithValue(ctx, readAheadResultKey{}, a)
}

// sameCaller reports whether a read made as want is the read got would
// make: same key, account, plan, scopes, surfaces and content version.
func sameCaller(want, got *Caller) bool {
	return want.APIKeyID == got.APIKeyID && want.AccountID == got.AccountID && want.Plan.Name == got.Plan.Name &&
		want.DataVersion == got.DataVersion && !got.Paid &&
		slices.Equal(want.Scopes, got.Scopes) && slices.Equal(want.Surfaces, got.Surfaces) &&
		(want.Surfaces == nil) == (got.Surfaces == nil)
}

// take waits for the read and hands its result over (once).
func (a *readingAhead) take() (any, bool) {
	<-a.done
	if a.taken || a.failed {
		return nil, false
	}
	a.taken = true
	a.outcome("used")
	return a.result, true
}

// finish ends the request's read: a read not handed over is stopped,
// waited for (it runs under the request's context, which ends with the
// request) and let go. It runs when the request is done, whatever its
// answer.
func (a *readingAhead) finish() {
	if a == nil {
		return
	}
	if !a.taken {
		a.cancel() // nobody will use it: stop it
	}
	<-a.done
	a.cancel()
	if a.taken {
		return
	}
	a.taken = true // let go once
	if a.drop != nil && !a.failed {
		a.drop()
	}
	a.outcome("dropped")
}

func (a *readingAhead) outcome(o string) {
	if a.report != nil {
		a.report(o)
	}
}
