// Package webhook holds what webhook management and delivery share: secret
// generation, payload signing (the service's X-Service-Signature and the
// Standard Webhooks scheme) and the network guard that keeps deliveries off
// loopback, private and other non-public addresses. It imports none of the
// service's packages.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every webhook secret, as in Standard Webhooks.
const SecretPrefix = "whsec_"

// secretBytes is the number of random bytes in a secret (256 bits).
const secretBytes = 32

// NewSecret returns a fresh secret from crypto/rand: "whsec_" followed by
// the standard base64 encoding of 32 random bytes.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("error reading random bytes: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// SecretHint returns asterisks followed by the last 4 characters of secret.
func SecretHint(secret string) string {
	if len(secret) <= 4 {
		return strings.Repeat("*", len(secret))
	}
	return strings.Repeat("*", 8) + secret[len(secret)-4:]
}

// Sign returns the X-Service-Signature value for body: "sha256=" followed by
// the lowercase hex HMAC-SHA256 of the raw body keyed with the secret string
// exactly as shown to the subscriber (prefix included).
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether signature is Sign(secret, body), comparing in
// constant time.
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}

// standardKey returns the Standard Webhooks signing key of secret: the
// base64-decoded part after "whsec_". A secret that is not base64 is used
// as raw bytes.
func standardKey(secret string) []byte {
	s := strings.TrimPrefix(secret, SecretPrefix)
	if key, err := base64.StdEncoding.DecodeString(s); err == nil {
		return key
	}
	return []byte(s)
}

// StandardSign returns the Standard Webhooks webhook-signature value,
// "v1," followed by the base64 HMAC-SHA256 of "id.timestamp.body" keyed
// with the decoded secret, so receivers can use the Standard Webhooks
// libraries.
func StandardSign(secret, id string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, standardKey(secret))
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(ts.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// ErrInvalidSignature is returned by StandardVerify when no signature
// matches or the timestamp is outside the tolerance.
var ErrInvalidSignature = errors.New("invalid webhook signature")

// StandardVerify checks Standard Webhooks headers the way a receiver does:
// one of the space-separated v1 signatures in signatureHeader must match,
// and the timestamp must be within tolerance of now (replay protection).
func StandardVerify(secret, id, timestampHeader, signatureHeader string, body []byte, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(timestampHeader, 10, 64)
	if err != nil {
		return fmt.Errorf("error parsing webhook-timestamp: %w", ErrInvalidSignature)
	}
	ts := time.Unix(sec, 0)
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return fmt.Errorf("timestamp outside tolerance: %w", ErrInvalidSignature)
	}
	want := StandardSign(secret, id, ts, body)
	for _, sig := range strings.Fields(signatureHeader) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return ErrInvalidSignature
}
