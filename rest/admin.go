package rest

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/ingest"
)

// AdminIngestMaxBytes bounds the body of POST /admin/ingest. Larger files go
// through the CLI (`cryptointel ingest FILE`).
const AdminIngestMaxBytes = 64 << 20

// DefaultAdminMaxFailedTokens is how many wrong admin tokens one client
// address may send per minute by default (AdminIngestOptions).
const DefaultAdminMaxFailedTokens = 10

// AdminIngestOptions configure NewAdminIngestHandler.
type AdminIngestOptions struct {
	// Token is the bearer token callers must send; empty disables the
	// endpoint (404).
	Token string
	// MaxFailedTokens is how many requests with a wrong or missing token
	// one client address may send per fixed minute (aligned to the clock);
	// past it, the address's requests with a wrong or missing token are
	// refused 429 with Retry-After until the minute ends, so tokens cannot
	// be guessed at speed, while the right token still gets through (a
	// guesser cannot lock the operator out). Defaults to
	// DefaultAdminMaxFailedTokens; negative removes the throttle.
	MaxFailedTokens int
	// Now returns the current time; tests inject it. Defaults to the
	// store's clock.
	Now func() time.Time
}

// NewAdminIngestHandler serves POST /admin/ingest: the body is JSON Lines in
// the ingest format (docs/operations/ingest.md), applied with db.DB.Ingest, and the
// response is the JSON ingest summary with status 200 — also when some lines
// failed: check failedCount and failed[].
//
// The caller must send "Authorization: Bearer <token>"; anything else is 401,
// and too many of those from one address in a minute are throttled (see
// AdminIngestOptions.MaxFailedTokens). With an empty token the endpoint is
// disabled and answers 404. A body over AdminIngestMaxBytes is 413 (lines
// before the limit are applied). The endpoint is not behind the API-key
// access layer.
func NewAdminIngestHandler(store *db.DB, opts AdminIngestOptions) http.Handler {
	return newAdminIngestHandler(store, opts, AdminIngestMaxBytes)
}

func newAdminIngestHandler(store *db.DB, opts AdminIngestOptions, maxBytes int64) http.Handler {
	token := opts.Token
	tokenHash := sha256.Sum256([]byte(token))
	if opts.MaxFailedTokens == 0 {
		opts.MaxFailedTokens = DefaultAdminMaxFailedTokens
	}
	now := opts.Now
	if now == nil {
		now = func() time.Time {
			if store != nil && store.Now != nil {
				return store.Now()
			}
			return time.Now()
		}
	}
	throttle := access.NewFailureThrottle(opts.MaxFailedTokens, time.Minute)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token == "" {
			WriteError(w, r, cryptointel.Errorf(cryptointel.ENOTFOUND, "Admin ingest is disabled: no ADMIN_TOKEN is configured."))
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeErrorBody(w, http.StatusMethodNotAllowed, cryptointel.EMETHOD, "Method not allowed; use POST.")
			return
		}
		addr := access.ClientAddress(r)
		t := now()
		if !adminTokenMatches(r.Header.Get("Authorization"), tokenHash) {
			// The comparison is constant-time and costs a hash: a wrong
			// token is throttled, the right one never is.
			if wait := throttle.Blocked(addr, t); wait > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(wait)))
				WriteError(w, r, cryptointel.Errorf(cryptointel.ERATELIMIT, msgAdminThrottledFmt, opts.MaxFailedTokens, wait))
				return
			}
			throttle.Fail(addr, t)
			w.Header().Set("WWW-Authenticate", `Bearer realm="admin"`)
			WriteError(w, r, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "Invalid or missing admin token."))
			return
		}
		body := http.MaxBytesReader(w, r.Body, maxBytes)
		summary, err := ingest.Write(r.Context(), store, body, ingest.Options{})
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

// msgAdminThrottledFmt refuses an address over its failed admin tokens:
// the bound per minute, the seconds to wait.
const msgAdminThrottledFmt = "Too many requests with a wrong admin token from your address: at most %d per minute. Retry in %d seconds."

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
