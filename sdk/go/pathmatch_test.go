package cryptointel

import "testing"

func TestPathMatches(t *testing.T) {
	for _, c := range []struct {
		tmpl, path string
		want       bool
	}{
		{"/v1/latest", "/v1/latest", true},
		{"/v1/latest", "/v1/latest/x", false},
		{"/v1/entities/{id}/media", "/v1/entities/101/media", true},
		{"/v1/entities/{id}/media", "/v1/entities//media", false},
		{"/v1/entities/{id}/media", "/v1/entities/101/research", false},
		{"/v1/webhooks/{id}", "/v1/webhooks", false},
		{"/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", "/v1/webhooks/3/deliveries/ab-c/redeliver", true},
	} {
		if got := pathMatches(c.tmpl, c.path); got != c.want {
			t.Errorf("pathMatches(%q, %q) = %v", c.tmpl, c.path, got)
		}
	}
	if r := routeOf("GET", "/v1/entities/101/media"); r == nil || !r.Legacy || !r.Cursor {
		t.Errorf("routeOf media: %+v", r)
	}
}
