// Package access governs every request: API key → account → plan, the
// access-layer gate, the per-minute rate window, monthly credits, usage
// metering, pay-per-request (x402, MPP) and the response headers that tell a
// client where it stands.
package access

// Access layers (header X-Access-Layer).
const (
	LayerEvaluation  = "evaluation"
	LayerOperational = "operational"
	LayerPremium     = "premium"
)

// Plan feature flags a policy may require.
const (
	FeatureBriefs       = "briefs"
	FeatureBatchBriefs  = "batch_briefs"
	FeatureWebhooks     = "webhooks"
	FeaturePremiumFeeds = "premium_feeds"
	FeatureExport       = "export"
)

// Policy is what the route table declares about one endpoint; the access
// layer enforces it and reports it in headers.
type Policy struct {
	// Surface is X-Api-Surface: lookup, query, feed, timeline, replay, brief,
	// delivery, usage, export or graphql.
	Surface string
	// Layer is X-Access-Layer: evaluation, operational or premium.
	Layer string
	// Name is X-Endpoint-Policy, for example "search" or "radar.all".
	Name string
	// CreditCost is the monthly credits one request costs (X-Credit-Cost).
	// Zero means free (for example /v1/usage).
	CreditCost int
	// Feature is the plan feature flag the route needs, if any.
	Feature string
	// MinPlan is an explicit plan floor (for example enterprise for export).
	MinPlan string
	// Pricing is the pay-per-request price; nil when the route has no payment
	// option.
	Pricing *Pricing
	// CostByComplexity marks /graphql: the request costs the operation's
	// computed complexity, charged by the GraphQLCost handler extension
	// (CreditCost is then only the fallback when no operation is run).
	CostByComplexity bool
}

// Pricing is a route's pay-per-request price in USD.
//
// In "range" mode the price grows linearly with the requested `limit`
// query parameter, from Min at limit 1 to Max at MaxLimit:
//
//	price = Min + (Max - Min) * (limit - 1) / (MaxLimit - 1)
//
// where limit is clamped to [1, MaxLimit] and defaults to DefaultLimit when
// absent or not an integer. The price is charged in USDC atomic units (6
// decimals), rounded up to a whole unit.
type Pricing struct {
	// Mode is "fixed" or "range".
	Mode string
	// Min and Max bound the price; equal for a fixed price.
	Min, Max float64
	// MaxLimit is the route's maximum `limit` (the price reaches Max there).
	// Defaults to 50.
	MaxLimit int
	// DefaultLimit is the route's default `limit`, priced when the request
	// does not send one. Defaults to MaxLimit.
	DefaultLimit int
}
