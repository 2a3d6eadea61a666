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
		Description: "Request counts since midnight UTC, since the start of the week (Monday) and since the start of the month, and the month's credit budget; " +
			"then the credits spent over the same periods (`credits`) and the unit of each of those contract fields (`units`): `today`, `thisWeek` and `thisMonth` count " +
			access.UnitRequests + ", `budget` counts " + access.UnitCredits + ". Does not consume credits.",
		Policy:  access.UsagePolicy,
		Handler: h,
		Response: envelope(p("data", obj(
			p("today", describe(integer(), "Requests since midnight UTC.")),
			p("thisWeek", describe(integer(), "Requests since Monday 00:00 UTC.")),
			p("thisMonth", describe(integer(), "Requests since the 1st of the month 00:00 UTC.")),
			p("budget", describe(obj(p("limit", integer()), p("used", integer()), p("remaining", integer())),
				"The month's credits: the plan's allowance, used and remaining.")),
			p("credits", describe(obj(p("today", integer()), p("thisWeek", integer()), p("thisMonth", integer())),
				"Credits spent over the periods of today, thisWeek and thisMonth; thisMonth equals budget.used.")),
			p("units", describe(obj(
				p("today", strEnum(access.UsageUnitsLabels.Today)),
				p("thisWeek", strEnum(access.UsageUnitsLabels.ThisWeek)),
				p("thisMonth", strEnum(access.UsageUnitsLabels.ThisMonth)),
				p("budget", strEnum(access.UsageUnitsLabels.Budget))),
				"The unit of each contract field above."))))),
	}
}
