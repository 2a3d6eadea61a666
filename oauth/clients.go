package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/webhook"
)

// clientMetadata is the part of RFC 7591 client metadata (and of a Client
// ID Metadata Document) this server uses.
type clientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// name is what the consent page calls the client.
func (c *clientMetadata) name() string {
	if c.ClientName != "" {
		return truncate(c.ClientName, 100)
	}
	return truncate(c.ClientID, 100)
}

// check validates metadata as registration (RFC 7591 section 2) and
// metadata documents need it.
func (c *clientMetadata) check() error {
	if len(c.RedirectURIs) == 0 {
		return oerr(http.StatusBadRequest, ErrInvalidRedirectURI, "redirect_uris is required: at least one redirect URI.")
	}
	if len(c.RedirectURIs) > maxRedirectURIs {
		return oerr(http.StatusBadRequest, ErrInvalidRedirectURI, "At most %d redirect_uris.", maxRedirectURIs)
	}
	for _, u := range c.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return err
		}
	}
	if m := c.TokenEndpointAuthMethod; m != "" && m != "none" {
		return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "token_endpoint_auth_method %q is not supported: this server has public clients only (none).", truncate(m, 64))
	}
	for _, g := range c.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "grant_types: %q is not supported (authorization_code, refresh_token).", truncate(g, 64))
		}
	}
	for _, t := range c.ResponseTypes {
		if t != "code" {
			return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "response_types: %q is not supported (code).", truncate(t, 64))
		}
	}
	if len(c.ClientName) > 200 {
		return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "client_name is longer than 200 characters.")
	}
	if c.Scope != "" {
		if _, err := parseScope(c.Scope); err != nil {
			return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "scope: %s", err.(*oauthError).Description)
		}
	}
	return nil
}

// checkRedirectURI accepts an absolute URI without fragment: https, http
// on a loopback host (RFC 8252 section 7.3), or a private-use scheme with
// a dot (RFC 8252 section 7.1, e.g. com.example.app:/cb) or a native
// app's own scheme (cursor://, vscode://).
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || len(raw) > 2048:
		return oerr(http.StatusBadRequest, ErrInvalidRedirectURI, "Redirect URI %q is not an absolute URI.", truncate(raw, 200))
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return oerr(http.StatusBadRequest, ErrInvalidRedirectURI, "Redirect URI %q has a fragment.", truncate(raw, 200))
	case u.Scheme == "https":
		if u.Host == "" {
			return oerr(http.StatusBadRequest, ErrInvalidRedirectURI, "Redirect URI %q has no host.", truncate(raw, 200))
		}
	case u.Scheme == "http":
		if !loopbackHost(u.Hostname()) {
			return oerr(http.StatusBadRequest, ErrInvalidRedirectURI, "Redirect URI %q uses http on a host that is not loopback: use https.", truncate(raw, 200))
		}
	case u.Scheme == "javascript" || u.Scheme == "data" || u.Scheme == "file" || u.Scheme == "vbscript":
		return oerr(http.StatusBadRequest, ErrInvalidRedirectURI, "Redirect URI scheme %q is not allowed.", u.Scheme)
	}
	return nil
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// isURLClientID reports whether a client_id names a metadata document.
func isURLClientID(id string) bool { return strings.HasPrefix(id, "https://") }

// lookupClient returns client id's metadata: a registered client's, or a
// Client ID Metadata Document's (cached, else fetched).
func (s *Server) lookupClient(ctx context.Context, id string) (*clientMetadata, error) {
	if id == "" {
		return nil, oerr(http.StatusBadRequest, ErrInvalidRequest, "client_id is required.")
	}
	if len(id) > maxClientIDLength {
		return nil, oerr(http.StatusUnauthorized, ErrInvalidClient, "client_id is longer than %d characters.", maxClientIDLength)
	}
	row, err := s.store.OAuthClient(ctx, id)
	switch {
	case err == nil && (row.Kind == "registered" || time.Since(row.FetchedAt) < s.cfg.MetadataCacheTTL):
		var m clientMetadata
		if err := json.Unmarshal(row.Metadata, &m); err != nil {
			return nil, fmt.Errorf("error decoding stored client metadata: %w", err)
		}
		m.ClientID = id
		return &m, nil
	case err != nil && !errors.Is(err, db.ErrOAuthNotFound):
		return nil, err
	}
	if !isURLClientID(id) {
		return nil, oerr(http.StatusUnauthorized, ErrInvalidClient, "Unknown client_id: register the client (%s) or use the URL of its metadata document as client_id.", PathRegister)
	}
	return s.fetchMetadata(ctx, id)
}

// fetchCall is one metadata fetch, shared by the requests that wait on
// it.
type fetchCall struct {
	done chan struct{}
	m    *clientMetadata
	err  error
}

// fetchMetadata fetches, checks and caches the Client ID Metadata
// Document at id; concurrent lookups of one URL share one fetch.
func (s *Server) fetchMetadata(ctx context.Context, id string) (*clientMetadata, error) {
	s.fetchMu.Lock()
	if c, ok := s.fetches[id]; ok {
		s.fetchMu.Unlock()
		select {
		case <-c.done:
			return c.m, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &fetchCall{done: make(chan struct{})}
	s.fetches[id] = c
	s.fetchMu.Unlock()
	c.m, c.err = s.doFetch(context.WithoutCancel(ctx), id)
	s.fetchMu.Lock()
	delete(s.fetches, id)
	s.fetchMu.Unlock()
	close(c.done)
	return c.m, c.err
}

func metadataError(format string, args ...any) *oauthError {
	return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, format, args...)
}

func (s *Server) doFetch(ctx context.Context, id string) (*clientMetadata, error) {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.User != nil || u.Fragment != "" ||
		strings.Contains(u.Path, "/./") || strings.Contains(u.Path, "/../") {
		return nil, metadataError("client_id %q is not a valid metadata document URL: https, with a path, without credentials or fragment.", truncate(id, 200))
	}
	if err := s.cfg.Guard.CheckURL(ctx, id); err != nil {
		return nil, metadataError("The client's metadata document cannot be fetched: %v.", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.MetadataTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, metadataError("client_id %q is not a valid URL.", truncate(id, 200))
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		if errors.Is(err, webhook.ErrNotPublic) {
			return nil, metadataError("The client's metadata document cannot be fetched: %v.", webhook.ErrNotPublic)
		}
		if ctx.Err() != nil || isTimeout(err) {
			return nil, metadataError("The client's metadata document did not arrive within %s.", s.cfg.MetadataTimeout)
		}
		return nil, metadataError("The client's metadata document could not be fetched.")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, metadataError("The client's metadata document answered HTTP %d.", resp.StatusCode)
	}
	if resp.ContentLength > MaxMetadataBytes {
		return nil, metadataError("The client's metadata document is larger than %d KB.", MaxMetadataBytes>>10)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxMetadataBytes+1))
	switch {
	case err != nil && (ctx.Err() != nil || isTimeout(err)):
		return nil, metadataError("The client's metadata document did not arrive within %s.", s.cfg.MetadataTimeout)
	case err != nil:
		return nil, metadataError("The client's metadata document could not be read.")
	case len(body) > MaxMetadataBytes:
		return nil, metadataError("The client's metadata document is larger than %d KB.", MaxMetadataBytes>>10)
	}
	var m clientMetadata
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		return nil, metadataError("The client's metadata document is not a JSON object of client metadata.")
	}
	if m.ClientID != id {
		return nil, metadataError("The client's metadata document names client_id %q, not its own URL.", truncate(m.ClientID, 200))
	}
	if err := m.check(); err != nil {
		oe := err.(*oauthError)
		return nil, metadataError("The client's metadata document is not usable: %s", oe.Description)
	}
	stored, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("error encoding client metadata: %w", err)
	}
	if err := s.store.SaveOAuthMetadataDocument(ctx, id, stored); err != nil {
		return nil, err
	}
	return &m, nil
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// register is RFC 7591's registration endpoint.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if err := s.doRegister(w, r); err != nil {
		s.writeError(w, r, err)
	}
}

func (s *Server) doRegister(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	addr := clientAddress(r)
	byAddr, total, err := s.store.OAuthRegistrationsSince(ctx, addr, time.Now().Add(-time.Minute))
	if err != nil {
		return err
	}
	if byAddr >= s.cfg.RegistrationsPerAddress || total >= s.cfg.RegistrationsPerMinute {
		w.Header().Set("Retry-After", "60")
		return oerr(http.StatusTooManyRequests, ErrInvalidRequest, "Too many client registrations: at most %d per minute from one address. Retry in a minute, or reuse the client you registered.", s.cfg.RegistrationsPerAddress)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/json") {
		return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "Send the client metadata as application/json.")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFormBytes+1))
	if err != nil {
		return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "The request body could not be read.")
	}
	if len(body) > maxFormBytes {
		return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "Client metadata is larger than %d KB.", maxFormBytes>>10)
	}
	var m clientMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return oerr(http.StatusBadRequest, ErrInvalidClientMetadata, "Client metadata is not a JSON object with the fields of RFC 7591.")
	}
	if err := m.check(); err != nil {
		return err
	}
	if m.TokenEndpointAuthMethod == "" {
		m.TokenEndpointAuthMethod = "none"
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{"code"}
	}
	m.ClientID = random(clientIDPrefix)
	stored, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("error encoding client metadata: %w", err)
	}
	now := time.Now()
	if err := s.store.RegisterOAuthClient(ctx, m.ClientID, stored, now.Add(s.cfg.UnusedRegistrationTTL), addr); err != nil {
		return err
	}
	out := map[string]any{}
	json.Unmarshal(stored, &out) //nolint:errcheck // just encoded
	out["client_id_issued_at"] = now.Unix()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// allowsGrant reports whether the client registered grant type g.
func (c *clientMetadata) allowsGrant(g string) bool {
	return len(c.GrantTypes) == 0 || slices.Contains(c.GrantTypes, g)
}
