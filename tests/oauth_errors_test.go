package tests

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
)

var pageErrorRe = regexp.MustCompile(`<code id="error-code">([a-z_]+)</code>`)

// requirePageError requires the authorization endpoint's error page with
// code (an error it cannot send to a redirect URI it does not trust).
func requirePageError(t *testing.T, r oauthResp, code string) {
	t.Helper()
	require.True(t, r.status >= 400 && r.status < 500, "status %d: %s", r.status, r.body)
	m := pageErrorRe.FindSubmatch(r.body)
	require.NotNil(t, m, "%s", r.body)
	require.Equal(t, code, string(m[1]))
}

// requireRedirectError requires a redirect to the client with code and
// the request's state.
func requireRedirectError(t *testing.T, r oauthResp, redirect, state, code string) {
	t.Helper()
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	loc, err := url.Parse(r.header.Get("Location"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(loc.String(), redirect+"?"), loc.String())
	require.Equal(t, code, loc.Query().Get("error"), loc.String())
	require.Equal(t, state, loc.Query().Get("state"))
}

// TestOAuthTokenEndpointErrors: each bad token request gets its RFC 6749
// error code, never a 5xx: a wrong verifier, a reused code (which also
// revokes what the code gave), a code of another client or for another
// resource, an expired code, a redirect_uri that differs, an unknown
// client, a missing or unsupported grant type.
func TestOAuthTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	clientID := registerClient(t, s.base, oauthRedirect)
	other := registerClient(t, s.base, oauthRedirect)

	// Wrong verifier.
	a := newAuthRequest(t, s.base, clientID, oauthRedirect)
	code := a.code(t, key)
	good := a.verifier
	a.verifier = strings.Repeat("x", 43)
	a.exchange(t, code).requireError(t, "invalid_grant")
	a.verifier = good
	a.exchange(t, code).requireError(t, "invalid_grant") // the code was spent by the failed try

	// Reused code: refused, and the tokens it gave are revoked.
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	code = a.code(t, key)
	first := a.exchange(t, code)
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	a.exchange(t, code).requireError(t, "invalid_grant")
	status, _, _ := mcpPost(t, s.base, mcpInitialize, keyHeader(first.json(t)["access_token"].(string)))
	require.Equal(t, http.StatusUnauthorized, status)

	// A code of another client.
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	code = a.code(t, key)
	a.clientID = other
	a.exchange(t, code).requireError(t, "invalid_grant")

	// A code exchanged for another resource.
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	code = a.code(t, key)
	a.resource = "https://elsewhere.example/mcp"
	a.exchange(t, code).requireError(t, "invalid_target")

	// An expired code.
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	code = a.code(t, key)
	_, err := s.store.Pool.Exec(context.Background(), `UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`)
	require.NoError(t, err)
	a.exchange(t, code).requireError(t, "invalid_grant")

	// redirect_uri that differs from the authorization request's.
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	code = a.code(t, key)
	a.redirect = oauthRedirect + "/other"
	a.exchange(t, code).requireError(t, "invalid_grant")

	// Unknown client, missing parameters, unsupported grant, unknown code,
	// wrong content type.
	tokenURL := s.base + "/oauth/token"
	oauthForm(t, nil, tokenURL, url.Values{"grant_type": {"authorization_code"}, "client_id": {"client_nope"}, "code": {"x"}}).requireError(t, "invalid_client")
	oauthForm(t, nil, tokenURL, url.Values{"client_id": {clientID}}).requireError(t, "invalid_request")
	oauthForm(t, nil, tokenURL, url.Values{"grant_type": {"password"}, "client_id": {clientID}}).requireError(t, "unsupported_grant_type")
	oauthForm(t, nil, tokenURL, url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {"cic_nope"},
		"code_verifier": {good}, "redirect_uri": {oauthRedirect}}).requireError(t, "invalid_grant")
	oauthForm(t, nil, tokenURL, url.Values{"grant_type": {"authorization_code"}, "client_id": {clientID}, "code": {"cic_nope"}}).requireError(t, "invalid_request")
	oauthForm(t, nil, tokenURL, url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {"cir_nope"}}).requireError(t, "invalid_grant")
	oauthDo(t, nil, http.MethodPost, tokenURL, "application/json", `{"grant_type":"authorization_code"}`).requireError(t, "invalid_request")
	// A refresh token of another client is refused and stays usable.
	tok := newAuthRequest(t, s.base, clientID, oauthRedirect).tokens(t, key)
	oauthForm(t, nil, tokenURL, url.Values{"grant_type": {"refresh_token"}, "client_id": {other}, "refresh_token": {tok["refresh_token"].(string)}}).requireError(t, "invalid_grant")
	r := oauthForm(t, nil, tokenURL, url.Values{"grant_type": {"refresh_token"}, "client_id": {clientID}, "refresh_token": {tok["refresh_token"].(string)}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

// TestOAuthAuthorizeErrors: the authorization endpoint shows errors about
// the client or its redirect URI on its page (never redirecting to an
// untrusted URI), and sends the others to the client with the state;
// the consent form needs its CSRF token; a denial is access_denied; a
// wrong key is shown an error without the key echoed; the page cannot be
// framed.
func TestOAuthAuthorizeErrors(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	clientID := registerClient(t, s.base, oauthRedirect)
	get := func(a *authRequest) oauthResp { return oauthDo(t, noRedirect(t), http.MethodGet, a.url(), "", "") }

	a := newAuthRequest(t, s.base, "client_unknown", oauthRedirect)
	requirePageError(t, get(a), "invalid_client")
	a = newAuthRequest(t, s.base, clientID, "https://attacker.example/cb")
	requirePageError(t, get(a), "invalid_request")
	a = newAuthRequest(t, s.base, clientID, oauthRedirect+"/")
	requirePageError(t, get(a), "invalid_request") // exact match only

	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	a.challenge = ""
	requireRedirectError(t, get(a), oauthRedirect, a.state, "invalid_request")
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	a.scope = "admin"
	requireRedirectError(t, get(a), oauthRedirect, a.state, "invalid_scope")
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	a.resource = "https://elsewhere.example/mcp"
	requireRedirectError(t, get(a), oauthRedirect, a.state, "invalid_target")
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	a.resource = ""
	requireRedirectError(t, get(a), oauthRedirect, a.state, "invalid_request")
	plain := oauthDo(t, noRedirect(t), http.MethodGet, strings.Replace(newAuthRequest(t, s.base, clientID, oauthRedirect).url(), "S256", "plain", 1), "", "")
	require.Equal(t, http.StatusSeeOther, plain.status)
	require.Contains(t, plain.header.Get("Location"), "error=invalid_request")

	// The page: never framed, never cached.
	a = newAuthRequest(t, s.base, clientID, oauthRedirect)
	page := get(a)
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, page.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.Equal(t, "DENY", page.header.Get("X-Frame-Options"))
	require.Equal(t, "no-store", page.header.Get("Cache-Control"))
	require.Contains(t, string(page.body), "Test Client")
	require.Contains(t, string(page.body), "127.0.0.1:9")

	// CSRF: the form's token must match the browser's cookie.
	c := noRedirect(t)
	page = oauthDo(t, c, http.MethodGet, a.url(), "", "")
	rid := string(requestIDRe.FindSubmatch(page.body)[1])
	csrf := string(csrfRe.FindSubmatch(page.body)[1])
	r := oauthForm(t, noRedirect(t), s.base+"/oauth/authorize", url.Values{"request_id": {rid}, "csrf": {csrf}, "api_key": {key}, "action": {"approve"}})
	requirePageError(t, r, "invalid_request") // another browser: no cookie
	r = oauthForm(t, c, s.base+"/oauth/authorize", url.Values{"request_id": {rid}, "csrf": {"forged"}, "api_key": {key}, "action": {"approve"}})
	requirePageError(t, r, "invalid_request")

	// A wrong key: the page again, with an error and without the key.
	wrong := "ci_wrong-key-that-must-not-be-echoed"
	r = oauthForm(t, c, s.base+"/oauth/authorize", url.Values{"request_id": {rid}, "csrf": {csrf}, "api_key": {wrong}, "action": {"approve"}})
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Contains(t, string(r.body), "That API key is not valid.")
	require.NotContains(t, string(r.body), wrong)
	// Deny: access_denied with the state; the request is then answered.
	r = oauthForm(t, c, s.base+"/oauth/authorize", url.Values{"request_id": {rid}, "csrf": {csrf}, "action": {"deny"}})
	requireRedirectError(t, r, oauthRedirect, a.state, "access_denied")
	r = oauthForm(t, c, s.base+"/oauth/authorize", url.Values{"request_id": {rid}, "csrf": {csrf}, "api_key": {key}, "action": {"approve"}})
	requirePageError(t, r, "invalid_request")
}

// TestOAuthRegistrationErrors: RFC 7591 error codes for bad metadata, and
// a flood of registrations from one address is refused 429.
func TestOAuthRegistrationErrors(t *testing.T) {
	t.Parallel()
	s := startRESTServer(t)
	reg := func(body string) oauthResp {
		return oauthDo(t, nil, http.MethodPost, s.base+"/oauth/register", "application/json", body)
	}
	reg(`{"client_name":"x"}`).requireError(t, "invalid_redirect_uri")
	reg(`{"redirect_uris":["http://app.example.com/cb"]}`).requireError(t, "invalid_redirect_uri")
	reg(`{"redirect_uris":["https://app.example.com/cb#frag"]}`).requireError(t, "invalid_redirect_uri")
	reg(`{"redirect_uris":["/relative"]}`).requireError(t, "invalid_redirect_uri")
	reg(`{"redirect_uris":["javascript:alert(1)"]}`).requireError(t, "invalid_redirect_uri")
	reg(`{"redirect_uris":["https://app.example.com/cb"],"token_endpoint_auth_method":"client_secret_basic"}`).requireError(t, "invalid_client_metadata")
	reg(`{"redirect_uris":["https://app.example.com/cb"],"grant_types":["client_credentials"]}`).requireError(t, "invalid_client_metadata")
	reg(`{"redirect_uris":["https://app.example.com/cb"],"scope":"admin"}`).requireError(t, "invalid_client_metadata")
	reg(`not json`).requireError(t, "invalid_client_metadata")
	reg(`{"redirect_uris":"https://app.example.com/cb"}`).requireError(t, "invalid_client_metadata")
	oauthDo(t, nil, http.MethodPost, s.base+"/oauth/register", "text/plain", `{}`).requireError(t, "invalid_client_metadata")
	// Native apps' URIs are fine.
	ok := reg(`{"redirect_uris":["cursor://anysphere.cursor-retrieval/oauth/callback","http://localhost:33418/cb"]}`)
	require.Equal(t, http.StatusCreated, ok.status, "%s", ok.body)
	require.Equal(t, "none", ok.json(t)["token_endpoint_auth_method"])

	// The flood: at most 10 per minute from one address (the refused ones
	// above registered nothing).
	for i := 1; i < 10; i++ {
		r := reg(`{"redirect_uris":["https://app.example.com/cb"]}`)
		require.Equal(t, http.StatusCreated, r.status, "%d: %s", i, r.body)
	}
	r := reg(`{"redirect_uris":["https://app.example.com/cb"]}`)
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s", r.body)
	r.requireError(t, "invalid_request")
	require.NotEmpty(t, r.header.Get("Retry-After"))

	// Unused registrations expire.
	var n int
	require.NoError(t, s.store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM oauth_clients WHERE expires_at > now() + interval '23 hours'`).Scan(&n))
	require.Equal(t, 10, n)
	_, err := s.store.Pool.Exec(context.Background(), `UPDATE oauth_clients SET expires_at = now() - interval '1 second'`)
	require.NoError(t, err)
	a := newAuthRequest(t, s.base, ok.json(t)["client_id"].(string), "http://localhost:33418/cb")
	requirePageError(t, oauthDo(t, nil, http.MethodGet, a.url(), "", ""), "invalid_client")
}

// TestOAuthMetadataDocumentErrors: a Client ID Metadata Document that is
// on a private address, too large, too slow, not JSON, or names another
// client_id is refused with invalid_client_metadata on the authorization
// page (invalid_client at the token endpoint); a good one is fetched once
// and cached.
func TestOAuthMetadataDocumentErrors(t *testing.T) {
	t.Parallel()
	meta := newMetadataServer(t)
	s := startRESTServerWith(t, func(store *db.DB) { ingestLines(t, store, restFixture()) }, meta.appOption)
	var fetched atomic.Int32
	good := meta.document("/good.json", oauthRedirect)
	serveGood := meta.docs["/good.json"]
	meta.serve("/good.json", func(w http.ResponseWriter, r *http.Request) { fetched.Add(1); serveGood(w, r) })
	meta.serve("/huge.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"client_name":"` + strings.Repeat("a", 200<<10) + `"}`)) //nolint:errcheck
	})
	meta.serve("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	meta.serve("/html.json", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>not json</html>")) }) //nolint:errcheck
	meta.serve("/other.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"client_id":"https://other.example/client.json","redirect_uris":["` + oauthRedirect + `"]}`)) //nolint:errcheck
	})
	for _, id := range []string{
		"https://10.1.2.3/client.json", // a private address
		meta.URL + "/huge.json", meta.URL + "/slow.json", meta.URL + "/html.json", meta.URL + "/other.json", meta.URL + "/missing.json",
	} {
		a := newAuthRequest(t, s.base, id, oauthRedirect)
		requirePageError(t, oauthDo(t, nil, http.MethodGet, a.url(), "", ""), "invalid_client_metadata")
		oauthForm(t, nil, s.base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {"x"}}).requireError(t, "invalid_client")
	}

	key, _ := accesstest.NewKey(t, s.store, cryptointel.PlanEnterprise)
	tok := newAuthRequest(t, s.base, good, oauthRedirect).tokens(t, key)
	require.NotEmpty(t, tok["access_token"])
	require.EqualValues(t, 1, fetched.Load(), "the document is cached")
}
