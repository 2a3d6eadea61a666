package cryptointel

// Tests that need no server: the retry policy against answers served from
// memory, and webhook signatures against known answers.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

type served struct {
	answers []*http.Response
	sent    []*http.Request
}

func (s *served) RoundTrip(req *http.Request) (*http.Response, error) {
	s.sent = append(s.sent, req)
	if len(s.answers) == 0 {
		return nil, errors.New("no more answers")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	a.Request = req
	return a, nil
}

func answer(status int, header ...string) *http.Response {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	body := `{"error":"no","code":"x","requestId":"R1"}`
	if status < 300 {
		body = `{"data":{}}`
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

func servedClient(t *testing.T, s *served, opts ...Option) (*Client, *[]time.Duration) {
	t.Helper()
	c, err := New("http://api.test", append([]Option{WithAPIKey("ci_test"), WithHTTP(&http.Client{Transport: s})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	return c, &waits
}

func TestRetriesThenSucceeds(t *testing.T) {
	s := &served{answers: []*http.Response{answer(503), answer(429, "Retry-After", "2"), answer(200)}}
	c, waits := servedClient(t, s)
	if _, err := c.GetV1UsageWithResponse(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.sent) != 3 || (*waits)[1] != 2*time.Second || (*waits)[0] > 500*time.Millisecond {
		t.Fatalf("sent %d, waits %v", len(s.sent), *waits)
	}
	if c.LastMeta().Attempts != 3 {
		t.Fatalf("attempts %d", c.LastMeta().Attempts)
	}
}

func TestNeverRetriesWhatRetryingCannotFix(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409, 413, 500} {
		s := &served{answers: []*http.Response{answer(status)}}
		c, _ := servedClient(t, s)
		_, err := c.GetV1UsageWithResponse(context.Background())
		var ae *APIError
		if !errors.As(err, &ae) || ae.StatusCode != status || ae.RequestID != "R1" || len(s.sent) != 1 {
			t.Fatalf("%d: %v after %d requests", status, err, len(s.sent))
		}
	}
}

func TestRetriesAreBounded(t *testing.T) {
	s := &served{answers: []*http.Response{answer(503), answer(503), answer(503), answer(503)}}
	c, waits := servedClient(t, s, WithRetry(RetryPolicy{MaxRetries: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxRetryAfter: time.Minute}))
	if _, err := c.GetV1UsageWithResponse(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Fatal(err)
	}
	if len(s.sent) != 3 || len(*waits) != 2 {
		t.Fatalf("sent %d, waits %v", len(s.sent), *waits)
	}
	s = &served{answers: []*http.Response{answer(429, "Retry-After", "3600")}}
	c, waits = servedClient(t, s)
	if _, err := c.GetV1UsageWithResponse(context.Background()); !errors.Is(err, ErrRateLimited) || len(*waits) != 0 {
		t.Fatalf("a Retry-After over the bound is returned at once: %v, waits %v", err, *waits)
	}
}

func TestLeanByDefault(t *testing.T) {
	s := &served{answers: []*http.Response{answer(200), answer(200)}}
	c, _ := servedClient(t, s)
	c.GetV1LatestWithResponse(context.Background(), &GetV1LatestParams{Limit: ptr(5)})                    //nolint:errcheck
	c.GetV1LatestWithResponse(context.Background(), &GetV1LatestParams{Limit: ptr(5), Legacy: ptr(true)}) //nolint:errcheck
	if q := s.sent[0].URL.Query(); q.Get("legacy") != "false" || q.Get("limit") != "5" {
		t.Fatalf("%s", s.sent[0].URL)
	}
	if q := s.sent[1].URL.Query(); q["legacy"][0] != "true" || len(q["legacy"]) != 1 {
		t.Fatalf("%s", s.sent[1].URL)
	}
	if s.sent[0].Header.Get("Authorization") != "Bearer ci_test" {
		t.Fatal(s.sent[0].Header)
	}
}

func TestWebhookKnownAnswers(t *testing.T) {
	// Standard Webhooks' reference vector; its timestamp is years old, so
	// the tolerance is widened to cover it.
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,bogus v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	body := []byte(`{"test": 2432232314}`)
	wide := time.Since(time.Unix(1614265330, 0)) + time.Hour
	if err := VerifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", body, h, wide); err != nil {
		t.Fatal(err)
	}
	if err := VerifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", append(body, ' '), h, wide); !errors.Is(err, ErrInvalidSignature) {
		t.Fatal("a changed body verified")
	}
	if err := VerifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", body, h, time.Minute); !errors.Is(err, ErrInvalidSignature) {
		t.Fatal("an old delivery verified")
	}
	// RFC 4231 test case 2 (HMAC-SHA256, key "Jefe").
	h = http.Header{}
	h.Set("X-Service-Signature", "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
	if err := VerifyWebhook("Jefe", []byte("what do ya want for nothing?"), h, 0); err != nil {
		t.Fatal(err)
	}
	if err := VerifyWebhook("jefe", []byte("what do ya want for nothing?"), h, 0); !errors.Is(err, ErrInvalidSignature) {
		t.Fatal("another secret verified")
	}
	if err := VerifyWebhook("Jefe", []byte("x"), http.Header{}, 0); !errors.Is(err, ErrInvalidSignature) {
		t.Fatal("no signature verified")
	}
}
