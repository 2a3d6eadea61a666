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
		// access.Service.Usage writes an access.UsageResponse.
		Response: goSchemaOf[access.UsageResponse](),
	}
}
