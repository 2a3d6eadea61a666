package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
)

// keyProbe is a lookup costing 1 credit that answers 200 for any name.
const keyProbe = "/v1/entities/byName?name=x"

// keyCall sends method path with key to s and returns the answer.
func keyCall(t *testing.T, s *hostileServer, key, method, path string) *restResponse {
	t.Helper()
	return s.send(t, key, hostileRequest{Method: method, Path: path})
}

// requireKeyError checks an answer's status and {"error"} message.
func requireKeyError(t *testing.T, r *restResponse, status int, msg string) {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	var body struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &body), string(r.Body))
	require.Equal(t, msg, body.Error)
}

// headerInt reads an integer response header.
func headerInt(t *testing.T, r *restResponse, name string) int {
	t.Helper()
	n, err := strconv.Atoi(r.Header.Get(name))
	require.NoError(t, err, "%s: %q", name, r.Header.Get(name))
	return n
}

// rotatedKey is the body of POST /v1/keys/{id}/rotate.
type rotatedKey struct {
	Data struct {
		ID        int64      `json:"id"`
		Key       string     `json:"key"`
		ExpiresAt *time.Time `json:"expiresAt"`
		Scopes    []string   `json:"scopes"`
	} `json:"data"`
	Replaced db.APIKeyView `json:"replaced"`
}

// TestKeyRotationKeepsAccountMeters replays the red team's credit
// multiplication: a free key that used 31 credits rotates itself 20 times
// in a row with graceSeconds=604800. The account's credits and rate window
// carry on across every successor (X-Monthly-Used and
// X-RateLimit-Remaining continue, never reset), the rotations stop at the
// cap on active keys (10), and all the active keys together get exactly
// the account's one window of 100 requests.
func TestKeyRotationKeepsAccountMeters(t *testing.T) {
	t.Parallel()
	s := startHostileServer(t)
	key, keyID := newAccountKey(t, s, "meters", cryptointel.PlanFree)
	var used, remaining int
	for i := 0; i < 31; i++ {
		r := keyCall(t, s, key, http.MethodGet, keyProbe)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		used, remaining = headerInt(t, r, "X-Monthly-Used"), headerInt(t, r, "X-RateLimit-Remaining")
	}
	require.Equal(t, 31, used)
	require.Equal(t, 100-31, remaining)

	active := []string{key}
	rotated, refused := 0, 0
	for i := 0; i < 20; i++ {
		r := keyCall(t, s, key, http.MethodPost, fmt.Sprintf("/v1/keys/%d/rotate?graceSeconds=604800", keyID))
		remaining--
		require.Equal(t, remaining, headerInt(t, r, "X-RateLimit-Remaining"), "rotation %d: the account's window carries on", i+1)
		require.Equal(t, used, headerInt(t, r, "X-Monthly-Used"), "rotation %d: the account's credits carry on", i+1)
		if r.Status == http.StatusConflict {
			requireKeyError(t, r, http.StatusConflict, fmt.Sprintf(db.MsgTooManyKeys, 10, 10))
			refused++
			continue
		}
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		var rk rotatedKey
		require.NoError(t, json.Unmarshal(r.Body, &rk))
		key, keyID = rk.Data.Key, rk.Data.ID
		active = append(active, key)
		rotated++
	}
	require.Equal(t, 9, rotated, "ten keys active at most: the first and nine successors")
	require.Equal(t, 11, refused)

	// The newest successor starts where the account stands.
	r := keyCall(t, s, key, http.MethodGet, keyProbe)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	used++
	remaining--
	require.Equal(t, used, headerInt(t, r, "X-Monthly-Used"))
	require.Equal(t, remaining, headerInt(t, r, "X-RateLimit-Remaining"))
	var usage struct {
		Data access.UsageData `json:"data"`
	}
	r = keyCall(t, s, key, http.MethodGet, "/v1/usage")
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	remaining--
	require.NoError(t, json.Unmarshal(r.Body, &usage))
	require.Equal(t, int64(used), usage.Data.Budget.Used, "/v1/usage shows the account's month")

	r = keyCall(t, s, key, http.MethodGet, "/v1/keys")
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	remaining--
	var listed struct {
		Data []db.APIKeyView `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &listed))
	n := 0
	for _, k := range listed.Data {
		if k.Status == db.KeyActive {
			n++
		}
	}
	require.Equal(t, 10, n, "the cap on active keys holds")

	// Every active key together: exactly what is left of one window.
	admitted := 0
	for i := 0; i < 2*len(active)*10; i++ {
		r := keyCall(t, s, active[i%len(active)], http.MethodGet, keyProbe)
		switch r.Status {
		case http.StatusOK:
			admitted++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("%d: %s", r.Status, r.Body)
		}
	}
	require.Equal(t, remaining, admitted, "ten keys share the account's window")
	summary(t, "key rotation: 31 credits used, 20 chained rotations with a week's grace: %d rotated, %d refused at the cap of 10 active keys; credits and window carried on; the 10 keys together got %d requests, the rest of one window",
		rotated, refused, admitted)
}

// newAccountKey creates an account on plan with its first key (data and
// management scopes) and returns the key and its id.
func newAccountKey(t *testing.T, s *hostileServer, account, plan string) (string, int64) {
	t.Helper()
	key, row, err := db.CreateAPIKey(context.Background(), s.store.Bun, account, plan)
	require.NoError(t, err)
	return key, row.ID
}

// TestKeyTakeoverRefused replays the three-request takeover: a leaked data
// key X rotates the owner's key O without grace, rotates itself, then
// revokes O's successor. It fails at its first step: X lacks the
// management scope and may rotate or revoke only itself. The owner's key
// keeps working, and its audit trail names the acting keys.
func TestKeyTakeoverRefused(t *testing.T) {
	t.Parallel()
	s := startHostileServer(t)
	owner, ownerID := newAccountKey(t, s, "takeover", cryptointel.PlanPro)
	leaked, leakedID := newAccountKey(t, s, "takeover", "")

	// Step 1: refused; the owner's key still works.
	r := keyCall(t, s, leaked, http.MethodPost, fmt.Sprintf("/v1/keys/%d/rotate", ownerID))
	requireKeyError(t, r, http.StatusForbidden, access.MsgKeyNeedsManagement)
	require.Equal(t, http.StatusOK, keyCall(t, s, owner, http.MethodGet, keyProbe).Status)
	requireKeyError(t, keyCall(t, s, leaked, http.MethodDelete, fmt.Sprintf("/v1/keys/%d", ownerID)),
		http.StatusForbidden, access.MsgKeyNeedsManagement)
	requireKeyError(t, keyCall(t, s, leaked, http.MethodGet, "/v1/keys/audit"), http.StatusForbidden, access.MsgKeyNeedsManagement)
	requireKeyError(t, keyCall(t, s, leaked, http.MethodPost, "/v1/keys?surfaces=lookup"), http.StatusForbidden, access.MsgKeyNeedsManagement)
	r = keyCall(t, s, leaked, http.MethodGet, "/v1/keys")
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var listed struct {
		Data []db.APIKeyView `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &listed))
	require.Len(t, listed.Data, 1, "a data key sees only itself")
	require.Equal(t, leakedID, listed.Data[0].ID)

	// A data key may still rotate itself; its successor is a data key too.
	r = keyCall(t, s, leaked, http.MethodPost, fmt.Sprintf("/v1/keys/%d/rotate", leakedID))
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var rk rotatedKey
	require.NoError(t, json.Unmarshal(r.Body, &rk))
	require.Equal(t, []string{db.ScopeData}, rk.Data.Scopes)
	requireKeyError(t, keyCall(t, s, rk.Data.Key, http.MethodDelete, fmt.Sprintf("/v1/keys/%d", ownerID)),
		http.StatusForbidden, access.MsgKeyNeedsManagement)
	require.Equal(t, http.StatusOK, keyCall(t, s, owner, http.MethodGet, keyProbe).Status)

	// The owner revokes the leaked key's successor; the trail names who
	// did what.
	r = keyCall(t, s, owner, http.MethodDelete, fmt.Sprintf("/v1/keys/%d?reason=leaked", rk.Data.ID))
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	requireKeyError(t, keyCall(t, s, rk.Data.Key, http.MethodGet, keyProbe), http.StatusUnauthorized, access.MsgRevokedKey)
	r = keyCall(t, s, owner, http.MethodGet, "/v1/keys/audit?limit=3")
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var trail struct {
		Data []db.KeyAuditEntry `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &trail))
	require.Equal(t, db.AuditKeyRevoked, trail.Data[0].Action)
	require.Equal(t, db.ActorAPIKey(ownerID), trail.Data[0].Actor)
	require.Equal(t, db.AuditKeyCreated, trail.Data[1].Action)
	require.Equal(t, db.ActorAPIKey(leakedID), trail.Data[1].Actor)
}

// TestKeyRestrictedKeys creates restricted keys through POST /v1/keys: a
// key reading the lookup surface answers there, is refused elsewhere and
// when writing, expires with the key that made it, and cannot rotate into
// more.
func TestKeyRestrictedKeys(t *testing.T) {
	t.Parallel()
	s := startHostileServer(t)
	expires := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	owner, _, err := db.CreateAPIKeyWith(context.Background(), s.store.Bun, db.NewAPIKey{Account: "restricted", Plan: cryptointel.PlanBusiness, ExpiresAt: &expires})
	require.NoError(t, err)

	requireKeyError(t, keyCall(t, s, owner, http.MethodPost, "/v1/keys?surfaces=keys"), http.StatusBadRequest,
		"surfaces must only contain: lookup, query, feed, timeline, replay, brief, delivery, export, graphql, stream")
	r := keyCall(t, s, owner, http.MethodPost, "/v1/keys?surfaces=lookup,delivery")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var created struct {
		Data struct {
			ID        int64      `json:"id"`
			Key       string     `json:"key"`
			ExpiresAt *time.Time `json:"expiresAt"`
			Scopes    []string   `json:"scopes"`
			Surfaces  []string   `json:"surfaces"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &created))
	require.Equal(t, []string{"lookup", "delivery"}, created.Data.Surfaces)
	require.Equal(t, []string{db.ScopeData}, created.Data.Scopes)
	require.NotNil(t, created.Data.ExpiresAt, "a restricted key expires with the key that made it")
	require.True(t, expires.Equal(*created.Data.ExpiresAt))
	restricted := created.Data.Key
	restrictedMsg := fmt.Sprintf(access.MsgKeyRestricted, "lookup, delivery")

	require.Equal(t, http.StatusOK, keyCall(t, s, restricted, http.MethodGet, keyProbe).Status)
	require.Equal(t, http.StatusOK, keyCall(t, s, restricted, http.MethodGet, "/v1/usage").Status)
	require.Equal(t, http.StatusOK, keyCall(t, s, restricted, http.MethodGet, "/v1/webhooks").Status)
	requireKeyError(t, keyCall(t, s, restricted, http.MethodGet, "/v1/latest"), http.StatusForbidden, restrictedMsg)
	r = s.send(t, restricted, hostileRequest{Method: http.MethodPost, Path: "/v1/webhooks", ContentType: "application/json",
		Body: []byte(`{"url":"https://example.com/hook","event_types":["radar"]}`)})
	requireKeyError(t, r, http.StatusForbidden, restrictedMsg)
	r = s.send(t, restricted, hostileRequest{Method: http.MethodPost, Path: "/graphql", ContentType: "application/json",
		Body: []byte(`{"query":"{ __typename }"}`)})
	require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
	require.Contains(t, string(r.Body), restrictedMsg)

	// Rotating it keeps the restriction and the expiry.
	r = keyCall(t, s, restricted, http.MethodPost, fmt.Sprintf("/v1/keys/%d/rotate", created.Data.ID))
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var rk rotatedKey
	require.NoError(t, json.Unmarshal(r.Body, &rk))
	require.True(t, expires.Equal(*rk.Data.ExpiresAt))
	requireKeyError(t, keyCall(t, s, rk.Data.Key, http.MethodGet, "/v1/latest"), http.StatusForbidden, restrictedMsg)
}

// TestKeyRotationKeepsExpiry rotates a key that expires in an hour through
// /v1/keys, with grace and without: every successor expires when it would
// have (a rotation never removes or extends expiresAt).
func TestKeyRotationKeepsExpiry(t *testing.T) {
	t.Parallel()
	s := startHostileServer(t)
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	key, row, err := db.CreateAPIKeyWith(context.Background(), s.store.Bun, db.NewAPIKey{Account: "expiry", Plan: cryptointel.PlanFree, ExpiresAt: &expires})
	require.NoError(t, err)
	id := row.ID
	for _, grace := range []string{"?graceSeconds=600", ""} {
		r := keyCall(t, s, key, http.MethodPost, fmt.Sprintf("/v1/keys/%d/rotate%s", id, grace))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		var rk rotatedKey
		require.NoError(t, json.Unmarshal(r.Body, &rk))
		require.NotNil(t, rk.Data.ExpiresAt, "rotation%s removed the expiry", grace)
		require.True(t, expires.Equal(*rk.Data.ExpiresAt), "rotation%s: %s, want %s", grace, rk.Data.ExpiresAt, expires)
		key, id = rk.Data.Key, rk.Data.ID
	}
}
