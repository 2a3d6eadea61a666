package access

import (
	"net/http"

	"github.com/cryptointel/cryptointel"
)

// UsagePolicy is the policy of GET /v1/usage: free, evaluation layer.
var UsagePolicy = Policy{Surface: "usage", Layer: LayerEvaluation, Name: "usage", CreditCost: 0}

// UsageResponse is the body of GET /v1/usage.
type UsageResponse struct {
	Data UsageData `json:"data"`
}

// UsageData is the calling key's usage: request counts since midnight UTC,
// since Monday 00:00 UTC and since the 1st of the month 00:00 UTC, and the
// month's credit budget — the contract's fields, whose units it does not
// name — then the credits spent over the same periods and the unit of
// each contract field.
type UsageData struct {
	Today     int64  `json:"today"`
	ThisWeek  int64  `json:"thisWeek"`
	ThisMonth int64  `json:"thisMonth"`
	Budget    Budget `json:"budget"`
	// Credits are the credits spent over the periods the request counts
	// cover (Credits.ThisMonth equals Budget.Used).
	Credits PeriodCredits `json:"credits"`
	// Units names the unit of each contract field (UsageUnitsLabels).
	Units UsageUnits `json:"units"`
}

// PeriodCredits are credits spent since midnight UTC, since Monday 00:00
// UTC and since the 1st of the month 00:00 UTC.
type PeriodCredits struct {
	Today     int64 `json:"today"`
	ThisWeek  int64 `json:"thisWeek"`
	ThisMonth int64 `json:"thisMonth"`
}

// Units of /v1/usage.
const (
	// UnitRequests counts requests: each admitted request is one, whatever
	// its credit cost (pushed stream events are not requests).
	UnitRequests = "requests"
	// UnitCredits counts credits: each request costs its route's
	// X-Credit-Cost (a GraphQL operation its complexity), each pushed
	// stream event its own cost.
	UnitCredits = "credits"
)

// UsageUnits names the unit of each contract field of UsageData.
type UsageUnits struct {
	Today     string `json:"today"`
	ThisWeek  string `json:"thisWeek"`
	ThisMonth string `json:"thisMonth"`
	Budget    string `json:"budget"`
}

// UsageUnitsLabels is the Units of every /v1/usage response.
var UsageUnitsLabels = UsageUnits{Today: UnitRequests, ThisWeek: UnitRequests, ThisMonth: UnitRequests, Budget: UnitCredits}

// Budget is the month's credits: the plan's allowance, used and remaining.
type Budget struct {
	Limit     int64 `json:"limit"`
	Used      int64 `json:"used"`
	Remaining int64 `json:"remaining"`
}

// Usage serves GET /v1/usage for the key in the request's Caller; it has the
// rest.HandlerFunc signature so the route table can use s.Usage directly
// (wrapped with Wrap and UsagePolicy). The counts include the usage request
// itself (it is metered, at cost 0, before the handler runs), so the budget
// equals the X-Monthly-* headers of the same response.
//
// Returns EUNAUTHORIZED when the request carries no key.
func (s *Service) Usage(w http.ResponseWriter, r *http.Request) error {
	c, ok := CallerFrom(r.Context())
	if !ok || c == nil || c.APIKeyID == 0 {
		return cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgMissingKey)
	}
	u, err := s.store.UsageFor(r.Context(), c.APIKeyID, s.now())
	if err != nil {
		return err
	}
	limit := c.Plan.MonthlyCredits
	remaining := limit - u.MonthCredits
	if remaining < 0 {
		remaining = 0
	}
	writeJSON(w, http.StatusOK, UsageResponse{Data: UsageData{
		Today: u.Today, ThisWeek: u.ThisWeek, ThisMonth: u.ThisMonth,
		Budget:  Budget{Limit: limit, Used: u.MonthCredits, Remaining: remaining},
		Credits: PeriodCredits{Today: u.TodayCredits, ThisWeek: u.WeekCredits, ThisMonth: u.MonthCredits},
		Units:   UsageUnitsLabels,
	}})
	return nil
}

// UsageHandler is Usage as an http.Handler (errors written as
// {"error": ...}), already wrapped with Wrap and UsagePolicy.
func (s *Service) UsageHandler() http.Handler {
	return s.Wrap(UsagePolicy, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.Usage(w, r); err != nil {
			if code := cryptointel.ErrorCode(err); code == cryptointel.EUNAUTHORIZED {
				writeError(w, StatusFor(code), cryptointel.ErrorMessage(err))
				return
			}
			s.internalError(w, r, err)
		}
	}))
}
