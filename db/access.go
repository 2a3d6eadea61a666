package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
)

// MsgAPIKeyNotFound is the error of an unknown key.
const MsgAPIKeyNotFound = "API key not found."

// KeyInfo is what the access layer needs to know about an API key.
type KeyInfo struct {
	// ID is the key's id.
	ID int64
	// AccountID is the owning account.
	AccountID int64
	// Hash is the stored SHA-256 hash of the key.
	Hash []byte
	// Plan is the account's plan name.
	Plan string
	// Revoked is true when the key can no longer be used: it was revoked,
	// or its expiry passed (then Expired is true too).
	Revoked bool
	// Expired is true when the key's expiry passed and it was not revoked.
	Expired bool
	// Scopes are what the key may do (ScopeData,
	// ScopeManagement).
	Scopes []string
	// Surfaces, when not nil, restricts the key to those API surfaces and
	// to reading (a restricted key).
	Surfaces []string
}

// keyUnusableSQL and keyExpiredSQL are KeyInfo.Revoked and KeyInfo.Expired
// of the api_keys row ak, against the database's clock (the one that set
// revoked_at and a rotation's expiry).
const (
	keyUnusableSQL = `(ak.revoked_at IS NOT NULL OR coalesce(ak.expires_at <= now(), false))`
	keyExpiredSQL  = `(ak.revoked_at IS NULL AND coalesce(ak.expires_at <= now(), false))`
)

// KeyByHash returns the key whose stored hash is hash, with its account's
// plan. Revoked keys are returned with Revoked set so the caller can say so.
//
// Returns ENOTFOUND when no key has that hash.
func (d *DB) KeyByHash(ctx context.Context, hash []byte) (*KeyInfo, error) {
	CountStatement(ctx)
	var k KeyInfo
	err := d.Pool.QueryRow(ctx, `
		SELECT ak.id, ak.account_id, ak.hash, a.plan, `+keyUnusableSQL+`, `+keyExpiredSQL+`, ak.scopes, ak.surfaces
		FROM api_keys ak JOIN accounts a ON a.id = ak.account_id
		WHERE ak.hash = $1`, hash).Scan(&k.ID, &k.AccountID, &k.Hash, &k.Plan, &k.Revoked, &k.Expired, &k.Scopes, &k.Surfaces)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &cryptointel.Error{Code: cryptointel.ENOTFOUND, Message: MsgAPIKeyNotFound}
	} else if err != nil {
		return nil, fmt.Errorf("error looking up api key: %w", err)
	}
	return &k, nil
}

// Plans returns every plan, lowest rank first.
func (d *DB) Plans(ctx context.Context) ([]cryptointel.Plan, error) {
	var plans []cryptointel.Plan
	if err := d.Bun.NewSelect().Model(&plans).Order("rank").Scan(ctx); err != nil {
		return nil, fmt.Errorf("error loading plans: %w", err)
	}
	return plans, nil
}

// MeterParams is one request to meter: whose key, when, what it costs and
// which plans may use the route.
type MeterParams struct {
	// KeyHash is the SHA-256 hash of the presented API key.
	KeyHash []byte
	// AllowedPlans are the plan names that include the route. A key on
	// another plan still counts toward its rate window but is not charged.
	AllowedPlans []string
	// WindowStart is the start of the current fixed rate window.
	WindowStart time.Time
	// RateLimit is the number of requests an account (all its keys
	// together) may make per window.
	RateLimit int
	// Cost is the request's credit cost (0 for free routes).
	Cost int64
	// Day is the current UTC day (time at midnight UTC).
	Day time.Time
	// Month is the first day of the current UTC month.
	Month time.Time
	// Surface is the route's surface (X-Api-Surface) and Write whether the
	// request writes (a POST, PATCH or DELETE outside /graphql): a key
	// whose scopes or restriction do not admit them (KeyAdmits) is counted
	// in the window like a key whose plan lacks the route, and not charged.
	Surface string
	Write   bool
}

// KeyAdmits reports whether key k's scopes and restriction admit a request
// on surface that writes or not: the account surfaces (keys, usage) admit
// every key (the key routes check the management scope themselves); the
// others need the data scope and, for a restricted key, one of its
// surfaces and a read. meter_group_lean computes the same (migration
// 025).
func KeyAdmits(k KeyInfo, surface string, write bool) bool {
	if slices.Contains(AccountSurfaces, surface) {
		return true
	}
	if !slices.Contains(k.Scopes, ScopeData) {
		return false
	}
	return k.Surfaces == nil || (slices.Contains(k.Surfaces, surface) && !write)
}

// MeterResult is what the metering statement decided.
type MeterResult struct {
	// Key is the key found by hash.
	Key KeyInfo
	// MonthlyLimit is the plan's monthly credit allowance.
	MonthlyLimit int64
	// WindowRequests is the number of requests the key's account (all its
	// keys together) has made in the current window, this one included (0
	// when the key is revoked).
	WindowRequests int
	// Charged is true when the request was admitted: the plan includes the
	// route, it is within the rate limit and within the monthly credits. Its
	// request and credits were then added to the daily and monthly usage.
	Charged bool
	// MonthUsed is the account's credits used this month (all its keys
	// together), after this request's charge when Charged.
	MonthUsed int64
	// DataVersion is the content version (table data_version) as the
	// statement saw it: every write to the content tables bumps it in the
	// same transaction, so a response built from reads made after this
	// statement is at least as new as this version. Response caches key on
	// it.
	DataVersion int64
}

// Meter authenticates the key by hash and meters the request atomically:
// it counts the request in its account's fixed rate window and — only when
// the plan includes the route, the key's scopes admit it (KeyAdmits), the
// window is within the limit and the month's credits cover the cost — adds
// the request and its credits to the account's month
// (account_usage_monthly) and the key's day (usage_daily), whose last_window
// records the key's last use. A request counted in the window but not
// charged is counted in the key's own window row (rate_windows) instead, the
// record of its last use: a key's requests counted in its windows are its
// rate_windows requests plus its usage_daily requests. Nothing is written
// for an unknown or revoked key.
//
// The meters belong to the account, not the key: every key of an account
// (a rotation's successor beside its predecessor in its grace period, a
// restricted key beside the key that made it) draws on one window and one
// allowance, so creating, rotating or revoking keys never resets or
// multiplies them.
//
// A request refused for the plan still counts toward the rate window (it
// is a request the key made) but is not metered as usage, and so is one
// its scopes or restriction refuse. The result also carries the content
// version (data_version) for response caching, at no extra round trip.
//
// Concurrent requests are metered in groups, one statement per group
// (meter_group.go, migration 025), each exactly as if alone: exactness
// under concurrency (several server processes on one database) comes from
// the row locks the counters' upserts and updates take — upserts of one
// account's window row serialize, and each sees the latest count (a group
// raises it by its requests' number and each request takes its place in
// it); the month's update checks, on the latest row version under its
// lock, that the credits it adds fit, so two requests can never both take
// the last credits. Rows are locked in one order — accounts in id order,
// and per account its window rows, its month, its keys' days — so no two
// statements deadlock.
//
// Its transaction commits asynchronously (synchronous_commit off, set
// locally for the statement only): the request does not wait for the WAL
// flush of its counters, which on a busy disk took longer than the rest of
// a cached request. Visibility, locking and exactness are unchanged; only a
// crash of PostgreSQL itself (not of the service) can lose the counters of
// the last moments before it (at most three wal_writer_delay, 600 ms by
// default), and a database recovered from such a crash is consistent.
// Everything else the service writes commits synchronously.
//
// Returns ENOTFOUND when no key has that hash.
func (d *DB) Meter(ctx context.Context, p MeterParams) (*MeterResult, error) {
	CountStatement(ctx)
	return d.meterGrouped(ctx, p)
}

// Usage is an account's request counts and the month's credit use (all its
// keys together).
type Usage struct {
	// Today counts requests since midnight UTC.
	Today int64
	// ThisWeek counts requests since Monday 00:00 UTC.
	ThisWeek int64
	// ThisMonth counts requests since the 1st of the month 00:00 UTC.
	ThisMonth int64
	// MonthCredits is the credits used this month.
	MonthCredits int64
	// TodayCredits and WeekCredits are the credits used since midnight UTC
	// and since Monday 00:00 UTC.
	TodayCredits, WeekCredits int64
}

// UsageFor returns the usage of key keyID's account — every key of it
// together, as the meters count — as of now: today, this week (weeks start
// on Monday, UTC) and this month, in one statement.
func (d *DB) UsageFor(ctx context.Context, keyID int64, now time.Time) (*Usage, error) {
	CountStatement(ctx)
	day, week, month := UsagePeriods(now)
	var u Usage
	err := d.Pool.QueryRow(ctx, `
		SELECT
			coalesce(sum(requests) FILTER (WHERE day = $2::date), 0),
			coalesce(sum(requests) FILTER (WHERE day >= $3::date), 0),
			coalesce(sum(requests) FILTER (WHERE day >= $4::date), 0),
			coalesce((SELECT m.credits FROM account_usage_monthly m JOIN api_keys ak ON ak.account_id = m.account_id
				WHERE ak.id = $1 AND m.month = $4::date), 0),
			coalesce(sum(credits) FILTER (WHERE day = $2::date), 0),
			coalesce(sum(credits) FILTER (WHERE day >= $3::date), 0)
		FROM usage_daily
		WHERE api_key_id IN (SELECT id FROM api_keys WHERE account_id = (SELECT account_id FROM api_keys WHERE id = $1))
			AND day >= least($3::date, $4::date) AND day <= $2::date`,
		keyID, dateOnly(day), dateOnly(week), dateOnly(month),
	).Scan(&u.Today, &u.ThisWeek, &u.ThisMonth, &u.MonthCredits, &u.TodayCredits, &u.WeekCredits)
	if err != nil {
		return nil, fmt.Errorf("error reading usage: %w", err)
	}
	return &u, nil
}

// UsagePeriods returns the starts, in UTC, of now's day, week (Monday) and
// month.
func UsagePeriods(now time.Time) (day, week, month time.Time) {
	now = now.UTC()
	day = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	offset := (int(day.Weekday()) + 6) % 7 // days since Monday
	week = day.AddDate(0, 0, -offset)
	month = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	return day, week, month
}

// dateOnly formats t's UTC date as YYYY-MM-DD for a date parameter.
func dateOnly(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// RefundCredits gives back credits charged to key keyID (to its account's
// month and the key's day) on day (UTC) of month: the request or operation they paid for was refused after it was
// metered (a body that was not JSON, a stream that could not open), and a
// refusal costs nothing. The request itself stays counted. Never takes a
// counter below 0.
func (d *DB) RefundCredits(ctx context.Context, keyID int64, day, month time.Time, credits int64) error {
	CountStatement(ctx)
	// The month's row is locked before the day's, in the order the
	// metering statement locks them (Meter: rate windows, month, day):
	// a refund running beside another request of the same account must not
	// take them the other way round, or the two deadlock. The day's
	// update waits on the month's through a one-time filter, evaluated
	// before its scan starts (an unreferenced data-modifying CTE would
	// run last).
	_, err := d.Pool.Exec(ctx, `
		WITH m AS (
			UPDATE account_usage_monthly SET credits = greatest(credits - $4, 0)
			WHERE account_id = (SELECT account_id FROM api_keys WHERE id = $1) AND month = $3::date
			RETURNING 1
		)
		UPDATE usage_daily SET credits = greatest(credits - $4, 0)
		WHERE (SELECT count(*) FROM m) >= 0 AND api_key_id = $1 AND day = $2::date`,
		keyID, dateOnly(day), dateOnly(month), credits)
	if err != nil {
		return fmt.Errorf("error refunding credits: %w", err)
	}
	return nil
}
