package db_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

type accessBundle struct {
	store *db.DB
	ctx   context.Context
}

func setupAccess(t *testing.T) *accessBundle {
	t.Helper()
	return &accessBundle{store: dbtest.New(t), ctx: context.Background()}
}

// newKey inserts an account on plan with one key and returns the key's
// hash.
func (b *accessBundle) newKey(t *testing.T, plan string) []byte {
	t.Helper()
	acct := &cryptointel.Account{Name: fmt.Sprintf("acct-%s-%d", plan, time.Now().UnixNano()), Plan: plan}
	_, err := b.store.Bun.NewInsert().Model(acct).Exec(b.ctx)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(acct.Name))
	key := &cryptointel.APIKey{AccountID: acct.ID, Prefix: "ci_test", Hash: sum[:]}
	_, err = b.store.Bun.NewInsert().Model(key).Exec(b.ctx)
	require.NoError(t, err)
	return sum[:]
}

func meterAt(now time.Time, hash []byte, cost int64, allowed ...string) db.MeterParams {
	day, _, month := db.UsagePeriods(now)
	if allowed == nil {
		allowed = []string{cryptointel.PlanFree, cryptointel.PlanPro, cryptointel.PlanBusiness, cryptointel.PlanEnterprise}
	}
	return db.MeterParams{
		KeyHash: hash, AllowedPlans: allowed, WindowStart: now.Truncate(time.Minute),
		RateLimit: 100, Cost: cost, Day: day, Month: month,
	}
}

func TestMeterRateWindowIsExactUnderConcurrency(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	hash := b.newKey(t, cryptointel.PlanPro)
	now := time.Date(2026, 3, 4, 10, 0, 5, 0, time.UTC)

	var passed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < 150; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := b.store.Meter(b.ctx, meterAt(now, hash, 1))
			if err != nil {
				t.Error(err)
				return
			}
			if res.Charged {
				passed.Add(1)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 100, passed.Load())

	res, err := b.store.Meter(b.ctx, meterAt(now, hash, 1))
	require.NoError(t, err)
	require.False(t, res.Charged)
	require.Equal(t, 151, res.WindowRequests)
	require.EqualValues(t, 100, res.MonthUsed)

	// The next window admits again.
	res, err = b.store.Meter(b.ctx, meterAt(now.Add(time.Minute), hash, 1))
	require.NoError(t, err)
	require.True(t, res.Charged)
	require.Equal(t, 1, res.WindowRequests)

	u, err := b.store.UsageFor(b.ctx, res.Key.ID, now)
	require.NoError(t, err)
	require.Equal(t, db.Usage{Today: 101, ThisWeek: 101, ThisMonth: 101, MonthCredits: 101, TodayCredits: 101, WeekCredits: 101}, *u)
}

func TestMeterMonthlyCredits(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	hash := b.newKey(t, cryptointel.PlanFree) // 1000 credits
	now := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)

	res, err := b.store.Meter(b.ctx, meterAt(now, hash, 998))
	require.NoError(t, err)
	require.True(t, res.Charged)
	require.EqualValues(t, 998, res.MonthUsed)
	require.EqualValues(t, 1000, res.MonthlyLimit)

	// 3 more would exceed the allowance: refused, nothing charged.
	res, err = b.store.Meter(b.ctx, meterAt(now, hash, 3))
	require.NoError(t, err)
	require.False(t, res.Charged)
	require.EqualValues(t, 998, res.MonthUsed)

	res, err = b.store.Meter(b.ctx, meterAt(now, hash, 2))
	require.NoError(t, err)
	require.True(t, res.Charged)
	require.EqualValues(t, 1000, res.MonthUsed)

	res, err = b.store.Meter(b.ctx, meterAt(now, hash, 1))
	require.NoError(t, err)
	require.False(t, res.Charged)

	// A free route still answers at the allowance and is counted.
	res, err = b.store.Meter(b.ctx, meterAt(now, hash, 0))
	require.NoError(t, err)
	require.True(t, res.Charged)
	require.EqualValues(t, 1000, res.MonthUsed)

	// Credits reset on the 1st of the month (UTC).
	next := time.Date(2026, 4, 1, 0, 0, 1, 0, time.UTC)
	res, err = b.store.Meter(b.ctx, meterAt(next, hash, 5))
	require.NoError(t, err)
	require.True(t, res.Charged)
	require.EqualValues(t, 5, res.MonthUsed)

	// Week of Wed 1 April starts Monday 30 March: it includes March's requests.
	u, err := b.store.UsageFor(b.ctx, res.Key.ID, next)
	require.NoError(t, err)
	require.Equal(t, db.Usage{Today: 1, ThisWeek: 4, ThisMonth: 1, MonthCredits: 5, TodayCredits: 5, WeekCredits: 1005}, *u)
}

func TestMeterPlanNotAllowedCountsWindowOnly(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	hash := b.newKey(t, cryptointel.PlanFree)
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

	res, err := b.store.Meter(b.ctx, meterAt(now, hash, 1, cryptointel.PlanBusiness, cryptointel.PlanEnterprise))
	require.NoError(t, err)
	require.False(t, res.Charged)
	require.Equal(t, 1, res.WindowRequests)
	require.Equal(t, cryptointel.PlanFree, res.Key.Plan)

	u, err := b.store.UsageFor(b.ctx, res.Key.ID, now)
	require.NoError(t, err)
	require.Zero(t, u.Today)
}

func TestMeterUnknownAndRevokedKeys(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	now := time.Now()

	unknown := sha256.Sum256([]byte("nope"))
	_, err := b.store.Meter(b.ctx, meterAt(now, unknown[:], 1))
	require.Equal(t, cryptointel.ENOTFOUND, cryptointel.ErrorCode(err))
	_, err = b.store.KeyByHash(b.ctx, unknown[:])
	require.Equal(t, cryptointel.ENOTFOUND, cryptointel.ErrorCode(err))

	hash := b.newKey(t, cryptointel.PlanPro)
	_, err = b.store.Bun.NewUpdate().Model((*cryptointel.APIKey)(nil)).Set("revoked_at = now()").Where("hash = ?", hash).Exec(b.ctx)
	require.NoError(t, err)
	res, err := b.store.Meter(b.ctx, meterAt(now, hash, 1))
	require.NoError(t, err)
	require.True(t, res.Key.Revoked)
	require.False(t, res.Charged)
	require.Zero(t, res.WindowRequests)

	k, err := b.store.KeyByHash(b.ctx, hash)
	require.NoError(t, err)
	require.True(t, k.Revoked)
	require.Equal(t, cryptointel.PlanPro, k.Plan)
}

func TestPlansAreOrdered(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	plans, err := b.store.Plans(b.ctx)
	require.NoError(t, err)
	require.Len(t, plans, 4)
	require.Equal(t, cryptointel.PlanFree, plans[0].Name)
	require.Equal(t, cryptointel.PlanEnterprise, plans[3].Name)
	require.True(t, plans[3].Export)
}

func TestUsagePeriods(t *testing.T) {
	t.Parallel()
	day, week, month := db.UsagePeriods(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) // a Sunday
	require.Equal(t, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), day)
	require.Equal(t, time.Date(2026, 2, 23, 0, 0, 0, 0, time.UTC), week)
	require.Equal(t, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), month)
	_, week, _ = db.UsagePeriods(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) // a Monday
	require.Equal(t, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), week)
}

func TestNoPlaintextKeyStored(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	key, row, err := db.CreateAPIKey(b.ctx, b.store.Bun, "plaintext-check", cryptointel.PlanPro)
	require.NoError(t, err)
	// Use the key once so metering rows exist too.
	_, err = b.store.Meter(b.ctx, meterAt(time.Now(), db.HashAPIKey(key), 1))
	require.NoError(t, err)

	// Dump every row of the key tables as text, hash as hex and as escape.
	var dump string
	err = b.store.Pool.QueryRow(b.ctx, `
		SELECT concat_ws(E'\n',
			(SELECT string_agg(t::text, E'\n') FROM api_keys t),
			(SELECT string_agg(encode(hash, 'escape'), E'\n') FROM api_keys),
			(SELECT string_agg(t::text, E'\n') FROM accounts t),
			(SELECT string_agg(t::text, E'\n') FROM rate_windows t),
			(SELECT string_agg(t::text, E'\n') FROM usage_daily t),
			(SELECT string_agg(t::text, E'\n') FROM account_rate_windows t),
			(SELECT string_agg(t::text, E'\n') FROM account_usage_monthly t))`).Scan(&dump)
	require.NoError(t, err)
	secret := strings.TrimPrefix(key, db.APIKeyPrefix)
	require.NotContains(t, dump, key)
	require.NotContains(t, dump, secret)
	require.NotContains(t, dump, secret[len(secret)/2:]) // nor any sizable part of it
	require.Contains(t, dump, row.Prefix)                // the short visible prefix is kept
	require.Len(t, row.Prefix, 10)
	require.Contains(t, dump, fmt.Sprintf("\\x%x", db.HashAPIKey(key))) // stored as its SHA-256
}

// TestMeterAsyncCommitStaysLocal: the metering statement commits without
// waiting for its WAL flush, but the setting ends with its transaction; the
// next statement on the same connection commits synchronously again.
func TestMeterAsyncCommitStaysLocal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := db.Open(ctx, dbtest.NewURL(t), db.Options{MaxConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() }) //nolint:errcheck
	b := &accessBundle{store: store, ctx: ctx}
	hash := b.newKey(t, cryptointel.PlanPro)

	res, err := store.Meter(ctx, meterAt(time.Now(), hash, 1))
	require.NoError(t, err)
	require.True(t, res.Charged)
	var setting string
	require.NoError(t, store.Pool.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&setting))
	require.Equal(t, "on", setting)
}

// TestRefundBesideMeteringNeverDeadlocks: a refund (of a refused request)
// runs while other requests of the same key are metered. Both statements
// lock the key's month and day usage rows; taken in opposite orders they
// deadlocked (SQLSTATE 40P01) and the request answered 500.
func TestRefundBesideMeteringNeverDeadlocks(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	hash := b.newKey(t, cryptointel.PlanEnterprise)
	now := time.Date(2026, 3, 4, 10, 0, 5, 0, time.UTC)
	day, _, month := db.UsagePeriods(now)
	first, err := b.store.Meter(b.ctx, meterAt(now, hash, 1))
	require.NoError(t, err)
	keyID := first.Key.ID

	const workers, rounds = 8, 40
	errs := make(chan error, workers*rounds*2)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				p := meterAt(now, hash, 1)
				p.RateLimit = 1 << 30
				if _, err := b.store.Meter(b.ctx, p); err != nil {
					errs <- err
					continue
				}
				if err := b.store.RefundCredits(b.ctx, keyID, day, month, 1); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	u, err := b.store.UsageFor(b.ctx, keyID, now)
	require.NoError(t, err)
	require.EqualValues(t, 1, u.MonthCredits, "every charge but the first was refunded")
	require.EqualValues(t, 1, u.TodayCredits)
}

// TestMeterAccountWindowAcrossKeys meters 150 concurrent requests spread
// over four keys of one account, a rotation's successor among them: the
// window and the month are the account's, so exactly 100 are admitted and
// every key reports the account's numbers; refunds beside them never
// deadlock.
func TestMeterAccountWindowAcrossKeys(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	_, first, err := db.CreateAPIKey(b.ctx, b.store.Bun, "shared", cryptointel.PlanPro)
	require.NoError(t, err)
	hashes := [][]byte{}
	ids := []int64{}
	for i := 0; i < 3; i++ {
		plaintext, key, err := db.CreateAPIKey(b.ctx, b.store.Bun, "shared", "")
		require.NoError(t, err)
		hashes, ids = append(hashes, db.HashAPIKey(plaintext)), append(ids, key.ID)
	}
	plaintext, _, _, err := db.RotateAPIKey(b.ctx, b.store.Bun, db.KeyRotation{KeyID: first.ID, Grace: time.Hour})
	require.NoError(t, err)
	hashes = append(hashes, db.HashAPIKey(plaintext))
	now := time.Date(2026, 3, 4, 10, 0, 5, 0, time.UTC)
	day, _, month := db.UsagePeriods(now)

	var passed, refunded atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < 150; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := b.store.Meter(b.ctx, meterAt(now, hashes[i%len(hashes)], 2))
			if err != nil {
				t.Error(err)
				return
			}
			if res.Charged {
				passed.Add(1)
				if i%10 == 0 {
					if err := b.store.RefundCredits(b.ctx, ids[i%len(ids)], day, month, 1); err != nil {
						t.Error(err)
					}
					refunded.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 100, passed.Load(), "one window for the account, whichever key")
	for _, h := range hashes {
		res, err := b.store.Meter(b.ctx, meterAt(now, h, 1))
		require.NoError(t, err)
		require.False(t, res.Charged)
		require.Greater(t, res.WindowRequests, 150)
	}
	res, err := b.store.Meter(b.ctx, meterAt(now.Add(time.Minute), hashes[0], 0))
	require.NoError(t, err)
	require.True(t, res.Charged)
	require.Equal(t, 1, res.WindowRequests)
	u, err := b.store.UsageFor(b.ctx, ids[0], now)
	require.NoError(t, err)
	require.EqualValues(t, 101, u.ThisMonth, "every key's requests, the account's month")
	require.Equal(t, 200-refunded.Load(), u.MonthCredits)
	require.Equal(t, u.MonthCredits, res.MonthUsed)
}

// TestMeterGroupsAtTheEdgeOfTheWindow sends 64 concurrent requests of one
// key, split over two server processes (two pools on one database), when
// its account's window has room for 10 more and, in a second round, when
// its month has credits for 10 more: exactly 10 are admitted each time,
// whatever groups the requests fall in, and the groups are fewer than the
// requests.
func TestMeterGroupsAtTheEdgeOfTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewURL(t)
	var stores []*db.DB
	for i := 0; i < 2; i++ {
		store, err := db.Open(ctx, url, db.Options{MaxConns: 4})
		require.NoError(t, err)
		t.Cleanup(func() { store.Close() }) //nolint:errcheck
		stores = append(stores, store)
	}
	b := &accessBundle{store: stores[0], ctx: ctx}
	hash := b.newKey(t, cryptointel.PlanFree) // 1000 credits
	now := time.Date(2026, 3, 4, 10, 0, 5, 0, time.UTC)
	first, err := b.store.Meter(ctx, meterAt(now, hash, 1))
	require.NoError(t, err)
	require.True(t, first.Charged)

	// round sends 64 requests at once, half through each process, and
	// returns how many were admitted and the highest window count seen.
	round := func(p db.MeterParams) (admitted int, maxWindow int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res, err := stores[i%2].Meter(ctx, p)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if res.Charged {
					admitted++
				}
				maxWindow = max(maxWindow, res.WindowRequests)
			}()
		}
		close(start)
		wg.Wait()
		return admitted, maxWindow
	}

	// The window: 91 of 101 used.
	_, err = b.store.Pool.Exec(ctx, `UPDATE account_rate_windows SET requests = 91 WHERE account_id = $1`, first.Key.AccountID)
	require.NoError(t, err)
	p := meterAt(now, hash, 1)
	p.RateLimit = 101
	admitted, maxWindow := round(p)
	require.Equal(t, 10, admitted)
	require.Equal(t, 91+64, maxWindow, "every request is counted in the window")

	// The month: 990 of 1000 credits used, requests of 1 credit each.
	_, err = b.store.Pool.Exec(ctx, `UPDATE account_usage_monthly SET credits = 990 WHERE account_id = $1`, first.Key.AccountID)
	require.NoError(t, err)
	p = meterAt(now.Add(time.Minute), hash, 1)
	p.RateLimit = 1000
	admitted, _ = round(p)
	require.Equal(t, 10, admitted)
	res, err := b.store.Meter(ctx, p)
	require.NoError(t, err)
	require.False(t, res.Charged)
	require.EqualValues(t, 1000, res.MonthUsed)

	var statements, requests int64
	for _, s := range stores {
		st, rq := s.MeterGroupStats()
		statements, requests = statements+st, requests+rq
	}
	require.EqualValues(t, 2+2*64, requests)
	require.Less(t, statements, requests, "concurrent requests share statements")
	t.Logf("%d requests metered in %d statements", requests, statements)
}

// TestMeterKeyRowsPerRequest: a charged request writes its key's day row
// (which records its window as the key's last use) and no key window row; a
// request the window counts but does not charge (over the window, or its
// plan lacking the route) writes the key's window row instead. Either way the
// key's requests counted in its windows are its window rows' requests plus
// its day rows', and its lastUsedAt is its latest window — alone and in
// groups (concurrent requests of one key share metering statements).
func TestMeterKeyRowsPerRequest(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	hash := b.newKey(t, cryptointel.PlanPro)
	now := time.Date(2026, 3, 4, 10, 0, 5, 0, time.UTC)
	ws := now.Truncate(time.Minute)

	rows := func(keyID int64) (windowRows, windowed, charged int64, lastWindow *time.Time) {
		t.Helper()
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, `
			SELECT (SELECT count(*) FROM rate_windows WHERE api_key_id = $1),
				(SELECT coalesce(sum(requests), 0) FROM rate_windows WHERE api_key_id = $1),
				(SELECT coalesce(sum(requests), 0) FROM usage_daily WHERE api_key_id = $1),
				(SELECT max(last_window) FROM usage_daily WHERE api_key_id = $1)`, keyID).
			Scan(&windowRows, &windowed, &charged, &lastWindow))
		return windowRows, windowed, charged, lastWindow
	}
	lastUsed := func(keyID int64) time.Time {
		t.Helper()
		keys, err := db.ListAPIKeys(b.ctx, b.store.Bun, db.KeyFilter{KeyID: keyID})
		require.NoError(t, err)
		require.Len(t, keys, 1)
		require.NotNil(t, keys[0].LastUsedAt)
		return *keys[0].LastUsedAt
	}

	res, err := b.store.Meter(b.ctx, meterAt(now, hash, 1))
	require.NoError(t, err)
	require.True(t, res.Charged)
	keyID := res.Key.ID
	windowRows, windowed, charged, lastWindow := rows(keyID)
	require.Zero(t, windowRows, "a charged request writes no key window row")
	require.EqualValues(t, 1, charged)
	require.NotNil(t, lastWindow)
	require.True(t, lastWindow.Equal(ws), "the day row records the request's window: %v", lastWindow)
	require.True(t, lastUsed(keyID).Equal(ws))

	// A request its plan does not cover, in the next window: counted in the
	// key's window row, and the key's last use.
	res, err = b.store.Meter(b.ctx, meterAt(now.Add(time.Minute), hash, 1, cryptointel.PlanEnterprise))
	require.NoError(t, err)
	require.False(t, res.Charged)
	require.Equal(t, 1, res.WindowRequests)
	windowRows, windowed, charged, _ = rows(keyID)
	require.EqualValues(t, 1, windowRows)
	require.EqualValues(t, 1, windowed)
	require.EqualValues(t, 1, charged)
	require.True(t, lastUsed(keyID).Equal(ws.Add(time.Minute)))

	// 150 concurrent requests in a third window, 100 admitted: the 100 go to
	// the day row, the 50 refused to the window row.
	third := now.Add(2 * time.Minute)
	var passed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := 0; i < 150; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := b.store.Meter(b.ctx, meterAt(third, hash, 1))
			if err != nil {
				t.Error(err)
				return
			}
			if res.Charged {
				passed.Add(1)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 100, passed.Load())
	windowRows, windowed, charged, lastWindow = rows(keyID)
	require.EqualValues(t, 2, windowRows)
	require.EqualValues(t, 1+50, windowed)
	require.EqualValues(t, 1+100, charged)
	require.True(t, lastWindow.Equal(ws.Add(2*time.Minute)))
	require.True(t, lastUsed(keyID).Equal(ws.Add(2*time.Minute)))

	// Charged again in a fourth window: the day row's last window is the
	// key's last use, later than its latest window row.
	res, err = b.store.Meter(b.ctx, meterAt(now.Add(3*time.Minute), hash, 1))
	require.NoError(t, err)
	require.True(t, res.Charged)
	require.True(t, lastUsed(keyID).Equal(ws.Add(3*time.Minute)))
	windowRows, _, _, _ = rows(keyID)
	require.EqualValues(t, 2, windowRows)
}

// TestMeterGroupLeanMatchesCoalesced meters one random sequence of groups
// (several requests of one account and key, refusals for the plan, the
// scopes, the window and the credits, revoked keys, two windows in one
// group) twice, through meter_group_coalesced (migration 022) on one set of
// accounts and meter_group_lean (025) on a mirror set: every answer is the
// same, and so are the account's windows and months and the key's days; a
// key's window requests under 022 are its window rows' plus its day rows'
// requests under 025, and its lastUsedAt is the same.
func TestMeterGroupLeanMatchesCoalesced(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	ctx := b.ctx
	plans := []string{cryptointel.PlanFree, cryptointel.PlanPro, cryptointel.PlanFree, cryptointel.PlanEnterprise}
	const accounts, keysPer = 4, 2
	hash := func(set string, a, k int) []byte {
		s := sha256.Sum256([]byte(fmt.Sprintf("%s-%d-%d", set, a, k)))
		return s[:]
	}
	for _, set := range []string{"old", "new"} {
		for a := 0; a < accounts; a++ {
			var id int64
			require.NoError(t, b.store.Pool.QueryRow(ctx, `INSERT INTO accounts (name, plan) VALUES ($1, $2) RETURNING id`,
				fmt.Sprintf("%s-%d", set, a), plans[a]).Scan(&id))
			for k := 0; k < keysPer; k++ {
				scopes := []string{db.ScopeData, db.ScopeManagement}
				if a == 2 && k == 1 {
					scopes = []string{db.ScopeManagement} // refused by its scopes on data surfaces
				}
				_, err := b.store.Pool.Exec(ctx, `INSERT INTO api_keys (account_id, prefix, hash, scopes, revoked_at)
					VALUES ($1, 'ci_test', $2, $3, CASE WHEN $4 THEN now() END)`, id, hash(set, a, k), scopes, a == 3 && k == 1)
				require.NoError(t, err)
			}
		}
	}
	type answer struct {
		Ord, WindowRequests         int
		Charged, Revoked, Expired   bool
		MonthUsed, Monthly, Version int64
		Plan                        string
	}
	call := func(fn, set string, reqs [][6]int) []answer {
		n := len(reqs)
		hs := make([][]byte, n)
		starts := make([]time.Time, n)
		limits := make([]int32, n)
		costs := make([]int64, n)
		days, months, allowed, surfaces := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		writes := make([]bool, n)
		base := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
		for i, r := range reqs { // account, key, minute, cost, allowed, surface
			hs[i] = hash(set, r[0], r[1])
			starts[i] = base.Add(time.Duration(r[2]) * time.Minute)
			limits[i] = 12
			costs[i] = []int64{0, 1, 40, 300}[r[3]]
			days[i], months[i] = "2026-03-04", "2026-03-01"
			allowed[i] = []string{"free,pro,business,enterprise", "business,enterprise"}[r[4]]
			surfaces[i] = []string{"feed", "usage"}[r[5]]
			writes[i] = r[5] == 0 && r[3] == 3
		}
		rows, err := b.store.Pool.Query(ctx, `SELECT o_ord, o_window_requests, o_charged, o_revoked, o_expired, o_month_used,
			o_monthly_credits, o_data_version, o_plan FROM `+fn+`($1::bytea[], $2::timestamptz[], $3::int[], $4::bigint[],
			$5::date[], $6::date[], $7::text[], $8::text[], $9::bool[], $10::text[], $11::text) ORDER BY o_ord`,
			hs, starts, limits, costs, days, months, allowed, surfaces, writes, db.AccountSurfaces, db.ScopeData)
		require.NoError(t, err)
		var out []answer
		for rows.Next() {
			var a answer
			require.NoError(t, rows.Scan(&a.Ord, &a.WindowRequests, &a.Charged, &a.Revoked, &a.Expired, &a.MonthUsed,
				&a.Monthly, &a.Version, &a.Plan))
			out = append(out, a)
		}
		require.NoError(t, rows.Err())
		return out
	}
	// A fixed pseudo-random sequence (a linear congruential generator: the
	// same groups on every run).
	seed := uint64(42)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int((seed >> 33) % uint64(n))
	}
	charged, refused := 0, 0
	for g := 0; g < 80; g++ {
		minute := g / 8
		size := 1 + next(8)
		reqs := make([][6]int, size)
		focus := next(accounts) // most of a group on one account, as a busy client's
		for i := range reqs {
			a := focus
			if next(3) == 0 {
				a = next(accounts)
			}
			cost := next(4)
			if cost == 3 && next(3) != 0 {
				cost = 1
			}
			reqs[i] = [6]int{a, next(keysPer), minute + next(2), cost, next(5) / 4, next(4) / 3}
		}
		old := call("meter_group_coalesced", "old", reqs)
		lean := call("meter_group_lean", "new", reqs)
		require.Equal(t, old, lean, "group %d: %v", g, reqs)
		for _, a := range old {
			if a.Charged {
				charged++
			} else {
				refused++
			}
		}
	}
	t.Logf("%d requests charged, %d not", charged, refused)
	require.Greater(t, charged, 100)
	require.Greater(t, refused, 100)

	state := func(set string) string {
		var s string
		require.NoError(t, b.store.Pool.QueryRow(ctx, `SELECT concat_ws(E'\n',
			(SELECT string_agg(format('window %s %s %s', a.name, w.window_start, w.requests), E'\n' ORDER BY a.name, w.window_start)
				FROM account_rate_windows w JOIN accounts a ON a.id = w.account_id WHERE a.name LIKE $1 || '-%'),
			(SELECT string_agg(format('month %s %s %s %s', a.name, m.month, m.requests, m.credits), E'\n' ORDER BY a.name)
				FROM account_usage_monthly m JOIN accounts a ON a.id = m.account_id WHERE a.name LIKE $1 || '-%'),
			(SELECT string_agg(format('day %s %s %s %s %s', a.name, k.rank, d.day, d.requests, d.credits), E'\n' ORDER BY a.name, k.rank)
				FROM usage_daily d JOIN (SELECT id, account_id, rank() OVER (PARTITION BY account_id ORDER BY id) FROM api_keys) k ON k.id = d.api_key_id
				JOIN accounts a ON a.id = k.account_id WHERE a.name LIKE $1 || '-%' AND d.requests > 0))`, set).Scan(&s))
		return strings.ReplaceAll(s, set+"-", "")
	}
	require.Equal(t, state("old"), state("new"))

	type keyState struct {
		Windowed int64
		LastUsed time.Time
	}
	keys := func(set string, counted string) map[string]keyState {
		out := map[string]keyState{}
		for a := 0; a < accounts; a++ {
			views, err := db.ListAPIKeys(ctx, b.store.Bun, db.KeyFilter{Account: fmt.Sprintf("%s-%d", set, a)})
			require.NoError(t, err)
			for _, v := range views {
				var n int64
				require.NoError(t, b.store.Pool.QueryRow(ctx, counted, v.ID).Scan(&n))
				ks := keyState{Windowed: n}
				if v.LastUsedAt != nil {
					ks.LastUsed = *v.LastUsedAt
				}
				out[fmt.Sprintf("account %d, key %d", a, v.ID-views[len(views)-1].ID)] = ks // keys newest first
			}
		}
		return out
	}
	require.Equal(t,
		keys("old", `SELECT coalesce(sum(requests), 0) FROM rate_windows WHERE api_key_id = $1`),
		keys("new", `SELECT (SELECT coalesce(sum(requests), 0) FROM rate_windows WHERE api_key_id = $1)
			+ (SELECT coalesce(sum(requests), 0) FROM usage_daily WHERE api_key_id = $1)`))
}

// TestMeterLoneRequestKeepsItsTime: a request metered alone sends its
// group from its own goroutine, under its own context, as a statement of
// its own would be: when its time budget ends while the statement waits
// (here on a row lock another transaction holds), the request gets its
// context's error at once, and the statement, cancelled, meters nothing.
func TestMeterLoneRequestKeepsItsTime(t *testing.T) {
	t.Parallel()
	b := setupAccess(t)
	hash := b.newKey(t, cryptointel.PlanPro)
	now := time.Date(2026, 3, 4, 10, 0, 5, 0, time.UTC)
	first, err := b.store.Meter(b.ctx, meterAt(now, hash, 1))
	require.NoError(t, err)
	require.Equal(t, 1, first.WindowRequests)

	tx, err := b.store.Pool.Begin(b.ctx)
	require.NoError(t, err)
	_, err = tx.Exec(b.ctx, `SELECT 1 FROM account_rate_windows WHERE account_id = $1 FOR UPDATE`, first.Key.AccountID)
	require.NoError(t, err)
	released := make(chan struct{})
	go func() {
		// Held well past the request's budget, then let go, so that a
		// statement left running would meter the request after all.
		time.Sleep(5 * time.Second)
		tx.Rollback(context.Background()) //nolint:errcheck
		close(released)
	}()
	ctx, cancel := context.WithTimeout(b.ctx, 200*time.Millisecond)
	defer cancel()
	_, err = b.store.Meter(ctx, meterAt(now, hash, 1))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-released:
		t.Fatal("the request waited for the lock past its budget")
	default:
	}
	<-released
	next, err := b.store.Meter(b.ctx, meterAt(now, hash, 1))
	require.NoError(t, err)
	require.Equal(t, 2, next.WindowRequests, "the cancelled request was not counted")
}
