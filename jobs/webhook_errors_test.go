package jobs

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/webhook"
)

// TestDeliveryErrorsNameNoAddress: the delivery log (last_error, which the
// webhook's owner reads) says what kind of failure happened and never the
// address, port or transport message, which would let deliveries map which
// hosts and ports answer.
func TestDeliveryErrorsNameNoAddress(t *testing.T) {
	t.Parallel()
	// A closed port, a listener that never answers, a TLS server with an
	// unknown certificate, a name that does not resolve, a refused address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	ln.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0)
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close)

	allow := &webhook.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	client := allow.NewHTTPClient(webhook.ClientOptions{Timeout: 300 * time.Millisecond, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}})
	refusing := (&webhook.Guard{}).NewHTTPClient(webhook.ClientOptions{Timeout: 300 * time.Millisecond})
	for _, c := range []struct {
		client *http.Client
		url    string
		want   string
	}{
		{client, "https://" + closed + "/hook", "could not connect to the receiver"},
		{client, "https://" + silent.Addr().String() + "/hook", "timeout: no response within 10 seconds"},
		{client, untrusted.URL + "/hook", "TLS handshake with the receiver failed"},
		{client, "https://no-such-host.invalid/hook", "could not resolve the receiver's host name"},
		{refusing, "https://" + closed + "/hook", "refused: URL resolves to a non-public address"},
	} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, c.url, strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := c.client.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		require.Error(t, err, c.url)
		got := describeSendError(err)
		require.Equal(t, c.want, got, "%s: %v", c.url, err)
		require.NotRegexp(t, `\d+\.\d+\.\d+\.\d+|:\d+|invalid|dial|tcp`, got)
	}
}
