// Package app wires the service together: configuration, the database, the
// access layer, the GraphQL core, the /v1 facade and the River workers. The
// CLI's serve command and the black-box tests both start the service through
// it.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/apidocs"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/graph"
	"github.com/cryptointel/cryptointel/live"
	"github.com/cryptointel/cryptointel/mcp"
	"github.com/cryptointel/cryptointel/oauth"
	"github.com/cryptointel/cryptointel/observe"
	"github.com/cryptointel/cryptointel/playground"
	"github.com/cryptointel/cryptointel/resolvers"
	"github.com/cryptointel/cryptointel/rest"
	"github.com/cryptointel/cryptointel/webhook"
)

// Version is the version of the running binary, which GET /healthz reports.
// The command sets it from the version stamped in at build time; it stays
// "dev" for a plain go build and in tests.
var Version = "dev"

// App is a running service.
type App struct {
	// Config is the configuration the app was built with.
	Config Config
	// DB is the database handle.
	DB *db.DB
	// Logger is the structured logger.
	Logger *slog.Logger
	// Handler is the root HTTP handler.
	Handler http.Handler
	// GraphQL runs GraphQL operations: it serves /graphql and executes the
	// /v1 facade's fixed operations in process (GraphQL.Execute).
	GraphQL *resolvers.Executor
	// Access is the access layer (keys, plans, rate window, credits,
	// payments) that wraps every /v1 route.
	Access *access.Service
	// Hub fans new events out to this process's live streams.
	Hub *live.Hub
	// MCP is the Model Context Protocol surface served at /mcp.
	MCP *mcp.Server

	v1      *rest.Router
	server  *http.Server
	closers []func(context.Context) error
	jobs    *jobRunner
}

// New opens the database and builds the handler tree. It does not migrate;
// call Migrate first where wanted (serve does).
func New(ctx context.Context, cfg Config) (*App, error) {
	cfg.setDefaults()
	cfg.FillDemoSecrets()
	if err := cfg.payment().Validate(); err != nil {
		return nil, fmt.Errorf("invalid payment settings: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	store, err := db.Open(ctx, cfg.DatabaseURL, db.Options{
		MaxConns: int32(cfg.DBMaxConns), ReadURLs: cfg.DatabaseReadURLs,
		MaxReplicaLag: cfg.DatabaseReadMaxLag, ReplicaCheckInterval: cfg.DatabaseReadCheckInterval, Logger: logger,
		StatementTimeout: cfg.statementTimeout(),
	})
	if err != nil {
		return nil, fmt.Errorf("error opening database: %w", err)
	}
	a := &App{Config: cfg, DB: store, Logger: logger}
	a.closers = append(a.closers, func(context.Context) error { return store.Close() })

	if err := a.initJobs(); err != nil {
		store.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	if err := a.mount(ctx, mux); err != nil {
		store.Close()
		return nil, err
	}
	a.Handler = withTimeLimits(cfg, observe.Middleware(logger, withCORS(cfg.CORSAllowedOrigins, mux)))
	if cfg.StatementCountHeader {
		a.Handler = countStatements(a.Handler, store.HasReadPools())
	}
	return a, nil
}

// mount registers every surface on mux.
func (a *App) mount(ctx context.Context, mux *http.ServeMux) error {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"status": "ok", "version": Version}) //nolint:errcheck
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := a.DB.Ping(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"status":"unavailable","error":"database unreachable"}`)) //nolint:errcheck
			return
		}
		if ok, err := a.DB.MigrationsCurrent(ctx); err != nil || !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"status":"unavailable","error":"migrations not current"}`)) //nolint:errcheck
			return
		}
		if !a.DB.HasReadPools() {
			w.Write([]byte(`{"status":"ready"}`)) //nolint:errcheck
			return
		}
		// Replicas are reported, never make the service unready: reads
		// fall back to the primary while none is up.
		json.NewEncoder(w).Encode(map[string]any{"status": "ready", "pools": readyPools(a.DB.PoolStates())}) //nolint:errcheck
	})
	a.Hub = live.New(live.Config{Store: a.DB, Buffer: a.Config.StreamBuffer, Logger: a.Logger})
	collectors := []prometheus.Collector{observe.NewPoolCollector(a.DB.Pool), observe.NewQueueCollector(a.DB, a.Logger), observe.NewStreamCollector(a.Hub.Stats)}
	if a.DB.HasReadPools() {
		collectors = append(collectors, observe.NewReadPoolsCollector(a.DB))
	}
	mux.Handle("GET /metrics", metricsGuard(a.Config.MetricsToken, observe.Handler(observe.NewRegistry(collectors...))))
	if a.Config.MetricsToken == "" {
		a.Logger.Warn("GET /metrics is open to anyone who reaches the port: set METRICS_TOKEN, or block /metrics at the load balancer")
	}
	mux.Handle("GET /playground", playground.Handler())
	mux.Handle("GET /playground/", playground.Handler())
	// The API reference, and / leading to it.
	mux.Handle("GET /docs", apidocs.Handler())
	mux.Handle("GET /docs/", apidocs.Handler())
	mux.Handle("GET /{$}", http.RedirectHandler(apidocs.Prefix, http.StatusFound))
	if a.Access == nil {
		a.Access = access.New(a.DB, access.Config{Logger: a.Logger, Payment: a.Config.payment(), OnRateLimited: observe.RateLimited, OnReadAhead: observe.ReadAhead,
			StreamSettleInterval: a.Config.StreamSettleInterval, StreamOrigins: a.Config.streamOrigins(), TicketSecret: a.Config.CursorSecret,
			MaxConnectionsPerKey: a.Config.StreamMaxConnectionsPerKey, MaxConnectionsPerAddress: a.Config.StreamMaxConnectionsPerAddress,
			MaxConnections: a.Config.maxStreamConnections(), AddressLimit: a.Config.InvalidKeyLimit, KeyShare: a.Config.DBKeyShare})
		// Runs before the database closes: the last settlement charges the
		// events streams pushed.
		a.closers = append(a.closers, func(context.Context) error { a.Access.Close(); return nil })
	}
	cost := &access.GraphQLCost{}
	a.GraphQL = resolvers.NewExecutor(resolvers.Config{Store: a.DB, CursorSecret: a.Config.CursorSecret, Logger: a.Logger,
		Extensions: []graphql.HandlerExtension{cost, observe.NewGraphQLMetrics()},
		Hub:        a.Hub,
		Streams: resolvers.StreamConfig{Heartbeat: a.Config.StreamHeartbeat, WriteTimeout: a.Config.StreamWriteTimeout,
			OperationTimeout: max(a.Config.RequestTimeout, 0), IdleTimeout: a.Config.StreamIdleTimeout}})
	mux.Handle("/graphql", a.Access.Wrap(access.GraphQLPolicy, a.GraphQL))
	// The /v1 facade: every route of the table behind the access layer, and
	// the OpenAPI document generated from the same table.
	v1, err := rest.New(rest.Config{
		Executor: a.GraphQL,
		Schema:   graph.NewExecutableSchema(graph.Config{}).Schema(),
		Wrap:     a.Access.Wrap,
		Routes: append(append(append(a.WebhookRoutes(), rest.UsageRoute(a.Access.Usage)), a.ExportRoutes()...),
			append(rest.KeyRoutes(&rest.KeyHandlers{DB: a.DB.Bun, MaxActiveKeys: a.Config.KeysMaxActive}),
				rest.TicketRoute(a.Access.MintTicket, func() time.Time { return a.DB.Now() }))...),
		Logger: a.Logger,
		Now:    func() time.Time { return a.DB.Now() },
		Cache:  rest.CacheConfig{TTL: a.Config.ResponseCacheTTL, Entries: a.Config.ResponseCacheEntries},
		Stream: rest.StreamConfig{
			Subscribe: func(ctx context.Context, query, op string, vars map[string]any) (rest.EventStream, *graphql.Response) {
				s, refused := a.GraphQL.Subscribe(ctx, query, op, vars)
				if s == nil {
					return nil, refused
				}
				return s, nil
			},
			Heartbeat:    a.Config.StreamHeartbeat,
			WriteTimeout: a.Config.StreamWriteTimeout,
		},
	})
	if err != nil {
		return fmt.Errorf("error building /v1 routes: %w", err)
	}
	a.v1 = v1
	// A selection of a field a /v1 route runs costs at least, on /graphql,
	// what that route costs: the route table owns those prices.
	cost.SetFieldFloors(v1.FieldFloors())
	mux.Handle("/v1/", v1)
	// Export downloads authenticate by their signed URL, not by API key, so
	// they are mounted outside the access layer (the more specific pattern
	// wins over /v1/).
	mux.Handle("GET /v1/export/files/{id}", a.ExportDownloadHandler())
	mux.Handle("GET /openapi.json", v1.OpenAPIHandler())
	// The MCP surface: its tools call the /v1 routes (and /graphql) of this
	// mux in process, behind the same access layer.
	// The OAuth authorization server of /mcp (package oauth): its
	// metadata, registration, consent page and token endpoints.
	metaAllow, err := webhook.ParseAllowList(a.Config.OAuthMetadataAllowCIDRs)
	if err != nil {
		return fmt.Errorf("error parsing the OAuth metadata allowlist: %w", err)
	}
	metaGuard := &webhook.Guard{Allow: metaAllow}
	authServer, err := oauth.New(oauth.Config{Store: a.DB, PublicURL: a.Config.PublicURL, Guard: metaGuard,
		MetadataClient:  metaGuard.NewHTTPClient(webhook.ClientOptions{Timeout: a.Config.oauthMetadataTimeout(), TLSConfig: a.Config.OAuthMetadataTLSConfig}),
		MetadataTimeout: a.Config.oauthMetadataTimeout(), AccessTokenTTL: a.Config.OAuthAccessTokenTTL,
		RegistrationsPerAddress: a.Config.OAuthRegistrationsPerMinute, AdmitAnonymous: a.Access.AdmitAnonymous, Logger: a.Logger})
	if err != nil {
		return err
	}
	authServer.Mount(mux)
	mcpServer, err := mcp.New(mcp.Config{
		API: mux, OpenAPI: v1.OpenAPI(), Authenticate: a.Access.Authenticate, Gate: a.Access.Gate,
		Count: a.Access.Count, AdmitAnonymous: a.Access.AdmitAnonymous, Screen: a.Access.Screen,
		SpentWindow: a.Access.SpentWindow, RateLimitMessage: a.Access.RateLimitMessage,
		AllowedOrigins: a.Config.MCPAllowedOrigins, Suggest: a.mcpSuggest(), Call: mcpCall(v1),
		Logger: a.Logger, Version: rest.OpenAPIVersion,
		OAuth: &mcp.OAuthConfig{ResourceMetadataURL: authServer.ResourceMetadataURL, Scope: oauth.ScopeData,
			TokenAllows: func(ctx context.Context, authorization, scope string) (bool, bool) {
				granted, isToken := a.Access.TokenScope(ctx, authorization)
				return isToken, oauth.HasScope(granted, scope)
			}},
	})
	if err != nil {
		return fmt.Errorf("error building the MCP server: %w", err)
	}
	a.MCP = mcpServer
	mux.Handle("/mcp", mcpServer)
	// Agents without a key that pay each call with x402.
	mux.Handle("/mcp/x402", mcpServer.X402Handler())
	// Operators ingest JSON Lines here; outside the API-key access layer,
	// guarded by ADMIN_TOKEN (404 when unset).
	mux.Handle("/admin/ingest", rest.NewAdminIngestHandler(a.DB, rest.AdminIngestOptions{Token: a.Config.AdminToken, MaxFailedTokens: a.Config.AdminMaxFailedTokens}))
	// Surfaces mount here: /graphql, /v1/, /openapi.json, /mcp, /admin/ingest …
	// and what none of them serves is a JSON 404 or 405.
	mux.Handle("/", unserved(mux))
	return nil
}

// V1Routes returns the full /v1 route table the app serves (graph routes,
// webhooks, usage, export), as documented in /openapi.json.
func (a *App) V1Routes() []rest.Route { return a.v1.Routes() }

// Migrate applies the database migrations.
func (a *App) Migrate(ctx context.Context) error { return a.DB.Migrate(ctx) }

// Serve serves HTTP on ln until ctx is done, then shuts down gracefully,
// draining in-flight requests for up to Config.ShutdownTimeout.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	if err := a.StartJobs(ctx); err != nil {
		return err
	}
	if err := a.startPprof(ctx); err != nil {
		return err
	}
	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	a.Hub.Start(hubCtx)
	defer func() {
		stopHub()
		a.Hub.Wait()
	}()
	a.server = &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- a.server.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), a.Config.ShutdownTimeout)
	defer cancel()
	a.closeStreams(shutdownCtx)
	if err := a.server.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("error shutting down server: %w", err)
	}
	return nil
}

// closeStreams ends every live stream with the shutting_down reason (its
// last result or event tells the client to reconnect and resume from its
// cursor), waits a moment for those to be written, then closes the
// WebSocket connections with 1012 Service Restart. Server.Shutdown does not
// wait for hijacked connections, and would wait for SSE streams until its
// timeout.
func (a *App) closeStreams(ctx context.Context) {
	a.Hub.Close(live.ErrShuttingDown)
	wait, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for a.GraphQL.ActiveStreams() > 0 && wait.Err() == nil {
		select {
		case <-wait.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The streams' last messages (complete) leave just after they end.
	select {
	case <-wait.Done():
	case <-time.After(100 * time.Millisecond):
	}
	a.GraphQL.CloseStreams()
}

// Close stops background work and closes the database, in reverse order of
// start.
func (a *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.Config.ShutdownTimeout)
	defer cancel()
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		if err := a.closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// readyPool is one pool in /readyz.
type readyPool struct {
	Name        string   `json:"name"`
	State       string   `json:"state"`
	LagSeconds  *float64 `json:"lagSeconds,omitempty"`
	DataVersion *int64   `json:"dataVersion,omitempty"`
	Statements  int64    `json:"statements"`
	Error       string   `json:"error,omitempty"`
}

// readyPools presents the pools' states in /readyz: the primary, then
// each replica with its replay lag (-1 when unknown) and the content
// version it has replayed.
func readyPools(states []db.PoolState) []readyPool {
	out := make([]readyPool, len(states))
	for i, p := range states {
		out[i] = readyPool{Name: p.Name, State: p.State, Statements: p.Statements, Error: p.Error}
		if p.Replica {
			lag, version := p.Lag.Seconds(), p.DataVersion
			out[i].LagSeconds, out[i].DataVersion = &lag, &version
		}
	}
	return out
}
