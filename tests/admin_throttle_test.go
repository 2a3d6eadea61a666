package tests

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/rest"
)

// TestAdminTokenThrottle: wrong admin tokens from one address are answered
// 401 up to the bound per minute, then the address's wrong tokens are
// refused 429 with Retry-After until the minute ends, so the token cannot
// be guessed at speed; the right token still gets through, so a guesser
// cannot lock the operator out. (300 wrong tokens in a row were once all
// answered at once; later the right token was refused too.)
func TestAdminTokenThrottle(t *testing.T) {
	t.Parallel()
	s := startHostileServer(t)
	s.nextMinute()
	ingest := func(token string) *restResponse {
		return s.send(t, "", hostileRequest{Method: http.MethodPost, Path: "/admin/ingest", ContentType: "application/x-ndjson",
			Body: []byte("\n"), Header: map[string]string{"Authorization": "Bearer " + token}})
	}
	for i := 0; i < rest.DefaultAdminMaxFailedTokens; i++ {
		r := ingest("wrong-" + strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, r.Status, "attempt %d: %s", i, r.Body)
	}
	var throttled int
	for i := 0; i < 300; i++ {
		r := ingest("wrong-again-" + strconv.Itoa(i))
		require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
		throttled++
	}
	r := ingest(hostileAdminToken)
	require.Equal(t, http.StatusOK, r.Status, "the right token is never throttled: %s", r.Body)
	r = ingest("wrong-after")
	require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
	require.Contains(t, string(r.Body), "Too many requests with a wrong admin token from your address: at most 10 per minute. Retry in ")
	wait, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, wait >= 1 && wait <= 60, "Retry-After %d", wait)

	s.nextMinute()
	r = ingest(hostileAdminToken)
	require.Equal(t, http.StatusOK, r.Status, "a new minute: %s", r.Body)
	summary(t, "admin token throttle: %d wrong tokens answered 401, the next %d 429 until the minute ended; the right token served meanwhile", rest.DefaultAdminMaxFailedTokens, throttled)
}
