package mcp

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// completion/complete: suggestions for the arguments of the prompts and
// of the resource templates, as a client offers them while the user
// types. Entity names come from the resolver (the one resolve_entity's
// route runs), categories and relationship types from those in use. A
// completion costs nothing but counts in the key's rate window, like the
// other free messages. An argument with nothing to suggest, or a prompt
// or template the server does not have, gets an empty list.

// Suggest is what completion reads from the store; a nil member suggests
// nothing.
type Suggest struct {
	// EntityNames returns up to n entities whose names match prefix,
	// strongest first (db.ResolveEntities).
	EntityNames func(ctx context.Context, prefix string, n int) ([]EntityName, error)
	// Categories returns the event categories in use.
	Categories func(ctx context.Context) ([]string, error)
	// RelationshipTypes returns the relationship types in use.
	RelationshipTypes func(ctx context.Context) ([]string, error)
}

// EntityName is an entity by the name that matched.
type EntityName struct {
	ID   int64
	Name string
}

// MaxCompletions bounds the values of one completion (the protocol allows
// 100; a client shows a few).
const MaxCompletions = 20

// completionListTTL is how long the lists of categories and relationship
// types in use are reused by completion.
const completionListTTL = time.Minute

// How an argument is completed.
type completeKind int

const (
	completeNothing completeKind = iota
	completeEntityName
	completeEntityList // comma-separated names: the last one is completed
	completeEntityID   // a name typed, entity ids suggested
	completeCategory
	completeRelationshipType
	completeDays
)

// promptCompletions says how each prompt argument is completed.
var promptCompletions = map[string]map[string]completeKind{
	"daily_brief":    {"watchlist": completeEntityList},
	"what_happened":  {"subject": completeEntityName, "days": completeDays},
	"market_pulse":   {"category": completeCategory},
	"entity_network": {"subject": completeEntityName, "relationshipType": completeRelationshipType},
}

// templateCompletions says how each resource template's variables are
// completed.
var templateCompletions = map[string]map[string]completeKind{
	EntityURITemplate: {"id": completeEntityID},
}

// dayChoices are the suggested day counts.
var dayChoices = []string{"1", "7", "14", "30"}

// cachedList is a list in use, reused for completionListTTL.
type cachedList struct {
	mu   sync.Mutex
	list []string
	at   time.Time
}

func (c *cachedList) get(ctx context.Context, load func(context.Context) ([]string, error)) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.list != nil && time.Since(c.at) < completionListTTL {
		return c.list, nil
	}
	list, err := load(ctx)
	if err != nil {
		return nil, err
	}
	c.list, c.at = list, time.Now()
	return list, nil
}

// complete serves completion/complete.
func (s *Server) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	p := req.Params
	var kind completeKind
	if p.Ref != nil {
		switch p.Ref.Type {
		case "ref/prompt":
			kind = promptCompletions[p.Ref.Name][p.Argument.Name]
		case "ref/resource":
			kind = templateCompletions[p.Ref.URI][p.Argument.Name]
		}
	}
	values, err := s.suggest(ctx, kind, p.Argument.Value)
	if err != nil {
		s.logger.ErrorContext(ctx, "mcp completion failed", "error", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Completion failed; try again."}
	}
	total := len(values)
	if len(values) > MaxCompletions {
		values = values[:MaxCompletions]
	}
	return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: values, Total: total, HasMore: total > len(values)}}, nil
}

// suggest returns the values of kind for what the user typed, best first.
func (s *Server) suggest(ctx context.Context, kind completeKind, typed string) ([]string, error) {
	values := []string{}
	if len(typed) > MaxPromptArgumentBytes {
		return values, nil
	}
	sg := s.cfg.Suggest
	switch kind {
	case completeEntityName, completeEntityList, completeEntityID:
		if sg.EntityNames == nil {
			return values, nil
		}
		head, last := "", typed
		if kind == completeEntityList {
			if i := strings.LastIndex(typed, ","); i >= 0 {
				head, last = typed[:i+1]+" ", typed[i+1:]
			}
		}
		last = strings.TrimSpace(last)
		if last == "" {
			return values, nil
		}
		if kind == completeEntityID {
			if _, err := strconv.ParseInt(last, 10, 64); err == nil {
				return values, nil // already an id
			}
		}
		names, err := sg.EntityNames(ctx, last, MaxCompletions)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			v := head + n.Name
			if kind == completeEntityID {
				v = strconv.FormatInt(n.ID, 10)
			}
			if !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		return values, nil
	case completeCategory:
		if sg.Categories == nil {
			return values, nil
		}
		list, err := s.categories.get(ctx, sg.Categories)
		if err != nil {
			return nil, err
		}
		return matching(list, typed), nil
	case completeRelationshipType:
		if sg.RelationshipTypes == nil {
			return values, nil
		}
		list, err := s.relationshipTypes.get(ctx, sg.RelationshipTypes)
		if err != nil {
			return nil, err
		}
		return matching(list, typed), nil
	case completeDays:
		return matching(dayChoices, typed), nil
	}
	return values, nil
}

// matching returns the items of list that start with typed
// (case-insensitive), then those that contain it elsewhere.
func matching(list []string, typed string) []string {
	typed = strings.ToLower(strings.TrimSpace(typed))
	out := []string{}
	var inside []string
	for _, item := range list {
		l := strings.ToLower(item)
		switch {
		case strings.HasPrefix(l, typed):
			out = append(out, item)
		case strings.Contains(l, typed):
			inside = append(inside, item)
		}
	}
	return append(out, inside...)
}
