package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// MsgURLMustUseHTTPS is the contract's message for a webhook URL that is
// not https (ErrNotHTTPS's, and the one management routes give).
const MsgURLMustUseHTTPS = "URL must use HTTPS"

// Errors returned by CheckURL. Their messages are shown to clients.
var (
	// ErrNotHTTPS means the URL is not an absolute https URL with a host.
	ErrNotHTTPS = errors.New(MsgURLMustUseHTTPS)
	// ErrNotPublic means the host is or resolves to a loopback, private,
	// link-local or otherwise non-public address.
	ErrNotPublic = errors.New("URL must resolve to a public address")
	// ErrUnresolvable means the host name could not be resolved.
	ErrUnresolvable = errors.New("URL host could not be resolved")
)

// MaxURLLength bounds a webhook URL.
const MaxURLLength = 2048

// Resolver resolves host names; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which addresses webhooks may be delivered to. Public unicast
// addresses are always allowed; others only when an Allow prefix contains
// them (for development and tests, for example 127.0.0.0/8).
type Guard struct {
	// Allow lists prefixes allowed even though they are not public.
	Allow []netip.Prefix
	// Resolver resolves host names at registration. Defaults to
	// net.DefaultResolver.
	Resolver Resolver
	// LoopbackHTTP also accepts plain http:// URLs whose host is a
	// loopback address or localhost, and lets deliveries reach loopback
	// addresses: a receiver on the developer's own machine, such as
	// `cryptointel webhooks listen`. Only demo mode sets it; a production
	// server never does.
	LoopbackHTTP bool
}

// ParseAllowList parses a comma-separated list of CIDR prefixes (or bare
// addresses) such as "127.0.0.0/8,::1".
func ParseAllowList(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			a, err := netip.ParseAddr(part)
			if err != nil {
				return nil, fmt.Errorf("error parsing allowlist entry %q: %w", part, err)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fmt.Errorf("error parsing allowlist entry %q: %w", part, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// nonPublic lists special-purpose ranges beyond what netip's predicates
// cover (RFC 6890 and successors).
var nonPublic = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // carrier-grade NAT
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // TEST-NET-1
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // TEST-NET-2
		"203.0.113.0/24",  // TEST-NET-3
		"240.0.0.0/4",     // reserved, broadcast
		"::/96",           // IPv4-compatible (deprecated): ::127.0.0.1 spells loopback
		"::ffff:0:0:0/96", // IPv4-translated (SIIT): ::ffff:0:127.0.0.1 spells loopback
		"64:ff9b::/96",    // NAT64 (may embed a private IPv4)
		"64:ff9b:1::/48",  // local-use NAT64
		"100::/64",        // discard
		"2001::/23",       // IETF protocol assignments (Teredo, ORCHID…)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4 (may embed a private IPv4)
		"3fff::/20",       // documentation (RFC 9637)
		"fec0::/10",       // site-local (deprecated)
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// IsPublic reports whether a is a globally routable unicast address.
func IsPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() ||
		a.IsUnspecified() || !a.IsGlobalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// Allowed reports whether delivery to a is allowed: a is public or inside
// an Allow prefix.
func (g *Guard) Allowed(a netip.Addr) bool {
	a = a.Unmap()
	if g.LoopbackHTTP && a.IsLoopback() {
		return true
	}
	for _, p := range g.Allow {
		if p.Contains(a) {
			return true
		}
	}
	return IsPublic(a)
}

// ValidateURL checks the form of a webhook URL: absolute, https, with a
// host, without credentials. It returns ErrNotHTTPS otherwise.
func ValidateURL(raw string) (*url.URL, error) {
	if raw == "" || len(raw) > MaxURLLength {
		return nil, ErrNotHTTPS
	}
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return nil, ErrNotHTTPS
	}
	return u, nil
}

// IsLoopbackHTTP reports whether raw is an absolute http:// URL, without
// credentials, whose host is a loopback address literal (127.0.0.0/8, ::1)
// or localhost: what Guard.LoopbackHTTP accepts besides https.
func IsLoopbackHTTP(raw string) bool {
	if raw == "" || len(raw) > MaxURLLength {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || u.User != nil || u.Opaque != "" {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// CheckURL validates raw as a webhook URL and checks that its host resolves
// only to allowed addresses. It returns ErrNotHTTPS, ErrNotPublic or
// ErrUnresolvable. Delivery checks again at connect time (see DialControl),
// so a DNS answer that changes after registration cannot bypass the guard.
func (g *Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := ValidateURL(raw)
	if err != nil {
		if g.LoopbackHTTP && IsLoopbackHTTP(raw) {
			return nil
		}
		return err
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !g.Allowed(a) {
			return ErrNotPublic
		}
		return nil
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") || strings.HasSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), ".localhost") {
		if !g.Allowed(netip.MustParseAddr("127.0.0.1")) {
			return ErrNotPublic
		}
		return nil
	}
	resolver := g.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return ErrUnresolvable
	}
	for _, a := range addrs {
		if !g.Allowed(a) {
			return ErrNotPublic
		}
	}
	return nil
}

// DialControl is a net.Dialer Control function that refuses to connect to
// an address the guard does not allow. It runs after name resolution, on
// the address actually dialed.
func (g *Guard) DialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("error parsing dial address %q: %w", address, err)
	}
	if !g.Allowed(ap.Addr()) {
		return fmt.Errorf("refusing to connect to %s: %w", ap.Addr(), ErrNotPublic)
	}
	return nil
}

// ClientOptions configure NewHTTPClient.
type ClientOptions struct {
	// Timeout bounds one attempt, from dial to the end of the response.
	// Defaults to 10 seconds.
	Timeout time.Duration
	// TLSConfig is the TLS configuration; tests pass one trusting their
	// server's certificate. Defaults to the system roots.
	TLSConfig *tls.Config
}

// NewHTTPClient returns the delivery HTTP client: no proxy, no redirects
// (a 3xx is returned as the response, which counts as a failed attempt),
// every connection checked by the guard, each attempt bounded by the
// timeout.
func (g *Guard) NewHTTPClient(opts ClientOptions) *http.Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: g.DialControl}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       opts.TLSConfig,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: opts.Timeout,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       60 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
