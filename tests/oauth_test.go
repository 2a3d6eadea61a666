package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/app"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/mcp"
	"github.com/cryptointel/cryptointel/oauth"
)

const oauthRedirect = "http://127.0.0.1:9/callback"

const mcpSearchCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_events","arguments":{"query":"acme"}}}`

// TestOAuthDiscovery: /mcp without any credential is the OAuth challenge
// naming its RFC 9728 metadata and the scope; the metadata (root and path
// forms) names this server as authorization server, whose RFC 8414
// metadata lists the endpoints and what the MCP authorization spec
// requires.
func TestOAuthDiscovery(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)

	status, header, body := mcpPost(t, s.base, mcpInitialize, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, `Bearer realm="cryptointel", resource_metadata="`+s.base+`/.well-known/oauth-protected-resource/mcp", scope="data"`,
		header.Get("WWW-Authenticate"))
	require.JSONEq(t, `{"error":"`+mcp.MsgCredentialRequired+`"}`, errorOnly(t, body))
	// A wrong key gets the same challenge, with the error.
	_, header, _ = mcpPost(t, s.base, mcpInitialize, keyHeader("ci_wrong"))
	require.Contains(t, header.Get("WWW-Authenticate"), `resource_metadata="`+s.base+`/.well-known/oauth-protected-resource/mcp", scope="data", error="invalid_token"`)

	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		r := oauthDo(t, nil, http.MethodGet, s.base+path, "", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		m := r.json(t)
		require.Equal(t, s.base+"/mcp", m["resource"])
		require.Equal(t, []any{s.base}, m["authorization_servers"])
		require.Equal(t, []any{"data", "discovery"}, m["scopes_supported"])
		require.Equal(t, []any{"header"}, m["bearer_methods_supported"])
	}
	r := oauthDo(t, nil, http.MethodGet, s.base+"/.well-known/oauth-authorization-server", "", "")
	require.Equal(t, http.StatusOK, r.status)
	m := r.json(t)
	require.Equal(t, s.base, m["issuer"])
	require.Equal(t, s.base+"/oauth/authorize", m["authorization_endpoint"])
	require.Equal(t, s.base+"/oauth/token", m["token_endpoint"])
	require.Equal(t, s.base+"/oauth/register", m["registration_endpoint"])
	require.Equal(t, s.base+"/oauth/revoke", m["revocation_endpoint"])
	require.Equal(t, []any{"S256"}, m["code_challenge_methods_supported"])
	require.Equal(t, true, m["client_id_metadata_document_supported"])
	require.Contains(t, m["token_endpoint_auth_methods_supported"], "none")
	require.Equal(t, []any{"code"}, m["response_types_supported"])
	require.Equal(t, []any{"authorization_code", "refresh_token"}, m["grant_types_supported"])
}

// TestOAuthTokenActsAsKey: a token from the consent flow is its key on
// /mcp: tool calls are metered to the account exactly as with the key;
// it is refused on /v1 (its audience is /mcp); refresh tokens rotate and
// a spent one presented again revokes the grant; revoking or rotating the
// key kills the token at once; a grant without the data scope gets 403
// insufficient_scope on a tool call; the key audit trail records grants.
func TestOAuthTokenActsAsKey(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, keyID := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	clientID := registerClient(t, s.base, oauthRedirect)
	tok := newAuthRequest(t, s.base, clientID, oauthRedirect).tokens(t, key)
	require.Equal(t, "Bearer", tok["token_type"])
	require.Equal(t, "data", tok["scope"])
	require.EqualValues(t, 3600, tok["expires_in"])
	at := tok["access_token"].(string)
	require.True(t, strings.HasPrefix(at, access.OAuthAccessTokenPrefix))

	// Tool calls with the token and with the key cost the same and land on
	// the same account.
	before := usageOf(t, s, key)
	status, _, body := mcpPost(t, s.base, mcpSearchCall, keyHeader(at))
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NotContains(t, string(body), `"isError":true`)
	viaToken := usageOf(t, s, key)
	status, _, body = mcpPost(t, s.base, mcpSearchCall, keyHeader(key))
	require.Equal(t, http.StatusOK, status, "%s", body)
	viaKey := usageOf(t, s, key)
	require.Greater(t, viaToken.Credits.Today, before.Credits.Today)
	require.Equal(t, viaToken.Credits.Today-before.Credits.Today, viaKey.Credits.Today-viaToken.Credits.Today)
	require.Equal(t, viaToken.Today-before.Today, viaKey.Today-viaToken.Today)

	// The token's audience is /mcp.
	r := s.doAs(t, at, http.MethodGet, "/v1/usage")
	require.Equal(t, http.StatusUnauthorized, r.Status)
	require.JSONEq(t, `{"error":"`+access.MsgTokenAudience+`"}`, errorOnly(t, r.Body))

	// Refresh rotates; the spent refresh token presented again revokes the
	// grant, and with it the tokens just issued.
	refresh := func(rt string) oauthResp {
		return oauthForm(t, nil, s.base+"/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {clientID}})
	}
	r2 := refresh(tok["refresh_token"].(string))
	require.Equal(t, http.StatusOK, r2.status, "%s", r2.body)
	tok2 := r2.json(t)
	require.NotEqual(t, tok["refresh_token"], tok2["refresh_token"])
	status, _, body = mcpPost(t, s.base, mcpInitialize, keyHeader(tok2["access_token"].(string)))
	require.Equal(t, http.StatusOK, status, "%s", body)
	refresh(tok["refresh_token"].(string)).requireError(t, "invalid_grant")
	refresh(tok2["refresh_token"].(string)).requireError(t, "invalid_grant")
	time.Sleep(1100 * time.Millisecond) // past the access layer's memory of the token
	status, header, _ := mcpPost(t, s.base, mcpInitialize, keyHeader(tok2["access_token"].(string)))
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, header.Get("WWW-Authenticate"), `error="invalid_token"`)

	// Revoking the key revokes its grants; so does rotating it.
	tok3 := newAuthRequest(t, s.base, clientID, oauthRedirect).tokens(t, key)
	status, _, body = mcpPost(t, s.base, mcpSearchCall, keyHeader(tok3["access_token"].(string)))
	require.Equal(t, http.StatusOK, status, "%s", body)
	_, err := db.RevokeAPIKey(context.Background(), s.store.Bun, db.KeyRevocation{KeyID: keyID})
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond)
	status, _, _ = mcpPost(t, s.base, mcpSearchCall, keyHeader(tok3["access_token"].(string)))
	require.Equal(t, http.StatusUnauthorized, status)
	refresh(tok3["refresh_token"].(string)).requireError(t, "invalid_grant")

	key2, key2ID := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	tok4 := newAuthRequest(t, s.base, clientID, oauthRedirect).tokens(t, key2)
	_, _, _, err = db.RotateAPIKey(context.Background(), s.store.Bun, db.KeyRotation{KeyID: key2ID, Grace: time.Hour})
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond)
	status, _, _ = mcpPost(t, s.base, mcpInitialize, keyHeader(tok4["access_token"].(string)))
	require.Equal(t, http.StatusUnauthorized, status)

	// A grant of discovery only lists, and is refused tool calls (step-up).
	key3, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	ar := newAuthRequest(t, s.base, clientID, oauthRedirect)
	ar.scope = "discovery"
	tok5 := ar.tokens(t, key3)
	require.Equal(t, "discovery", tok5["scope"])
	status, _, body = mcpPost(t, s.base, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, keyHeader(tok5["access_token"].(string)))
	require.Equal(t, http.StatusOK, status, "%s", body)
	status, header, body = mcpPost(t, s.base, mcpSearchCall, keyHeader(tok5["access_token"].(string)))
	require.Equal(t, http.StatusForbidden, status, "%s", body)
	require.Contains(t, header.Get("WWW-Authenticate"), `Bearer error="insufficient_scope", scope="data", resource_metadata="`)
	require.JSONEq(t, `{"error":"`+mcp.MsgInsufficientScope+`"}`, errorOnly(t, body))

	// The audit trail records the grants (and the revocation by reuse).
	entries, err := db.KeyAudit(context.Background(), s.store.Bun, mustAccount(t, s, keyID), 50)
	require.NoError(t, err)
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Action)
	}
	require.Contains(t, actions, db.AuditOAuthGranted)
	require.Contains(t, actions, db.AuditOAuthRevoked)
}

func mustAccount(t *testing.T, s *restServer, keyID int64) int64 {
	t.Helper()
	var id int64
	require.NoError(t, s.store.Pool.QueryRow(context.Background(), `SELECT account_id FROM api_keys WHERE id = $1`, keyID).Scan(&id))
	return id
}

// TestOAuthKeyedAndKeylessDoors: API keys keep working on /mcp; keyless
// agents are refused there with the challenge, and use /mcp/x402.
func TestOAuthKeyedAndKeylessDoors(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	status, _, body := mcpPost(t, s.base, mcpInitialize, keyHeader(key))
	require.Equal(t, http.StatusOK, status, "%s", body)
	r := (&accessServer{base: s.base}).request(t, http.MethodPost, "/mcp/x402", mcpInitialize,
		http.Header{"Accept": {"application/json, text/event-stream"}, "Authorization": {"Bearer " + key}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

// TestOAuthConnectedClientsRoute: an account lists its connected clients
// with any of its keys and revokes one (the token then stops working);
// an OAuth token cannot manage connections; a key without the management
// scope may revoke only its own key's connections.
func TestOAuthConnectedClientsRoute(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, keyID := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	clientID := registerClient(t, s.base, oauthRedirect)
	tok := newAuthRequest(t, s.base, clientID, oauthRedirect).tokens(t, key)
	at := tok["access_token"].(string)
	status, _, body := mcpPost(t, s.base, mcpInitialize, keyHeader(at))
	require.Equal(t, http.StatusOK, status, "%s", body)

	as := &accessServer{base: s.base}
	r := as.request(t, http.MethodGet, "/oauth/clients", "", keyHeader(key))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var list struct {
		Data []oauth.OAuthGrant `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &list))
	require.Len(t, list.Data, 1)
	require.Equal(t, "Test Client", list.Data[0].ClientName)
	require.Equal(t, clientID, list.Data[0].ClientID)
	require.Equal(t, keyID, list.Data[0].KeyID)
	require.NotNil(t, list.Data[0].LastUsedAt)

	r = as.request(t, http.MethodGet, "/oauth/clients", "", keyHeader(at))
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.JSONEq(t, `{"error":"`+oauth.MsgClientsKeyRequired+`"}`, errorOnly(t, r.body))
	r = as.request(t, http.MethodGet, "/oauth/clients", "", nil)
	require.Equal(t, http.StatusUnauthorized, r.status)

	// Another key of the account without the management scope cannot
	// revoke this key's connection.
	var accountID int64
	require.NoError(t, s.store.Pool.QueryRow(context.Background(), `SELECT account_id FROM api_keys WHERE id = $1`, keyID).Scan(&accountID))
	plain, plainID := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	_, err := s.store.Pool.Exec(context.Background(), `UPDATE api_keys SET account_id = $1, scopes = '{data}' WHERE id = $2`, accountID, plainID)
	require.NoError(t, err)
	id := strconv.FormatInt(list.Data[0].ID, 10)
	r = as.request(t, http.MethodDelete, "/oauth/clients/"+id, "", keyHeader(plain))
	require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)

	r = as.request(t, http.MethodDelete, "/oauth/clients/"+id, "", keyHeader(key))
	require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
	r = as.request(t, http.MethodDelete, "/oauth/clients/"+id, "", keyHeader(key))
	require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	time.Sleep(1100 * time.Millisecond)
	status, _, _ = mcpPost(t, s.base, mcpInitialize, keyHeader(at))
	require.Equal(t, http.StatusUnauthorized, status)
}

// TestOAuthAcrossReplicas: two servers on one database are one
// authorization server (PUBLIC_URL names it): a consent page shown by one
// is answered on the other, a code issued by one is redeemed on the
// other, and a key revoked through one ends its connection on both within
// a second.
func TestOAuthAcrossReplicas(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	const public = "https://mcp.example.test"
	var bases []string
	var store *db.DB
	for range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		a, err := app.New(ctx, app.Config{DatabaseURL: dbURL, DBMaxConns: 8, Logger: testLogger(t), ShutdownTimeout: 15 * time.Second, PublicURL: public})
		require.NoError(t, err)
		bases = append(bases, serveApp(t, ctx, cancel, a))
		store = a.DB
	}
	key, keyID := accesstest.NewKey(t, store, cryptointel.PlanEnterprise)
	clientID := registerClient(t, bases[0], oauthRedirect)

	// The page from replica 0, the answer to replica 1.
	a := newAuthRequest(t, bases[0], clientID, oauthRedirect)
	a.resource = public + "/mcp"
	c := noRedirect(t)
	page := oauthDo(t, c, http.MethodGet, a.url(), "", "")
	require.Equal(t, http.StatusOK, page.status, "%s", page.body)
	form := url.Values{"request_id": {string(requestIDRe.FindSubmatch(page.body)[1])}, "csrf": {string(csrfRe.FindSubmatch(page.body)[1])},
		"api_key": {key}, "action": {"approve"}}
	req, err := http.NewRequest(http.MethodPost, bases[1]+"/oauth/authorize", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	u0, _ := url.Parse(bases[0])
	for _, ck := range c.Jar.Cookies(u0) {
		req.AddCookie(ck)
	}
	resp, err := noRedirect(t).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, public, loc.Query().Get("iss"))

	// The code redeemed on replica 0; the token works on both.
	r := a.exchange(t, loc.Query().Get("code"))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	at := r.json(t)["access_token"].(string)
	for _, base := range bases {
		status, _, body := mcpPost(t, base, mcpInitialize, keyHeader(at))
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
	// The key revoked (as through replica 1): both refuse within a second.
	_, err = db.RevokeAPIKey(context.Background(), store.Bun, db.KeyRevocation{KeyID: keyID})
	require.NoError(t, err)
	time.Sleep(1100 * time.Millisecond)
	for _, base := range bases {
		status, header, _ := mcpPost(t, base, mcpInitialize, keyHeader(at))
		require.Equal(t, http.StatusUnauthorized, status)
		require.Contains(t, header.Get("WWW-Authenticate"), `resource_metadata="`+public+`/.well-known/oauth-protected-resource/mcp"`)
	}
}
