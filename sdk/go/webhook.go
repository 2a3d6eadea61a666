package cryptointel

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidSignature is a webhook delivery whose signature does not
// match its raw body (or whose timestamp is outside the tolerance).
var ErrInvalidSignature = errors.New("cryptointel: invalid webhook signature")

// VerifyWebhook checks a delivery with the webhook's secret, on the raw
// body exactly as received (before any JSON parsing), comparing in
// constant time: the Standard Webhooks headers (webhook-id,
// webhook-timestamp within tolerance of now, webhook-signature) and
// X-Service-Signature, each one present must match, and at least one must
// be. tolerance 0 means 5 minutes.
func VerifyWebhook(secret string, body []byte, header http.Header, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = 5 * time.Minute
	}
	checked := false
	if sigs := header.Get("webhook-signature"); sigs != "" {
		sec, err := strconv.ParseInt(header.Get("webhook-timestamp"), 10, 64)
		if err != nil {
			return ErrInvalidSignature
		}
		if d := time.Since(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
			return ErrInvalidSignature
		}
		key := []byte(strings.TrimPrefix(secret, "whsec_"))
		if k, err := base64.StdEncoding.DecodeString(string(key)); err == nil {
			key = k
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(header.Get("webhook-id") + "." + strconv.FormatInt(sec, 10) + "."))
		mac.Write(body)
		want := []byte("v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		ok := false
		for _, s := range strings.Fields(sigs) {
			if hmac.Equal([]byte(s), want) {
				ok = true
			}
		}
		if !ok {
			return ErrInvalidSignature
		}
		checked = true
	}
	if sig := header.Get("X-Service-Signature"); sig != "" {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		if !hmac.Equal([]byte(sig), []byte("sha256="+hex.EncodeToString(mac.Sum(nil)))) {
			return ErrInvalidSignature
		}
		checked = true
	}
	if !checked {
		return ErrInvalidSignature
	}
	return nil
}
