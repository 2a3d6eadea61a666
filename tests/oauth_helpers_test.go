package tests

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The OAuth tests drive the authorization server of /mcp with plain HTTP
// (oauth_test.go) and with the official TypeScript SDK's OAuth client
// through headless Chromium (oauth_interop_test.go).

// noRedirect is an HTTP client that returns redirects instead of
// following them, keeping cookies as a browser would.
func noRedirect(t *testing.T) *http.Client {
	t.Helper()
	return &http.Client{Jar: newJar(t), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type simpleJar struct{ cookies map[string][]*http.Cookie }

func newJar(*testing.T) *simpleJar { return &simpleJar{cookies: map[string][]*http.Cookie{}} }

func (j *simpleJar) SetCookies(u *url.URL, cs []*http.Cookie) {
	j.cookies[u.Host] = append(j.cookies[u.Host], cs...)
}

func (j *simpleJar) Cookies(u *url.URL) []*http.Cookie { return j.cookies[u.Host] }

type oauthResp struct {
	status int
	header http.Header
	body   []byte
}

// json decodes an OAuth JSON body.
func (r oauthResp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "%d %s", r.status, r.body)
	return m
}

// oauthError requires an RFC 6749 error body with code, and a 4xx.
func (r oauthResp) requireError(t *testing.T, code string) {
	t.Helper()
	require.True(t, r.status >= 400 && r.status < 500, "status %d: %s", r.status, r.body)
	require.Equal(t, code, r.json(t)["error"], "%s", r.body)
	require.NotEmpty(t, r.json(t)["error_description"])
}

func oauthDo(t *testing.T, c *http.Client, method, u, contentType, body string) oauthResp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return oauthResp{status: resp.StatusCode, header: resp.Header, body: b}
}

func oauthForm(t *testing.T, c *http.Client, u string, v url.Values) oauthResp {
	t.Helper()
	return oauthDo(t, c, http.MethodPost, u, "application/x-www-form-urlencoded", v.Encode())
}

// registerClient registers a client with redirect and returns its id.
func registerClient(t *testing.T, base, redirect string) string {
	t.Helper()
	r := oauthDo(t, nil, http.MethodPost, base+"/oauth/register", "application/json",
		`{"client_name":"Test Client","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	return r.json(t)["client_id"].(string)
}

// pkcePair returns a verifier and its S256 challenge.
func pkcePair(t *testing.T) (verifier, challenge string) {
	t.Helper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	h := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(h[:])
}

var (
	requestIDRe = regexp.MustCompile(`name="request_id" value="([^"]+)"`)
	csrfRe      = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// authRequest is one authorization request of a test.
type authRequest struct {
	base, clientID, redirect, scope, state, resource string
	verifier, challenge                              string
}

func newAuthRequest(t *testing.T, base, clientID, redirect string) *authRequest {
	v, c := pkcePair(t)
	return &authRequest{base: base, clientID: clientID, redirect: redirect, scope: "data", state: "st-" + v[:8],
		resource: base + "/mcp", verifier: v, challenge: c}
}

func (a *authRequest) url() string {
	v := url.Values{"response_type": {"code"}, "client_id": {a.clientID}, "redirect_uri": {a.redirect},
		"code_challenge": {a.challenge}, "code_challenge_method": {"S256"}, "state": {a.state}, "resource": {a.resource}}
	if a.scope != "" {
		v.Set("scope", a.scope)
	}
	return a.base + "/oauth/authorize?" + v.Encode()
}

// consent opens the consent page with c and answers it (action approve
// or deny, with key); it returns the answer's response.
func (a *authRequest) consent(t *testing.T, c *http.Client, key, action string) oauthResp {
	t.Helper()
	page := oauthDo(t, c, http.MethodGet, a.url(), "", "")
	require.Equal(t, http.StatusOK, page.status, "%s", page.body)
	rid, csrf := requestIDRe.FindSubmatch(page.body), csrfRe.FindSubmatch(page.body)
	require.NotNil(t, rid, "%s", page.body)
	require.NotNil(t, csrf)
	return oauthForm(t, c, a.base+"/oauth/authorize", url.Values{"request_id": {string(rid[1])}, "csrf": {string(csrf[1])},
		"api_key": {key}, "action": {action}})
}

// code authorizes with key and returns the code from the redirect.
func (a *authRequest) code(t *testing.T, key string) string {
	t.Helper()
	r := a.consent(t, noRedirect(t), key, "approve")
	require.Equal(t, http.StatusSeeOther, r.status, "%s", r.body)
	loc, err := url.Parse(r.header.Get("Location"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(loc.String(), a.redirect+"?"), loc.String())
	require.Equal(t, a.state, loc.Query().Get("state"))
	require.NotEmpty(t, loc.Query().Get("code"), loc.String())
	return loc.Query().Get("code")
}

// exchange redeems code at the token endpoint.
func (a *authRequest) exchange(t *testing.T, code string) oauthResp {
	t.Helper()
	return oauthForm(t, nil, a.base+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"client_id": {a.clientID}, "redirect_uri": {a.redirect}, "code_verifier": {a.verifier}, "resource": {a.resource}})
}

// tokens runs the whole flow with key and returns the token response.
func (a *authRequest) tokens(t *testing.T, key string) map[string]any {
	t.Helper()
	r := a.exchange(t, a.code(t, key))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.json(t)
}
