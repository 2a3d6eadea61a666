package access

import (
	"context"
	"sync/atomic"

	"github.com/cryptointel/cryptointel"
)

// latestPlans is the plan table most recently read by any Service; Allow
// uses it to name the plan needed when the caller carries no plan list.
var latestPlans atomic.Pointer[[]cryptointel.Plan]

// Allow reports whether the caller in ctx may use something of access layer
// layer that needs plan feature feature (empty for none). It is what the
// GraphQL @access directive calls. It returns nil when ctx carries no
// caller (the access middleware did not run, as in resolver unit tests),
// and a *cryptointel.Error with code EFORBIDDEN naming the plan needed otherwise,
// for example "This endpoint requires the business plan or higher.".
//
// A pay-per-request caller may use the evaluation layer only.
func Allow(ctx context.Context, layer, feature string) error {
	c, ok := CallerFrom(ctx)
	if !ok || c == nil {
		return nil
	}
	plans := c.plans
	if plans == nil {
		if p := latestPlans.Load(); p != nil {
			plans = *p
		}
	}
	if c.Paid {
		if layer == LayerEvaluation && feature == "" {
			return nil
		}
		return forbidden(plans, layer, feature, "")
	}
	if planAllows(plans, c.Plan, layer, feature, "") {
		return nil
	}
	return forbidden(plans, layer, feature, "")
}

// PlanAllows reports whether plan grants policy p's layer, feature and plan
// floor; plans is the whole plan table (for the floor's rank).
func PlanAllows(plans []cryptointel.Plan, plan cryptointel.Plan, p Policy) bool {
	return planAllows(plans, plan, p.Layer, p.Feature, p.MinPlan)
}

func planAllows(plans []cryptointel.Plan, plan cryptointel.Plan, layer, feature, minPlan string) bool {
	if plan.Name == "" {
		return false
	}
	if layer != "" && !contains(plan.Layers, layer) {
		return false
	}
	if feature != "" && !hasFeature(plan, feature) {
		return false
	}
	if minPlan != "" {
		floor, ok := findPlan(plans, minPlan)
		if !ok || plan.Rank < floor.Rank {
			return false
		}
	}
	return true
}

// hasFeature reports whether plan has feature flag feature; unknown
// features are never granted.
func hasFeature(plan cryptointel.Plan, feature string) bool {
	switch feature {
	case FeatureBriefs:
		return plan.Briefs
	case FeatureBatchBriefs:
		return plan.BatchBriefs
	case FeatureWebhooks:
		return plan.Webhooks
	case FeaturePremiumFeeds:
		return plan.PremiumFeeds
	case FeatureExport:
		return plan.Export
	case FeatureStreams:
		return plan.MaxStreams > 0
	}
	return false
}

// allowedPlans lists the names of the plans that grant p.
func allowedPlans(plans []cryptointel.Plan, p Policy) []string {
	names := make([]string, 0, len(plans))
	for _, pl := range plans {
		if planAllows(plans, pl, p.Layer, p.Feature, p.MinPlan) {
			names = append(names, pl.Name)
		}
	}
	return names
}

// forbidden returns the 403 error naming the lowest-ranked plan that grants
// the layer, feature and floor.
func forbidden(plans []cryptointel.Plan, layer, feature, minPlan string) *cryptointel.Error {
	var needed *cryptointel.Plan
	top := true
	for i := range plans { // plans are ordered by rank
		pl := plans[i]
		if needed != nil {
			top = false
			break
		}
		if planAllows(plans, pl, layer, feature, minPlan) {
			needed = &plans[i]
		}
	}
	switch {
	case needed == nil && len(plans) == 0:
		return cryptointel.Errorf(cryptointel.EFORBIDDEN, "Your plan does not include this endpoint.")
	case needed == nil:
		return cryptointel.Errorf(cryptointel.EFORBIDDEN, "This endpoint is not included in any plan.")
	case top:
		return cryptointel.Errorf(cryptointel.EFORBIDDEN, "This endpoint requires the %s plan.", needed.Name)
	}
	return cryptointel.Errorf(cryptointel.EFORBIDDEN, "This endpoint requires the %s plan or higher.", needed.Name)
}

func findPlan(plans []cryptointel.Plan, name string) (cryptointel.Plan, bool) {
	for _, p := range plans {
		if p.Name == name {
			return p, true
		}
	}
	return cryptointel.Plan{}, false
}

// planNamed returns the plan called name, or a plan carrying only the name
// (which grants nothing) when the table has no such plan.
func planNamed(plans []cryptointel.Plan, name string) cryptointel.Plan {
	if p, ok := findPlan(plans, name); ok {
		return p
	}
	return cryptointel.Plan{Name: name}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
