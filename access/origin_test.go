package access

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

// TestRequestOrigin: the scheme a proxy names wins over the connection's,
// and a header naming anything but http or https is ignored.
func TestRequestOrigin(t *testing.T) {
	for _, tc := range []struct {
		name, forwarded, want string
		tls                   bool
	}{
		{"plain", "", "http://api.example", false},
		{"tls", "", "https://api.example", true},
		{"proxy https", "https", "https://api.example", false},
		{"proxy http over tls", "http", "http://api.example", true},
		{"proxy nonsense", "gopher", "http://api.example", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://api.example/v1/latest", nil)
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if tc.forwarded != "" {
				r.Header.Set("X-Forwarded-Proto", tc.forwarded)
			}
			if got := RequestOrigin(r); got != tc.want {
				t.Fatalf("RequestOrigin = %q, want %q", got, tc.want)
			}
		})
	}
}
