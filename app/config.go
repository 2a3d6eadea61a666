package app

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/live"
	"github.com/cryptointel/cryptointel/resolvers"
	"github.com/cryptointel/cryptointel/rest"
)

// Config is every setting of the service in one place. Each field is filled
// from a flag or its environment variable by the CLI (see `cryptointel serve
// --help`), and listed in docs/operations/configuration.md.
type Config struct {
	// DatabaseURL is the PostgreSQL URL (env DATABASE_URL).
	DatabaseURL string
	// Addr is the listen address (env ADDR). Defaults to ":8080".
	Addr string
	// DBMaxConns is the database pool size (env DB_MAX_CONNS), of the
	// primary's pool and of each read pool. The primary also carries three
	// LISTEN connections outside its pool (the live hub's, the webhook
	// poller's, River's). Defaults to db.DefaultMaxConns (16).
	DBMaxConns int
	// DatabaseReadURLs are PostgreSQL URLs of streaming replicas of the
	// primary, comma-separated (env DATABASE_READ_URLS). Read-only work —
	// the /v1 feeds, search, entities, briefs and /graphql queries — runs on
	// a replica that is up, within DatabaseReadMaxLag and has replayed the
	// content version the request's metering statement read on the
	// primary; everything else, and every read when no replica qualifies,
	// runs on the primary. Defaults to none: everything on the primary.
	DatabaseReadURLs []string
	// DatabaseReadMaxLag is the replay lag beyond which a replica is taken
	// out of reads until it catches up (env DATABASE_READ_MAX_LAG).
	// Defaults to 5 seconds.
	DatabaseReadMaxLag time.Duration
	// DatabaseReadCheckInterval is how often each replica's state, lag and
	// replayed content version are checked (env
	// DATABASE_READ_CHECK_INTERVAL). Defaults to 500 milliseconds.
	DatabaseReadCheckInterval time.Duration
	// AdminToken guards POST /admin/ingest (env ADMIN_TOKEN); empty disables it.
	AdminToken string
	// CursorSecret keys the HMAC of pagination cursors (env CURSOR_SECRET):
	// a random value of at least 32 characters, the same on every replica.
	// serve refuses to start without it outside demo mode; left empty
	// elsewhere (tests), it is random for the process.
	CursorSecret string `json:"-"`
	// ShutdownTimeout bounds graceful shutdown (env SHUTDOWN_TIMEOUT).
	// Defaults to 20 seconds.
	ShutdownTimeout time.Duration
	// RequestTimeout is the time budget of one request (env
	// REQUEST_TIMEOUT): a deadline on its context from the moment it
	// arrives, covering access checks, GraphQL parsing, validation and
	// execution and every database statement; a request that runs out
	// answers 503 (code timeout). Exempt: export file downloads,
	// /admin/ingest, and the long-lived streams themselves — GET
	// /v1/stream, and WebSocket upgrades and graphql-sse requests to
	// /graphql — whose every operation (each query, each event a
	// subscription renders) gets this budget instead. No header exempts
	// any other request. Defaults to 30 seconds; a negative value disables
	// it.
	RequestTimeout time.Duration
	// DBStatementTimeout is PostgreSQL's statement_timeout on the server's
	// database connections (env DB_STATEMENT_TIMEOUT): a statement still
	// running after it is cancelled by the database itself, behind every
	// request's time budget. Migrations run without it. Defaults to 0,
	// which follows REQUEST_TIMEOUT (at least 1 second: the server's own
	// background work runs under it too); a negative value disables it.
	DBStatementTimeout time.Duration
	// BodyReadTimeout bounds how long a request's body may take to arrive
	// (env BODY_READ_TIMEOUT): a client that promises a body and stalls is
	// answered 408 and its connection closed. Defaults to 60 seconds; a
	// negative value disables it.
	BodyReadTimeout time.Duration
	// Logger is the structured logger. Defaults to slog.Default().
	Logger *slog.Logger `json:"-"`
	// WebhookTimeScale multiplies the webhook retry schedule (env
	// WEBHOOK_TIME_SCALE). Defaults to 1.0, the contract's schedule; tests
	// use e.g. 0.001.
	WebhookTimeScale float64
	// WebhookPollInterval is the period of the webhook event poller (env
	// WEBHOOK_POLL_INTERVAL); ingest notifications also wake it. Defaults to
	// jobs.DefaultWebhookPollInterval (60 seconds).
	WebhookPollInterval time.Duration
	// WebhookAllowCIDRs is a comma-separated list of CIDR prefixes webhooks
	// may target although they are not public, for development and tests,
	// e.g. "127.0.0.0/8,::1" (env WEBHOOK_ALLOW_CIDRS). Defaults to none:
	// loopback, private, link-local and other non-public addresses are
	// refused at registration and at connect time.
	WebhookAllowCIDRs string
	// WebhookCAFile is a PEM file of extra CA certificates trusted for
	// webhook deliveries besides the system roots, for development and tests
	// (env WEBHOOK_CA_FILE). Defaults to none.
	WebhookCAFile string
	// WebhookTLSConfig is the TLS configuration of webhook deliveries; tests
	// set one trusting their receiver. Defaults to the system roots.
	WebhookTLSConfig *tls.Config `json:"-"`
	// OAuthMetadataAllowCIDRs is a comma-separated list of CIDR prefixes
	// that Client ID Metadata Documents (OAuth client ids that are HTTPS
	// URLs) may be fetched from although they are not public, for
	// development and tests only, e.g. "127.0.0.0/8" (env
	// OAUTH_METADATA_ALLOW_CIDRS). Defaults to none: documents are fetched
	// through the same outbound guard as webhooks, from public addresses
	// only.
	OAuthMetadataAllowCIDRs string
	// OAuthMetadataTLSConfig is the TLS configuration of metadata document
	// fetches; tests set one trusting their server. Defaults to the
	// system roots.
	OAuthMetadataTLSConfig *tls.Config `json:"-"`
	// OAuthMetadataTimeout bounds the fetch of one Client ID Metadata
	// Document (env OAUTH_METADATA_TIMEOUT). Defaults to 5 seconds.
	OAuthMetadataTimeout time.Duration
	// OAuthAccessTokenTTL is the lifetime of an OAuth access token for
	// /mcp (env OAUTH_ACCESS_TOKEN_TTL); its refresh token rotates at each
	// use and lives 30 days. Defaults to 1 hour.
	OAuthAccessTokenTTL time.Duration
	// OAuthRegistrationsPerMinute caps the OAuth dynamic client
	// registrations one client address may make per minute, all replicas
	// together (env OAUTH_REGISTRATIONS_PER_MINUTE); an unused registration
	// expires after a day. Defaults to 10.
	OAuthRegistrationsPerMinute int
	// X402FacilitatorURL is the x402 facilitator base URL (env
	// X402_FACILITATOR_URL); with PaymentPayTo it enables x402 (v1 and v2)
	// and MPP payments on priced routes. Empty disables x402.
	X402FacilitatorURL string
	// MPPVerifierURL is the x402 facilitator that MPP payments are verified
	// and settled through when it is not X402FacilitatorURL (env
	// MPP_VERIFIER_URL); with PaymentPayTo alone it enables MPP without
	// x402. Empty uses X402FacilitatorURL.
	MPPVerifierURL string
	// MPPSecret keys MPP challenge ids (env MPP_SECRET): a random value of
	// at least 32 characters, the same on every replica. serve refuses to
	// start without it when payments are enabled, outside demo mode; left
	// empty elsewhere, it is random for the process.
	MPPSecret string `json:"-"`
	// MPPRealm is the realm of MPP challenges (env MPP_REALM). Defaults to
	// the host name of PublicURL, or of each request.
	MPPRealm string
	// PaymentMaxFailedPerMinute is how many refused payments (malformed,
	// forged, mismatched, expired, replayed) one client address, and one
	// payer, may present per minute (env PAYMENT_MAX_FAILED_PER_MINUTE);
	// past it their payments are refused 429 until the minute ends.
	// Defaults to 30; a negative value removes the throttle.
	PaymentMaxFailedPerMinute int
	// PaymentPayTo is the address receiving payments (env PAYMENT_PAY_TO).
	PaymentPayTo string
	// PaymentNetwork is the chain payments are made on (env
	// PAYMENT_NETWORK): an x402 network name (base, base-sepolia) or a
	// CAIP-2 id (eip155:8453, eip155:84532). Defaults to "base".
	PaymentNetwork string
	// PaymentAsset is the token contract, a 6-decimal token with EIP-3009
	// (env PAYMENT_ASSET). Defaults to USDC on PaymentNetwork.
	PaymentAsset string
	// PaymentAssetName is the token's EIP-712 domain name, which payments
	// are signed under (env PAYMENT_ASSET_NAME). Defaults to the known
	// name of USDC on the network ("USD Coin" on Base, "USDC" on Base
	// Sepolia); required for other tokens.
	PaymentAssetName string
	// PaymentAssetVersion is the token's EIP-712 domain version (env
	// PAYMENT_ASSET_VERSION). Defaults to "2" for USDC; required for other
	// tokens.
	PaymentAssetVersion string
	// PublicURL is the service's public base URL, naming paid resources
	// (env PUBLIC_URL). Defaults to the request's scheme and host.
	PublicURL string
	// ExportDir is the directory export files are written to when
	// ExportStorageURL is empty (env EXPORT_DIR). Defaults to
	// "cryptointel-exports" under the system temporary directory.
	ExportDir string
	// ExportStorageURL is where export files are stored, in gocloud.dev's
	// URL form (env EXPORT_STORAGE_URL): file:///a/directory, or any
	// S3-compatible store, e.g.
	// s3://exports?endpoint=http://127.0.0.1:8333&use_path_style=true&region=us-east-1
	// with credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	// Defaults to the local directory ExportDir.
	ExportStorageURL string
	// ExportDownloadRedirect answers a valid export download link with a
	// redirect to a short-lived presigned URL of the object store instead
	// of streaming the file through the service, when the store can sign
	// URLs (s3://) (env EXPORT_DOWNLOAD_REDIRECT). Clients must reach the
	// store's endpoint. Defaults to false.
	ExportDownloadRedirect bool
	// ExportLinkTTL is how long a completed export's download link works
	// before the job is expired and its file deleted (env EXPORT_LINK_TTL).
	// Defaults to 24 hours.
	ExportLinkTTL time.Duration
	// ExportStaleAfter is how long a running export may go without reporting
	// progress before its attempt is taken to belong to a killed worker and
	// is retried (env EXPORT_STALE_AFTER). Defaults to 2 minutes.
	ExportStaleAfter time.Duration
	// ExportURLSecret keys the HMAC signature of export download URLs (env
	// EXPORT_URL_SECRET): a random value of at least 32 characters, the same
	// on every replica. serve refuses to start without it outside demo mode;
	// left empty elsewhere (tests), it is random for the process.
	ExportURLSecret string `json:"-"`
	// ResponseCacheTTL is how long an identical /v1 graph read (same route,
	// parameters and plan, content unchanged) is answered from the response
	// cache (env RESPONSE_CACHE_TTL). Every request is still authenticated
	// and metered; any write to the content makes the next request compute
	// afresh, on every replica. Defaults to 1 second; a negative value such
	// as -1s disables the cache.
	ResponseCacheTTL time.Duration
	// ResponseCacheEntries bounds the responses the cache keeps (env
	// RESPONSE_CACHE_ENTRIES); bodies over 256 KiB are never kept. Defaults
	// to 256.
	ResponseCacheEntries int
	// StatementCountHeader sets X-Statement-Count, the SQL statements the
	// request ran, on every response when true (env
	// STATEMENT_COUNT_HEADER). For the load harness; defaults to false.
	StatementCountHeader bool
	// Demo lets serve start without CURSOR_SECRET, EXPORT_URL_SECRET and
	// MPP_SECRET, generating random ones for the process, for a local demo
	// such as make run (env DEMO). Cursors, export links and MPP challenges
	// then stop verifying when the process restarts and on other replicas.
	// It also lets webhooks target plain http:// receivers on loopback
	// (127.0.0.1, ::1, localhost), as `cryptointel webhooks listen`
	// registers, which it logs at start. Defaults to false: never use it in
	// production.
	Demo bool
	// MetricsToken, when set, is the bearer token GET /metrics requires
	// (env METRICS_TOKEN): a scrape without "Authorization: Bearer <token>"
	// is refused 401. Defaults to none: /metrics is open, and the server
	// logs a warning at start — set it, or block /metrics at the load
	// balancer, wherever the port is reachable by others.
	MetricsToken string `json:"-"`
	// PprofAddr serves net/http/pprof on this address, e.g. 127.0.0.1:6060
	// (env PPROF_ADDR). Defaults to empty: off. Use a loopback address.
	PprofAddr string
	// StreamAllowedOrigins are the hosts, besides the service's own origin,
	// whose browser pages may open live streams (GraphQL subscriptions and
	// /v1/stream), comma-separated host patterns such as
	// "dashboard.example.com,*.example.org:8443" (env
	// STREAM_ALLOWED_ORIGINS). Defaults to none: a stream request carrying
	// another Origin is refused with 403. Requests without Origin (not from
	// a browser) are not affected.
	StreamAllowedOrigins []string
	// MCPAllowedOrigins are the hosts, besides the service's own origin,
	// whose browser pages may call /mcp, comma-separated host patterns such
	// as "app.example.com,*.example.org:8443" (env MCP_ALLOWED_ORIGINS).
	// Defaults to none: an /mcp request carrying another Origin is refused
	// with 403, as the MCP transport asks against DNS rebinding; requests
	// without Origin (not from a browser) are not affected. On a server
	// listening on a loopback address, the Host of an /mcp request must be
	// localhost or a loopback address, or match one of these.
	MCPAllowedOrigins []string
	// CORSAllowedOrigins are the origins (scheme://host[:port], exactly as
	// a browser sends Origin, e.g. "https://dashboard.example.com") whose
	// pages may call /v1, /graphql and /v1/stream from a browser
	// (env CORS_ALLOWED_ORIGINS). Their preflight OPTIONS is answered 204,
	// free and without a key, and their responses carry
	// Access-Control-Allow-Origin and expose the rate-limit, credit and
	// request-id headers; their pages may also open streams (as with
	// STREAM_ALLOWED_ORIGINS), with a ticket for an EventSource.
	// Defaults to none: no cross-origin browser access.
	CORSAllowedOrigins []string
	// StreamBuffer is how many events one stream may have waiting before it
	// is closed as a slow consumer (env STREAM_BUFFER). Defaults to 2048.
	StreamBuffer int
	// StreamHeartbeat is how often an idle stream gets a keep-alive so
	// proxies keep it open: a WebSocket ping, an SSE comment (env
	// STREAM_HEARTBEAT). Defaults to 15 seconds.
	StreamHeartbeat time.Duration
	// StreamWriteTimeout bounds one write to a stream's connection; a client
	// that stops reading for longer is disconnected (env
	// STREAM_WRITE_TIMEOUT). Defaults to 30 seconds.
	StreamWriteTimeout time.Duration
	// StreamSettleInterval is how often the credits of events pushed to
	// streams are charged, in one statement per server (env
	// STREAM_SETTLE_INTERVAL). Defaults to 1 second.
	StreamSettleInterval time.Duration
	// StreamMaxConnectionsPerKey caps the streaming connections (WebSocket
	// connections and graphql-sse requests to /graphql, GET /v1/stream)
	// one API key holds open on one server (env
	// STREAM_MAX_CONNECTIONS_PER_KEY); one more is refused 429 before it
	// is upgraded. Defaults to 128, above every plan's open streams per
	// key; a negative value removes the cap.
	StreamMaxConnectionsPerKey int
	// StreamMaxConnectionsPerAddress caps the streaming connections one
	// client address holds open on one server (env
	// STREAM_MAX_CONNECTIONS_PER_ADDRESS); one more is refused 429 before
	// it is upgraded. Behind a reverse proxy every client has the proxy's
	// address: raise the cap or remove it there. Defaults to 256; a
	// negative value removes the cap.
	StreamMaxConnectionsPerAddress int
	// StreamMaxConnections caps one server's streaming connections in
	// total (env STREAM_MAX_CONNECTIONS); one more is refused 503 with
	// Retry-After. Defaults to 0: half the process's open-file limit, at
	// most 10,000, so that the other half stays free for ordinary
	// requests, database connections and files and the server answers at
	// its connection limit; a negative value removes the cap.
	StreamMaxConnections int
	// StreamIdleTimeout closes a WebSocket connection that has carried no
	// operation for this long, with code 1000 and reason "idle" (env
	// STREAM_IDLE_TIMEOUT). Defaults to 60 seconds; a negative value never
	// closes one.
	StreamIdleTimeout time.Duration
	// ExportMaxActiveJobs bounds the export jobs one account may have
	// requested or running at a time (env EXPORT_MAX_ACTIVE_JOBS); one more
	// is refused 409. Defaults to 3.
	ExportMaxActiveJobs int
	// ExportMaxBytesPerDay bounds the bytes one account's export jobs
	// created in a UTC day may write, whatever their outcome (env
	// EXPORT_MAX_BYTES_PER_DAY): once the day's bytes — failed jobs' and
	// retried attempts' included — reach it, new jobs are refused 429
	// until the next day, and a running job that takes the day past it
	// fails.
	// Defaults to 2 GiB (2147483648); a negative value removes the bound.
	ExportMaxBytesPerDay int64
	// AdminMaxFailedTokens is how many wrong tokens one client address may
	// send to /admin/ingest per minute (env ADMIN_MAX_FAILED_TOKENS); past
	// it the address's wrong tokens are refused 429 until the minute ends,
	// while the right token still gets through. Defaults to 10; a negative
	// value removes the throttle.
	AdminMaxFailedTokens int
	// KeysMaxActive caps the API keys one account may have active (not
	// revoked, not expired) at a time (env KEYS_MAX_ACTIVE): one more — a
	// key created, or a rotation with a grace period — is refused 409; the
	// keys commands read it too. Defaults to 10; a negative value removes
	// the cap.
	KeysMaxActive int
	// InvalidKeyLimit is how many requests without a valid key one client
	// address may make per minute (env INVALID_KEY_LIMIT): requests with
	// an unknown, revoked or expired key on every surface, and /mcp
	// discovery (initialize, lists, prompts, notifications) without a key
	// while pay-per-request is on. Past it the address is answered 429
	// with Retry-After, before its body is read, until the minute ends;
	// a key the server has already seen valid still passes. Behind a
	// reverse proxy every client has the proxy's address: raise it there.
	// Defaults to 60; a negative value removes the throttle.
	InvalidKeyLimit int
	// DBKeyShare caps the requests one API key (without a key: one client
	// address) runs at once on one server, streams aside, so that one
	// caller holds at most that many of the DB_MAX_CONNS database
	// connections (env DB_KEY_SHARE). More wait in a queue of four times
	// as many for at most 5 seconds, then are answered 429 with
	// Retry-After: 1. An MCP batch's calls count under its key. Defaults
	// to 0: half of DB_MAX_CONNS (at least 1); a negative value removes
	// the cap.
	DBKeyShare int
}

func (c *Config) setDefaults() {
	if c.Addr == "" {
		c.Addr = ":8080"
	}
	if c.DBMaxConns <= 0 {
		c.DBMaxConns = db.DefaultMaxConns
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 20 * time.Second
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.BodyReadTimeout == 0 {
		c.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if c.WebhookTimeScale <= 0 {
		c.WebhookTimeScale = 1
	}
	if c.ResponseCacheTTL == 0 {
		c.ResponseCacheTTL = rest.DefaultCacheTTL
	}
	if c.ResponseCacheEntries <= 0 {
		c.ResponseCacheEntries = rest.DefaultCacheEntries
	}
	if c.WebhookPollInterval <= 0 {
		c.WebhookPollInterval = jobs.DefaultWebhookPollInterval
	}
	if c.ExportDir == "" {
		c.ExportDir = filepath.Join(os.TempDir(), "cryptointel-exports")
	}
	if c.ExportLinkTTL <= 0 {
		c.ExportLinkTTL = jobs.DefaultExportLinkTTL
	}
	if c.ExportStaleAfter <= 0 {
		c.ExportStaleAfter = jobs.DefaultExportStaleAfter
	}
	if c.StreamBuffer <= 0 {
		c.StreamBuffer = live.DefaultBuffer
	}
	if c.StreamHeartbeat <= 0 {
		c.StreamHeartbeat = resolvers.DefaultStreamHeartbeat
	}
	if c.StreamWriteTimeout <= 0 {
		c.StreamWriteTimeout = resolvers.DefaultStreamWriteTimeout
	}
	if c.StreamSettleInterval <= 0 {
		c.StreamSettleInterval = access.DefaultStreamSettleInterval
	}
	if c.StreamMaxConnectionsPerKey == 0 {
		c.StreamMaxConnectionsPerKey = access.DefaultMaxConnectionsPerKey
	}
	if c.StreamMaxConnectionsPerAddress == 0 {
		c.StreamMaxConnectionsPerAddress = access.DefaultMaxConnectionsPerAddress
	}
	if c.StreamIdleTimeout == 0 {
		c.StreamIdleTimeout = resolvers.DefaultStreamIdleTimeout
	}
	if c.ExportMaxActiveJobs <= 0 {
		c.ExportMaxActiveJobs = rest.DefaultExportMaxActiveJobs
	}
	if c.ExportMaxBytesPerDay == 0 {
		c.ExportMaxBytesPerDay = rest.DefaultExportMaxBytesPerDay
	}
	if c.KeysMaxActive == 0 {
		c.KeysMaxActive = db.DefaultMaxActiveKeys
	}
	if c.AdminMaxFailedTokens == 0 {
		c.AdminMaxFailedTokens = rest.DefaultAdminMaxFailedTokens
	}
	if c.InvalidKeyLimit == 0 {
		c.InvalidKeyLimit = access.DefaultAddressLimit
	}
	if c.DBKeyShare == 0 {
		c.DBKeyShare = max(c.DBMaxConns/2, 1)
	}
}

// statementTimeout is PostgreSQL's statement_timeout for the server's
// connections: DBStatementTimeout, else the request budget (at least
// minStatementTimeout); 0 is none.
func (c *Config) statementTimeout() time.Duration {
	switch {
	case c.DBStatementTimeout > 0:
		return c.DBStatementTimeout
	case c.DBStatementTimeout < 0 || c.RequestTimeout < 0:
		return 0
	}
	return max(c.RequestTimeout, minStatementTimeout)
}

// minStatementTimeout is the least statement_timeout the request budget
// sets: the server's background work (River, the stream hub, settlement)
// runs under it too.
const minStatementTimeout = time.Second

// maxStreamConnections is the total cap of streaming connections:
// StreamMaxConnections, else half the open-file limit (at most 10,000);
// 0 is none.
func (c *Config) maxStreamConnections() int {
	switch {
	case c.StreamMaxConnections > 0:
		return c.StreamMaxConnections
	case c.StreamMaxConnections < 0:
		return 0
	}
	return defaultMaxStreamConnections(openFileLimit())
}

// defaultMaxStreamConnections is the total cap of streaming connections
// for an open-file limit: half of it, at most 10,000 (and at least 16).
func defaultMaxStreamConnections(openFiles uint64) int {
	if openFiles == 0 {
		return 10_000
	}
	return int(max(min(openFiles/2, 10_000), 16))
}

// Defaults of the request time limits.
const (
	// DefaultRequestTimeout is the default of Config.RequestTimeout.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultBodyReadTimeout is the default of Config.BodyReadTimeout.
	DefaultBodyReadTimeout = 60 * time.Second
)

// MinSecretLength is the shortest CURSOR_SECRET, EXPORT_URL_SECRET or
// MPP_SECRET serve accepts (openssl rand -hex 16 gives 32 characters).
const MinSecretLength = 32

// developmentSecrets are the fixed values earlier versions used when a
// secret was unset: published, so anyone could sign with them.
var developmentSecrets = map[string]bool{
	"cryptointel-development-cursor-secret": true,
	"cryptointel-development-export-secret": true,
}

// secret is one signing secret of the configuration.
type secret struct {
	env   string
	value *string
	// needed tells whether the running service uses it.
	needed bool
}

func (c *Config) secrets() []secret {
	return []secret{
		{"CURSOR_SECRET", &c.CursorSecret, true},
		{"EXPORT_URL_SECRET", &c.ExportURLSecret, true},
		{"MPP_SECRET", &c.MPPSecret, c.payment().Enabled()},
	}
}

// CheckSecrets returns an error naming every signing secret the service
// uses that is unset, shorter than MinSecretLength or a published
// development value: with such a secret anyone could forge cursors,
// export download links or payment challenges. serve calls it before
// starting, unless Demo is set.
func (c *Config) CheckSecrets() error {
	var problems []string
	for _, s := range c.secrets() {
		switch v := *s.value; {
		case !s.needed:
		case v == "":
			problems = append(problems, s.env+" is not set")
		case developmentSecrets[v]:
			problems = append(problems, s.env+" is a published development value")
		case len(v) < MinSecretLength:
			problems = append(problems, fmt.Sprintf("%s is shorter than %d characters", s.env, MinSecretLength))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("refusing to serve: %s. Set each to a random value of at least %d characters, the same on every replica "+
		"(for example `openssl rand -hex 32`), or run `cryptointel serve --demo` (DEMO=true) for a local demo with secrets generated for this process",
		strings.Join(problems, "; "), MinSecretLength)
}

// FillDemoSecrets sets every unset signing secret to a random value for
// this process and returns their environment variable names. New does the
// same for a Config used without serve (tests, embedding): a secret is
// never a fixed value.
func (c *Config) FillDemoSecrets() []string {
	var filled []string
	for _, s := range c.secrets() {
		if *s.value == "" {
			*s.value = randomSecret()
			filled = append(filled, s.env)
		}
	}
	return filled
}

// randomSecret returns 32 random bytes in hex.
func randomSecret() string {
	b := make([]byte, 32)
	rand.Read(b) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// payment is the access layer's pay-per-request configuration.
func (c *Config) payment() access.PaymentConfig {
	return access.PaymentConfig{
		FacilitatorURL: c.X402FacilitatorURL, MPPVerifierURL: c.MPPVerifierURL, MPPSecret: c.MPPSecret, MPPRealm: c.MPPRealm,
		PayTo: c.PaymentPayTo, Network: c.PaymentNetwork, Asset: c.PaymentAsset,
		AssetName: c.PaymentAssetName, AssetVersion: c.PaymentAssetVersion, PublicURL: c.PublicURL,
		MaxFailedPayments: c.PaymentMaxFailedPerMinute,
	}
}

// oauthMetadataTimeout is OAuthMetadataTimeout or its default.
func (c *Config) oauthMetadataTimeout() time.Duration {
	if c.OAuthMetadataTimeout <= 0 {
		return 5 * time.Second
	}
	return c.OAuthMetadataTimeout
}
