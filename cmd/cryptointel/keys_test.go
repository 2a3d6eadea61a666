package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
)

// TestCLIKeyLifecycle walks every keys subcommand: create with an expiry,
// list (status, expiry, last use), rotate with and without grace, revoke,
// set-plan and the audit trail they leave, checking what the access layer
// will read for each key.
func TestCLIKeyLifecycle(t *testing.T) {
	t.Parallel()
	b, store := migratedCLI(t)
	ctx := context.Background()
	keyInfo := func(key string) *db.KeyInfo {
		k, err := store.KeyByHash(ctx, db.HashAPIKey(key))
		require.NoError(t, err)
		return k
	}
	type createdKey struct {
		KeyID     int64      `json:"keyId"`
		Key       string     `json:"key"`
		ExpiresAt *time.Time `json:"expiresAt"`
	}
	create := func(args ...string) createdKey {
		out, _, err := b.run(t, ctx, "", append([]string{"keys", "create", "--json"}, args...)...)
		require.NoError(t, err)
		var c createdKey
		require.NoError(t, json.Unmarshal([]byte(out), &c))
		return c
	}
	list := func(args ...string) []db.APIKeyView {
		out, _, err := b.run(t, ctx, "", append([]string{"keys", "list", "--json"}, args...)...)
		require.NoError(t, err)
		var keys []db.APIKeyView
		require.NoError(t, json.Unmarshal([]byte(out), &keys))
		return keys
	}

	first := create("--plan", "pro", "--account", "acme")
	require.Nil(t, first.ExpiresAt)
	expiring := create("--plan", "pro", "--account", "acme", "--expires-in", "30d")
	require.NotNil(t, expiring.ExpiresAt)
	require.WithinDuration(t, time.Now().Add(30*24*time.Hour), *expiring.ExpiresAt, time.Minute)
	other := create("--plan", "free", "--account", "other")
	_, _, err := b.run(t, ctx, "", "keys", "create", "--plan", "pro", "--account", "acme", "--expires-at", "2020-01-01T00:00:00Z")
	require.ErrorContains(t, err, "expiry 2020-01-01T00:00:00Z is not in the future.")
	_, _, err = b.run(t, ctx, "", "keys", "create", "--plan", "pro", "--account", "acme", "--expires-in", "soon")
	require.ErrorContains(t, err, `--expires-in: want a positive duration such as 720h or 90d, got "soon"`)

	// A use shows as the start of its rate window.
	_, err = store.Pool.Exec(ctx, `INSERT INTO rate_windows (api_key_id, window_start, requests) VALUES ($1, '2026-11-20T10:05:00Z', 3)`, first.KeyID)
	require.NoError(t, err)
	keys := list("--account", "acme")
	require.Len(t, keys, 2)
	require.Equal(t, expiring.KeyID, keys[0].ID, "newest first")
	require.Equal(t, first.KeyID, keys[1].ID)
	require.Equal(t, db.KeyActive, keys[1].Status)
	require.Equal(t, "pro", keys[1].Plan)
	require.Equal(t, time.Date(2026, 11, 20, 10, 5, 0, 0, time.UTC), *keys[1].LastUsedAt)
	require.Nil(t, keys[0].LastUsedAt)
	require.Len(t, list(), 3)
	out, _, err := b.run(t, ctx, "", "keys", "list", "--account", "acme")
	require.NoError(t, err)
	require.Contains(t, out, "LAST USED")
	require.Contains(t, out, "2026-11-20T10:05:00Z")
	require.Contains(t, out, "data,management")

	// Rotation with grace: the old key works until its new expiry, then is
	// refused as expired; it cannot be rotated twice.
	out, _, err = b.run(t, ctx, "", "keys", "rotate", strconv.FormatInt(first.KeyID, 10), "--grace", "1h")
	require.NoError(t, err)
	rotated := lastLine(out)
	require.Regexp(t, `^ci_[A-Za-z0-9_-]{43}$`, rotated)
	require.Contains(t, out, "keeps working until")
	require.False(t, keyInfo(rotated).Revoked)
	require.False(t, keyInfo(first.Key).Revoked, "within its grace")
	keys = list("--account", "acme")
	require.Len(t, keys, 3)
	old := keys[2]
	require.Equal(t, first.KeyID, old.ID)
	require.Equal(t, keys[0].ID, *old.ReplacedBy)
	require.WithinDuration(t, time.Now().Add(time.Hour), *old.ExpiresAt, time.Minute)
	_, _, err = b.run(t, ctx, "", "keys", "rotate", strconv.FormatInt(first.KeyID, 10))
	require.ErrorContains(t, err, "was already rotated (to key")
	_, err = store.Pool.Exec(ctx, `UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, first.KeyID)
	require.NoError(t, err)
	k := keyInfo(first.Key)
	require.True(t, k.Revoked && k.Expired, "past its expiry")
	require.Equal(t, db.KeyExpired, list("--account", "acme")[2].Status)

	// Rotation without grace revokes at once.
	out, _, err = b.run(t, ctx, "", "keys", "rotate", strconv.FormatInt(expiring.KeyID, 10), "--json")
	require.NoError(t, err)
	var rot struct {
		KeyID    int64          `json:"keyId"`
		Key      string         `json:"key"`
		Replaced *db.APIKeyView `json:"replaced"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rot))
	require.Equal(t, db.KeyRevoked, rot.Replaced.Status)
	k = keyInfo(expiring.Key)
	require.True(t, k.Revoked)
	require.False(t, k.Expired)
	require.False(t, keyInfo(rot.Key).Revoked)

	// Revocation.
	out, _, err = b.run(t, ctx, "", "keys", "revoke", strconv.FormatInt(other.KeyID, 10), "--reason", "leaked")
	require.NoError(t, err)
	require.Contains(t, out, "revoked at")
	require.True(t, keyInfo(other.Key).Revoked)
	_, _, err = b.run(t, ctx, "", "keys", "revoke", strconv.FormatInt(other.KeyID, 10))
	require.ErrorContains(t, err, "is already revoked.")
	_, _, err = b.run(t, ctx, "", "keys", "revoke", "999999")
	require.ErrorContains(t, err, "API key 999999 not found.")
	_, _, err = b.run(t, ctx, "", "keys", "revoke", "abc")
	require.ErrorContains(t, err, `key id must be a positive integer, got "abc"`)
	require.Len(t, list("--active"), 2, "the two keys rotation created")

	// Plans.
	out, _, err = b.run(t, ctx, "", "keys", "set-plan", "acme", "business")
	require.NoError(t, err)
	require.Contains(t, out, "account acme: plan pro -> business")
	require.Equal(t, "business", keyInfo(rotated).Plan)
	out, _, err = b.run(t, ctx, "", "keys", "set-plan", "acme", "business")
	require.NoError(t, err)
	require.Contains(t, out, "already on plan business")
	_, _, err = b.run(t, ctx, "", "keys", "set-plan", "acme", "gold")
	require.ErrorContains(t, err, `unknown plan "gold"`)
	_, _, err = b.run(t, ctx, "", "keys", "set-plan", "nobody", "pro")
	require.ErrorContains(t, err, `account "nobody" not found`)

	// Every change left one audit record, newest first.
	out, _, err = b.run(t, ctx, "", "keys", "audit", "--account", "acme", "--json")
	require.NoError(t, err)
	var entries []db.KeyAuditEntry
	require.NoError(t, json.Unmarshal([]byte(out), &entries))
	var actions []string
	for _, e := range entries {
		require.Equal(t, db.ActorCLI, e.Actor)
		actions = append(actions, e.Action)
	}
	require.Equal(t, []string{
		db.AuditPlanSet,
		db.AuditKeyCreated, db.AuditKeyRotated, // without grace
		db.AuditKeyCreated, db.AuditKeyRotated, // with grace
		db.AuditKeyCreated, db.AuditKeyCreated,
	}, actions)
	require.Equal(t, map[string]any{"from": "pro", "to": "business"}, entries[0].Detail)
	require.Equal(t, map[string]any{"newKeyId": float64(keys[0].ID), "graceSeconds": float64(3600)}, entries[4].Detail)
	out, _, err = b.run(t, ctx, "", "keys", "audit", "--account", "other")
	require.NoError(t, err)
	require.Contains(t, out, `key.revoked`)
	require.Contains(t, out, `{"reason":"leaked"}`)
}

// TestCLIRotationKeepsExpiry rotates a key created with --expires-in 1h,
// with and without grace: each successor expires when the first key did
// (a rotation never removes or extends an expiry), --expires-in may bring
// it closer but not later, and the scopes carry over.
func TestCLIRotationKeepsExpiry(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	ctx := context.Background()
	_, _, err := b.run(t, ctx, "", "migrate")
	require.NoError(t, err)
	type keyJSON struct {
		KeyID     int64      `json:"keyId"`
		Key       string     `json:"key"`
		ExpiresAt *time.Time `json:"expiresAt"`
		Scopes    []string   `json:"scopes"`
	}
	run := func(args ...string) keyJSON {
		t.Helper()
		out, _, err := b.run(t, ctx, "", append(args, "--json")...)
		require.NoError(t, err)
		var k keyJSON
		require.NoError(t, json.Unmarshal([]byte(out), &k))
		return k
	}
	owner := run("keys", "create", "--plan", "free", "--account", "expiring")
	require.Equal(t, []string{db.ScopeData, db.ScopeManagement}, owner.Scopes, "the account's first key manages it")
	first := run("keys", "create", "--plan", "free", "--account", "expiring", "--expires-in", "1h")
	require.Equal(t, []string{db.ScopeData}, first.Scopes, "later keys read data")
	require.NotNil(t, first.ExpiresAt)

	second := run("keys", "rotate", strconv.FormatInt(first.KeyID, 10))
	require.NotNil(t, second.ExpiresAt, "the successor keeps the expiry")
	require.True(t, first.ExpiresAt.Equal(*second.ExpiresAt), "%s != %s", first.ExpiresAt, second.ExpiresAt)
	third := run("keys", "rotate", strconv.FormatInt(second.KeyID, 10), "--grace", "24h")
	require.NotNil(t, third.ExpiresAt)
	require.True(t, first.ExpiresAt.Equal(*third.ExpiresAt))
	_, _, err = b.run(t, ctx, "", "keys", "rotate", strconv.FormatInt(third.KeyID, 10), "--expires-in", "2h")
	require.ErrorContains(t, err, "a key never outlives the key it comes from.")
	fourth := run("keys", "rotate", strconv.FormatInt(third.KeyID, 10), "--expires-in", "30m")
	require.True(t, fourth.ExpiresAt.Before(*first.ExpiresAt))

	keys, err := db.ListAPIKeys(ctx, mustStore(t, b).Bun, db.KeyFilter{KeyID: fourth.KeyID})
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, []string{db.ScopeData}, keys[0].Scopes, "a successor keeps its predecessor's scopes")
	require.True(t, fourth.ExpiresAt.Equal(*keys[0].ExpiresAt))
}

// TestCLIKeysRecoverAndCap takes an account back with keys recover (every
// key revoked, one new management key) and holds the cap on active keys
// (KEYS_MAX_ACTIVE) on create, on a rotation with grace, not on one
// without; restricted keys are made with --surfaces.
func TestCLIKeysRecoverAndCap(t *testing.T) {
	t.Parallel()
	b := setupCLI(t)
	b.env["KEYS_MAX_ACTIVE"] = "3"
	ctx := context.Background()
	_, _, err := b.run(t, ctx, "", "migrate")
	require.NoError(t, err)
	store := mustStore(t, b)
	create := func(args ...string) (string, int64, error) {
		out, _, err := b.run(t, ctx, "", append([]string{"keys", "create", "--plan", "pro", "--account", "stolen", "--json"}, args...)...)
		if err != nil {
			return "", 0, err
		}
		var k struct {
			KeyID int64  `json:"keyId"`
			Key   string `json:"key"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &k))
		return k.Key, k.KeyID, nil
	}
	owner, ownerID, err := create()
	require.NoError(t, err)
	_, _, err = create("--surfaces", "lookup,query", "--scopes", "management")
	require.ErrorContains(t, err, "a restricted key cannot hold the management scope.")
	_, _, err = create("--surfaces", "keys")
	require.ErrorContains(t, err, `unknown surface "keys"`)
	restricted, _, err := create("--surfaces", "query,lookup")
	require.NoError(t, err)
	k, err := store.KeyByHash(ctx, db.HashAPIKey(restricted))
	require.NoError(t, err)
	require.Equal(t, []string{"lookup", "query"}, k.Surfaces)
	require.Equal(t, []string{db.ScopeData}, k.Scopes)
	third, thirdID, err := create()
	require.NoError(t, err)
	_, _, err = create()
	require.ErrorContains(t, err, "Too many active API keys: this account has 3, and at most 3 may be active at a time.")
	_, _, err = b.run(t, ctx, "", "keys", "rotate", strconv.FormatInt(thirdID, 10), "--grace", "1h")
	require.ErrorContains(t, err, "Too many active API keys")
	out, _, err := b.run(t, ctx, "", "keys", "rotate", strconv.FormatInt(thirdID, 10))
	require.NoError(t, err, "a rotation without grace retires the old key first")
	successor := lastLine(out)

	out, _, err = b.run(t, ctx, "", "keys", "recover", "--account", "stolen", "--json")
	require.NoError(t, err)
	var rec struct {
		KeyID   int64   `json:"keyId"`
		Key     string  `json:"key"`
		Revoked []int64 `json:"revoked"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rec))
	require.Len(t, rec.Revoked, 3, "the owner's, the restricted and the successor: the rotated one was revoked already")
	require.Contains(t, rec.Revoked, ownerID)
	for _, old := range []string{owner, restricted, third, successor} {
		k, err := store.KeyByHash(ctx, db.HashAPIKey(old))
		require.NoError(t, err)
		require.True(t, k.Revoked)
	}
	k, err = store.KeyByHash(ctx, db.HashAPIKey(rec.Key))
	require.NoError(t, err)
	require.False(t, k.Revoked)
	require.Equal(t, []string{db.ScopeData, db.ScopeManagement}, k.Scopes)
	out, _, err = b.run(t, ctx, "", "keys", "audit", "--account", "stolen", "--limit", "1")
	require.NoError(t, err)
	require.Contains(t, out, db.AuditKeysRecovered)
	_, _, err = b.run(t, ctx, "", "keys", "recover", "--account", "nobody")
	require.ErrorContains(t, err, `account "nobody" not found`)
}

// mustStore opens the CLI bundle's database.
func mustStore(t *testing.T, b *cliBundle) *db.DB {
	t.Helper()
	store, err := db.Open(context.Background(), b.env["DATABASE_URL"], db.Options{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	return store
}
