package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The prompts: ready-made research tasks a user picks in a client. They
// only write instructions naming the tools; they read nothing themselves
// and cost nothing.

// MaxPromptArgumentBytes bounds each argument of a prompt: a prompt
// quotes its arguments, so its answer stays within a few kilobytes.
const MaxPromptArgumentBytes = 1024

// MsgPromptArgumentTooLongFmt refuses a prompt argument over
// MaxPromptArgumentBytes: the argument's name, then the bound.
const MsgPromptArgumentTooLongFmt = "Prompt argument %s must be at most %d bytes."

// promptDef declares one prompt.
type promptDef struct {
	prompt *sdk.Prompt
	// text writes the prompt; allowed reports whether the caller's plan
	// allows a route ("GET /v1/brief"), true for every route when the
	// plan is not known.
	text func(args map[string]string, allowed func(route string) bool) (string, error)
}

var promptDefs = []promptDef{
	{
		prompt: &sdk.Prompt{
			Name: "daily_brief", Title: "Daily brief of a watchlist",
			Description: "What happened in the last 24 hours to the organizations of a watchlist, most significant first.",
			Arguments: []*sdk.PromptArgument{
				{Name: "watchlist", Title: "Watchlist", Required: true,
					Description: "Organizations, tokens or protocols to follow, by name or ticker, comma-separated (e.g. \"Ethereum, Uniswap, SOL\")."},
			},
		},
		text: func(a map[string]string, allowed func(string) bool) (string, error) {
			names := splitList(a["watchlist"])
			if len(names) == 0 {
				return "", fmt.Errorf("watchlist must name at least one organization")
			}
			// The brief step as the caller's plan allows it: one batch
			// brief, a brief per id, or each id's timeline.
			step2 := "2. Call " + toolBrief + " once with all the ids and since set to 24 hours before now (ISO 8601, UTC).\n"
			switch {
			case allowed(routeBriefBatch) || (len(names) == 1 && allowed(routeBrief)):
			case allowed(routeBrief):
				step2 = "2. Call " + toolBrief + " for each id, one id per call, with since set to 24 hours before now (ISO 8601, UTC).\n"
			default:
				step2 = "2. Call " + toolTimeline + " for each id with since set to 24 hours before now (ISO 8601, UTC).\n"
			}
			return "Write my daily brief for this watchlist: " + strings.Join(names, ", ") + ".\n\n" +
				"1. Resolve each name with " + toolResolve + " (limit 3) and keep the strongest organization match; say which names matched nothing.\n" +
				step2 +
				"3. Call " + toolTopSignals + " (limit 10) for the most significant signals across the market in the same window.\n" +
				"4. Write one short section per organization: what happened, with event ids and dates, the most significant first; " +
				"then a short \"across the market\" section from the top signals. Say plainly when an organization had no events.", nil
		},
	},
	{
		prompt: &sdk.Prompt{
			Name: "what_happened", Title: "What happened to X this week",
			Description: "A dated account of the last days of one organization, token, person or protocol.",
			Arguments: []*sdk.PromptArgument{
				{Name: "subject", Title: "Subject", Required: true, Description: "The name or ticker to look into (e.g. \"Aave\")."},
				{Name: "days", Title: "Days", Description: "How many days back to look; 7 when absent."},
			},
		},
		text: func(a map[string]string, _ func(string) bool) (string, error) {
			subject := strings.TrimSpace(a["subject"])
			if subject == "" {
				return "", fmt.Errorf("subject is required")
			}
			days := strings.TrimSpace(a["days"])
			if days == "" {
				days = "7"
			}
			return "What happened to " + subject + " in the last " + days + " days?\n\n" +
				"1. Resolve \"" + subject + "\" with " + toolResolve + "; if several entities match, pick the strongest match and say which.\n" +
				"2. Call " + toolTimeline + " with its id and since set to " + days + " days before now (follow the hint for more), and " +
				toolSignalHistory + " with days=" + days + ".\n" +
				"3. Call " + toolSearch + " with the name for coverage the timeline does not link, in the same window.\n" +
				"4. Answer with a dated timeline (event ids and dates), the most significant developments first, how attention moved " +
				"day by day, and the related entities involved. Use get_entity if its relationships explain an event.", nil
		},
	},
	{
		prompt: &sdk.Prompt{
			Name: "market_pulse", Title: "Market pulse",
			Description: "The most significant signals of the last 24 hours, grouped by theme.",
			Arguments: []*sdk.PromptArgument{
				{Name: "category", Title: "Category", Description: "Only this category (e.g. funding, listing, partnership); all when absent."},
			},
		},
		text: func(a map[string]string, _ func(string) bool) (string, error) {
			filter := ""
			if c := strings.TrimSpace(a["category"]); c != "" {
				filter = " with category=\"" + c + "\""
			}
			return "Give me the market pulse of the last 24 hours.\n\n" +
				"1. Call " + toolLatest + " with surface=\"signal\", window=\"24h\", sort=\"significance\" and limit 25" + filter + ".\n" +
				"2. Group the events by theme (funding, listings, partnerships, technology, regulation...) and name the organizations involved.\n" +
				"3. End with the three developments most worth a closer look and why, citing event ids.", nil
		},
	},
	{
		prompt: &sdk.Prompt{
			Name: "entity_network", Title: "Who X is connected to",
			Description: "The relationships of one organization, token, person or protocol, optionally of one type, and what the related entities did lately.",
			Arguments: []*sdk.PromptArgument{
				{Name: "subject", Title: "Subject", Required: true, Description: "The name or ticker to map (e.g. \"Uniswap\")."},
				{Name: "relationshipType", Title: "Relationship type",
					Description: "Only relationships of this type (e.g. FOUNDATION_OF); all when absent. Completion lists the types in use."},
			},
		},
		text: func(a map[string]string, _ func(string) bool) (string, error) {
			subject := strings.TrimSpace(a["subject"])
			if subject == "" {
				return "", fmt.Errorf("subject is required")
			}
			filter := ""
			if rt := strings.TrimSpace(a["relationshipType"]); rt != "" {
				filter = " with relationshipType=\"" + rt + "\""
			}
			return "Map who " + subject + " is connected to.\n\n" +
				"1. Resolve \"" + subject + "\" with " + toolResolve + "; if several entities match, pick the strongest match and say which.\n" +
				"2. Call " + toolRelationships + " with its id" + filter + " (follow the hint for more).\n" +
				"3. For the related entities that matter most, call " + toolLatest + " with their entityId and window=\"30d\".\n" +
				"4. Answer with the relationships grouped by type and direction, each related entity's recent events (ids and dates), " +
				"and what the network says about " + subject + ".", nil
		},
	},
}

// addPrompts registers the prompts.
func (s *Server) addPrompts() {
	for _, pd := range promptDefs {
		pd := pd
		s.mcp.AddPrompt(pd.prompt, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			for _, a := range pd.prompt.Arguments {
				if len(req.Params.Arguments[a.Name]) > MaxPromptArgumentBytes {
					return nil, fmt.Errorf(MsgPromptArgumentTooLongFmt, a.Name, MaxPromptArgumentBytes)
				}
			}
			text, err := pd.text(req.Params.Arguments, s.routeGate(ctx, req))
			if err != nil {
				return nil, err
			}
			return &sdk.GetPromptResult{
				Description: pd.prompt.Description,
				Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: text}}},
			}, nil
		})
	}
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// routeGate returns what the caller of req may call: whether its plan
// allows a route of the tools ("GET /v1/brief"); every route when there is
// no Gate or the caller has no plan.
func (s *Server) routeGate(ctx context.Context, req *sdk.GetPromptRequest) func(route string) bool {
	all := func(string) bool { return true }
	if s.cfg.Gate == nil || req.Extra == nil || req.Extra.Header == nil {
		return all
	}
	check := s.cfg.Gate(ctx, req.Extra.Header.Get("Authorization"))
	if check == nil {
		return all
	}
	return func(route string) bool {
		for _, t := range s.tools {
			if op, ok := t.routes[route]; ok {
				return check(op.Layer, op.Feature, op.PlanFloor)
			}
		}
		return true
	}
}
