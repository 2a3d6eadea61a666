// Package mcp is the Model Context Protocol surface: Streamable HTTP at
// /mcp (the official Go SDK, stateless), agent-oriented tools over the
// /v1 routes, resource templates for an entity and an event, and prompts.
//
// One implementation of every query: a tool call runs the /v1 route it
// corresponds to in process, through the access layer, with the caller's
// Authorization (or, paid per call with x402, the payment of
// params._meta["x402/payment"] as the route's payment header). The route's
// answer becomes the tool's: 200 its envelope as structured content (events
// without their legacy aliases: the route is asked for its lean shape,
// legacy=false) with a compact text rendering, 402 a tool error whose
// structured content is the x402 PaymentRequired (x402's MCP transport v2;
// a JSON-RPC error of code 402 for an x402 v1 payload), any other status a
// tool error with the route's message. The route runs through
// Config.Call (rest.Router.Call) when set: no HTTP request in between,
// and the route hands over, with its body, the spans of the elements of
// the lists its executor wrote (RouteAnswer.Spans), so that the one pass
// making the structured content and the text (lean.go) steps over them
// instead of reading them again. Parsing, bounds, plan
// gates, the rate window, credits, usage, prices, payment checks, replay
// records and the response cache are therefore the route's, by
// construction.
//
// The endpoint authenticates every HTTP request: a wrong key is 401 with
// WWW-Authenticate (naming the OAuth resource metadata when Config.OAuth
// is set: an OAuth access token of package oauth acts as its key), and so
// is a request without any credential; on /mcp/x402 (X402Handler) a
// missing key is let through when pay-per-request is enabled (a lone
// tools/call with a key has it checked by its route's
// metering statement, answered the same way); a key known refused, or an
// address over its limit of requests without a valid key, is refused
// before the body is read. initialize, the list requests, prompts, pings,
// notifications and calls refused for their arguments cost nothing but
// each counts in the key's rate window (one statement each, none once the
// window is known spent), or without a key against the client address's
// limit; each tools/call and resources/read costs what its routes cost. A
// JSON-RPC batch holds at most MaxBatchMessages messages; a larger one is
// refused whole before any of it runs or counts.
package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/observe"
	"github.com/cryptointel/cryptointel/wire"
)

// MaxBodyBytes bounds the body of an /mcp request: the API's one body bound.
const MaxBodyBytes = cryptointel.MaxBodyBytes

// msgBodyTooLarge is the 413 message of a body over MaxBodyBytes.
var msgBodyTooLarge = cryptointel.MsgBodyTooLarge

// Realm is the realm of the WWW-Authenticate challenge of a 401.
const Realm = "cryptointel"

// MsgCredentialRequired is the 401 message of a request to /mcp without
// any credential when /mcp is an OAuth protected resource.
const MsgCredentialRequired = "Authorization required: connect with OAuth (the WWW-Authenticate header names the resource metadata) or send Authorization: Bearer <API_KEY>. Agents paying per call without a key use /mcp/x402."

// MsgInsufficientScope is the 403 message of an OAuth access token whose
// grant lacks the scope of tool calls and resource reads.
const MsgInsufficientScope = "This OAuth grant does not include the scope tool calls and resource reads need: authorize again with scope data."

// Config configures the MCP surface.
type Config struct {
	// API serves the routes the tools call, in process: /v1/ (the route
	// table behind the access layer) and /graphql. Required.
	API http.Handler
	// OpenAPI is the /v1 OpenAPI document: the tools' argument schemas,
	// bounds, output schemas and prices derive from it. Required.
	OpenAPI []byte
	// Authenticate checks a request's Authorization header up front
	// without charging it (access.Service.Authenticate). Required.
	Authenticate func(ctx context.Context, authorization string) error
	// Count counts one free request of a key in its rate window
	// (access.Service.Count): every message a route does not meter —
	// initialize, lists, prompts, pings, notifications, a call refused
	// for its arguments — is one. Nil counts nothing.
	Count func(ctx context.Context, authorization string) error
	// SpentWindow reports a key whose rate window this process knows to
	// be spent (access.Service.SpentWindow), and RateLimitMessage its 429
	// message: a tool call of such a key is refused as its route would
	// refuse it, without running the route. Nil runs every route.
	SpentWindow      func(ctx context.Context, authorization string) (retryAfter int, spent bool)
	RateLimitMessage func() string
	// Screen refuses a request before its body is read when the access
	// layer already knows the answer (access.Service.Screen). Nil screens
	// nothing.
	Screen func(r *http.Request) error
	// AdmitAnonymous counts one message without a key from a client
	// address (access.Service.AdmitAnonymous): anonymous discovery while
	// pay-per-request is on. Nil counts nothing.
	AdmitAnonymous func(addr string) error
	// Logger logs one line per tool call and per resource read. Defaults
	// to slog.Default().
	Logger *slog.Logger
	// Version is the server version reported to clients. Defaults to
	// "dev".
	Version string
	// AllowedOrigins are the hosts, besides the service's own origin,
	// whose browser pages may call /mcp: host patterns in path.Match
	// syntax such as "app.example.com" or "*.example.org:8443". A request
	// with another Origin is refused 403 (see checkOrigin).
	AllowedOrigins []string
	// Gate, when set, tells the prompts what the caller's plan allows: for
	// a request's Authorization header it returns a check of a route's
	// access layer, plan feature and plan floor (access.Service.Gate), or
	// nil when the caller has no plan (no key, or one that does not work).
	// A prompt then suggests only tools, and ways of calling them, that
	// the check passes; with nil it names the tools it would for any plan.
	Gate func(ctx context.Context, authorization string) func(layer, feature, planFloor string) bool
	// Call, when set, runs a /v1 route in process without an HTTP request
	// (rest.Router.Call): route is "METHOD /path", values the raw values
	// of its parameters by name, header the credentials, payment, request
	// id and forwarded protocol; host, remoteAddr and tls are the /mcp
	// request's. It answers the route's status, marks (headers) and body,
	// and the body's tag when the response cache served it. Nil sends the
	// tools' route calls through API.
	Call func(ctx context.Context, route string, values map[string]string, header http.Header, host, remoteAddr string, tls bool) RouteAnswer
	// Suggest is what completion/complete suggests from: entity names,
	// categories and relationship types in use (complete.go). Its nil
	// members suggest nothing.
	Suggest Suggest
	// OAuth, when set, makes /mcp an OAuth 2.1 protected resource (see
	// OAuthConfig); nil keeps the bare Bearer challenge.
	OAuth *OAuthConfig
}

// OAuthConfig is what /mcp needs of the authorization server (package
// oauth) to be its protected resource.
type OAuthConfig struct {
	// ResourceMetadataURL is the URL of /mcp's RFC 9728 metadata for a
	// request: every 401 names it in WWW-Authenticate.
	ResourceMetadataURL func(r *http.Request) string
	// Scope is the scope tool calls and resource reads need, named in the
	// challenge.
	Scope string
	// TokenAllows reports, for an OAuth access token in an Authorization
	// header value, whether its grant holds scope; isToken is false for
	// an API key (whose own scopes its routes check).
	TokenAllows func(ctx context.Context, authorization, scope string) (isToken, ok bool)
}

// Server is the MCP surface; it serves /mcp.
type Server struct {
	cfg     Config
	logger  *slog.Logger
	tools   []*tool
	byName  map[string]*tool
	mcp     *sdk.Server
	handler http.Handler

	// noFastPath sends every request to the SDK's handler (the tests
	// compare the two).
	noFastPath bool

	authMu sync.Mutex
	authOK map[[32]byte]time.Time // accepted Authorization values, until

	// categories and relationshipTypes are the lists completion reuses.
	categories, relationshipTypes cachedList

	// results are the tool results made from route bodies the response
	// cache served (by tool, body tag and arguments; see memoKey).
	results *expirable.LRU[string, *toolOutput]
}

// RouteAnswer is a route's answer to an in-process call (Config.Call).
type RouteAnswer struct {
	Status int
	Marks  http.Header
	Body   []byte
	// Tag is the ETag value of a body the response cache served (the same
	// tag, the same body), "" for one computed for the call.
	Tag string
	// Spans, when the route computed Body for the call, are the spans in
	// Body of the object elements of the lists nested in its operation's
	// data, as the executor recorded them (rest.Result.Spans): the lean
	// pass steps over such an element (an event's evidence past the first,
	// an owner's members past its label and id) instead of reading it to
	// its end. Nil is read as usual.
	Spans []jsonw.Span
	// Release, when not nil, hands Body back to the route (a body lent
	// in a pooled buffer) once the call's response is written: nothing
	// may read Body, or what was read from it in place, afterwards.
	Release func()
}

// New builds the tools from the route table and the MCP server. A tool
// whose route or parameter is missing from the table fails here, at
// start.
func New(cfg Config) (*Server, error) {
	if cfg.API == nil || cfg.Authenticate == nil {
		return nil, errors.New("error building the MCP server: API and Authenticate are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	doc, err := parseOpenAPI(cfg.OpenAPI)
	if err != nil {
		return nil, err
	}
	tools, err := buildTools(toolDefs, doc)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: cfg.Logger, tools: tools, byName: map[string]*tool{}, authOK: map[[32]byte]time.Time{},
		results: expirable.NewLRU[string, *toolOutput](memoEntries, nil, memoTTL)}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: "cryptointel", Title: "cryptointel", Version: cfg.Version}, &sdk.ServerOptions{
		Instructions:      instructions,
		Logger:            slog.New(slog.DiscardHandler),
		CompletionHandler: s.complete,
	})
	for _, t := range tools {
		s.byName[t.def.Name] = t
		s.mcp.AddTool(t.sdk, s.toolHandler(t))
	}
	if err := s.addResources(doc); err != nil {
		return nil, err
	}
	s.addPrompts()
	s.handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.mcp }, &sdk.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		MaxRequestBodyBytes:        MaxBodyBytes,
		DisableLocalhostProtection: true, // ServeHTTP checks Origin and Host first (checkOrigin)
		Logger:                     slog.New(slog.DiscardHandler),
	})
	return s, nil
}

// instructions is what the server tells a client about itself.
const instructions = "Crypto intelligence: entities (organizations, tokens, people, protocols), their relationships, and dated " +
	"radar and signal events about them. Resolve names to ids with resolve_entity first; then use get_entity, entity_timeline, " +
	"latest_events (with entityId), organization_brief, signal_history or prediction_markets. search_events answers free-text " +
	"questions. Lists are bounded: follow a result's hint to get more. Calls cost credits of the key's plan (usage tells the " +
	"budget); without a key, priced tools are payable per call with x402."

// Tools lists the tools as clients see them.
func (s *Server) Tools() []*sdk.Tool {
	out := make([]*sdk.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.sdk
	}
	return out
}

// ServeHTTP serves /mcp: the Origin and Host check, the up-front
// authentication, the body bound, then the SDK's Streamable HTTP handler
// (stateless, JSON responses). With Config.OAuth set, a request without
// any credential is answered with the OAuth challenge (401 naming the
// resource metadata), so that a client knowing only the URL starts the
// authorization flow; keyless agents paying per call use X402Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.serveDoor(w, r, s.cfg.OAuth == nil)
}

// X402Handler serves /mcp/x402: /mcp for agents without a key that pay
// each tool call with x402 (discovery free, bounded per client address,
// every priced call paid). Keys and OAuth tokens work there too.
func (s *Server) X402Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveDoor(w, r, true) })
}

// serveDoor serves one request; keyless tells whether a request without a
// credential may go on (to pay per call).
func (s *Server) serveDoor(w http.ResponseWriter, r *http.Request, keyless bool) {
	ctx := access.WithMCPAudience(r.Context())
	r = r.WithContext(ctx)
	observe.SetRoute(ctx, "/mcp") // the /v1 routes called in process must not name the request
	if msg := checkOrigin(r, s.cfg.AllowedOrigins); msg != "" {
		writeError(w, http.StatusForbidden, msg)
		return
	}
	if !keyless && r.Header.Get("Authorization") == "" {
		s.refuse(w, r, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", MsgCredentialRequired))
		return
	}
	if s.cfg.Screen != nil {
		if err := s.cfg.Screen(r); err != nil {
			s.refuse(w, r, err)
			return
		}
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		if r.ContentLength > MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, msgBodyTooLarge)
			return
		}
		var err error
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				writeError(w, http.StatusRequestEntityTooLarge, msgBodyTooLarge)
			case cryptointel.ErrorCode(err) == cryptointel.EBODYTIMEOUT:
				writeError(w, http.StatusRequestTimeout, cryptointel.ErrorMessage(err))
			default:
				writeError(w, http.StatusBadRequest, "request body could not be read")
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	// Only an OAuth access token's grant is checked here (an API key's
	// routes check its scopes): the body is read for its methods only then.
	if _, cred := splitBearer(r.Header.Get("Authorization")); s.cfg.OAuth != nil && r.Method == http.MethodPost &&
		access.IsOAuthAccessToken(cred) && needsScope(body) {
		authorization := r.Header.Get("Authorization")
		if isToken, ok := s.cfg.OAuth.TokenAllows(ctx, authorization, s.cfg.OAuth.Scope); isToken && !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+s.cfg.OAuth.Scope+
				`", resource_metadata="`+s.cfg.OAuth.ResourceMetadataURL(r)+`", error_description="`+MsgInsufficientScope+`"`)
			writeError(w, http.StatusForbidden, MsgInsufficientScope)
			return
		}
	}
	info := &requestInfo{ctx: ctx, host: r.Host, remoteAddr: r.RemoteAddr, tls: r.TLS != nil,
		proto: r.Header.Get("X-Forwarded-Proto"), requestID: observe.RequestID(ctx),
		single: r.Method == http.MethodPost && batchSize(body) == 0}
	var (
		t   *tool
		req *fastRequest
	)
	if !s.noFastPath {
		t, req = s.fastTool(r, body)
	}
	if t == nil && r.Method == http.MethodPost {
		n := batchSize(body)
		if n > MaxBatchMessages {
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, fmt.Sprintf(MsgBatchTooLargeFmt, n, MaxBatchMessages))
			return
		}
		// A batch of a key whose window is known spent: every member would
		// be refused; refuse it whole, before the protocol's machinery.
		if n > 0 && s.cfg.SpentWindow != nil && s.cfg.RateLimitMessage != nil {
			if after, spent := s.cfg.SpentWindow(ctx, r.Header.Get("Authorization")); spent {
				w.Header().Set("Retry-After", strconv.Itoa(after))
				writeError(w, http.StatusTooManyRequests, s.cfg.RateLimitMessage())
				return
			}
		}
	}
	// A tools/call with a key answered directly has its key checked by its
	// route (serveFast); every other request is checked here, and each of
	// its messages that no route meters counts in the key's rate window
	// (or, without a key, against the address's limit).
	if _, key := splitBearer(r.Header.Get("Authorization")); t == nil || key == "" {
		if err := s.admit(r, key, body); err != nil {
			s.refuse(w, r, err)
			return
		}
	}
	if t != nil {
		s.serveFast(w, r, info, t, req)
		return
	}
	pw := &plainErrors{ResponseWriter: w, request: body}
	s.handler.ServeHTTP(pw, r.WithContext(context.WithValue(ctx, requestInfoKey{}, info)))
	pw.finish()
}

// authCacheTTL is how long the up-front check remembers a key it
// accepted. It only spares the free requests (initialize, lists) a lookup:
// every tool call is authenticated again by its route, so a key revoked
// meanwhile gets the route's 401 message at once.
const authCacheTTL = 10 * time.Second

// maxAuthCache bounds the remembered keys; past it the memory starts over.
const maxAuthCache = 10000

// authenticate is cfg.Authenticate, remembering accepted keys for
// authCacheTTL.
func (s *Server) authenticate(ctx context.Context, authorization string) error {
	if _, key := splitBearer(authorization); authorization == "" || access.IsOAuthAccessToken(key) {
		// A token is checked every time: the access layer remembers its
		// answer for a second only, so that a revocation applies at once.
		return s.cfg.Authenticate(ctx, authorization)
	}
	h := sha256.Sum256([]byte(authorization))
	now := time.Now()
	s.authMu.Lock()
	until, ok := s.authOK[h]
	s.authMu.Unlock()
	if ok && now.Before(until) {
		return nil
	}
	if err := s.cfg.Authenticate(ctx, authorization); err != nil {
		return err
	}
	s.authMu.Lock()
	if len(s.authOK) >= maxAuthCache {
		clear(s.authOK)
	}
	s.authOK[h] = now.Add(authCacheTTL)
	s.authMu.Unlock()
	return nil
}

// MaxBatchMessages bounds the messages of a JSON-RPC batch: a larger
// batch is refused whole, before any of it runs or is counted.
const MaxBatchMessages = 20

// MsgBatchTooLargeFmt is the JSON-RPC error of a batch over
// MaxBatchMessages: its size, then the bound.
const MsgBatchTooLargeFmt = "Batch of %d messages refused: at most %d per request. Send fewer at a time."

// batchSize is the number of messages of a JSON-RPC batch body; 0 for a
// single message.
func batchSize(body []byte) int {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '[' {
		return 0
	}
	return int(gjson.GetBytes(b, "#").Int())
}

// messageHead is what the door reads of a JSON-RPC message.
type messageHead struct {
	Method string `json:"method"`
}

// needsScope reports whether body holds a message that needs the OAuth
// scope of calls: a tools/call or resources/read. A body that is not
// JSON-RPC needs none (the protocol refuses it).
func needsScope(body []byte) bool {
	b := bytes.TrimSpace(body)
	var heads []messageHead
	if len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &heads) != nil {
			return false
		}
	} else {
		var h messageHead
		if json.Unmarshal(b, &h) != nil {
			return false
		}
		heads = []messageHead{h}
	}
	for _, h := range heads {
		if h.Method == "tools/call" || h.Method == "resources/read" {
			return true
		}
	}
	return false
}

// unmetered is the number of messages of body that no route meters:
// every message but tools/call and resources/read (whose routes count and
// charge them). A body that is not JSON-RPC counts as one.
func unmetered(body []byte) int {
	b := bytes.TrimSpace(body)
	var heads []messageHead
	if len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &heads) != nil {
			return 1
		}
	} else {
		var h messageHead
		if json.Unmarshal(b, &h) != nil {
			return 1
		}
		heads = []messageHead{h}
	}
	n := 0
	for _, h := range heads {
		if h.Method != "tools/call" && h.Method != "resources/read" {
			n++
		}
	}
	return n
}

// admit checks a request up front. With a key, each message no route
// meters counts in the key's rate window (Config.Count), which
// authenticates the key; a request of metered calls only is authenticated
// (free, remembered). Without one it is refused unless pay-per-request is
// on, and then each such message counts against the client address's
// limit (Config.AdmitAnonymous).
func (s *Server) admit(r *http.Request, key string, body []byte) error {
	ctx := r.Context()
	authorization := r.Header.Get("Authorization")
	n := 0
	if r.Method == http.MethodPost {
		n = unmetered(body)
	}
	if key != "" && s.cfg.Count != nil && n > 0 {
		for range n {
			if err := s.cfg.Count(ctx, authorization); err != nil {
				return err
			}
		}
		return nil
	}
	if err := s.authenticate(ctx, authorization); err != nil {
		return err
	}
	if key == "" && s.cfg.AdmitAnonymous != nil {
		addr := access.ClientAddress(r)
		for range n {
			if err := s.cfg.AdmitAnonymous(addr); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeRPCError answers a request refused whole with a JSON-RPC error
// (id null) and status.
func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	writeRPCErrorID(w, status, nil, code, msg)
}

// writeRPCErrorID is writeRPCError answering the message id (null when
// nil): a JSON number or string.
func writeRPCErrorID(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(b, `,"error":{"code":`...)
	b = append(b, strconv.FormatInt(code, 10)...)
	b = append(b, `,"message":`...)
	b = wire.AppendString(b, msg, false)
	b = append(b, "}}"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck
}

// refuse answers a request the up-front check refused: 401 with a Bearer
// challenge and the access layer's message, 429 with Retry-After, or the
// error's status.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	code := cryptointel.ErrorCode(err)
	if code == cryptointel.ERATELIMIT {
		var ra *access.RetryAfterError
		if errors.As(err, &ra) && ra.After > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(ra.After))
		}
		writeError(w, http.StatusTooManyRequests, cryptointel.ErrorMessage(err))
		return
	}
	if code == cryptointel.EUNAUTHORIZED {
		challenge := `Bearer realm="` + Realm + `"`
		if s.cfg.OAuth != nil {
			challenge += `, resource_metadata="` + s.cfg.OAuth.ResourceMetadataURL(r) + `", scope="` + s.cfg.OAuth.Scope + `"`
		}
		if _, key := splitBearer(r.Header.Get("Authorization")); key != "" {
			challenge += `, error="invalid_token", error_description="` + cryptointel.ErrorMessage(err) + `"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		writeError(w, http.StatusUnauthorized, cryptointel.ErrorMessage(err))
		return
	}
	s.logger.ErrorContext(r.Context(), "mcp authentication failed", "request_id", observe.RequestID(r.Context()), "error", err)
	status := http.StatusInternalServerError
	if code == cryptointel.EUNAVAILABLE || code == cryptointel.ETIMEOUT {
		status = http.StatusServiceUnavailable
	}
	writeError(w, status, cryptointel.ErrorMessage(err))
}

// requestInfo is what a tool call needs of the HTTP request that carried
// it: the SDK gives handlers its context's values, not its deadline or its
// cancellation, nor its host.
type requestInfo struct {
	ctx        context.Context
	host       string
	remoteAddr string
	tls        bool
	proto      string
	requestID  string
	// single marks a POST of one message (not a batch): a tool call in it
	// is the request's only one.
	single bool
}

type requestInfoKey struct{}

// callContext returns ctx bounded by the HTTP request's deadline and
// cancelled when the request ends (the client went away), and the
// request's info.
func callContext(ctx context.Context) (context.Context, *requestInfo, context.CancelFunc) {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	if info == nil {
		info = &requestInfo{ctx: context.Background()}
	}
	ctx, cancel := context.WithCancel(ctx)
	if d, ok := info.ctx.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		ctx, cancelDeadline = context.WithDeadline(ctx, d)
		prev := cancel
		cancel = func() { cancelDeadline(); prev() }
	}
	stop := context.AfterFunc(info.ctx, cancel)
	return ctx, info, func() { stop(); cancel() }
}

// keyPrefix is what the logs show of a key: the prefix api_keys keeps for
// support (cryptointel.APIKeyVisiblePrefix characters), never the key; "-"
// for a credential that is not a key, "" for none.
func keyPrefix(authorization string) string {
	scheme, key := splitBearer(authorization)
	switch {
	case scheme == "":
		return ""
	case len(key) > cryptointel.APIKeyVisiblePrefix:
		return key[:cryptointel.APIKeyVisiblePrefix]
	}
	return "-"
}

// splitBearer returns the scheme and the key of a Bearer Authorization.
func splitBearer(authorization string) (scheme, key string) {
	scheme, key = access.ParseAuthorization(authorization)
	if scheme != "bearer" {
		return scheme, ""
	}
	return scheme, key
}

// logCall writes the one log line of a tool call or resource read and
// records it in the metrics.
func (s *Server) logCall(ctx context.Context, info *requestInfo, kind, name, authorization, outcome string, bytes int, d time.Duration) {
	observe.MCPCall(kind, name, outcome, d)
	s.logLine(ctx, info, kind, name, authorization, outcome, bytes, d)
}

// logLine writes the log line of a tool call or resource read.
func (s *Server) logLine(ctx context.Context, info *requestInfo, kind, name, authorization, outcome string, bytes int, d time.Duration) {
	level := slog.LevelInfo
	if outcome == outcomeError {
		level = slog.LevelError
	}
	if !s.logger.Enabled(ctx, level) {
		return
	}
	s.logger.LogAttrs(ctx, level, "mcp "+kind,
		slog.String("request_id", info.requestID),
		slog.String(kind, name),
		slog.String("key_prefix", keyPrefix(authorization)),
		slog.String("outcome", outcome),
		slog.Int("bytes", bytes),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
	)
}

// Outcomes of a call, as logs and metrics name them.
const (
	outcomeOK              = "ok"
	outcomeInvalid         = "invalid_arguments"
	outcomePaymentRequired = "payment_required"
	outcomeRefused         = "refused"   // 401, 403 or 429: the access layer said no
	outcomeNotFound        = "not_found" // 404
	outcomeBadRequest      = "bad_request"
	outcomeError           = "error" // 5xx
)

// outcomeOf names the outcome of a route's status.
func outcomeOf(status int) string {
	switch {
	case status == http.StatusOK:
		return outcomeOK
	case status == http.StatusPaymentRequired:
		return outcomePaymentRequired
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusTooManyRequests:
		return outcomeRefused
	case status == http.StatusNotFound:
		return outcomeNotFound
	case status >= 500:
		return outcomeError
	}
	return outcomeBadRequest
}

// writeError writes the error body of msg (httperr.Body) with status.
func writeError(w http.ResponseWriter, status int, msg string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // messages quote "Bearer <API_KEY>"
	body := httperr.NewBody(httperr.CodeForStatus(status, msg), msg, w.Header().Get(observe.RequestIDHeader))
	enc.Encode(body) //nolint:errcheck // strings always encode
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes()) //nolint:errcheck
}
