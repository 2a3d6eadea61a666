package rest

import (
	"fmt"
	"net/http"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
)

// briefRoutes are the briefs of the contract (section 4.4).
func briefRoutes() []Route {
	return []Route{
		{
			Method: http.MethodGet, Path: "/v1/brief", Summary: "A combined brief for one organization",
			Policy: policy(surfaceBrief, access.LayerOperational, "brief", 2, access.FeatureBriefs, nil),
			Params: []Param{
				idQueryParam("organization"),
				requiredSince("Start of the brief. Required.", 0, ""),
				limitParam(&cryptointel.BriefFirst),
				compactParam(),
			},
			Operation: "brief",
			Prepare: func(c *Call) error {
				if c.Bool("compact") {
					c.Operation = "brief_compact"
				}
				return nil
			},
			ErrorStatuses: []int{http.StatusNotFound},
		},
		{
			Method: http.MethodGet, Path: "/v1/brief/batch", Summary: fmt.Sprintf("Briefs for up to %d organizations", cryptointel.MaxIDsPerRequest),
			Description: "Unknown ids yield an inline entry (label null, error set, empty lists, zero counts) rather than a 404. Tokens of `ids` that are not positive integers are ignored; duplicates collapse.",
			Policy:      policy(surfaceBrief, access.LayerOperational, "brief.batch", 5, access.FeatureBatchBriefs, nil),
			Params: []Param{
				{Name: "ids", In: "query", Type: TypeIntegerList, Required: true, MaxItems: cryptointel.MaxIDsPerRequest, Var: "ids", Parse: parseBatchIDs,
					Description: fmt.Sprintf("Comma-separated organization ids, at most %d.", cryptointel.MaxIDsPerRequest)},
				requiredSince("Start of the briefs. Required.", 0, ""),
				limitParam(&cryptointel.BriefsFirst),
				compactParam(),
			},
			Operation: "briefs",
			Prepare: func(c *Call) error {
				if c.Bool("compact") {
					c.Operation = "briefs_compact"
				}
				return nil
			},
		},
	}
}
