package oauth

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/httperr"
)

// PathClients lists an account's connected clients (GET) and revokes one
// (DELETE PathClients/{id}), with an API key of the account as
// `Authorization: Bearer <API_KEY>` (an OAuth token cannot manage
// connections). Any usable key lists them; revoking needs a key with the
// management scope, or the key the connection was made with.
const PathClients = "/oauth/clients"

// Messages of the connected-clients route.
const (
	MsgClientsKeyRequired = "Send an API key of the account as Authorization: Bearer <API_KEY> (an OAuth access token cannot manage connections)."
	MsgClientsForbidden   = "Revoking another key's connection needs a key with the management scope."
)

// caller returns the usable API key of a request, or answers 401.
func (s *Server) caller(w http.ResponseWriter, r *http.Request) *db.KeyInfo {
	scheme, key := access.ParseAuthorization(r.Header.Get("Authorization"))
	if scheme != "bearer" || key == "" || access.IsOAuthAccessToken(key) {
		writeServiceError(w, r, http.StatusUnauthorized, MsgClientsKeyRequired)
		return nil
	}
	k, err := s.store.KeyByHash(r.Context(), db.HashAPIKey(key))
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND:
		writeServiceError(w, r, http.StatusUnauthorized, access.MsgInvalidKey)
		return nil
	case err != nil:
		s.logger.ErrorContext(r.Context(), "error reading api key", "error", err)
		writeServiceError(w, r, http.StatusServiceUnavailable, "The service could not check the key; retry shortly.")
		return nil
	case k.Revoked && k.Expired:
		writeServiceError(w, r, http.StatusUnauthorized, access.MsgExpiredKey)
		return nil
	case k.Revoked:
		writeServiceError(w, r, http.StatusUnauthorized, access.MsgRevokedKey)
		return nil
	}
	return k
}

func (s *Server) listClients(w http.ResponseWriter, r *http.Request) {
	k := s.caller(w, r)
	if k == nil {
		return
	}
	grants, err := s.store.OAuthGrants(r.Context(), k.AccountID)
	if err != nil {
		s.logger.ErrorContext(r.Context(), "error listing oauth grants", "error", err)
		writeServiceError(w, r, http.StatusServiceUnavailable, "The service could not list the connected clients; retry shortly.")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"data": grants})
}

func (s *Server) revokeClient(w http.ResponseWriter, r *http.Request) {
	k := s.caller(w, r)
	if k == nil {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		writeServiceError(w, r, http.StatusNotFound, "Connected client "+strconv.Quote(r.PathValue("id"))+" not found.")
		return
	}
	if !slices.Contains(k.Scopes, db.ScopeManagement) {
		grants, err := s.store.OAuthGrants(r.Context(), k.AccountID)
		if err != nil {
			writeServiceError(w, r, http.StatusServiceUnavailable, "The service could not read the connected clients; retry shortly.")
			return
		}
		i := slices.IndexFunc(grants, func(g OAuthGrant) bool { return g.ID == id })
		if i >= 0 && grants[i].KeyID != k.ID {
			writeServiceError(w, r, http.StatusForbidden, MsgClientsForbidden)
			return
		}
	}
	err = s.store.RevokeOAuthGrant(r.Context(), k.AccountID, id, db.ActorAPIKey(k.ID))
	switch {
	case cryptointel.ErrorCode(err) == cryptointel.ENOTFOUND:
		writeServiceError(w, r, http.StatusNotFound, cryptointel.ErrorMessage(err))
	case err != nil:
		s.logger.ErrorContext(r.Context(), "error revoking oauth grant", "error", err)
		writeServiceError(w, r, http.StatusServiceUnavailable, "The service could not revoke the connection; retry shortly.")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// writeServiceError writes the service's error body (as /v1 does).
func writeServiceError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(httperr.NewBody(httperr.CodeForStatus(status, msg), msg, w.Header().Get("X-Request-Id"))) //nolint:errcheck
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes()) //nolint:errcheck
}
