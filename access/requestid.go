package access

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

type requestIDKey struct{}

// RequestID is middleware that gives every request an id: a valid incoming
// X-Request-Id (1 to 128 characters of A-Z, a-z, 0-9, '.', '_', '-') is
// kept, anything else is replaced by a fresh random id. The id is echoed in
// the X-Request-Id response header and available from RequestIDFrom. Wrap
// applies it itself; the router may also use it first so routes outside
// the access layer (health, OpenAPI) get an id too. Applying it twice keeps
// the first id, and an id already set on the response by an outer
// middleware (observe.Middleware) is kept as is.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := RequestIDFrom(r.Context()); id != "" {
			w.Header().Set("X-Request-Id", id)
			next.ServeHTTP(w, r)
			return
		}
		// An outer middleware (observe) may have assigned the id already:
		// keep it so logs, metrics and the response agree.
		id := w.Header().Get("X-Request-Id")
		if id == "" {
			id = r.Header.Get("X-Request-Id")
			if !ValidRequestID(id) {
				id = newRequestID()
			}
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// RequestIDFrom returns the request id RequestID attached to ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ValidRequestID reports whether id is an acceptable client-supplied request
// id: 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' and '-'.
func ValidRequestID(id string) bool {
	if len(id) < 1 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [16]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
