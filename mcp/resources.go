package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cryptointel/cryptointel/wire"
)

// Resource templates: an entity (through GET /v1/entities/byId) and an
// event (through /graphql's event(id:), the one read of a single event;
// it costs the operation's complexity, as on /graphql).
const (
	// EntityURITemplate names an entity.
	EntityURITemplate = "cryptointel://entities/{id}"
	// EventURITemplate names an event.
	EventURITemplate = "cryptointel://events/{id}"
)

// Server-defined JSON-RPC error code of a resource read the access layer
// refused (401, 403, 429) or the route found invalid; the message is the
// route's.
const codeRefused = -32001

// eventQuery is the /graphql document of the event resource: the event's
// canonical wire fields.
var eventQuery = func() string {
	var b strings.Builder
	b.WriteString("query McpEvent($id: Int!) { event(id: $id) {")
	for _, f := range wire.EventFields {
		b.WriteString(" " + f.Name)
		var sub []wire.Field
		switch f.Type {
		case wire.EntityRefs:
			sub = wire.EntityRefFields
		case wire.EvidenceList:
			sub = wire.EvidenceFields
		}
		if sub != nil {
			b.WriteString(" {")
			for _, sf := range sub {
				b.WriteString(" " + sf.Name)
			}
			b.WriteString(" }")
		}
	}
	b.WriteString(" } }")
	return b.String()
}()

// addResources registers the resource templates.
func (s *Server) addResources(doc *openAPI) error {
	entity, err := doc.route(routeByID)
	if err != nil {
		return err
	}
	s.mcp.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: EntityURITemplate, Name: "entity", Title: "Entity",
		Description: "An entity (organization, token, person, protocol) by id: names, type, status, aliases and references, as JSON. " +
			"Costs what get_entity's entity route costs (" + plural(entity.CreditCost, "credit") + ").",
		MIMEType: "application/json",
	}, s.resourceHandler("entity", func(ctx context.Context, info *requestInfo, authorization string, id string, pay *payment) (*routeResponse, []byte) {
		res := s.do(ctx, info, authorization, entity, map[string]string{"id": id}, pay)
		return res, fieldOf(res.body, "data")
	}))
	s.mcp.AddResourceTemplate(&sdk.ResourceTemplate{
		URITemplate: EventURITemplate, Name: "event", Title: "Event",
		Description: "A radar or signal event by id, whole (owners, participants, bullets and evidence), as JSON. " +
			"Read through /graphql: costs the operation's complexity in credits.",
		MIMEType: "application/json",
	}, s.resourceHandler("event", s.readEvent))
	return nil
}

// readEvent reads one event through /graphql's event(id:), as the caller:
// the response (a GraphQL error as the status a route would answer) and
// the event's JSON (null when there is no such event).
func (s *Server) readEvent(ctx context.Context, info *requestInfo, authorization string, id string, pay *payment) (*routeResponse, []byte) {
	body, _ := json.Marshal(map[string]any{"query": eventQuery, "operationName": "McpEvent", "variables": map[string]any{"id": json.Number(id)}})
	res := s.serve(ctx, info, authorization, http.MethodPost, "/graphql", body, pay)
	var gql struct {
		Data struct {
			Event json.RawMessage `json:"event"`
		} `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if res.status != http.StatusOK || json.Unmarshal(res.body, &gql) != nil {
		return res, nil
	}
	if len(gql.Errors) > 0 {
		status := http.StatusBadRequest
		switch gql.Errors[0].Extensions["code"] {
		case "payment_required":
			status = http.StatusPaymentRequired
		case "forbidden", "quota_exceeded":
			status = http.StatusForbidden
		case "rate_limited":
			status = http.StatusTooManyRequests
		}
		msg, _ := json.Marshal(map[string]string{"error": gql.Errors[0].Message})
		return &routeResponse{status: status, header: res.header, body: msg}, nil
	}
	return res, gql.Data.Event
}

// readFunc reads one resource by id through its route: the route's
// response and the resource's JSON (nil when there is none).
type readFunc func(ctx context.Context, info *requestInfo, authorization string, id string, pay *payment) (*routeResponse, []byte)

// resourceHandler serves resources/read for a template of kind.
func (s *Server) resourceHandler(kind string, read readFunc) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		start := time.Now()
		ctx, info, cancel := callContext(ctx)
		defer cancel()
		authorization := ""
		if req.Extra != nil {
			authorization = req.Extra.Header.Get("Authorization")
		}
		uri := req.Params.URI
		res, outcome, err := s.readResource(ctx, info, authorization, kind, uri, req.Params.Meta, read)
		size := 0
		if res != nil {
			size = len(res.Contents[0].Text)
		}
		s.logCall(ctx, info, "resource", kind, authorization, outcome, size, time.Since(start))
		return res, err
	}
}

func (s *Server) readResource(ctx context.Context, info *requestInfo, authorization, kind, uri string, meta sdk.Meta, read readFunc) (*sdk.ReadResourceResult, string, error) {
	_, idText, _ := strings.Cut(strings.TrimPrefix(uri, "cryptointel://"), "/")
	if _, err := strconv.ParseInt(idText, 10, 32); err != nil {
		return nil, outcomeInvalid, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the " + kind + " id must be an integer: " + uri}
	}
	pay, err := paymentOf(meta)
	if err != nil {
		return nil, outcomeInvalid, err
	}
	res, data := read(ctx, info, authorization, idText, pay)
	switch {
	case res.status == http.StatusPaymentRequired:
		e := paymentRequired(&tool{def: &toolDef{Name: kind}}, res, pay != nil).(*jsonrpc.Error)
		var d map[string]any
		json.Unmarshal(e.Data, &d) //nolint:errcheck // built just above
		d["resource"].(map[string]any)["url"] = uri
		e.Data, _ = json.Marshal(d)
		return nil, outcomePaymentRequired, e
	case res.status == http.StatusNotFound || (res.status == http.StatusOK && (len(data) == 0 || string(data) == "null")):
		return nil, outcomeNotFound, &jsonrpc.Error{Code: sdk.CodeResourceNotFound, Message: strings.ToUpper(kind[:1]) + kind[1:] + " not found",
			Data: json.RawMessage(`{"uri":` + strconv.Quote(uri) + `}`)}
	case res.status != http.StatusOK:
		code := int64(codeRefused)
		if res.status >= 500 {
			code = jsonrpc.CodeInternalError
		}
		return nil, outcomeOf(res.status), &jsonrpc.Error{Code: code, Message: res.message()}
	}
	result := &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(leanBody(data, false))}}}
	if v := res.header.Get("PAYMENT-RESPONSE"); v != "" {
		result.Meta = sdk.Meta{MetaPaymentResponse: decodeReceipt(v)}
	}
	return result, outcomeOK, nil
}
