package mcp

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
)

// Messages of a request refused at the /mcp door for where it comes from.
const (
	// MsgOriginForbidden is the 403 message of a browser request from a
	// foreign origin (the MCP transport's Origin check, against DNS
	// rebinding).
	MsgOriginForbidden = "Origin not allowed: /mcp answers browser requests only from this service's own origin and the hosts in MCP_ALLOWED_ORIGINS."
	// MsgHostForbidden is the 403 message of a request to a server
	// listening on a loopback address that names another host (a DNS
	// rebinding).
	MsgHostForbidden = "Host not allowed: a server listening on a loopback address answers only requests addressed to localhost."
)

// checkOrigin applies the MCP transport's rule against DNS rebinding: a
// request carrying Origin must come from the service's own origin (its
// host is the request's Host) or a host matching one of allowed (path.Match
// host patterns, case-insensitive); on a server listening on a loopback
// address, the request's Host, and its Origin's, must be loopback names
// too, unless allowed. A request without Origin (not from a browser)
// passes the Origin check. It returns the refusal's message, or "".
func checkOrigin(r *http.Request, allowed []string) string {
	loopback := false
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			loopback = ap.Addr().IsLoopback()
		}
	}
	if loopback && !loopbackHost(r.Host) && !matches(allowed, r.Host) {
		return MsgHostForbidden
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return MsgOriginForbidden
	}
	host := strings.ToLower(u.Host)
	switch {
	case matches(allowed, host):
		return ""
	case host != strings.ToLower(r.Host):
		return MsgOriginForbidden
	case loopback && !loopbackHost(host):
		return MsgOriginForbidden
	}
	return ""
}

// matches reports whether host matches one of the patterns.
func matches(patterns []string, host string) bool {
	host = strings.ToLower(host)
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(strings.TrimSpace(p)), host); ok {
			return true
		}
	}
	return false
}

// loopbackHost reports whether a Host value (with or without port) names
// the local machine: localhost or a loopback address.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(strings.ToLower(host), "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
