// Package httperr is the one place errors meet HTTP: the error table (each
// code of cryptointel's Error with its status and what a caller does
// about it), the JSON body of an error response, and the code table of
// docs/api/errors.md generated from it (tools/errorsdoc). The codes and
// the Error type are the domain's (package cryptointel); every surface
// (rest, resolvers, mcp, oauth, access, observe) reads statuses and writes
// bodies through this package.
package httperr

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/cryptointel/cryptointel"
)

// Row is one row of the error table: a code (the E… constants), the
// HTTP status /v1 answers it with, and what it means to a caller.
type Row struct {
	Code    string
	Status  int
	Meaning string
	// Action is what a program does about it.
	Action string
}

// table is the one owner of the error codes: the status each has on
// /v1, the `code` of every error body, GraphQL's extensions.code, the code
// of an MCP tool error, the enum of the OpenAPI Error schema and the code
// table of docs/api/errors.md all come from here. A new code is a new row
// (and an E… constant in cryptointel's error.go); a test fails until it
// has one.
var table = []Row{
	{cryptointel.EINVALID, http.StatusBadRequest, "the input is invalid: a parameter, the body or a cursor", "fix the request (`param` names the parameter at fault, when one is); do not retry it unchanged"},
	{cryptointel.EUNAUTHORIZED, http.StatusUnauthorized, "no, unknown, revoked or expired API key", "send a valid key as `Authorization: Bearer <API_KEY>`"},
	{cryptointel.EPAYMENT, http.StatusPaymentRequired, "payment required, or a payment refused", "pay as the 402 body and headers say, or send a key"},
	{cryptointel.EFORBIDDEN, http.StatusForbidden, "the plan does not include the resource", "upgrade the plan (the message names the lowest that grants it); retrying does not help"},
	{cryptointel.EQUOTA, http.StatusForbidden, "monthly credits exhausted", "wait for the 1st of the month (UTC) or upgrade the plan"},
	{cryptointel.ENOTFOUND, http.StatusNotFound, "the resource (or route) does not exist or is not visible to the caller", "check the id or path"},
	{cryptointel.EMETHOD, http.StatusMethodNotAllowed, "the route does not answer this method", "use a method of the `Allow` header"},
	{cryptointel.EBODYTIMEOUT, http.StatusRequestTimeout, "the request body did not arrive in time", "retry with the whole body sent promptly"},
	{cryptointel.ECONFLICT, http.StatusConflict, "the request conflicts with current state", "read the state again; the message says what conflicts"},
	{cryptointel.ETOOLARGE, http.StatusRequestEntityTooLarge, "the request body is too large", "send a smaller body"},
	{cryptointel.EMEDIATYPE, http.StatusUnsupportedMediaType, "the body is not `application/json`", "send `Content-Type: application/json`"},
	{cryptointel.ERATELIMIT, http.StatusTooManyRequests, "per-minute rate limit (or a connection cap) exceeded", "retry after `Retry-After` seconds"},
	{cryptointel.EINTERNAL, http.StatusInternalServerError, "a bug; its message is never shown, it is logged with the request id", "report it with `requestId`"},
	{cryptointel.EUNAVAILABLE, http.StatusServiceUnavailable, "the database (or another backing service) is unreachable", "retry with backoff"},
	{cryptointel.ETIMEOUT, http.StatusServiceUnavailable, "the request ran out of the server's time budget", "retry with backoff, or ask for less"},
}

// Table returns the rows of the error table, in the order of the
// documentation (by status).
func Table() []Row { return append([]Row(nil), table...) }

// Codes returns every code of the error table.
func Codes() []string {
	codes := make([]string, len(table))
	for i, r := range table {
		codes[i] = r.Code
	}
	return codes
}

// Status returns the HTTP status of code; an unknown code is 500.
func Status(code string) int {
	for _, r := range table {
		if r.Code == code {
			return r.Status
		}
	}
	return http.StatusInternalServerError
}

// CodeForStatus returns the code of an error answered with status
// and message by a writer that knows only those two: the one row of that
// status (timeout against unavailable for 503 by its message; forbidden
// for 403, whose quota row its writer names itself), else the class of
// the status (invalid for any other 4xx, internal for any other 5xx).
func CodeForStatus(status int, message string) string {
	switch status {
	case http.StatusForbidden:
		return cryptointel.EFORBIDDEN
	case http.StatusServiceUnavailable:
		if message == cryptointel.MsgTimeout {
			return cryptointel.ETIMEOUT
		}
		return cryptointel.EUNAVAILABLE
	}
	for _, r := range table {
		if r.Status == status {
			return r.Code
		}
	}
	if status >= 500 {
		return cryptointel.EINTERNAL
	}
	return cryptointel.EINVALID
}

// Docs is the page that documents every code; a code's row is the
// anchor named after it (DocURL).
const Docs = "https://github.com/cryptointel/cryptointel/blob/main/docs/api/errors.md"

// DocURL returns the link to code's row in the error reference.
func DocURL(code string) string { return Docs + "#" + code }

// Body is the JSON body of an HTTP error response: the message the
// contract defines (`error`, unchanged), and what a program acts on: the
// code of its row of the error table, the parameter at fault when one is,
// the link to the row, and the request id to quote.
type Body struct {
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

// NewBody returns the body of an error with code and message,
// answered to the request requestID; the parameter at fault is read from
// the message (Param).
func NewBody(code, message, requestID string) Body {
	return Body{Error: message, Code: code, Param: Param(message), DocURL: DocURL(code), RequestID: requestID}
}

// paramMessage matches the messages that are about one parameter: they
// start with its name (`limit must be an integer`, `since parameter is
// required…`, `url is required`) or quote an unknown one (`unknown
// parameter "limt": …`, `Unknown field "urls" …`), or name an invalid
// one (`Invalid since: …`).
var paramMessage = regexp.MustCompile(`^(?:(?:unknown parameter|Unknown field) ("(?:[^"\\]|\\.)*")|(?:Invalid|Unknown field) ([a-z][A-Za-z0-9_]*)[:.]|([a-z][A-Za-z_]*) (?:parameter |must |is required|is too long|accepts |may |does not |has no ))`)

// Param returns the parameter an error message is about, or "" when
// it is about none in particular. Every message that names its parameter
// first (the messages of the route table, the resolvers and the bodies)
// is read alike, so no call site has to say it twice.
func Param(message string) string {
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

// CodesMarkdown renders the code table of docs/api/errors.md: one
// row per code, each with its anchor (the code itself), so that docUrl
// lands on it.
func CodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| Code | Status | Meaning | What to do |\n|---|---|---|---|\n")
	for _, r := range table {
		b.WriteString("| <a id=\"" + r.Code + "\"></a>`" + r.Code + "` | " + strconv.Itoa(r.Status) + " | " + r.Meaning + " | " + r.Action + " |\n")
	}
	return b.String()
}

// The markers around the generated code table in docs/api/errors.md (the
// page's bytes, written when the table lived in package cryptointel).
const (
	errorCodesBegin = "<!-- BEGIN error codes: generated from httperr.Table by tools/errorsdoc (go generate); do not edit -->\n"
	errorCodesEnd   = "<!-- END error codes -->\n"
)

// SpliceCodes returns page with the text between its code-table
// markers replaced by CodesMarkdown.
func SpliceCodes(page string) (string, error) {
	i := strings.Index(page, errorCodesBegin)
	j := strings.Index(page, errorCodesEnd)
	if i < 0 || j < i {
		return "", cryptointel.Errorf(cryptointel.EINVALID, "the page has no %q … %q markers", strings.TrimSpace(errorCodesBegin), strings.TrimSpace(errorCodesEnd))
	}
	return page[:i+len(errorCodesBegin)] + CodesMarkdown() + page[j:], nil
}
