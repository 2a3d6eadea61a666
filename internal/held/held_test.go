package held

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestResponse: the first status stays, a body without one is a 200, and
// FlushTo sends headers (over the writer's own), status and body.
func TestResponse(t *testing.T) {
	var r Response
	r.Header().Set("Content-Type", "text/plain")
	r.WriteHeader(http.StatusTeapot)
	r.WriteHeader(http.StatusOK)
	if _, err := r.Write([]byte("short and stout")); err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusTeapot || r.Body.String() != "short and stout" {
		t.Fatalf("held %d %q", r.Status, r.Body.String())
	}
	w := httptest.NewRecorder()
	w.Header().Set("X-Access-Layer", "evaluation")
	w.Header().Set("Content-Type", "application/json")
	r.FlushTo(w)
	if w.Code != http.StatusTeapot || w.Body.String() != "short and stout" ||
		w.Header().Get("Content-Type") != "text/plain" || w.Header().Get("X-Access-Layer") != "evaluation" {
		t.Fatalf("sent %d %q %v", w.Code, w.Body.String(), w.Header())
	}

	var body Response
	body.Write([]byte("{}")) //nolint:errcheck
	w = httptest.NewRecorder()
	body.FlushTo(w)
	if body.Status != http.StatusOK || w.Code != http.StatusOK {
		t.Fatalf("a body written without a status: held %d, sent %d", body.Status, w.Code)
	}
	var none Response
	w = httptest.NewRecorder()
	none.FlushTo(w)
	if w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Fatalf("nothing written: sent %d %q", w.Code, w.Body.String())
	}
}
