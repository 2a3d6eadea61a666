package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
)

// withTimeLimits bounds every request's time: the body must arrive within
// Config.BodyReadTimeout (a read deadline on the connection; a late body
// reads as an EBODYTIMEOUT error, which handlers answer 408), and the
// request's context carries a deadline Config.RequestTimeout after it
// arrived, which every database statement, the GraphQL executor (before
// it parses and validates a document, and during execution) and the
// access layer observe. Exempt from the budget (budgetExempt): export
// file downloads (bytes streamed from storage for as long as the client
// reads), /admin/ingest (an operator's bulk load, bounded by its body
// size) and the long-lived streams themselves, each of whose operations
// the GraphQL executor budgets instead.
func withTimeLimits(cfg Config, next http.Handler) http.Handler {
	budget, bodyTimeout := cfg.RequestTimeout, cfg.BodyReadTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bodyTimeout > 0 && r.Body != nil && r.Body != http.NoBody {
			// Not supported by every writer (HTTP/2): the deadline is then
			// the server's own.
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Now().Add(bodyTimeout)) //nolint:errcheck
			r.Body = &deadlineBody{ReadCloser: r.Body, timeout: bodyTimeout, rc: rc}
		}
		if budget > 0 && !budgetExempt(r) {
			ctx, cancel := context.WithTimeout(r.Context(), budget)
			defer cancel()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// budgetExempt reports whether r is exempt from the request time budget.
// Only a path decides, and for /graphql what the access layer and the
// transports take for a stream (access.IsStreamRequest): no header
// exempts a request anywhere else. /mcp is not a stream: its clients accept
// text/event-stream as the protocol requires, but it answers every request
// with one JSON response under the budget.
func budgetExempt(r *http.Request) bool {
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/v1/export/files/"), p == "/admin/ingest", p == "/v1/stream":
		return true
	case p == "/graphql":
		return access.IsStreamRequest(r)
	}
	return false
}

// deadlineBody turns the connection's read deadline into the domain's
// EBODYTIMEOUT error, and lifts the deadline once the whole body has
// arrived: a response that streams for long after it (graphql-sse) must not
// see its connection's background read time out.
type deadlineBody struct {
	io.ReadCloser
	timeout time.Duration
	rc      *http.ResponseController
}

// Read implements io.Reader.
func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.rc.SetReadDeadline(time.Time{}) //nolint:errcheck // see withTimeLimits
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		err = cryptointel.Errorf(cryptointel.EBODYTIMEOUT, "Request body not received within %s.", fmtDuration(b.timeout))
	}
	return n, err
}

// fmtDuration writes d for people: "60 seconds", or Go's form.
func fmtDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}
