// Package access governs every request: API key → account → plan, the
// access-layer gate, the per-minute rate window, monthly credits, usage
// metering, pay-per-request (x402, MPP) and the response headers that tell a
// client where it stands.
//
// Rules, in the order Service.Wrap applies them:
//
//   - Keys: `Authorization: Bearer <key>`, looked up by SHA-256 (the only
//     form stored) and compared in constant time. Missing, unknown or
//     revoked: 401 {"error": ...}; on a priced route a request without a
//     key gets 402 instead. A valid key always wins over a payment.
//   - Plans are rows of the plans table (cached in memory for 30 seconds).
//     A route needs its layer in the plan's layers, its feature flag and its
//     plan floor; otherwise 403 "This endpoint requires the <plan> plan or
//     higher." naming the lowest plan that grants it.
//   - Scopes: a key without the data scope, or a restricted key outside
//     its surfaces or writing, is refused 403 (keyRefusal, db.KeyAdmits),
//     counted in the window and charged nothing.
//   - One SQL statement per request (db.Meter) counts the request in the
//     account's fixed 60-second window (all its keys together; aligned to
//     UTC minutes, shared by every process) and, only when the plan grants
//     the route, the window holds at most 100 requests and the month's
//     credits cover the cost, adds the request and its credits to the
//     account's monthly and the key's daily usage. Over the
//     window: 429 "Rate limit exceeded. Maximum 100 requests per 60
//     seconds." with Retry-After. Credits exhausted (used + cost > monthly
//     allowance): 403 "API usage limit reached. Please upgrade your plan or
//     contact support."; routes of cost 0 (/v1/usage) still answer.
//   - Counting: every authenticated request counts toward the rate window;
//     an admitted request counts in usage and costs its credits, unless it
//     is refused before its work runs: a request answered 4xx other than
//     404 (parameters, body, content type, plan, limits), a /graphql
//     document that never ran (parse, validation, limits, a field the plan
//     lacks), a stream that did not open, costs nothing. Credits reset on
//     the 1st of the month (UTC); usage weeks start on Monday 00:00 UTC.
//   - /graphql costs the operation's price (GraphQLCost, price.go: its
//     complexity, introspection, and at least the /v1 routes doing the same
//     work), reported as extensions.cost.
//   - Pay per request (no key, priced route): the 402 carries the x402 v1
//     body {x402Version, error, accepts}, the x402 v2 PAYMENT-REQUIRED
//     header and an MPP `WWW-Authenticate: Payment` challenge. X-PAYMENT (or
//     v2 PAYMENT-SIGNATURE) is verified by the facilitator's /verify and
//     settled by /settle (X-PAYMENT-RESPONSE and PAYMENT-RESPONSE) before
//     the response is sent — a /v1 response that succeeded, a /graphql
//     operation that ran; a response is settled or serves nothing;
//     `Authorization: Payment` goes through the MPP verifier's /verify and
//     /settle (Payment-Receipt). Prices are in Pricing.
//   - Streaming connections (WebSocket, graphql-sse, /v1/stream) are capped
//     per key, per address and in total in each process (conns.go), and
//     one definition says what a WebSocket upgrade is (upgrade.go).
//   - Headers on every response, errors included: X-RateLimit-Limit,
//     X-RateLimit-Remaining, X-RateLimit-Reset, X-Monthly-Limit,
//     X-Monthly-Used, X-Monthly-Remaining, X-Credit-Cost, X-Plan-Tier,
//     X-Api-Surface, X-Access-Layer, X-Endpoint-Policy, X-Request-Id and
//     the IETF pair RateLimit-Policy: "default";q=100;w=60 and RateLimit:
//     "default";r=<remaining>;t=<reset>. Without a key the per-key values
//     read as a full window, a zero monthly allowance and X-Plan-Tier
//     "none" (or "pay-per-request").
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
	// price, charged by the GraphQLCost handler extension; a request no
	// operation runs for costs nothing (CreditCost is not charged).
	CostByComplexity bool
}

// Pricing is a route's pay-per-request price in USD.
//
// In "range" mode the price grows linearly with the number of items the
// request will be served, from Min at limit 1 to Max at MaxLimit:
//
//	price = Min + (Max - Min) * (limit - 1) / (MaxLimit - 1)
//
// where limit is the route's `limit` as the route layer parsed and
// defaulted it (WithPricedLimit), never the raw query string, taken within
// [1, MaxLimit] (the price saturates where the resolver caps the page); a request whose parameters did not parse (answered 400 and
// never settled) is priced at DefaultLimit. The price is charged in USDC
// atomic units (6 decimals), rounded up to a whole unit.
//
// In "complexity" mode (/graphql) the price is PerCredit for each credit of
// the operation's computed complexity, and at least Min.
type Pricing struct {
	// Mode is "fixed", "range" or "complexity".
	Mode string
	// Min and Max bound the price; equal for a fixed price.
	Min, Max float64
	// MaxLimit is the route's maximum `limit` (the price reaches Max there);
	// the route table sets it from the route's `limit` param. Without one
	// (0 or 1) the price is Min.
	MaxLimit int
	// DefaultLimit is the route's default `limit`, priced when the request
	// does not send one. Defaults to MaxLimit.
	DefaultLimit int
	// PerCredit is the price of one credit of complexity in "complexity"
	// mode.
	PerCredit float64
}
