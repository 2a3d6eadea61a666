package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
)

// TestKeyLifecycleAcrossReplicas runs two server processes on one database
// and changes keys through one of them (/v1/keys) or the command line:
// the other refuses a revoked key, a rotated one, an expired one and a
// downgraded plan on the very next request — no process caches a key. It
// reports how long after the change's response that first refusal came.
func TestKeyLifecycleAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := buildServer(t)
	dbURL := dbtest.NewURL(t)
	store, err := db.Open(ctx, dbURL, db.Options{MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	logDir := t.TempDir()
	var procs []*faultClient
	for i := 0; i < 2; i++ {
		p := startServeProc(t, bin, []string{"DATABASE_URL=" + dbURL}, filepath.Join(logDir, fmt.Sprintf("replica%d.log", i)))
		t.Cleanup(func() {
			p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
			p.cmd.Wait()                          //nolint:errcheck
		})
		procs = append(procs, &faultClient{base: p.base, http: &http.Client{Timeout: 30 * time.Second}})
	}
	a, b := procs[0], procs[1]
	newKey := func(account, plan string) (string, int64) {
		plaintext, key, err := db.CreateAPIKey(ctx, store.Bun, account, plan)
		require.NoError(t, err)
		return plaintext, key.ID
	}
	const probe = "/v1/entities/byName?name=x"
	requireAnswer := func(ans faultAnswer, status int, msg string) {
		t.Helper()
		require.Equal(t, status, ans.status, ans.body)
		if msg != "" {
			var body struct {
				Error string `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(ans.body), &body), ans.body)
			require.Equal(t, msg, body.Error)
		}
	}
	// refusedAfter sends probe with key to c right after a change answered
	// at changed, and returns how long after it the refusal came.
	refusedAfter := func(c *faultClient, key string, changed time.Time, msg string) time.Duration {
		t.Helper()
		ans := c.do(http.MethodGet, probe, key, "")
		requireAnswer(ans, http.StatusUnauthorized, msg)
		return time.Since(changed)
	}
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"DATABASE_URL=" + dbURL}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}

	owner, ownerID := newKey("lifecycle", cryptointel.PlanPro)
	victim, victimID := newKey("lifecycle", cryptointel.PlanPro)
	stranger, strangerID := newKey("stranger", cryptointel.PlanPro)
	for _, c := range procs {
		requireAnswer(c.do(http.MethodGet, probe, victim, ""), http.StatusOK, "")
	}

	// Revoked on one replica, refused on the other at once.
	ans := a.do(http.MethodDelete, fmt.Sprintf("/v1/keys/%d?reason=leaked", victimID), owner, "")
	changed := time.Now()
	requireAnswer(ans, http.StatusOK, "")
	var revoked struct {
		Data db.APIKeyView `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(ans.body), &revoked))
	require.Equal(t, db.KeyRevoked, revoked.Data.Status)
	revokeLag := refusedAfter(b, victim, changed, access.MsgRevokedKey)
	requireAnswer(a.do(http.MethodGet, probe, victim, ""), http.StatusUnauthorized, access.MsgRevokedKey)
	requireAnswer(b.do(http.MethodDelete, fmt.Sprintf("/v1/keys/%d", victimID), owner, ""), http.StatusConflict,
		fmt.Sprintf("API key %d is already revoked.", victimID))
	// Another account's key is not found, and stays usable.
	requireAnswer(b.do(http.MethodDelete, fmt.Sprintf("/v1/keys/%d", strangerID), owner, ""), http.StatusNotFound,
		fmt.Sprintf("API key %d not found.", strangerID))
	requireAnswer(a.do(http.MethodGet, probe, stranger, ""), http.StatusOK, "")

	// Rotated on one replica without grace: the old key is refused on the
	// other, the new one works there.
	ans = b.do(http.MethodPost, fmt.Sprintf("/v1/keys/%d/rotate", ownerID), owner, "")
	changed = time.Now()
	requireAnswer(ans, http.StatusCreated, "")
	var rotated struct {
		Data struct {
			ID  int64
			Key string
		} `json:"data"`
		Replaced db.APIKeyView `json:"replaced"`
	}
	require.NoError(t, json.Unmarshal([]byte(ans.body), &rotated))
	require.Equal(t, db.KeyRevoked, rotated.Replaced.Status)
	rotateLag := refusedAfter(a, owner, changed, access.MsgRevokedKey)
	owner, ownerID = rotated.Data.Key, rotated.Data.ID
	requireAnswer(a.do(http.MethodGet, probe, owner, ""), http.StatusOK, "")

	// Rotated with grace: both keys work until the old one's expiry, then
	// it is refused as expired.
	ans = a.do(http.MethodPost, fmt.Sprintf("/v1/keys/%d/rotate?graceSeconds=3600", ownerID), owner, "")
	requireAnswer(ans, http.StatusCreated, "")
	require.NoError(t, json.Unmarshal([]byte(ans.body), &rotated))
	require.Equal(t, db.KeyActive, rotated.Replaced.Status)
	require.WithinDuration(t, time.Now().Add(time.Hour), *rotated.Replaced.ExpiresAt, time.Minute)
	requireAnswer(b.do(http.MethodGet, probe, owner, ""), http.StatusOK, "")
	requireAnswer(b.do(http.MethodGet, probe, rotated.Data.Key, ""), http.StatusOK, "")
	_, err = store.Pool.Exec(ctx, `UPDATE api_keys SET expires_at = now() WHERE id = $1`, ownerID)
	require.NoError(t, err)
	changed = time.Now()
	expireLag := refusedAfter(b, owner, changed, access.MsgExpiredKey)
	old := owner
	owner, ownerID = rotated.Data.Key, rotated.Data.ID

	// The owner's listing and audit trail, through either replica.
	ans = b.do(http.MethodGet, "/v1/keys", owner, "")
	requireAnswer(ans, http.StatusOK, "")
	var listed struct {
		Data []db.APIKeyView `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(ans.body), &listed))
	statuses := map[int64]string{}
	for _, k := range listed.Data {
		require.Equal(t, "lifecycle", k.Account)
		statuses[k.ID] = k.Status
	}
	require.Len(t, statuses, 4, "the two keys made and the two rotations created; not the stranger's")
	require.Equal(t, db.KeyRevoked, statuses[victimID])
	require.Equal(t, db.KeyActive, statuses[ownerID])
	require.NotNil(t, listed.Data[0].LastUsedAt, "the newest key made the listing request")
	ans = a.do(http.MethodGet, "/v1/keys/audit", owner, "")
	requireAnswer(ans, http.StatusOK, "")
	var trail struct {
		Data []db.KeyAuditEntry `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(ans.body), &trail))
	var actions []string
	for _, e := range trail.Data {
		actions = append(actions, e.Action+" by "+strings.SplitN(e.Actor, ":", 2)[0])
	}
	require.Equal(t, []string{
		"key.created by api_key", "key.rotated by api_key", "key.created by api_key", "key.rotated by api_key",
		"key.revoked by api_key", "key.created by cli", "key.created by cli",
	}, actions)
	require.Equal(t, map[string]any{"reason": "leaked"}, trail.Data[4].Detail)

	// Operator commands: a downgrade gates the plan on both replicas at
	// once; a revocation refuses the key on both.
	brief := "/v1/brief?id=1&since=" + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	requireAnswer(b.do(http.MethodGet, brief, owner, ""), http.StatusNotFound, cryptointel.MsgOrganizationNotFound)
	require.Contains(t, cli("keys", "set-plan", "lifecycle", "free"), "plan pro -> free")
	requireAnswer(b.do(http.MethodGet, brief, owner, ""), http.StatusForbidden, "This endpoint requires the pro plan or higher.")
	requireAnswer(a.do(http.MethodGet, probe, owner, ""), http.StatusOK, "")
	require.Contains(t, cli("keys", "revoke", strconv.FormatInt(ownerID, 10)), "revoked at")
	changed = time.Now()
	cliLag := refusedAfter(a, owner, changed, access.MsgRevokedKey)
	refusedAfter(b, owner, changed, access.MsgRevokedKey)
	refusedAfter(a, old, changed, access.MsgExpiredKey)

	summary(t, "key lifecycle across 2 replicas: first refusal on the other replica after revoke %s, rotate %s, expiry %s, CLI revoke %s (no key cache; the next request refuses)",
		revokeLag.Round(time.Millisecond), rotateLag.Round(time.Millisecond), expireLag.Round(time.Millisecond), cliLag.Round(time.Millisecond))
}
