package db

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cryptointel/cryptointel"
)

// Metering in groups (a group commit). Every request is metered before it
// is served, so the metering statement was one of every request's
// statements, and under load the one that cost PostgreSQL the most per
// request: a transaction of its own, its commit, its round trip. Requests
// arriving while a group's statement is in flight now queue, and the next
// statement meters all of them at once (meter_group_lean), each
// request getting its own answer. An idle service meters a lone request at
// once, as before; a busy one sends one statement per group.
//
// meter_group_lean (migration 025; meter_group_coalesced of migration 022
// with one row fewer a request) decides the requests of a group one by one,
// in account order, as the single statement did: each request's window
// count, refusal and charge are exactly what it would have been alone,
// whichever group (of whichever server process) it falls in. It writes each
// counter row once per group, for all the group's requests of its account
// or key, and three rows a charged request: the account's window and month,
// the key's day (which carries the key's last window); the key's window row
// only for a request not charged.

// meterGroupFlights is how many group statements one DB runs at once. While
// they are all in flight, arriving requests wait for the next group.
const meterGroupFlights = 2

// meterGroupMax bounds a group: a larger queue is sent as several.
const meterGroupMax = 256

// meterGroupTimeout bounds a group's statement, which runs on behalf of
// requests that may have gone (it is not cancelled by any one of them).
const meterGroupTimeout = 30 * time.Second

// meterCall is one request waiting in a group.
type meterCall struct {
	ctx  context.Context
	p    MeterParams
	res  *MeterResult
	err  error
	done chan struct{}
}

// meterGroups queues the requests of one DB.
type meterGroups struct {
	mu       sync.Mutex
	queue    []*meterCall
	inFlight int

	// statements and requests count the groups sent and the requests
	// they metered.
	statements, requests atomic.Int64
}

// MeterGroupStats reports how many metering statements this DB sent and
// how many requests they metered.
func (d *DB) MeterGroupStats() (statements, requests int64) {
	return d.meter.statements.Load(), d.meter.requests.Load()
}

// meterGrouped meters p in the next group and waits for its answer or for
// ctx to end (the group then still meters it). A request that finds a
// flight free and the queue otherwise empty sends its group of one from
// its own goroutine (meterLead), as its own statement: a lone request
// costs no goroutine and no hand-over between goroutines, which at low
// load were a wake-up of an idle core each.
func (d *DB) meterGrouped(ctx context.Context, p MeterParams) (*MeterResult, error) {
	// A request whose context has ended is not metered, as its own
	// statement would not have been sent.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("error metering request: %w", err)
	}
	c := &meterCall{ctx: ctx, p: p, done: make(chan struct{})}
	g := &d.meter
	g.mu.Lock()
	g.queue = append(g.queue, c)
	lead := g.inFlight < meterGroupFlights
	if lead {
		g.inFlight++
	}
	g.mu.Unlock()
	if lead && d.meterLead(c) {
		return c.res, c.err
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		select {
		case <-c.done: // answered meanwhile
			return c.res, c.err
		default:
			return nil, fmt.Errorf("error metering request: %w", ctx.Err())
		}
	}
}

// meterLead flies the flight c's request took. When the next group is c
// alone, it sends it from c's goroutine, under c's context as a statement
// of c's own would be (a request past its time budget is not held by its
// statement, which is cancelled and meters nothing), hands the flight to a
// goroutine (meterFlight) if requests queued meanwhile, and reports true:
// c is answered. Any other group goes on in a flight of its own goroutine,
// not under c's time, and meterLead reports false: c waits for its answer.
func (d *DB) meterLead(c *meterCall) bool {
	group := d.nextGroup()
	switch {
	case group == nil:
		return false // another flight took c's group
	case len(group) > 1 || group[0] != c:
		go d.meterFlight(group)
		return false
	}
	d.meterGroup(c.ctx, group)
	if next := d.nextGroup(); next != nil {
		go d.meterFlight(next)
	}
	return true
}

// meterFlight sends first, if any, then groups while requests are queued,
// then ends its flight.
func (d *DB) meterFlight(first []*meterCall) {
	for group := first; ; {
		if group != nil {
			d.meterGroup(context.Background(), group)
		}
		if group = d.nextGroup(); group == nil {
			return
		}
	}
}

// nextGroup takes the next group off the queue (at most meterGroupMax
// requests, the longest waiting first), or ends the caller's flight and
// returns nil when none is queued.
func (d *DB) nextGroup() []*meterCall {
	g := &d.meter
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.inFlight--
		return nil
	}
	n := min(len(g.queue), meterGroupMax)
	group := g.queue[:n:n]
	g.queue = g.queue[n:]
	if len(g.queue) == 0 {
		g.queue = nil
	}
	return group
}

// accountSurfacesArg and dataScopeArg are what meter_group_lean's admission
// test (KeyAdmits) reads of the Go constants.
var accountSurfacesArg = AccountSurfaces

const dataScopeArg = ScopeData

// meterGroupSQL meters a group (meter_group_lean, migration 025).
const meterGroupSQL = `SELECT o_ord, o_key_id, o_account_id, o_hash, o_plan, o_revoked, o_expired, o_scopes, o_surfaces,
	o_monthly_credits, o_window_requests, o_charged, o_month_used, o_data_version
FROM meter_group_lean($1::bytea[], $2::timestamptz[], $3::int[], $4::bigint[], $5::date[], $6::date[], $7::text[], $8::text[],
	$9::bool[], $10::text[], $11::text)`

// meterGroup sends one group's statement and hands each request its
// answer: its row, or ENOTFOUND when its key was not found.
func (d *DB) meterGroup(ctx context.Context, group []*meterCall) {
	// Requests whose context ended while they waited are left out (not
	// metered), as a statement of their own would have been cancelled.
	live := group[:0:0]
	for _, c := range group {
		if err := c.ctx.Err(); err != nil {
			c.err = fmt.Errorf("error metering request: %w", err)
			close(c.done)
			continue
		}
		live = append(live, c)
	}
	group = live
	if len(group) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, meterGroupTimeout)
	defer cancel()
	n := len(group)
	d.meter.statements.Add(1)
	d.meter.requests.Add(int64(n))
	rows, err := d.Pool.Query(ctx, meterGroupSQL, meterGroupArgs(group)...)
	if err == nil {
		for rows.Next() {
			var ord int
			var res MeterResult
			if err = rows.Scan(&ord, &res.Key.ID, &res.Key.AccountID, &res.Key.Hash, &res.Key.Plan, &res.Key.Revoked,
				&res.Key.Expired, &res.Key.Scopes, &res.Key.Surfaces, &res.MonthlyLimit, &res.WindowRequests,
				&res.Charged, &res.MonthUsed, &res.DataVersion); err != nil {
				break
			}
			if ord < 1 || ord > n {
				err = fmt.Errorf("metering group: row for request %d of %d", ord, n)
				break
			}
			group[ord-1].res = &res
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	for _, c := range group {
		switch {
		case err != nil:
			c.res, c.err = nil, fmt.Errorf("error metering request: %w", err)
		case c.res == nil:
			c.err = &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: MsgAPIKeyNotFound}
		}
		close(c.done)
	}
}

// utcDate is t's date in UTC, as a time at its midnight in UTC: what
// dateOnly writes, for a date parameter encoded in binary.
func utcDate(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// meterGroupArgs are meterGroupSQL's arguments for group, each of a Go type
// pgx encodes in binary for its parameter (TestMeterGroupArgsEncodeInBinary).
func meterGroupArgs(group []*meterCall) []any {
	n := len(group)
	hashes := make([][]byte, n)
	starts := make([]time.Time, n)
	limits := make([]int32, n)
	costs := make([]int64, n)
	// Dates go as time.Time, whose date pgx encodes in binary; a string
	// failed the binary encoding on every call and was sent as text.
	days := make([]time.Time, n)
	months := make([]time.Time, n)
	allowed := make([]string, n)
	surfaces := make([]string, n)
	writes := make([]bool, n)
	for i, c := range group {
		p := c.p
		hashes[i], starts[i], limits[i], costs[i] = p.KeyHash, p.WindowStart.UTC(), int32(min(p.RateLimit, 1<<31-1)), p.Cost
		days[i], months[i] = utcDate(p.Day), utcDate(p.Month)
		allowed[i] = strings.Join(p.AllowedPlans, ",")
		surfaces[i], writes[i] = p.Surface, p.Write
	}
	return []any{hashes, starts, limits, costs, days, months, allowed, surfaces, writes, accountSurfacesArg, dataScopeArg}
}
