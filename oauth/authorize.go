package oauth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/db"
)

// csrfCookie carries the consent form's CSRF token; the form carries it
// too, and the request row its hash.
const csrfCookie = "ci_oauth_csrf"

// authorize is the authorization endpoint (GET): it checks the request
// and shows the consent page.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ctx := r.Context()
	clientID := q.Get("client_id")
	redirectURI := q.Get("redirect_uri")
	// Until the client and its redirect URI are trusted, errors are shown
	// here, never redirected (RFC 6749 section 4.1.2.1).
	client, err := s.lookupClient(ctx, clientID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	if redirectURI == "" && len(client.RedirectURIs) == 1 {
		redirectURI = client.RedirectURIs[0]
	}
	if !slices.Contains(client.RedirectURIs, redirectURI) {
		s.errorPage(w, r, oerr(http.StatusBadRequest, ErrInvalidRequest, "redirect_uri %q is not one of the client's registered redirect URIs (they must match exactly).", truncate(redirectURI, 200)))
		return
	}
	state := q.Get("state")
	fail := func(code, desc string) { s.redirectError(w, r, redirectURI, state, code, desc) }
	switch {
	case q.Get("response_type") != "code":
		fail(ErrUnsupportedResponseType, "response_type must be code.")
		return
	case q.Get("code_challenge") == "":
		fail(ErrInvalidRequest, "code_challenge is required: PKCE with S256.")
		return
	case q.Get("code_challenge_method") != "S256":
		fail(ErrInvalidRequest, "code_challenge_method must be S256.")
		return
	case len(q.Get("code_challenge")) != 43:
		fail(ErrInvalidRequest, "code_challenge must be the base64url SHA-256 of the code verifier (43 characters).")
		return
	case len(state) > 1024:
		fail(ErrInvalidRequest, "state is longer than 1024 characters.")
		return
	case !client.allowsGrant("authorization_code"):
		fail(ErrInvalidRequest, "The client did not register the authorization_code grant.")
		return
	}
	resource := q.Get("resource")
	if resource == "" {
		fail(ErrInvalidRequest, "resource is required (RFC 8707): this server's MCP endpoint, "+s.Resource(r)+".")
		return
	}
	if resource != s.Resource(r) {
		fail(ErrInvalidTarget, "resource must be this server's MCP endpoint, "+s.Resource(r)+".")
		return
	}
	scope, err := parseScope(q.Get("scope"))
	if err != nil {
		fail(ErrInvalidScope, err.(*oauthError).Description)
		return
	}
	csrf := random("")
	req := OAuthRequest{ID: random(""), CSRFHash: hash(csrf), ClientID: clientID, RedirectURI: redirectURI, Scope: scope,
		State: state, CodeChallenge: q.Get("code_challenge"), Resource: resource, ExpiresAt: time.Now().Add(requestTTL)}
	if err := s.store.CreateOAuthRequest(ctx, req); err != nil {
		s.errorPage(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: csrf, Path: PathAuthorize, HttpOnly: true,
		Secure: strings.HasPrefix(s.BaseURL(r), "https://"), SameSite: http.SameSiteStrictMode, MaxAge: int(requestTTL / time.Second)})
	s.consentPage(w, http.StatusOK, pageData{Client: client.name(), ClientID: clientID, RedirectHost: redirectHost(redirectURI),
		Scopes: scopeLines(scope), RequestID: req.ID, CSRF: csrf})
}

// redirectHost is what the page shows of a redirect URI: its host, or
// its scheme for a native app's URI.
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.Host != "" {
		return u.Host
	}
	return u.Scheme + ":"
}

func scopeLines(scope string) []scopeLine {
	var out []scopeLine
	for _, f := range strings.Fields(scope) {
		out = append(out, scopeLine{Name: f, Text: scopeText[f]})
	}
	return out
}

// redirectError sends an error back to the client's redirect URI.
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, redirectURI, state, code, desc string) {
	v := url.Values{"error": {code}, "error_description": {desc}}
	if state != "" {
		v.Set("state", state)
	}
	v.Set("iss", s.BaseURL(r))
	http.Redirect(w, r, withQuery(redirectURI, v), http.StatusSeeOther)
}

func withQuery(base string, v url.Values) string {
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + v.Encode()
}

// consent takes the person's answer (POST of the consent form).
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, r, oerr(http.StatusBadRequest, ErrInvalidRequest, "The form could not be read."))
		return
	}
	req, err := s.store.OAuthRequestByID(ctx, r.PostForm.Get("request_id"))
	if errors.Is(err, db.ErrOAuthNotFound) {
		s.errorPage(w, r, oerr(http.StatusBadRequest, ErrInvalidRequest, "This authorization request is unknown or has expired: start again from the application."))
		return
	} else if err != nil {
		s.errorPage(w, r, err)
		return
	}
	cookie, _ := r.Cookie(csrfCookie)
	csrf := r.PostForm.Get("csrf")
	if cookie == nil || csrf == "" || cookie.Value != csrf || subtle.ConstantTimeCompare(hash(csrf), req.CSRFHash) != 1 {
		s.errorPage(w, r, oerr(http.StatusForbidden, ErrInvalidRequest, "The form's security token does not match: start again from the application."))
		return
	}
	client, err := s.lookupClient(ctx, req.ClientID)
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	if r.PostForm.Get("action") != "approve" {
		if ok, err := s.store.DeleteOAuthRequest(ctx, req.ID); err != nil || !ok {
			s.errorPage(w, r, requestGone(err))
			return
		}
		s.redirectError(w, r, req.RedirectURI, req.State, ErrAccessDenied, "The person denied the request.")
		return
	}
	page := pageData{Client: client.name(), ClientID: req.ClientID, RedirectHost: redirectHost(req.RedirectURI),
		Scopes: scopeLines(req.Scope), RequestID: req.ID, CSRF: csrf}
	key := strings.TrimSpace(r.PostForm.Get("api_key"))
	if key == "" {
		page.Error = "Enter an API key of your account."
		s.consentPage(w, http.StatusBadRequest, page)
		return
	}
	k, err := s.store.KeyByHash(ctx, db.HashAPIKey(key))
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND || (err == nil && subtle.ConstantTimeCompare(k.Hash, db.HashAPIKey(key)) != 1):
		page.Error = "That API key is not valid."
	case err != nil:
		s.errorPage(w, r, err)
		return
	case k.Revoked:
		page.Error = "That API key has been revoked or has expired."
	case HasScope(req.Scope, ScopeData) && !slices.Contains(k.Scopes, db.ScopeData):
		page.Error = "That API key cannot read data (it lacks the data scope): use another key."
	}
	if page.Error != "" {
		if over := s.throttleKeys(r); over {
			page.Error = "Too many wrong keys from your address: wait a minute."
		}
		s.consentPage(w, http.StatusUnauthorized, page)
		return
	}
	if ok, err := s.store.DeleteOAuthRequest(ctx, req.ID); err != nil || !ok {
		s.errorPage(w, r, requestGone(err))
		return
	}
	code := random(codePrefix)
	_, err = s.store.CreateOAuthGrant(ctx, OAuthGrant{AccountID: k.AccountID, KeyID: k.ID, ClientID: req.ClientID,
		ClientName: client.name(), Scope: req.Scope, Resource: req.Resource},
		OAuthCode{Hash: hash(code), ClientID: req.ClientID, RedirectURI: req.RedirectURI, CodeChallenge: req.CodeChallenge,
			Resource: req.Resource, ExpiresAt: time.Now().Add(codeTTL)})
	if err != nil {
		s.errorPage(w, r, err)
		return
	}
	v := url.Values{"code": {code}, "iss": {s.BaseURL(r)}}
	if req.State != "" {
		v.Set("state", req.State)
	}
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Path: PathAuthorize, MaxAge: -1, HttpOnly: true})
	http.Redirect(w, r, withQuery(req.RedirectURI, v), http.StatusSeeOther)
}

func requestGone(err error) error {
	if err != nil {
		return err
	}
	return oerr(http.StatusBadRequest, ErrInvalidRequest, "This authorization request was already answered.")
}

// throttleKeys counts a wrong key entered on the consent page against the
// address's limit of requests without a valid key (the access layer's).
func (s *Server) throttleKeys(r *http.Request) bool {
	if s.cfg.AdmitAnonymous == nil {
		return false
	}
	return s.cfg.AdmitAnonymous(clientAddress(r)) != nil
}
