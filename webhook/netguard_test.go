package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

// staticResolver answers from a fixed table, standing in for DNS so tests
// never leave the machine.
type staticResolver map[string][]netip.Addr

func (s staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := s[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func TestIsPublic(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0",
		"100.64.0.1", "224.0.0.1", "255.255.255.255", "::1", "fe80::1", "fc00::1", "::", "::ffff:127.0.0.1",
		"::ffff:10.0.0.1", "64:ff9b::a00:1", "2001:db8::1", "198.18.0.1", "192.0.2.1"} {
		require.False(t, IsPublic(netip.MustParseAddr(s)), s)
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"} {
		require.True(t, IsPublic(netip.MustParseAddr(s)), s)
	}
}

// TestIPv4InIPv6Spellings: IPv6 addresses that embed a private or loopback
// IPv4 address other than the IPv4-mapped form (which is unmapped) are
// refused at registration and at connect time, whatever they embed.
func TestIPv4InIPv6Spellings(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"::ffff:0:127.0.0.1", "::127.0.0.1", "::ffff:0:10.0.0.1", "::10.0.0.1", "::ffff:0:8.8.8.8",
		"::8.8.8.8", "::ffff:0:169.254.169.254", "fec0::1", "3fff::1"} {
		a := netip.MustParseAddr(s)
		require.False(t, IsPublic(a), s)
		require.ErrorIs(t, (&Guard{}).CheckURL(context.Background(), "https://["+s+"]/hook"), ErrNotPublic, s)
		// Connect time, on the address actually dialed, even with loopback
		// allowed: these are not 127.0.0.0/8 or ::1.
		g := &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
		require.ErrorIs(t, g.DialControl("tcp6", netip.AddrPortFrom(a, 443).String(), nil), ErrNotPublic, s)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := &Guard{Resolver: staticResolver{
		"hooks.example.com":  addrs("93.184.216.34"),
		"rebind.example.com": addrs("93.184.216.34", "10.0.0.5"),
		"meta.example.com":   addrs("169.254.169.254"),
	}}
	require.NoError(t, g.CheckURL(ctx, "https://hooks.example.com/in?x=1"))
	require.NoError(t, g.CheckURL(ctx, "https://8.8.8.8:8443/in"))
	for _, u := range []string{"http://hooks.example.com/in", "ftp://x", "hooks.example.com", "https://", "https://user:pw@hooks.example.com/", "", "not a url"} {
		require.ErrorIs(t, g.CheckURL(ctx, u), ErrNotHTTPS, u)
	}
	for _, u := range []string{"https://127.0.0.1/", "https://[::1]:8443/", "https://localhost/", "https://app.localhost/",
		"https://10.0.0.1/", "https://169.254.169.254/latest", "https://rebind.example.com/", "https://meta.example.com/"} {
		require.ErrorIs(t, g.CheckURL(ctx, u), ErrNotPublic, u)
	}
	require.ErrorIs(t, g.CheckURL(ctx, "https://nowhere.example.com/"), ErrUnresolvable)

	allowed := &Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Resolver: g.Resolver}
	require.NoError(t, allowed.CheckURL(ctx, "https://127.0.0.1:9999/"))
	require.NoError(t, allowed.CheckURL(ctx, "https://localhost/"))
	require.ErrorIs(t, allowed.CheckURL(ctx, "https://10.0.0.1/"), ErrNotPublic)
}

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	ps, err := ParseAllowList(" 127.0.0.0/8, ::1 ,10.1.2.3/8")
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.0.0.0/8")}, ps)
	ps, err = ParseAllowList("")
	require.NoError(t, err)
	require.Empty(t, ps)
	_, err = ParseAllowList("300.0.0.0/8")
	require.Error(t, err)
}

// TestDialControlRefusesAtConnect shows the connect-time check: whatever a
// name resolved to at registration, the client refuses to connect to a
// non-public address unless it is allowlisted. No redirect is followed.
func TestDialControlRefusesAtConnect(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/ok", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig

	refused := (&Guard{}).NewHTTPClient(ClientOptions{TLSConfig: tlsCfg})
	_, err := refused.Post(srv.URL, "application/json", nil)
	require.ErrorIs(t, err, ErrNotPublic)

	allowed := (&Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}).NewHTTPClient(ClientOptions{TLSConfig: tlsCfg})
	resp, err := allowed.Post(srv.URL, "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)

	resp, err = allowed.Post(srv.URL+"/redirect", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
}

// TestLoopbackHTTP: only a guard with LoopbackHTTP (demo mode) accepts a
// plain http:// receiver, and only on loopback; https stays the rule for
// every other host, and the production guard refuses all of them.
func TestLoopbackHTTP(t *testing.T) {
	ctx := context.Background()
	prod := &Guard{}
	demo := &Guard{LoopbackHTTP: true}
	for _, u := range []string{"http://127.0.0.1:9000/hook", "http://localhost:9000/", "http://[::1]:9000/x", "http://127.0.0.2/"} {
		require.ErrorIs(t, prod.CheckURL(ctx, u), ErrNotHTTPS, u)
		require.NoError(t, demo.CheckURL(ctx, u), u)
	}
	for _, u := range []string{"http://10.0.0.1/", "http://192.168.1.1:8080/", "http://example.com/", "http://user:pw@127.0.0.1/", "ftp://127.0.0.1/"} {
		require.Error(t, demo.CheckURL(ctx, u), u)
	}
	require.ErrorIs(t, demo.CheckURL(ctx, "https://10.0.0.1/"), ErrNotPublic)
	require.NoError(t, demo.DialControl("tcp", "127.0.0.1:9000", nil))
	require.Error(t, prod.DialControl("tcp", "127.0.0.1:9000", nil))
	require.Error(t, demo.DialControl("tcp", "10.1.2.3:443", nil))
}
