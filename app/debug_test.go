package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
)

// X-Statement-Count carries the statements counted in the request's
// context up to the moment the header is written, whether the handler
// writes the header itself, writes a body directly or flushes.
func TestCountStatements(t *testing.T) {
	t.Parallel()
	for name, write := range map[string]func(w http.ResponseWriter){
		"header": func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot) },
		"body":   func(w http.ResponseWriter) { w.Write([]byte("{}")) }, //nolint:errcheck
		"flush":  func(w http.ResponseWriter) { w.(http.Flusher).Flush() },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := countStatements(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for range 3 {
					db.CountStatement(r.Context())
				}
				write(w)
				db.CountStatement(r.Context()) // after the header: not reported
				w.Write([]byte("x"))           //nolint:errcheck
			}), false)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/latest", nil))
			require.Equal(t, "3", rec.Header().Get(StatementCountHeader))
			// Without read replicas there is no replica count.
			require.Empty(t, rec.Header().Values(ReplicaStatementCountHeader))
		})
	}

	// Off by default: New wires the middleware only when asked.
	require.False(t, DefaultConfig().StatementCountHeader)
}
