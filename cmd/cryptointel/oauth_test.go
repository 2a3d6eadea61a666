package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/oauth"
)

// TestCLIConnectedClients: keys clients lists an account's OAuth
// connections and keys disconnect revokes one, recorded in the audit
// trail; an unknown connection is a clear error.
func TestCLIConnectedClients(t *testing.T) {
	t.Parallel()
	b, store := migratedCLI(t)
	ctx := context.Background()
	out, _, err := b.run(t, ctx, "", "keys", "create", "--json", "--plan", "pro", "--account", "acme")
	require.NoError(t, err)
	var created struct {
		KeyID int64 `json:"keyId"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	var accountID int64
	require.NoError(t, store.Pool.QueryRow(ctx, `SELECT account_id FROM api_keys WHERE id = $1`, created.KeyID).Scan(&accountID))
	id, err := oauth.Store{DB: store}.CreateOAuthGrant(ctx, oauth.OAuthGrant{AccountID: accountID, KeyID: created.KeyID, ClientID: "client_x", ClientName: "Claude",
		Scope: "data", Resource: "https://api.example/mcp"}, oauth.OAuthCode{Hash: []byte("h"), ClientID: "client_x", RedirectURI: "https://claude.ai/cb",
		CodeChallenge: "c", Resource: "https://api.example/mcp"})
	require.NoError(t, err)

	list := func() []oauth.OAuthGrant {
		out, _, err := b.run(t, ctx, "", "keys", "clients", "--account", "acme", "--json")
		require.NoError(t, err)
		var g []oauth.OAuthGrant
		require.NoError(t, json.Unmarshal([]byte(out), &g))
		return g
	}
	grants := list()
	require.Len(t, grants, 1)
	require.Equal(t, "Claude", grants[0].ClientName)
	out, _, err = b.run(t, ctx, "", "keys", "clients", "--account", "acme")
	require.NoError(t, err)
	require.Contains(t, out, "Claude")

	out, _, err = b.run(t, ctx, "", "keys", "disconnect", strconv.FormatInt(id, 10))
	require.NoError(t, err)
	require.Contains(t, out, "revoked")
	require.Empty(t, list())
	_, _, err = b.run(t, ctx, "", "keys", "disconnect", strconv.FormatInt(id, 10))
	require.ErrorContains(t, err, "not found")

	entries, err := db.KeyAudit(ctx, store.Bun, accountID, 10)
	require.NoError(t, err)
	require.Equal(t, db.AuditOAuthRevoked, entries[0].Action)
	require.Equal(t, db.AuditOAuthGranted, entries[1].Action)
}
