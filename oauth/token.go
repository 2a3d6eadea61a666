package oauth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
)

// token is the token endpoint: the authorization_code and refresh_token
// grants of public clients (token_endpoint_auth_method none).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := s.doToken(w, r); err != nil {
		s.writeError(w, r, err)
	}
}

func (s *Server) doToken(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/x-www-form-urlencoded") {
		return oerr(http.StatusBadRequest, ErrInvalidRequest, "Send the token request as application/x-www-form-urlencoded.")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return oerr(http.StatusBadRequest, ErrInvalidRequest, "The token request could not be read.")
	}
	f := r.PostForm
	for _, p := range []string{"grant_type", "client_id", "code", "code_verifier", "redirect_uri", "refresh_token", "resource", "scope"} {
		if len(f[p]) > 1 {
			return oerr(http.StatusBadRequest, ErrInvalidRequest, "Parameter %s is repeated.", p)
		}
	}
	if _, _, ok := r.BasicAuth(); ok {
		return oerr(http.StatusUnauthorized, ErrInvalidClient, "Clients of this server are public (token_endpoint_auth_method none): send client_id in the body, without HTTP Basic.")
	}
	grantType := f.Get("grant_type")
	switch grantType {
	case "authorization_code", "refresh_token":
	case "":
		return oerr(http.StatusBadRequest, ErrInvalidRequest, "grant_type is required.")
	default:
		return oerr(http.StatusBadRequest, ErrUnsupportedGrantType, "grant_type %q is not supported (authorization_code, refresh_token).", truncate(grantType, 64))
	}
	clientID := f.Get("client_id")
	if clientID == "" {
		return oerr(http.StatusBadRequest, ErrInvalidRequest, "client_id is required.")
	}
	client, err := s.lookupClient(ctx, clientID)
	if err != nil {
		var oe *oauthError
		if errors.As(err, &oe) && oe.Code == ErrInvalidClientMetadata {
			return oerr(http.StatusUnauthorized, ErrInvalidClient, "%s", oe.Description)
		}
		return err
	}
	if !client.allowsGrant(grantType) {
		return oerr(http.StatusBadRequest, "unauthorized_client", "The client did not register the %s grant.", grantType)
	}
	resource := f.Get("resource")
	if resource != "" && resource != s.Resource(r) {
		return oerr(http.StatusBadRequest, ErrInvalidTarget, "resource must be this server's MCP endpoint, %s.", s.Resource(r))
	}
	if grantType == "refresh_token" {
		return s.refresh(w, r, clientID)
	}
	code, verifier, redirectURI := f.Get("code"), f.Get("code_verifier"), f.Get("redirect_uri")
	switch {
	case code == "":
		return oerr(http.StatusBadRequest, ErrInvalidRequest, "code is required.")
	case verifier == "":
		return oerr(http.StatusBadRequest, ErrInvalidRequest, "code_verifier is required (PKCE).")
	case !validVerifier(verifier):
		return oerr(http.StatusBadRequest, ErrInvalidRequest, "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.")
	case len(code) > 256:
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The authorization code is unknown.")
	}
	c, err := s.store.RedeemOAuthCode(ctx, hash(code))
	switch {
	case errors.Is(err, db.ErrOAuthNotFound):
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The authorization code is unknown.")
	case errors.Is(err, ErrOAuthReused):
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The authorization code was already used: the grant it made is revoked.")
	case err != nil:
		return err
	case c.Expired:
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The authorization code has expired: authorize again.")
	case c.ClientID != clientID:
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The authorization code was issued to another client.")
	case redirectURI != c.RedirectURI:
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "redirect_uri does not match the authorization request's.")
	case resource != "" && resource != c.Resource:
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The authorization code was issued for another resource.")
	case subtle.ConstantTimeCompare([]byte(s256(verifier)), []byte(c.CodeChallenge)) != 1:
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "code_verifier does not match the code_challenge (PKCE S256).")
	}
	return s.issue(w, r, c.GrantID, "")
}

// refresh is the refresh_token grant: the token is spent and replaced.
func (s *Server) refresh(w http.ResponseWriter, r *http.Request, clientID string) error {
	rt := r.PostForm.Get("refresh_token")
	if rt == "" {
		return oerr(http.StatusBadRequest, ErrInvalidRequest, "refresh_token is required.")
	}
	g, err := s.store.SpendOAuthRefreshToken(r.Context(), hash(rt), clientID)
	switch {
	case errors.Is(err, db.ErrOAuthNotFound):
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The refresh token is unknown, expired or revoked: authorize again.")
	case errors.Is(err, ErrOAuthReused):
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The refresh token was already used: the grant is revoked; authorize again.")
	case err != nil:
		return err
	}
	if sc := r.PostForm.Get("scope"); sc != "" {
		want, err := parseScope(sc)
		if err != nil {
			return err
		}
		for _, f := range strings.Fields(want) {
			if !HasScope(g.Scope, f) {
				return oerr(http.StatusBadRequest, ErrInvalidScope, "Scope %q was not granted.", f)
			}
		}
	}
	return s.issue(w, r, g.GrantID, g.Scope)
}

// issue stores and answers a new access and refresh token of grant id.
func (s *Server) issue(w http.ResponseWriter, r *http.Request, grantID int64, scope string) error {
	at, rt := random(access.OAuthAccessTokenPrefix), random(refreshTokenPrefix)
	now := time.Now()
	err := s.store.IssueOAuthTokens(r.Context(), grantID, hash(at), hash(rt), now.Add(s.cfg.AccessTokenTTL), now.Add(s.cfg.RefreshTokenTTL))
	if errors.Is(err, db.ErrOAuthNotFound) {
		return oerr(http.StatusBadRequest, ErrInvalidGrant, "The grant was revoked, or its API key revoked, rotated or expired: authorize again.")
	} else if err != nil {
		return err
	}
	if scope == "" {
		if scope, err = s.store.OAuthGrantScope(r.Context(), grantID); err != nil {
			return err
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  at,
		"token_type":    "Bearer",
		"expires_in":    int(s.cfg.AccessTokenTTL / time.Second),
		"refresh_token": rt,
		"scope":         scope,
	})
	return nil
}

// revoke is RFC 7009's revocation endpoint: revoking either token of a
// grant revokes the grant. It answers 200 for an unknown token.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.writeError(w, r, oerr(http.StatusBadRequest, ErrInvalidRequest, "The revocation request could not be read."))
		return
	}
	tok, clientID := r.PostForm.Get("token"), r.PostForm.Get("client_id")
	if tok == "" || clientID == "" {
		s.writeError(w, r, oerr(http.StatusBadRequest, ErrInvalidRequest, "token and client_id are required."))
		return
	}
	if err := s.store.RevokeOAuthToken(r.Context(), hash(tok), clientID); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}
