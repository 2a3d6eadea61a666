package rest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel/db/dbtest"
)

func TestAdminIngestTooLarge(t *testing.T) {
	t.Parallel()
	store := dbtest.New(t)
	line := `{"kind":"entity","id":1,"canonicalName":"One"}` + "\n"
	h := newAdminIngestHandler(store, AdminIngestOptions{Token: "tok"}, int64(len(line)+10))

	req := httptest.NewRequest(http.MethodPost, "/admin/ingest", strings.NewReader(line+line+line))
	req.Header.Set("Authorization", "Bearer tok")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	var body ErrorBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	require.Contains(t, body.Error, "Request body larger than")
}
