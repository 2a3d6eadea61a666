package webhook

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStandardSignKnownAnswer checks the Go known-answer vector of the
// Standard Webhooks reference library (libraries/go/webhook_test.go,
// TestWebhookSign).
func TestStandardSignKnownAnswer(t *testing.T) {
	t.Parallel()
	sig := StandardSign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", sig)
	// The prefix is optional for the key, as in the reference library.
	require.Equal(t, sig, StandardSign("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`)))
}

// TestSignKnownAnswer checks X-Service-Signature against RFC 4231 test
// case 2 (HMAC-SHA256, key "Jefe").
func TestSignKnownAnswer(t *testing.T) {
	t.Parallel()
	body := []byte("what do ya want for nothing?")
	want := "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	require.Equal(t, want, Sign("Jefe", body))
	require.True(t, Verify("Jefe", body, want))
	require.False(t, Verify("Jefe", append(body, '!'), want))
	require.False(t, Verify("jefe", body, want))
	require.False(t, Verify("Jefe", body, strings.ToUpper(want)))
}

func TestStandardVerify(t *testing.T) {
	t.Parallel()
	secret, err := NewSecret()
	require.NoError(t, err)
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"event_type":"radar"}`)
	sig := StandardSign(secret, "d-1", now, body)

	require.NoError(t, StandardVerify(secret, "d-1", "1800000000", sig, body, now.Add(time.Minute), 5*time.Minute))
	// Several signatures, one valid (as during a secret rotation).
	require.NoError(t, StandardVerify(secret, "d-1", "1800000000", "v1,AAAA "+sig, body, now, 5*time.Minute))
	require.ErrorIs(t, StandardVerify(secret, "d-1", "1800000000", sig, []byte(`{}`), now, 5*time.Minute), ErrInvalidSignature)
	require.ErrorIs(t, StandardVerify(secret, "d-2", "1800000000", sig, body, now, 5*time.Minute), ErrInvalidSignature)
	// Replay protection: a stale timestamp fails even with a good signature.
	require.ErrorIs(t, StandardVerify(secret, "d-1", "1800000000", sig, body, now.Add(10*time.Minute), 5*time.Minute), ErrInvalidSignature)
	require.ErrorIs(t, StandardVerify(secret, "d-1", "x", sig, body, now, 5*time.Minute), ErrInvalidSignature)
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, err := NewSecret()
	require.NoError(t, err)
	b, err := NewSecret()
	require.NoError(t, err)
	require.NotEqual(t, a, b)
	require.True(t, strings.HasPrefix(a, SecretPrefix))
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, SecretPrefix))
	require.NoError(t, err)
	require.Len(t, raw, 32)
}

func TestSecretHint(t *testing.T) {
	t.Parallel()
	require.Equal(t, "********wxyz", SecretHint("whsec_abcdefwxyz"))
	require.Equal(t, "***", SecretHint("abc"))
}
