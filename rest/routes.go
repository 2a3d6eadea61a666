package rest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/wire"
)

// Exact messages of the contract (section 7) and of this facade.
const (
	msgBulkSinceRequired = "since parameter is required. Use an ISO 8601 timestamp (e.g. 2026-11-20T00:00:00Z)."
	msgNotFound          = "Not found"
	msgMethodNotAllowed  = "Method not allowed"
)

// Descriptions shared by several routes' params.
const (
	descSince    = "Only events at or after this instant."
	descCategory = "Event category filter."
)

// Policy surfaces (X-Api-Surface).
const (
	surfaceLookup   = "lookup"
	surfaceQuery    = "query"
	surfaceFeed     = "feed"
	surfaceTimeline = "timeline"
	surfaceReplay   = "replay"
	surfaceBrief    = "brief"
)

// Pricing of the routes that declare a pay-per-request option (section 5).
var (
	priceFeed        = &access.Pricing{Mode: "range", Min: 0.005, Max: 0.125}
	priceByCategory  = &access.Pricing{Mode: "range", Min: 0.005, Max: 0.05}
	priceRadarByOrg  = &access.Pricing{Mode: "range", Min: 0.002, Max: 0.05}
	priceSearch      = &access.Pricing{Mode: "fixed", Min: 0.05, Max: 0.05}
	priceEntityByTop = &access.Pricing{Mode: "fixed", Min: 0.005, Max: 0.005}
)

// policy builds a route policy.
func policy(surface, layer, name string, cost int, feature string, pricing *access.Pricing) access.Policy {
	return access.Policy{Surface: surface, Layer: layer, Name: name, CreditCost: cost, Feature: feature, Pricing: pricing}
}

// orList writes items as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// hours writes a duration of whole hours as "24 hours".
func hours(d time.Duration) string { return strconv.Itoa(int(d/time.Hour)) + " hours" }

// Parameter builders.

// boundedParam is an integer query parameter with the bounds b (one of
// cryptointel's limits), passed to the operation as variable v ("" for
// none).
func boundedParam(name, v string, b *cryptointel.Bounds, desc string) Param {
	return Param{Name: name, In: "query", Type: TypeInteger, Default: b.Default, Min: intp(b.Min), Max: intp(b.Max), Bounds: b, Var: v, Description: desc}
}

// limitParam is `limit`, the page size, passed as `first`.
func limitParam(b *cryptointel.Bounds) Param {
	return boundedParam("limit", "first", b, fmt.Sprintf("Page size, %d to %d, default %d. Larger values are capped; values below %d are clamped to %d.",
		b.Min, b.Max, b.Default, b.Min, b.Min))
}

// offsetParam is `offset`, the rows to skip.
func offsetParam(b *cryptointel.Bounds) Param {
	return boundedParam("offset", "offset", b, fmt.Sprintf("Rows to skip, %d to %d, default %d. Larger values are capped; negative values are clamped to %d.",
		b.Min, b.Max, b.Default, b.Min))
}

func idQueryParam(what string) Param {
	return Param{Name: "id", In: "query", Type: TypeInteger, Required: true, Var: "id", Description: "The " + what + " id."}
}

func idPathParam(what string) Param {
	return Param{Name: "id", In: "path", Type: TypeInteger, Required: true, Var: "id", Description: "The " + what + " id."}
}

func sinceParam(desc string, maxAge time.Duration) Param {
	ps := Param{Name: "since", In: "query", Type: TypeDateTime, MaxAge: maxAge, Var: "since", Description: desc}
	if maxAge > 0 {
		ps.TooOld = cryptointel.SinceTooOld(ps.Name, maxAge)
	}
	return ps
}

func requiredSince(desc string, maxAge time.Duration, msg string) Param {
	ps := sinceParam(desc, maxAge)
	ps.Required = true
	ps.RequiredMessage = msg
	return ps
}

func cursorParam() Param {
	return Param{Name: "cursor", In: "query", Type: TypeString, Var: "after",
		Description: "Opaque token from a previous response's next_cursor. Use it with the same `since` (and filters); `offset` is ignored when it is present. A changed or foreign cursor is a 400."}
}

func compactParam() Param {
	canonical, legacy := compactDropped()
	return Param{Name: "compact", In: "query", Type: TypeBoolean, Default: false,
		Description: "Omit " + canonical + " and their legacy aliases (" + legacy + "). A bare `compact` means true."}
}

// legacyParam is `legacy`, the lean event shape: false drops the legacy
// aliases from every event of the response. It feeds $legacy, which the
// event fragments' aliases are conditioned on (rest/ops/fragments).
func legacyParam() Param {
	var names []string
	for _, f := range wire.EventFields {
		if f.Legacy != "" {
			names = append(names, f.Legacy)
		}
	}
	return Param{Name: legacyVar, In: "query", Type: TypeBoolean, Default: true, Var: legacyVar,
		Description: "false omits the legacy aliases of the event fields (" + strings.Join(names, ", ") +
			") from every event: the lean shape for new clients, about half the bytes of a page of full events. " +
			"Default true: the contract's shape, canonical and legacy names together."}
}

// legacyVar is the variable (and parameter) the lean event shape is asked
// with.
const legacyVar = "legacy"

// withLegacyParam declares legacyParam on r when its operation (or any it
// may switch to, as compact briefs do) can leave the legacy aliases out:
// exactly the routes whose events carry them.
func withLegacyParam(r *Route) {
	for _, name := range []string{r.Operation, r.Operation + "_compact"} {
		op, ok := fixedOperations()[name]
		if ok && op.Doc.Operations[0].VariableDefinitions.ForName(legacyVar) != nil {
			r.Params = append(r.Params, legacyParam())
			return
		}
	}
}

// Prepare helpers.

// withCursor drops the offset when a cursor continues a walk.
func withCursor(c *Call) {
	if c.Given["cursor"] {
		c.Vars["offset"] = 0
		c.Values["offset"] = 0
	}
}

// setSurface returns a Prepare that sets the surface variable.
func setSurface(surface string) func(*Call) error {
	return func(c *Call) error {
		c.Vars["surface"] = surface
		return nil
	}
}

// resolveSort applies the sort/mode rule of /v1/latest: `sort` wins when
// both are given; `mode` (largest = significance, new = recency) applies
// otherwise; the default is significance. The response reports both,
// consistent with the effective order.
func resolveSort(c *Call) {
	sort := "significance"
	if c.Given["sort"] {
		sort = c.String("sort")
	} else if c.Given["mode"] && c.String("mode") == "new" {
		sort = "recency"
	}
	mode := "largest"
	if sort == "recency" {
		mode = "new"
	}
	c.Values["sort"] = sort
	c.Values["mode"] = mode
	c.Vars["sort"] = strings.ToUpper(sort)
}

// parseBatchIDs parses the ids of /v1/brief/batch: comma-separated
// integers; tokens that are not positive integers are ignored, duplicates
// collapse, and there must be between 1 and 25 valid ids.
func parseBatchIDs(raw string) (any, error) {
	var ids []int
	for _, tok := range strings.Split(raw, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(tok))
		if err != nil || n <= 0 || n > maxInt {
			continue
		}
		if !slices.Contains(ids, n) {
			ids = append(ids, n)
		}
	}
	if len(ids) == 0 {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgNoValidIDs}
	}
	if len(ids) > cryptointel.MaxIDsPerRequest {
		return nil, &cryptointel.Error{Code: cryptointel.EINVALID, Message: cryptointel.MsgTooManyBatchIDs}
	}
	return ids, nil
}

// Routes returns the /v1 route table: every graph-read route of the
// contract (sections 4.1–4.4 and 4.7). Account-owned routes (usage,
// webhooks, export jobs) are added by their packages through Config.Routes.
//
// A priced route's Pricing gets its MaxLimit and DefaultLimit from the
// route's `limit` parameter, so a range price follows the route's own caps.
// A route whose events carry legacy aliases gets the `legacy` parameter
// (withLegacyParam). Each route's Response is derived from its operation.
func Routes() []Route {
	d, err := derived()
	if err != nil {
		panic(err.Error())
	}
	routes := graphRoutes()
	for i := range routes {
		r := &routes[i]
		r.Response = d.responses[r.Method+" "+r.Path]
		withLegacyParam(r)
		if r.Policy.Pricing == nil {
			continue
		}
		pr := *r.Policy.Pricing
		for _, prm := range r.Params {
			if prm.Name == "limit" && prm.Max != nil {
				pr.MaxLimit = *prm.Max
				if d, ok := prm.Default.(int); ok {
					pr.DefaultLimit = d
				}
			}
		}
		r.Policy.Pricing = &pr
	}
	return routes
}

// graphRoutes is the table before pricing is completed: one list of
// routes per resource.
func graphRoutes() []Route {
	return concatRoutes(feedRoutes(), searchRoutes(), entityRoutes(), briefRoutes())
}

func concatRoutes(lists ...[]Route) []Route {
	var out []Route
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// derived are the graph routes' response schemas and the components they
// name, derived once from their operations (shape.go).
var derived = sync.OnceValues(func() (*derivedSchemas, error) { return deriveResponses(graphRoutes()) })
