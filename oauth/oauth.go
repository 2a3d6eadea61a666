// Package oauth makes the service an OAuth 2.1 authorization server for
// its MCP endpoint, per the MCP authorization specification (2025-11-25):
// /mcp is the protected resource, described by RFC 9728 metadata; the
// server's own metadata is RFC 8414's; clients register either with a
// Client ID Metadata Document (an HTTPS URL as client_id, fetched through
// the webhook outbound guard) or dynamically (RFC 7591); a person
// authorizes a client on a consent page served by the binary by entering
// an API key of their account; the authorization code flow requires PKCE
// (S256) and an RFC 8707 resource naming this server's /mcp.
//
// Tokens are opaque random strings stored as SHA-256 hashes in
// PostgreSQL (migration 020), not JWTs: every use reads its grant and its
// key, so revoking a grant, or revoking, rotating or expiring its key,
// applies on every replica at once (the access layer remembers a token's
// answer for at most a second). An access token acts as its grant's API
// key (package access resolves it to the key); refresh tokens rotate on
// each use, and a spent one presented again revokes the whole grant.
//
// Errors follow RFC 6749 section 5.2 and RFC 7591 section 3.2.2: a JSON
// body {"error": code, "error_description": text}; the authorization
// endpoint redirects errors to the client once its client_id and
// redirect_uri are trusted, and shows them on a page before.
package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/observe"
	"github.com/cryptointel/cryptointel/webhook"
)

// Scopes a client may ask for.
const (
	// ScopeData calls tools and reads resources (they cost the account's
	// credits); it includes ScopeDiscovery.
	ScopeData = "data"
	// ScopeDiscovery connects and lists tools, resources and prompts.
	ScopeDiscovery = "discovery"
)

// Scopes are the scopes this server knows, as metadata lists them.
var Scopes = []string{ScopeData, ScopeDiscovery}

// scopeText describes each scope on the consent page.
var scopeText = map[string]string{
	ScopeData:      "Call the tools and read the resources of the MCP endpoint as your account (each call costs your plan's credits).",
	ScopeDiscovery: "Connect and list the tools, resources and prompts (free).",
}

// Paths of the endpoints.
const (
	PathAuthorize = "/oauth/authorize"
	PathToken     = "/oauth/token"
	PathRegister  = "/oauth/register"
	PathRevoke    = "/oauth/revoke"
	// PathResourceMetadata is RFC 9728's well-known URI; its path form
	// for /mcp appends "/mcp".
	PathResourceMetadata = "/.well-known/oauth-protected-resource"
	// PathServerMetadata is RFC 8414's well-known URI.
	PathServerMetadata = "/.well-known/oauth-authorization-server"
	// ResourcePath is the protected resource.
	ResourcePath = "/mcp"
)

// Token prefixes: access tokens are access.OAuthAccessTokenPrefix.
const (
	refreshTokenPrefix = "cir_"
	codePrefix         = "cic_"
	clientIDPrefix     = "client_"
)

// Config configures the authorization server.
type Config struct {
	// Store holds clients, grants, codes and tokens. Required.
	Store *db.DB
	// PublicURL is the service's public base URL (scheme and host): the
	// issuer, and the resource is PublicURL + "/mcp". Empty: the
	// request's scheme (X-Forwarded-Proto) and host.
	PublicURL string
	// Guard checks the addresses Client ID Metadata Documents are fetched
	// from (the webhook guard: public addresses only, unless its Allow
	// list says otherwise, for development and tests). Defaults to a
	// guard allowing public addresses only.
	Guard *webhook.Guard
	// MetadataClient fetches Client ID Metadata Documents. Defaults to
	// Guard.NewHTTPClient with MetadataTimeout.
	MetadataClient *http.Client
	// MetadataTimeout bounds one fetch of a metadata document. Defaults
	// to 5 seconds.
	MetadataTimeout time.Duration
	// MetadataCacheTTL is how long a fetched metadata document is used
	// before it is fetched again. Defaults to 10 minutes.
	MetadataCacheTTL time.Duration
	// AccessTokenTTL is an access token's lifetime. Defaults to 1 hour.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is a refresh token's lifetime. Defaults to 30 days.
	RefreshTokenTTL time.Duration
	// RegistrationsPerAddress caps dynamic registrations per client
	// address per minute (every replica together). Defaults to 10.
	RegistrationsPerAddress int
	// RegistrationsPerMinute caps dynamic registrations per minute in all.
	// Defaults to 300.
	RegistrationsPerMinute int
	// UnusedRegistrationTTL is how long a dynamically registered client
	// that no grant used is kept. Defaults to 24 hours.
	UnusedRegistrationTTL time.Duration
	// AdmitAnonymous counts a wrong API key entered on the consent page
	// against the client address's limit (access.Service.AdmitAnonymous).
	// Nil counts nothing.
	AdmitAnonymous func(addr string) error
	// Logger logs internal errors. Defaults to slog.Default().
	Logger *slog.Logger
}

// Bounds of what the server reads.
const (
	// MaxMetadataBytes bounds a Client ID Metadata Document.
	MaxMetadataBytes = 64 << 10
	// maxFormBytes bounds a form or registration body.
	maxFormBytes = 64 << 10
	// codeTTL is an authorization code's lifetime.
	codeTTL = 2 * time.Minute
	// requestTTL is how long a consent page may wait for its answer.
	requestTTL = 15 * time.Minute
	// maxRedirectURIs bounds a client's redirect URIs.
	maxRedirectURIs = 10
	// maxClientIDLength bounds a client_id (an URL one included).
	maxClientIDLength = 2048
)

// Server is the authorization server.
type Server struct {
	cfg    Config
	store  Store
	logger *slog.Logger
	client *http.Client

	fetchMu sync.Mutex
	fetches map[string]*fetchCall // metadata fetches in flight, by URL
}

// New returns the authorization server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("error building the OAuth server: Store is required")
	}
	if cfg.Guard == nil {
		cfg.Guard = &webhook.Guard{}
	}
	if cfg.MetadataTimeout <= 0 {
		cfg.MetadataTimeout = 5 * time.Second
	}
	if cfg.MetadataCacheTTL <= 0 {
		cfg.MetadataCacheTTL = 10 * time.Minute
	}
	if cfg.AccessTokenTTL <= 0 {
		cfg.AccessTokenTTL = time.Hour
	}
	if cfg.RefreshTokenTTL <= 0 {
		cfg.RefreshTokenTTL = 30 * 24 * time.Hour
	}
	if cfg.RegistrationsPerAddress == 0 {
		cfg.RegistrationsPerAddress = 10
	}
	if cfg.RegistrationsPerMinute == 0 {
		cfg.RegistrationsPerMinute = 300
	}
	if cfg.UnusedRegistrationTTL <= 0 {
		cfg.UnusedRegistrationTTL = 24 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	client := cfg.MetadataClient
	if client == nil {
		client = cfg.Guard.NewHTTPClient(webhook.ClientOptions{Timeout: cfg.MetadataTimeout})
	}
	return &Server{cfg: cfg, store: Store{cfg.Store}, logger: cfg.Logger, client: client, fetches: map[string]*fetchCall{}}, nil
}

// Mount registers the endpoints on mux.
func (s *Server) Mount(mux *http.ServeMux) {
	handle := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, observe.RequestIDs(h)) }
	handle("GET "+PathResourceMetadata, s.resourceMetadata)
	handle("GET "+PathResourceMetadata+ResourcePath, s.resourceMetadata)
	handle("GET "+PathServerMetadata, s.serverMetadata)
	handle("GET "+PathAuthorize, s.authorize)
	handle("POST "+PathAuthorize, s.consent)
	handle("POST "+PathToken, s.token)
	handle("POST "+PathRegister, s.register)
	handle("POST "+PathRevoke, s.revoke)
	handle("GET "+PathClients, s.listClients)
	handle("DELETE "+PathClients+"/{id}", s.revokeClient)
}

// BaseURL is the issuer: PublicURL, or the request's scheme and host.
func (s *Server) BaseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	return access.RequestOrigin(r)
}

// Resource is the protected resource's identifier: the base URL + /mcp.
func (s *Server) Resource(r *http.Request) string { return s.BaseURL(r) + ResourcePath }

// ResourceMetadataURL is the URL of the resource's RFC 9728 metadata
// (its path form), as the 401 challenge of /mcp names it.
func (s *Server) ResourceMetadataURL(r *http.Request) string {
	return s.BaseURL(r) + PathResourceMetadata + ResourcePath
}

func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.BaseURL(r)
	writeMetadata(w, map[string]any{
		"resource":                 base + ResourcePath,
		"authorization_servers":    []string{base},
		"scopes_supported":         Scopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "cryptointel MCP",
		"resource_documentation":   base + "/docs",
	})
}

func (s *Server) serverMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.BaseURL(r)
	writeMetadata(w, map[string]any{
		"issuer":                                         base,
		"authorization_endpoint":                         base + PathAuthorize,
		"token_endpoint":                                 base + PathToken,
		"registration_endpoint":                          base + PathRegister,
		"revocation_endpoint":                            base + PathRevoke,
		"scopes_supported":                               Scopes,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
		"service_documentation":                          base + "/docs",
	})
}

func writeMetadata(w http.ResponseWriter, v any) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"server_error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) //nolint:errcheck
}

// Error codes of RFC 6749 (5.2, 4.1.2.1), RFC 7591 (3.2.2), RFC 8707.
const (
	ErrInvalidRequest          = "invalid_request"
	ErrInvalidClient           = "invalid_client"
	ErrInvalidGrant            = "invalid_grant"
	ErrInvalidScope            = "invalid_scope"
	ErrInvalidTarget           = "invalid_target"
	ErrUnsupportedGrantType    = "unsupported_grant_type"
	ErrUnsupportedResponseType = "unsupported_response_type"
	ErrAccessDenied            = "access_denied"
	ErrInvalidClientMetadata   = "invalid_client_metadata"
	ErrInvalidRedirectURI      = "invalid_redirect_uri"
	ErrServerError             = "server_error"
)

// oauthError is an error answered in RFC 6749's shape.
type oauthError struct {
	Code        string
	Description string
	Status      int
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

func oerr(status int, code, format string, args ...any) *oauthError {
	return &oauthError{Code: code, Description: fmt.Sprintf(format, args...), Status: status}
}

// writeError answers err: an *oauthError as itself, anything else as a
// logged server_error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	oe, ok := err.(*oauthError)
	if !ok {
		s.logger.ErrorContext(r.Context(), "oauth internal error", "path", r.URL.Path, "error", err)
		oe = oerr(http.StatusInternalServerError, ErrServerError, "The authorization server could not answer; retry shortly.")
	}
	w.Header().Set("Cache-Control", "no-store")
	if oe.Code == ErrInvalidClient && oe.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_client"`)
	}
	writeJSON(w, oe.Status, map[string]string{"error": oe.Code, "error_description": oe.Description})
}

// random returns prefix and 32 random bytes, base64url.
func random(prefix string) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("oauth: crypto/rand failed: " + err.Error()) // never on supported platforms
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

func hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// s256 is PKCE's S256 transform of a verifier (RFC 7636 section 4.2).
func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// validVerifier reports whether v is a PKCE code verifier: 43 to 128
// unreserved characters.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, c := range v {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// parseScope checks a requested scope; empty is ScopeData.
func parseScope(scope string) (string, error) {
	fields := strings.Fields(scope)
	if len(fields) == 0 {
		return ScopeData, nil
	}
	var out []string
	for _, f := range fields {
		if !slices.Contains(Scopes, f) {
			return "", oerr(http.StatusBadRequest, ErrInvalidScope, "Unknown scope %q: this server knows %s.", truncate(f, 64), strings.Join(Scopes, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return strings.Join(out, " "), nil
}

// HasScope reports whether a granted scope string allows want (ScopeData
// includes ScopeDiscovery).
func HasScope(granted, want string) bool {
	fields := strings.Fields(granted)
	return slices.Contains(fields, want) || (want == ScopeDiscovery && slices.Contains(fields, ScopeData))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// clientAddress is the client address the access layer uses.
func clientAddress(r *http.Request) string { return access.ClientAddress(r) }
