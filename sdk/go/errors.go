package cryptointel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The kinds of API error, one per status: errors.Is(err, ErrNotFound)
// holds for an *APIError of status 404.
var (
	ErrBadRequest      = errors.New("bad request")            // 400
	ErrUnauthorized    = errors.New("unauthorized")           // 401
	ErrPaymentRequired = errors.New("payment required")       // 402
	ErrForbidden       = errors.New("forbidden")              // 403
	ErrNotFound        = errors.New("not found")              // 404
	ErrConflict        = errors.New("conflict")               // 409
	ErrTooLarge        = errors.New("request too large")      // 413
	ErrRateLimited     = errors.New("rate limited")           // 429
	ErrServer          = errors.New("server error")           // 500 and other 5xx
	ErrUnavailable     = errors.New("service unavailable")    // 503
	ErrStatus          = errors.New("unexpected HTTP status") // any other
)

var kinds = map[int]error{
	400: ErrBadRequest, 401: ErrUnauthorized, 402: ErrPaymentRequired, 403: ErrForbidden,
	404: ErrNotFound, 409: ErrConflict, 413: ErrTooLarge, 429: ErrRateLimited, 503: ErrUnavailable,
}

// APIError is an answer other than a success: its status, the server's
// message and code (see docs/api/errors.md), the parameter at fault, the
// request id to quote to support, and Retry-After.
type APIError struct {
	StatusCode int
	Message    string
	Code       string
	Param      string
	DocURL     string
	RequestID  string
	RetryAfter time.Duration
	Meta       Meta
	// Header is the response's header (a 402's payment offers are there).
	Header http.Header
	Body   []byte
}

func newAPIError(resp *http.Response, m Meta) *APIError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	e := &APIError{StatusCode: resp.StatusCode, RequestID: m.RequestID, Meta: m, Header: resp.Header, Body: body,
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	var b struct {
		Error     string `json:"error"`
		Code      string `json:"code"`
		Param     string `json:"param"`
		DocURL    string `json:"docUrl"`
		RequestID string `json:"requestId"`
		Errors    []struct {
			Message    string `json:"message"`
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &b) == nil {
		e.Message, e.Code, e.Param, e.DocURL = b.Error, b.Code, b.Param, b.DocURL
		if b.RequestID != "" {
			e.RequestID = b.RequestID
		}
		if e.Message == "" && len(b.Errors) > 0 {
			e.Message, e.Code = b.Errors[0].Message, b.Errors[0].Extensions.Code
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("cryptointel: %d %s", e.StatusCode, e.Message)
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.RequestID != "" {
		s += " [request " + e.RequestID + "]"
	}
	return s
}

// Is matches the kind of the error's status (ErrNotFound …).
func (e *APIError) Is(target error) bool {
	if k, ok := kinds[e.StatusCode]; ok {
		return k == target
	}
	if e.StatusCode >= 500 {
		return target == ErrServer
	}
	return target == ErrStatus
}

// Retryable: 429 and 503 may succeed later; nothing else is retried.
func (e *APIError) Retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusServiceUnavailable
}

// ConnectionError is a request that got no answer.
type ConnectionError struct{ Err error }

func (e *ConnectionError) Error() string { return "cryptointel: connection failed: " + e.Err.Error() }
func (e *ConnectionError) Unwrap() error { return e.Err }
