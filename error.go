package cryptointel

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// Error codes shared by every layer. The REST facade maps them to HTTP
// statuses in one table and the GraphQL error presenter reports them as
// extensions.code.
const (
	ECONFLICT     = "conflict"               // the request conflicts with current state
	EINTERNAL     = "internal"               // an internal error; its message is never shown
	EINVALID      = "invalid"                // the input is invalid (400)
	ENOTFOUND     = "not_found"              // the resource does not exist or is not visible (404)
	EFORBIDDEN    = "forbidden"              // the plan does not include the resource (403)
	EUNAUTHORIZED = "unauthorized"           // no or unknown API key (401)
	EPAYMENT      = "payment_required"       // payment required (402)
	ERATELIMIT    = "rate_limited"           // per-minute rate limit exceeded (429)
	EQUOTA        = "quota_exceeded"         // monthly credits exhausted (403)
	EUNAVAILABLE  = "unavailable"            // the database is unreachable (503)
	ETOOLARGE     = "too_large"              // the request body is too large (413)
	ETIMEOUT      = "timeout"                // the request ran out of the server's time budget (503)
	EBODYTIMEOUT  = "request_timeout"        // the request body did not arrive in time (408)
	EMETHOD       = "method_not_allowed"     // the route does not answer this method (405)
	EMEDIATYPE    = "unsupported_media_type" // the body is not application/json (415)
)

// The messages of a request out of its time budget, and of the errors
// whose own message must not be shown: an internal one, the database out
// of reach.
const (
	MsgTimeout     = "Request took longer than the server's time budget. Please retry, or ask for less."
	MsgInternal    = "Internal server error."
	MsgUnavailable = "Service temporarily unavailable. Please retry shortly."
)

// Error is the domain error: a code from the list above and a message safe
// to show to the client.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, ETIMEOUT
// for an expired context deadline (the request's time budget),
// EUNAVAILABLE for a backing service out of reach, EINTERNAL for any other
// non-nil error, and "" for nil.
func ErrorCode(err error) string {
	code, _ := classify(err)
	return code
}

// ErrorMessage returns the message of the first *Error in err's chain, or a
// generic message for any other error so internals never leak to clients.
func ErrorMessage(err error) string {
	_, msg := classify(err)
	return msg
}

// classify is the one table of err's code and client message: an *Error's
// own, or the generic pair of its class (ETIMEOUT/MsgTimeout,
// EUNAVAILABLE/MsgUnavailable, EINTERNAL/MsgInternal); "" for nil.
func classify(err error) (code, message string) {
	var e *Error
	switch {
	case err == nil:
		return "", ""
	case errors.As(err, &e):
		return e.Code, e.Message
	case errors.Is(err, context.DeadlineExceeded):
		return ETIMEOUT, MsgTimeout
	case isUnavailable(err):
		return EUNAVAILABLE, MsgUnavailable
	}
	return EINTERNAL, MsgInternal
}

// unavailableCheck holds the registered classifier of unavailability errors.
var unavailableCheck atomic.Pointer[func(error) bool]

// RegisterUnavailable sets the function that tells whether an error means a
// backing service (the database) could not be reached: ErrorCode reports
// such errors as EUNAVAILABLE and ErrorMessage asks the client to retry.
// The storage package registers its classifier when it is initialized, so
// this package names no driver. Without one, no error is unavailable.
func RegisterUnavailable(fn func(error) bool) { unavailableCheck.Store(&fn) }

// isUnavailable applies the registered classifier to err.
func isUnavailable(err error) bool {
	fn := unavailableCheck.Load()
	return fn != nil && (*fn)(err)
}
