package rest

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
)

// AdminIngestMaxBytes bounds the body of POST /admin/ingest. Larger files go
// through the CLI (`cryptointel ingest FILE`).
const AdminIngestMaxBytes = 64 << 20

// NewAdminIngestHandler serves POST /admin/ingest: the body is JSON Lines in
// the ingest format (see README), applied with db.DB.Ingest, and the
// response is the JSON ingest summary with status 200 — also when some lines
// failed: check failedCount and failed[].
//
// The caller must send "Authorization: Bearer <token>"; anything else is 401.
// With an empty token the endpoint is disabled and answers 404. A body over
// AdminIngestMaxBytes is 413 (lines before the limit are applied). The
// endpoint is not behind the API-key access layer.
func NewAdminIngestHandler(store *db.DB, token string) http.Handler {
	return newAdminIngestHandler(store, token, AdminIngestMaxBytes)
}

func newAdminIngestHandler(store *db.DB, token string, maxBytes int64) http.Handler {
	tokenHash := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token == "" {
			WriteError(w, r, cryptointel.Errorf(cryptointel.ENOTFOUND, "Admin ingest is disabled: no ADMIN_TOKEN is configured."))
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, ErrorBody{Error: "Method not allowed; use POST."})
			return
		}
		if !adminTokenMatches(r.Header.Get("Authorization"), tokenHash) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="admin"`)
			WriteError(w, r, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "Invalid or missing admin token."))
			return
		}
		body := http.MaxBytesReader(w, r.Body, maxBytes)
		summary, err := store.Ingest(r.Context(), body, db.IngestOptions{})
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				err = cryptointel.Errorf(cryptointel.ETOOLARGE, "Request body larger than %d bytes: lines up to line %d were processed; ingest large files with the CLI.",
					maxBytes, summary.Lines)
			}
			WriteError(w, r, fmt.Errorf("error ingesting: %w", err))
			return
		}
		writeJSON(w, http.StatusOK, summary)
	})
}

// adminTokenMatches compares a Bearer credential with the token's hash in
// constant time.
func adminTokenMatches(header string, tokenHash [32]byte) bool {
	scheme, credential := access.ParseAuthorization(header)
	if scheme != "bearer" || credential == "" {
		return false
	}
	got := sha256.Sum256([]byte(credential))
	return subtle.ConstantTimeCompare(got[:], tokenHash[:]) == 1
}
