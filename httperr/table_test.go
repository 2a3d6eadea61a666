package httperr

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
)

// TestErrorParam reads the parameter at fault from the messages that name
// one, and none from the others.
func TestErrorParam(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"limit must be an integer": "limit",
		"since parameter is required. Use an ISO 8601 timestamp (e.g. 2026-11-20T00:00:00Z).": "since",
		`unknown parameter "limt": /v1/latest accepts window, since`:                          "limt",
		`Unknown field "urls" (allowed: url, event_types, active)`:                            "urls",
		"Unknown field format2. Allowed fields: scope, format":                                "format2",
		"Invalid since: use an ISO 8601 timestamp (for example 2026-11-20T10:00:00Z).":        "since",
		"event_types must only contain: radar, signal":                                        "event_types",
		"url is required": "url",
		"query has no words to search for (only punctuation or operators)":     "query",
		"cursor does not match this query (different route, since or filters)": "cursor",
		"organizationIds may hold at most 25 ids.":                             "organizationIds",
		"Entity not found": "",
		"Rate limit exceeded. Maximum 100 requests per 60 seconds.": "",
		"No fields to update":   "",
		"URL must use HTTPS":    "",
		cryptointel.MsgInternal: "",
	} {
		require.Equal(t, want, Param(msg), msg)
	}
}

// TestErrorCodeForStatus: a writer that knows only a status and a message
// gets the code of the status's row.
func TestErrorCodeForStatus(t *testing.T) {
	t.Parallel()
	require.Equal(t, cryptointel.ERATELIMIT, CodeForStatus(http.StatusTooManyRequests, "x"))
	require.Equal(t, cryptointel.ETIMEOUT, CodeForStatus(http.StatusServiceUnavailable, cryptointel.MsgTimeout))
	require.Equal(t, cryptointel.EUNAVAILABLE, CodeForStatus(http.StatusServiceUnavailable, cryptointel.MsgUnavailable))
	require.Equal(t, cryptointel.EFORBIDDEN, CodeForStatus(http.StatusForbidden, "x"))
	require.Equal(t, cryptointel.EINVALID, CodeForStatus(http.StatusTeapot, "x"))
	require.Equal(t, cryptointel.EINTERNAL, CodeForStatus(http.StatusBadGateway, "x"))
	for _, r := range Table() {
		require.Equal(t, r.Status, Status(r.Code), r.Code)
		require.Regexp(t, `^[a-z]+(_[a-z]+)*$`, r.Code, "codes are snake_case")
	}
}
