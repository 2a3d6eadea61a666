package rest

import (
	"net/http"

	"github.com/cryptointel/cryptointel/access"
)

// UsageRoute is the route-table entry of GET /v1/usage, served by h
// (access.Service.Usage) under access.UsagePolicy: free, evaluation layer.
func UsageRoute(h HandlerFunc) Route {
	return Route{
		Method: http.MethodGet, Path: "/v1/usage", Summary: "Usage of the calling key",
		Description: "Request counts since midnight UTC, since the start of the week and since the start of the month, and the month's credit budget. Does not consume credits.",
		Policy:      access.UsagePolicy,
		Handler:     h,
		Response: envelope(p("data", obj(
			p("today", integer()),
			p("thisWeek", integer()),
			p("thisMonth", integer()),
			p("budget", obj(p("limit", integer()), p("used", integer()), p("remaining", integer())))))),
	}
}
