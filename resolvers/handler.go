package resolvers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/graph/jsonw"
	"github.com/cryptointel/cryptointel/graph/validation"
	"github.com/cryptointel/cryptointel/httperr"
	"github.com/cryptointel/cryptointel/live"
	"github.com/cryptointel/cryptointel/observe"
)

// Query limits. A 3-hop query (entity → relationships → relatedEntity →
// events → owners) with 25 items per level fits both.
const (
	// DefaultMaxDepth is the deepest selection an operation may have.
	DefaultMaxDepth = 15
	// DefaultMaxComplexity bounds an operation's complexity, in which every
	// list field with `first` multiplies its children by `first`.
	DefaultMaxComplexity = 50_000
	// MaxAliases bounds the aliased fields of an operation (fragments
	// expanded), so one request cannot repeat a field a thousand times.
	MaxAliases = 100
	// MaxStringBytes bounds every string argument and variable.
	MaxStringBytes = 2048
	// MaxTokens bounds the tokens the parser reads from one document.
	MaxTokens = 10_000
	// MaxFragments bounds the fragment definitions of one document.
	MaxFragments = validation.DefaultMaxFragments
	// MaxFields bounds the fields of an operation once its fragment spreads
	// are expanded (a fragment counts each time it is spread): no more
	// than a document may have tokens.
	MaxFields = MaxTokens
	// MaxBodyBytes bounds a POST /graphql body: the API's one body bound.
	MaxBodyBytes = cryptointel.MaxBodyBytes
	// MaxSchemaIntrospections bounds the __schema selections of an
	// operation (distinct response names): each answers the whole schema,
	// and one is all a client needs. access.IntrospectionSchemaCredits
	// prices it.
	MaxSchemaIntrospections = 1
)

// msgBodyTooLarge is the 413 message of a /graphql body over MaxBodyBytes:
// "request body too large (max 1 MB)".
var msgBodyTooLarge = cryptointel.MsgBodyTooLarge

// Error codes of refused operations. They are request errors: GraphQL over
// HTTP answers them 400 under application/graphql-response+json (and 422
// under application/json), like parse and validation errors.
const (
	codeDepthLimit      = "DEPTH_LIMIT_EXCEEDED"
	codeAliasLimit      = "ALIAS_LIMIT_EXCEEDED"
	codeComplexityLimit = "COMPLEXITY_LIMIT_EXCEEDED"
	codeInvalidInput    = "INVALID_INPUT"
	codeIntrospection   = "INTROSPECTION_LIMIT_EXCEEDED"
)

func init() {
	for _, code := range []string{codeDepthLimit, codeAliasLimit, codeComplexityLimit, codeInvalidInput, codeIntrospection, validation.CodeDocumentLimit} {
		errcode.RegisterErrorType(code, errcode.KindProtocol)
	}
}

// Config configures the Executor.
type Config struct {
	// Store is the database. Required.
	Store *db.DB
	// CursorSecret keys the HMAC of pagination cursors (app.Config's
	// CursorSecret, shared by every replica). Empty is a random secret for
	// the process, never a fixed one.
	CursorSecret string
	// Logger logs internal errors. Defaults to slog.Default().
	Logger *slog.Logger
	// MaxDepth is the depth limit. Defaults to DefaultMaxDepth.
	MaxDepth int
	// MaxComplexity is the complexity limit. Defaults to
	// DefaultMaxComplexity.
	MaxComplexity int
	// Access authorizes fields marked @access. Defaults to PlanAccess,
	// which reads the caller's plan from the context.
	Access AccessFunc
	// Extensions are extra gqlgen handler extensions (for example
	// access.GraphQLCost), added after the limits.
	Extensions []graphql.HandlerExtension
	// Hub feeds subscriptions; without one a subscription is refused as
	// unavailable.
	Hub *live.Hub
	// Streams configures the streaming transports.
	Streams StreamConfig
}

// StreamConfig configures the transports that carry subscriptions on
// /graphql: graphql-ws (WebSocket, graphql-transport-ws) and graphql-sse.
type StreamConfig struct {
	// Heartbeat is how often an idle stream gets a keep-alive: a ping the
	// client must answer on WebSocket (a connection silent for two
	// heartbeats is closed), a comment line on SSE. Defaults to 15 seconds.
	Heartbeat time.Duration
	// WriteTimeout bounds one write to a stream's connection; a client that
	// stops reading is disconnected after it. Defaults to 30 seconds.
	WriteTimeout time.Duration
	// OperationTimeout is the time budget of each operation a streaming
	// transport carries — a query sent on a WebSocket or as graphql-sse,
	// each event a subscription renders — since the connection itself has
	// none. Zero or negative: none (the app sets its request budget).
	OperationTimeout time.Duration
	// IdleTimeout closes a WebSocket connection that has carried no
	// operation for this long (code 1000, reason "idle"). Zero or
	// negative: never.
	IdleTimeout time.Duration
}

// Executor runs GraphQL operations against the graph: over HTTP at /graphql
// (it is an http.Handler) and in process for the /v1 facade (Run). Both
// share one executor with its parsed-document and plan caches and error
// presenter, and attach fresh loaders to every operation.
type Executor struct {
	exec         *executor.Executor
	schema       *graph.FastSchema
	docs         graphql.Cache[*ast.QueryDocument]
	presenter    graphql.ErrorPresenterFunc
	recover      graphql.RecoverFunc
	store        *db.DB
	transports   []graphql.Transport
	writeTimeout time.Duration
	opTimeout    time.Duration
	sockets      *socketSet
	root         *Resolver
}

// NewExecutor builds the executor for cfg.
func NewExecutor(cfg Config) *Executor {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.MaxComplexity <= 0 {
		cfg.MaxComplexity = DefaultMaxComplexity
	}
	if cfg.Access == nil {
		cfg.Access = PlanAccess
	}
	if cfg.Streams.Heartbeat <= 0 {
		cfg.Streams.Heartbeat = DefaultStreamHeartbeat
	}
	if cfg.Streams.WriteTimeout <= 0 {
		cfg.Streams.WriteTimeout = DefaultStreamWriteTimeout
	}
	if cfg.CursorSecret == "" {
		b := make([]byte, 32)
		rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails
		cfg.CursorSecret = string(b)
	}
	root := &Resolver{store: cfg.Store, cursors: NewCursorCodec(cfg.CursorSecret), logger: cfg.Logger, hub: cfg.Hub}
	gcfg := graph.Config{Resolvers: root}
	gcfg.Directives.Access = accessDirective(cfg.Access)
	setComplexity(&gcfg.Complexity)
	schema := graph.FastExecutableSchema(gcfg)
	exec := executor.New(schema)
	cache := admittedCache{lru.New[*ast.QueryDocument](1000)}
	exec.SetQueryCache(cache)
	exec.SetParserTokenLimit(MaxTokens)
	// Validation costs time linear in the document: the bounds are checked
	// before any rule walks it, and the field-merging rule is the linear one.
	exec.SetDefaultRulesFn(validation.Rules)
	exec.Use(documentBound{cache: cache, limits: validation.Limits{MaxFragments: MaxFragments, MaxFields: MaxFields}})
	presenter := errorPresenter(cfg.Logger)
	recoverFunc := func(ctx context.Context, v any) error {
		cfg.Logger.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(v))
		return errors.New("internal error: panic in resolver")
	}
	exec.SetErrorPresenter(presenter)
	exec.SetRecoverFunc(recoverFunc)
	exec.Use(extension.Introspection{})
	exec.Use(depthLimit{max: cfg.MaxDepth})
	exec.Use(&complexityLimit{max: cfg.MaxComplexity})
	// Refusals of the document come before the extensions that charge it.
	exec.Use(subscriptionTransport{})
	for _, ext := range cfg.Extensions {
		exec.Use(ext)
	}
	// Last of the mutators: a document enters the cache once its
	// operation passed every check above, its charge included.
	exec.Use(admitDocument{cache: cache})
	e := &Executor{
		exec:         exec,
		schema:       schema,
		docs:         cache,
		presenter:    presenter,
		recover:      recoverFunc,
		store:        cfg.Store,
		writeTimeout: cfg.Streams.WriteTimeout,
		opTimeout:    cfg.Streams.OperationTimeout,
		sockets:      newSocketSet(cfg.Streams.WriteTimeout, cfg.Streams.IdleTimeout),
		root:         root,
	}
	exec.Use(replicaRerun{e: e})
	// Innermost: it produces each result of a subscription, so the
	// extensions above (cost, metrics) see every one.
	exec.Use(streamsExtension{e: e})
	// The streaming transports take exactly the requests the access layer
	// meters as streams (access.IsWebSocketUpgrade, IsEventStreamRequest).
	e.transports = []graphql.Transport{
		websocketTransport{transport.Websocket{
			Implementation:   e.sockets,
			InitFunc:         websocketInit,
			InitTimeout:      10 * time.Second,
			PingPongInterval: cfg.Streams.Heartbeat,
		}},
		transport.Options{AllowedMethods: []string{"GET", "POST", "OPTIONS"}},
		getTransport{},
		sseTransport{transport.SSE{KeepAlivePingInterval: cfg.Streams.Heartbeat}},
		postTransport{},
	}
	return e
}

// NewHandler returns the /graphql handler: GraphQL over HTTP, POST
// (application/json) and GET (query parameters), answering
// application/graphql-response+json when the client accepts it and
// application/json otherwise.
func NewHandler(cfg Config) http.Handler { return NewExecutor(cfg) }

// SetFast turns the plan executor (graph.FastExecutableSchema) on or off;
// off, every operation runs on gqlgen's generated executor. The
// differential test compares the two.
func (e *Executor) SetFast(on bool) { e.schema.SetFast(on) }

// WithRequestLoaders returns ctx carrying fresh loaders unless it has some.
func (e *Executor) WithRequestLoaders(ctx context.Context) context.Context {
	if LoadersFrom(ctx) != nil {
		return ctx
	}
	return WithLoaders(ctx, NewLoaders(e.store))
}

// ServeHTTP serves GraphQL over HTTP.
func (e *Executor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			err := e.exec.PresentRecoveredError(r.Context(), v)
			gqlErr, _ := err.(*gqlerror.Error)
			b, _ := json.Marshal(&graphql.Response{Errors: gqlerror.List{gqlErr}})
			w.WriteHeader(http.StatusInternalServerError)
			w.Write(b) //nolint:errcheck
		}
	}()
	if r.ContentLength > MaxBodyBytes {
		writeRequestError(w, http.StatusRequestEntityTooLarge, msgBodyTooLarge, cryptointel.ETOOLARGE)
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		// Read the body (at most MaxBodyBytes) before the transport does, so that a
		// body that arrives too late is answered 408 rather than as a
		// GraphQL error of a request that ran.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			status, msg, code := http.StatusBadRequest, "could not read the request body", cryptointel.EINVALID
			switch {
			case errors.As(err, &mbe):
				status, msg, code = http.StatusRequestEntityTooLarge, msgBodyTooLarge, cryptointel.ETOOLARGE
			case cryptointel.ErrorCode(err) == cryptointel.EBODYTIMEOUT:
				status, msg, code = http.StatusRequestTimeout, cryptointel.ErrorMessage(err), cryptointel.EBODYTIMEOUT
			}
			writeRequestError(w, status, msg, code)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	ctx := r.Context()
	switch {
	case access.IsWebSocketUpgrade(r):
		if msg := badHandshake(r); msg != "" {
			writeRequestError(w, http.StatusBadRequest, msg, cryptointel.EINVALID)
			return
		}
		// One connection carries many operations: the streams extension
		// gives each its own loaders and time budget, and keeps the
		// connection's idle clock.
		ctx = withSocketActivity(withStreaming(ctx))
	case access.IsEventStreamRequest(r):
		// graphql-sse: each result gets its own loaders; a client that
		// stops reading is cut off after the write timeout.
		ctx = withStreaming(ctx)
		w = live.NewWriter(w, e.writeTimeout)
	default:
		ctx = e.WithRequestLoaders(ctx)
	}
	r = r.WithContext(graphql.StartOperationTrace(ctx))
	for _, t := range e.transports {
		if t.Supports(r) {
			t.Do(w, r, e.exec)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write([]byte(`{"errors":[{"message":"use POST with Content-Type application/json or GET with a query parameter","extensions":{"code":"invalid"}}]}`)) //nolint:errcheck
}

// msgBadHandshake refuses a WebSocket upgrade the WebSocket protocol
// does not allow (RFC 6455 section 4.2.1).
const msgBadHandshake = "Invalid WebSocket handshake: send GET with Connection: Upgrade, Upgrade: websocket, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key."

// badHandshake returns why upgrade request r is not a valid WebSocket
// handshake, or "".
func badHandshake(r *http.Request) string {
	upgrade := false
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			upgrade = upgrade || strings.EqualFold(strings.TrimSpace(t), "upgrade")
		}
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if r.Method != http.MethodGet || !upgrade || r.Header.Get("Sec-WebSocket-Version") != "13" || len(keys) != 1 {
		return msgBadHandshake
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return msgBadHandshake
	}
	return ""
}

// writeRequestError answers a request the executor cannot run, as a
// GraphQL error with extensions.code.
func writeRequestError(w http.ResponseWriter, status int, msg, code string) {
	b, _ := json.Marshal(map[string]any{"errors": []map[string]any{{"message": msg, "extensions": map[string]any{"code": code}}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck
}

// Execute runs one operation in process as /graphql would (parsed queries
// cached, limits, extensions and error presenter applied) with fresh
// loaders attached to ctx, and returns its response. It never returns nil.
func (e *Executor) Execute(ctx context.Context, query string, operationName string, variables map[string]any) *graphql.Response {
	ctx = graphql.StartOperationTrace(e.WithRequestLoaders(ctx))
	params := &graphql.RawParams{Query: query, OperationName: operationName, Variables: variables}
	now := graphql.Now()
	params.ReadTime = graphql.TraceTiming{Start: now, End: now}
	opCtx, errs := e.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		return e.exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
	}
	handler, ctx := e.exec.DispatchOperation(ctx, opCtx)
	resp := handler(ctx)
	if resp == nil {
		resp = &graphql.Response{Errors: gqlerror.List{gqlerror.Errorf("operation produced no response")}}
	}
	return resp
}

// Run runs a surface's fixed query operation in process — the /v1
// facade's — writing its data into w (graph.FastSchema.Run: HTML-escaped
// when w.HTML, marked when w.Marking), with fresh loaders attached to ctx.
// variables are Go values of the variables' types as the surface parsed
// them (int, string, bool, time.Time, []int, []string), not a JSON
// document's, and reach the resolvers without a round trip through JSON.
// The document is parsed and validated once (the cache /graphql uses) and
// planned once; the limits and extensions of /graphql (depth, aliases,
// complexity, cost, metrics) are not applied: a surface's operations are
// fixed and priced by the surface. It returns the operation's errors,
// presented as /graphql presents them. An operation that failed while a
// replica failed under it runs again, on the primary.
func (e *Executor) Run(ctx context.Context, query, operationName string, variables map[string]any, w *jsonw.Writer) gqlerror.List {
	if err := ctx.Err(); err != nil {
		ge := gqlerror.Errorf("%s", cryptointel.ErrorMessage(err))
		setCode(ge, cryptointel.ETIMEOUT)
		return gqlerror.List{ge}
	}
	doc, errs := e.document(ctx, query)
	if errs != nil {
		return errs
	}
	op := doc.Operations.ForName(operationName)
	if op == nil {
		return gqlerror.List{gqlerror.Errorf("operation %s not found", operationName)}
	}
	vars, err := validator.VariableValues(e.schema.Schema(), op, variables)
	if err != nil {
		return gqlerror.List{gqlerror.WrapIfUnwrapped(err)}
	}
	opCtx := &graphql.OperationContext{
		RawQuery:               query,
		OperationName:          operationName,
		Doc:                    doc,
		Operation:              op,
		Variables:              vars,
		DisableIntrospection:   true,
		RecoverFunc:            e.recover,
		ResolverMiddleware:     func(ctx context.Context, next graphql.Resolver) (any, error) { return next(ctx) },
		RootResolverMiddleware: func(ctx context.Context, next graphql.RootResolver) graphql.Marshaler { return next(ctx) },
	}
	b, marks, spans := len(w.B), len(w.Marks), len(w.Spans)
	errs = e.run(ctx, opCtx, w)
	if len(errs) > 0 && db.ReplicaFailed(ctx) && ctx.Err() == nil {
		// A replica failed under the operation, maybe after a result's
		// rows had begun (stopped while it streamed), which its reader
		// cannot take back: the operation runs again from the start, once,
		// now on the primary (the rest of the request reads it), with fresh
		// loaders, so the client gets its data rather than a 503 for the
		// replica's fault. Nothing was written to the client yet.
		w.B, w.Marks, w.Spans = w.B[:b], w.Marks[:marks], w.Spans[:spans]
		errs = e.run(WithLoaders(ctx, NewLoaders(e.store)), opCtx, w)
	}
	return errs
}

// run runs opCtx's operation into w once, with ctx's loaders or fresh ones
// and a response context of its own, and returns its errors.
func (e *Executor) run(ctx context.Context, opCtx *graphql.OperationContext, w *jsonw.Writer) gqlerror.List {
	ctx = graphql.WithOperationContext(e.WithRequestLoaders(ctx), opCtx)
	ctx = graphql.WithResponseContext(ctx, e.presenter, e.recover)
	e.schema.Run(ctx, w)
	return graphql.GetErrors(ctx)
}

// document returns query parsed and validated, from the cache /graphql
// fills when it holds it.
func (e *Executor) document(ctx context.Context, query string) (*ast.QueryDocument, gqlerror.List) {
	if doc, ok := e.docs.Get(ctx, query); ok {
		return doc, nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, MaxTokens)
	if err != nil {
		return nil, gqlerror.List{gqlerror.WrapIfUnwrapped(err)}
	}
	if errs := validator.ValidateWithRules(e.schema.Schema(), doc, validation.Rules()); len(errs) > 0 {
		return nil, errs
	}
	e.docs.Add(ctx, query, doc)
	return doc, nil
}

// errorPresenter maps *cryptointel.Error to its message with extensions.code set to
// its code; GraphQL-level errors (syntax, validation, limits) keep their
// message; any other error is logged and shown as a generic internal error.
func errorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var dbErr *cryptointel.Error
		if errors.As(err, &dbErr) {
			gqlErr.Message = dbErr.Message
			gqlErr.Err = nil
			setCode(gqlErr, dbErr.Code)
			return gqlErr
		}
		if gqlErr.Err == nil {
			// A GraphQL error of the executor itself: parse, validation,
			// depth or complexity.
			if gqlErr.Extensions == nil || gqlErr.Extensions["code"] == nil {
				setCode(gqlErr, cryptointel.EINVALID)
			}
			return gqlErr
		}
		code := cryptointel.ErrorCode(gqlErr.Err)
		// A statement cancelled because its request ended (its client went
		// away, or a read run ahead was dropped: access/readahead.go) is
		// not the service's error.
		if code == cryptointel.EINTERNAL && (ctx.Err() == nil || !errors.Is(gqlErr.Err, ctx.Err())) {
			logger.ErrorContext(ctx, "graphql internal error", "request_id", observe.RequestID(ctx),
				"path", gqlErr.Path.String(), "error", gqlErr.Err)
		}
		gqlErr.Message = cryptointel.ErrorMessage(gqlErr.Err)
		gqlErr.Err = nil
		setCode(gqlErr, code)
		return gqlErr
	}
}

func setCode(e *gqlerror.Error, code string) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
	if slices.Contains(httperr.Codes(), code) {
		e.Extensions["docUrl"] = httperr.DocURL(code)
	}
}

// depthLimit refuses operations nested deeper than max.
type depthLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = depthLimit{}

// ExtensionName names the extension.
func (depthLimit) ExtensionName() string { return "DepthLimit" }

// Validate accepts any schema.
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext computes the operation's depth (fragments
// expanded) and refuses it when above the limit.
func (d depthLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	depth := validation.Depth(opCtx.Operation, opCtx.Doc.Fragments)
	if depth > d.max {
		err := gqlerror.Errorf("operation has depth %d, which exceeds the limit of %d", depth, d.max)
		errcode.Set(err, codeDepthLimit)
		return err
	}
	if n := schemaSelections(opCtx.Operation.SelectionSet, map[*ast.FragmentDefinition]bool{}, map[string]bool{}); n > MaxSchemaIntrospections {
		err := gqlerror.Errorf("operation selects __schema %d times, which exceeds the limit of %d", n, MaxSchemaIntrospections)
		errcode.Set(err, codeIntrospection)
		return err
	}
	w := &opWalk{frags: opCtx.Doc.Fragments, memo: map[string]int{}, visiting: map[string]bool{}}
	if n := w.aliases(opCtx.Operation.SelectionSet); n > MaxAliases {
		err := gqlerror.Errorf("operation has %d aliased fields, which exceeds the limit of %d", n, MaxAliases)
		errcode.Set(err, codeAliasLimit)
		return err
	}
	if w.badString != "" {
		return invalidInput(w.badString)
	}
	for _, v := range opCtx.Variables {
		if msg := checkStrings(v); msg != "" {
			return invalidInput(msg)
		}
	}
	return nil
}

// schemaSelections counts the distinct response names under which set
// selects __schema at the root (root fragments expanded): selections with
// one name are merged and answered once.
func schemaSelections(set ast.SelectionSet, visiting map[*ast.FragmentDefinition]bool, names map[string]bool) int {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" {
				names[s.Alias] = true
			}
		case *ast.InlineFragment:
			schemaSelections(s.SelectionSet, visiting, names)
		case *ast.FragmentSpread:
			if f := s.Definition; f != nil && !visiting[f] {
				visiting[f] = true
				schemaSelections(f.SelectionSet, visiting, names)
				delete(visiting, f)
			}
		}
	}
	return len(names)
}

func invalidInput(msg string) *gqlerror.Error {
	err := gqlerror.Errorf("%s", msg)
	errcode.Set(err, codeInvalidInput)
	return err
}

// opWalk counts the aliased fields of an operation, each fragment counted
// once per spread through a memo (so nested spreads cannot blow the walk
// up), and records the first string literal argument that is too long or
// holds a NUL byte.
type opWalk struct {
	frags     ast.FragmentDefinitionList
	memo      map[string]int
	visiting  map[string]bool
	badString string
}

func (w *opWalk) aliases(set ast.SelectionSet) int {
	n := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Alias != "" && s.Alias != s.Name {
				n++
			}
			for _, arg := range s.Arguments {
				w.checkValue(arg.Value)
			}
			n += w.aliases(s.SelectionSet)
		case *ast.InlineFragment:
			n += w.aliases(s.SelectionSet)
		case *ast.FragmentSpread:
			if c, ok := w.memo[s.Name]; ok {
				n += c
				continue
			}
			f := w.frags.ForName(s.Name)
			if f == nil || w.visiting[s.Name] {
				continue
			}
			w.visiting[s.Name] = true
			c := w.aliases(f.SelectionSet)
			delete(w.visiting, s.Name)
			w.memo[s.Name] = c
			n += c
		}
		if n > MaxAliases {
			return n // refused anyway; stop counting
		}
	}
	return n
}

func (w *opWalk) checkValue(v *ast.Value) {
	if v == nil || w.badString != "" {
		return
	}
	switch v.Kind {
	case ast.StringValue, ast.BlockValue:
		w.badString = checkStrings(v.Raw)
	case ast.ListValue, ast.ObjectValue:
		for _, c := range v.Children {
			w.checkValue(c.Value)
		}
	}
}

// checkStrings returns why a string in v (a variable's value) is refused,
// or "" when none is.
func checkStrings(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > MaxStringBytes {
			return fmt.Sprintf("string arguments must be at most %d bytes", MaxStringBytes)
		}
		if strings.IndexByte(x, 0) >= 0 {
			return "string arguments must not contain NUL bytes"
		}
	case []any:
		for _, c := range x {
			if msg := checkStrings(c); msg != "" {
				return msg
			}
		}
	case map[string]any:
		for _, c := range x {
			if msg := checkStrings(c); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// documentBound checks a document's bounds (validation.Bound) before the
// executor parses and validates it, so that no validation rule ever walks a
// document whose fragments multiply it. A document in the parsed-query
// cache passed them already.
type documentBound struct {
	cache  graphql.Cache[*ast.QueryDocument]
	limits validation.Limits
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentBound{}

// ExtensionName names the extension.
func (documentBound) ExtensionName() string { return "DocumentBound" }

// Validate accepts any schema.
func (documentBound) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters refuses a request whose time budget has run
// out, then parses the document (the executor reports parse errors itself)
// and refuses it when it exceeds a bound.
func (b documentBound) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	// A request out of time budget is not parsed or validated.
	if ctx.Err() != nil {
		err := gqlerror.Errorf("%s", cryptointel.ErrorMessage(ctx.Err()))
		errcode.Set(err, cryptointel.ETIMEOUT)
		return err
	}
	if _, ok := b.cache.Get(ctx, params.Query); ok {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, MaxTokens)
	if err != nil {
		return nil
	}
	return validation.Bound(doc, b.limits)
}

// complexityLimit computes an operation's complexity (validation.Complexity:
// gqlgen's measure, each fragment measured once), records it where gqlgen's
// ComplexityLimit does (access.GraphQLCost and the metrics read it there)
// and refuses the operation above max.
type complexityLimit struct {
	max int
	es  graphql.ExecutableSchema
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = (*complexityLimit)(nil)

// ExtensionName names the extension.
func (*complexityLimit) ExtensionName() string { return "ComplexityLimit" }

// Validate keeps the schema.
func (c *complexityLimit) Validate(es graphql.ExecutableSchema) error {
	c.es = es
	return nil
}

// MutateOperationContext computes the complexity and refuses the operation
// when it is above the limit.
func (c *complexityLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	n := validation.Complexity(ctx, c.es, opCtx.Operation, opCtx.Variables)
	opCtx.Stats.SetExtension(ComplexityStatsKey, &extension.ComplexityStats{Complexity: n, ComplexityLimit: c.max})
	if n > c.max {
		err := gqlerror.Errorf("operation has complexity %d, which exceeds the limit of %d", n, c.max)
		errcode.Set(err, codeComplexityLimit)
		return err
	}
	return nil
}

// admittedCache is the parsed-document cache. A document parsed for an
// operation is kept only once the operation was admitted (admitDocument:
// every limit passed, the key charged), and only when it is at most
// graph.MaxCachedQueryBytes: a refused request, or a large document, is
// forgotten once answered, so the cache holds at most its entries times
// that bound.
type admittedCache struct {
	lru graphql.Cache[*ast.QueryDocument]
}

// pendingDocument is the operation stats key of a document parsed for the
// operation, not yet in the cache.
const pendingDocument = "PendingDocument"

// Get implements graphql.Cache.
func (c admittedCache) Get(ctx context.Context, key string) (*ast.QueryDocument, bool) {
	return c.lru.Get(ctx, key)
}

// Add implements graphql.Cache: for an operation, it waits for
// admitDocument.
func (c admittedCache) Add(ctx context.Context, key string, doc *ast.QueryDocument) {
	if len(key) > graph.MaxCachedQueryBytes {
		return
	}
	if graphql.HasOperationContext(ctx) {
		graphql.GetOperationContext(ctx).Stats.SetExtension(pendingDocument, doc)
		return
	}
	c.lru.Add(ctx, key, doc)
}

// admitDocument puts an admitted operation's document in the cache.
type admitDocument struct{ cache admittedCache }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = admitDocument{}

// ExtensionName names the extension.
func (admitDocument) ExtensionName() string { return "AdmitDocument" }

// Validate accepts any schema.
func (admitDocument) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext caches the document of an operation every check
// admitted.
func (a admitDocument) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if doc, ok := opCtx.Stats.GetExtension(pendingDocument).(*ast.QueryDocument); ok && doc != nil {
		a.cache.lru.Add(ctx, opCtx.RawQuery, doc)
		opCtx.Stats.SetExtension(pendingDocument, nil)
	}
	return nil
}

// ComplexityStatsKey is the operation stats key under which the complexity
// is recorded (*extension.ComplexityStats), the key gqlgen's own
// ComplexityLimit uses.
const ComplexityStatsKey = "ComplexityLimit"
