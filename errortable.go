package cryptointel

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// ErrorRow is one row of the error table: a code (the E… constants), the
// HTTP status /v1 answers it with, and what it means to a caller.
type ErrorRow struct {
	Code    string
	Status  int
	Meaning string
	// Action is what a program does about it.
	Action string
}

// errorTable is the one owner of the error codes: the status each has on
// /v1, the `code` of every error body, GraphQL's extensions.code, the code
// of an MCP tool error, the enum of the OpenAPI Error schema and the code
// table of docs/api/errors.md (generated from it by tools/errorsdoc) all
// come from here. A new code is a new row (and an E… constant above); a
// test fails until it has one.
var errorTable = []ErrorRow{
	{EINVALID, http.StatusBadRequest, "the input is invalid: a parameter, the body or a cursor", "fix the request (`param` names the parameter at fault, when one is); do not retry it unchanged"},
	{EUNAUTHORIZED, http.StatusUnauthorized, "no, unknown, revoked or expired API key", "send a valid key as `Authorization: Bearer <API_KEY>`"},
	{EPAYMENT, http.StatusPaymentRequired, "payment required, or a payment refused", "pay as the 402 body and headers say, or send a key"},
	{EFORBIDDEN, http.StatusForbidden, "the plan does not include the resource", "upgrade the plan (the message names the lowest that grants it); retrying does not help"},
	{EQUOTA, http.StatusForbidden, "monthly credits exhausted", "wait for the 1st of the month (UTC) or upgrade the plan"},
	{ENOTFOUND, http.StatusNotFound, "the resource (or route) does not exist or is not visible to the caller", "check the id or path"},
	{EMETHOD, http.StatusMethodNotAllowed, "the route does not answer this method", "use a method of the `Allow` header"},
	{EBODYTIMEOUT, http.StatusRequestTimeout, "the request body did not arrive in time", "retry with the whole body sent promptly"},
	{ECONFLICT, http.StatusConflict, "the request conflicts with current state", "read the state again; the message says what conflicts"},
	{ETOOLARGE, http.StatusRequestEntityTooLarge, "the request body is too large", "send a smaller body"},
	{EMEDIATYPE, http.StatusUnsupportedMediaType, "the body is not `application/json`", "send `Content-Type: application/json`"},
	{ERATELIMIT, http.StatusTooManyRequests, "per-minute rate limit (or a connection cap) exceeded", "retry after `Retry-After` seconds"},
	{EINTERNAL, http.StatusInternalServerError, "a bug; its message is never shown, it is logged with the request id", "report it with `requestId`"},
	{EUNAVAILABLE, http.StatusServiceUnavailable, "the database (or another backing service) is unreachable", "retry with backoff"},
	{ETIMEOUT, http.StatusServiceUnavailable, "the request ran out of the server's time budget", "retry with backoff, or ask for less"},
}

// ErrorTable returns the rows of the error table, in the order of the
// documentation (by status).
func ErrorTable() []ErrorRow { return append([]ErrorRow(nil), errorTable...) }

// ErrorCodes returns every code of the error table.
func ErrorCodes() []string {
	codes := make([]string, len(errorTable))
	for i, r := range errorTable {
		codes[i] = r.Code
	}
	return codes
}

// ErrorStatus returns the HTTP status of code; an unknown code is 500.
func ErrorStatus(code string) int {
	for _, r := range errorTable {
		if r.Code == code {
			return r.Status
		}
	}
	return http.StatusInternalServerError
}

// ErrorCodeForStatus returns the code of an error answered with status
// and message by a writer that knows only those two: the one row of that
// status (timeout against unavailable for 503 by its message; forbidden
// for 403, whose quota row its writer names itself), else the class of
// the status (invalid for any other 4xx, internal for any other 5xx).
func ErrorCodeForStatus(status int, message string) string {
	switch status {
	case http.StatusForbidden:
		return EFORBIDDEN
	case http.StatusServiceUnavailable:
		if message == MsgTimeout {
			return ETIMEOUT
		}
		return EUNAVAILABLE
	}
	for _, r := range errorTable {
		if r.Status == status {
			return r.Code
		}
	}
	if status >= 500 {
		return EINTERNAL
	}
	return EINVALID
}

// ErrorDocs is the page that documents every code; a code's row is the
// anchor named after it (ErrorDocURL).
const ErrorDocs = "https://github.com/cryptointel/cryptointel/blob/main/docs/api/errors.md"

// ErrorDocURL returns the link to code's row in the error reference.
func ErrorDocURL(code string) string { return ErrorDocs + "#" + code }

// ErrorBody is the JSON body of an HTTP error response: the message the
// contract defines (`error`, unchanged), and what a program acts on: the
// code of its row of the error table, the parameter at fault when one is,
// the link to the row, and the request id to quote.
type ErrorBody struct {
	// Error is the message, safe to show to the client.
	Error string `json:"error"`
	// Code is the error's row of the error table.
	Code string `json:"code"`
	// Param names the one request parameter (or body field) at fault.
	Param string `json:"param,omitempty"`
	// DocURL links to the code's row of docs/api/errors.md.
	DocURL string `json:"docUrl"`
	// RequestID is the request's X-Request-Id.
	RequestID string `json:"requestId,omitempty"`
}

// NewErrorBody returns the body of an error with code and message,
// answered to the request requestID; the parameter at fault is read from
// the message (ErrorParam).
func NewErrorBody(code, message, requestID string) ErrorBody {
	return ErrorBody{Error: message, Code: code, Param: ErrorParam(message), DocURL: ErrorDocURL(code), RequestID: requestID}
}

// paramMessage matches the messages that are about one parameter: they
// start with its name (`limit must be an integer`, `since parameter is
// required…`, `url is required`) or quote an unknown one (`unknown
// parameter "limt": …`, `Unknown field "urls" …`), or name an invalid
// one (`Invalid since: …`).
var paramMessage = regexp.MustCompile(`^(?:(?:unknown parameter|Unknown field) ("(?:[^"\\]|\\.)*")|(?:Invalid|Unknown field) ([a-z][A-Za-z0-9_]*)[:.]|([a-z][A-Za-z_]*) (?:parameter |must |is required|is too long|accepts |may |does not |has no ))`)

// ErrorParam returns the parameter an error message is about, or "" when
// it is about none in particular. Every message that names its parameter
// first (the messages of the route table, the resolvers and the bodies)
// is read alike, so no call site has to say it twice.
func ErrorParam(message string) string {
	m := paramMessage.FindStringSubmatch(message)
	switch {
	case m == nil:
		return ""
	case m[1] != "":
		name, err := strconv.Unquote(m[1])
		if err != nil {
			return ""
		}
		return name
	case m[2] != "":
		return m[2]
	}
	return m[3]
}

// ErrorCodesMarkdown renders the code table of docs/api/errors.md: one
// row per code, each with its anchor (the code itself), so that docUrl
// lands on it.
func ErrorCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| Code | Status | Meaning | What to do |\n|---|---|---|---|\n")
	for _, r := range errorTable {
		b.WriteString("| <a id=\"" + r.Code + "\"></a>`" + r.Code + "` | " + strconv.Itoa(r.Status) + " | " + r.Meaning + " | " + r.Action + " |\n")
	}
	return b.String()
}

// The markers around the generated code table in docs/api/errors.md.
const (
	errorCodesBegin = "<!-- BEGIN error codes: generated from cryptointel.ErrorTable by tools/errorsdoc (go generate); do not edit -->\n"
	errorCodesEnd   = "<!-- END error codes -->\n"
)

// SpliceErrorCodes returns page with the text between its code-table
// markers replaced by ErrorCodesMarkdown.
func SpliceErrorCodes(page string) (string, error) {
	i := strings.Index(page, errorCodesBegin)
	j := strings.Index(page, errorCodesEnd)
	if i < 0 || j < i {
		return "", Errorf(EINVALID, "the page has no %q … %q markers", strings.TrimSpace(errorCodesBegin), strings.TrimSpace(errorCodesEnd))
	}
	return page[:i+len(errorCodesBegin)] + ErrorCodesMarkdown() + page[j:], nil
}
