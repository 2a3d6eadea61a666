package webhook

import (
	"testing"
	"time"
)

// FuzzSignVerify checks, for arbitrary secrets and bodies, that
// Verify(secret, body, Sign(secret, body)) holds and that changing any one
// byte of the body or of the signature makes verification fail; and the
// same for the Standard Webhooks signature.
func FuzzSignVerify(f *testing.F) {
	f.Add("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", []byte(`{"event_type":"radar","event":{"id":1}}`), uint16(0), byte(1))
	f.Add("", []byte{}, uint16(0), byte(0x80))
	f.Add("s", []byte{0}, uint16(7), byte(0xff))
	f.Add("whsec_not base64!", []byte("\xff\xfe\x00"), uint16(65535), byte(2))
	f.Fuzz(func(t *testing.T, secret string, body []byte, pos uint16, delta byte) {
		if delta == 0 {
			delta = 1
		}
		sig := Sign(secret, body)
		if !Verify(secret, body, sig) {
			t.Fatalf("Verify(Sign) failed for %q", body)
		}
		if len(body) > 0 {
			changed := append([]byte(nil), body...)
			changed[int(pos)%len(changed)] ^= delta
			if Verify(secret, changed, sig) {
				t.Fatalf("signature verified a changed body")
			}
		}
		bad := []byte(sig)
		bad[int(pos)%len(bad)] ^= delta
		if Verify(secret, body, string(bad)) {
			t.Fatalf("a changed signature %q verified", bad)
		}
		if Verify(secret+"x", body, sig) {
			t.Fatalf("another secret verified the signature")
		}

		now := time.Unix(1_795_000_000, 0)
		std := StandardSign(secret, "msg_1", now, body)
		if err := StandardVerify(secret, "msg_1", "1795000000", std, body, now, 5*time.Minute); err != nil {
			t.Fatalf("StandardVerify(StandardSign): %v", err)
		}
		if len(body) > 0 {
			changed := append([]byte(nil), body...)
			changed[int(pos)%len(changed)] ^= delta
			if StandardVerify(secret, "msg_1", "1795000000", std, changed, now, 5*time.Minute) == nil {
				t.Fatalf("standard signature verified a changed body")
			}
		}
		badStd := []byte(std)
		badStd[int(pos)%len(badStd)] ^= delta
		if StandardVerify(secret, "msg_1", "1795000000", string(badStd), body, now, 5*time.Minute) == nil {
			t.Fatalf("a changed standard signature %q verified", badStd)
		}
	})
}
