package rest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/db/dbtest"
	"github.com/cryptointel/cryptointel/rest"
)

func TestAdminIngest(t *testing.T) {
	t.Parallel()

	const token = "s3cret-admin-token"
	body := strings.Join([]string{
		`{"kind":"entity","id":101,"canonicalName":"Ethereum","aliases":["ETH"]}`,
		`{"kind":"event","id":1,"title":"t","eventCategory":"technology","owners":[101],"evidence":[{"id":1,"content":"c","timestamp":"2026-11-20T10:00:00Z"}]}`,
		`{"kind":"event","id":2,"title":"t","eventCategory":"technology","owners":[999],"evidence":[{"id":2,"content":"c","timestamp":"2026-11-20T10:00:00Z"}]}`,
	}, "\n")

	setup := func(t *testing.T, token string) (*db.DB, *httptest.Server) {
		t.Helper()
		store := dbtest.New(t)
		srv := httptest.NewServer(rest.NewAdminIngestHandler(store, rest.AdminIngestOptions{Token: token}))
		t.Cleanup(srv.Close)
		return store, srv
	}
	post := func(t *testing.T, url, auth, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url+"/admin/ingest", strings.NewReader(body))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"))
		var out map[string]any
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
		return resp.StatusCode, out
	}

	t.Run("AppliesAndReportsSummary", func(t *testing.T) {
		t.Parallel()
		store, srv := setup(t, token)
		status, out := post(t, srv.URL, "Bearer "+token, body)
		require.Equal(t, http.StatusOK, status)
		require.EqualValues(t, 3, out["lines"])
		require.EqualValues(t, 1, out["failedCount"])
		failed := out["failed"].([]any)
		require.EqualValues(t, 3, failed[0].(map[string]any)["line"])
		require.Contains(t, failed[0].(map[string]any)["reason"], "unknown entity id 999")
		require.EqualValues(t, 1, out["applied"].(map[string]any)["event"])

		var n int
		require.NoError(t, store.Pool.QueryRow(t.Context(), "SELECT count(*) FROM events").Scan(&n))
		require.Equal(t, 1, n)

		// Again: nothing changes.
		status, out = post(t, srv.URL, "bearer "+token, body)
		require.Equal(t, http.StatusOK, status)
		require.EqualValues(t, 2, out["unchanged"])
	})

	t.Run("WrongOrMissingToken", func(t *testing.T) {
		t.Parallel()
		store, srv := setup(t, token)
		for _, auth := range []string{"", "Bearer wrong", "Basic " + token, token} {
			status, out := post(t, srv.URL, auth, body)
			require.Equal(t, http.StatusUnauthorized, status, auth)
			require.Equal(t, "Invalid or missing admin token.", out["error"])
		}
		var n int
		require.NoError(t, store.Pool.QueryRow(t.Context(), "SELECT count(*) FROM entities").Scan(&n))
		require.Zero(t, n)
	})

	t.Run("DisabledWithoutToken", func(t *testing.T) {
		t.Parallel()
		_, srv := setup(t, "")
		status, out := post(t, srv.URL, "Bearer ", body)
		require.Equal(t, http.StatusNotFound, status)
		require.Contains(t, out["error"], "disabled")
	})

	t.Run("OnlyPost", func(t *testing.T) {
		t.Parallel()
		_, srv := setup(t, token)
		resp, err := http.Get(srv.URL + "/admin/ingest")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
		require.Equal(t, "POST", resp.Header.Get("Allow"))
	})
}
