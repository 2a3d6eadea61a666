package tests

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access/accesstest"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
	"github.com/cryptointel/cryptointel/jobs"
	"github.com/cryptointel/cryptointel/wire"
)

// exportRow is what the tests compare between a downloaded file and the
// database.
type exportRow struct {
	ID           int64
	Title        string
	Summary      string
	Significance *float64
	Owners       string // "id:label|…"
	Evidence     int
}

// exportDBRows reads the rows an export must contain straight from the
// database with the test's own query.
func exportDBRows(t *testing.T, store *db.DB, where string, includeEvidence bool, args ...any) []exportRow {
	t.Helper()
	q := `SELECT e.id, e.title, e.summary, e.significance,
	        coalesce((SELECT string_agg(en.id || ':' || en.display_name, '|' ORDER BY ee.position, en.id)
	                  FROM event_entities ee JOIN entities en ON en.id = ee.entity_id
	                  WHERE ee.event_id = e.id AND ee.role = 'owner'), ''),
	        (SELECT count(*) FROM evidence x WHERE x.event_id = e.id)
	      FROM events e WHERE ` + where + ` ORDER BY e.latest_evidence_at, e.id`
	rows, err := store.Pool.Query(context.Background(), q, args...)
	require.NoError(t, err)
	defer rows.Close()
	var out []exportRow
	for rows.Next() {
		var r exportRow
		var n int64
		require.NoError(t, rows.Scan(&r.ID, &r.Title, &r.Summary, &r.Significance, &r.Owners, &n))
		if includeEvidence {
			r.Evidence = int(n)
		}
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

func exportOwners(ids []int64, labels []string) string {
	parts := make([]string, len(ids))
	for i := range ids {
		parts[i] = strconv.FormatInt(ids[i], 10) + ":" + labels[i]
	}
	return strings.Join(parts, "|")
}

// exportParseRows decodes a downloaded event file.
func exportParseRows(t *testing.T, format string, b []byte) []exportRow {
	t.Helper()
	var out []exportRow
	switch format {
	case exportjob.FormatJSONL:
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var ev struct {
				ID            int64    `json:"id"`
				Title         string   `json:"title"`
				Summary       string   `json:"summary"`
				Significance  *float64 `json:"significance"`
				GlobalSummary string   `json:"globalSummary"`
				Signal        *float64 `json:"signal"`
				Owners        []struct {
					ID    int64  `json:"id"`
					Label string `json:"label"`
				} `json:"owners"`
				Evidence []json.RawMessage `json:"evidence"`
			}
			if err := dec.Decode(&ev); err == io.EOF {
				break
			} else {
				require.NoError(t, err)
			}
			var ids []int64
			var labels []string
			for _, o := range ev.Owners {
				ids, labels = append(ids, o.ID), append(labels, o.Label)
			}
			require.Equal(t, ev.Summary, ev.GlobalSummary)
			require.Equal(t, ev.Significance, ev.Signal)
			out = append(out, exportRow{ID: ev.ID, Title: ev.Title, Summary: ev.Summary, Significance: ev.Significance, Owners: exportOwners(ids, labels), Evidence: len(ev.Evidence)})
		}
	case exportjob.FormatCSV:
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		require.NoError(t, err)
		require.Equal(t, "id", recs[0][0])
		for _, r := range recs[1:] {
			id, err := strconv.ParseInt(r[0], 10, 64)
			require.NoError(t, err)
			row := exportRow{ID: id, Title: r[1], Summary: r[4], Owners: r[6]}
			if r[8] != "" {
				row.Evidence = len(strings.Split(r[8], "|"))
			}
			if r[10] != "" {
				v, err := strconv.ParseFloat(r[10], 64)
				require.NoError(t, err)
				row.Significance = &v
			}
			out = append(out, row)
		}
	case exportjob.FormatParquet:
		rows, err := parquet.Read[wire.Event](bytes.NewReader(b), int64(len(b)))
		require.NoError(t, err)
		for _, ev := range rows {
			var ids []int64
			var labels []string
			for _, o := range ev.Owners {
				ids, labels = append(ids, o.ID), append(labels, o.Label)
			}
			out = append(out, exportRow{ID: ev.ID, Title: ev.Title, Summary: ev.Summary, Significance: ev.Significance, Owners: exportOwners(ids, labels), Evidence: len(ev.Evidence)})
		}
	}
	return out
}

// exportDownload fetches a job's downloadUrl and checks the transfer
// headers against the job.
func exportDownload(t *testing.T, s *exportServer, job exportJobBody) []byte {
	t.Helper()
	require.NotNil(t, job.DownloadURL)
	status, hdr, body := s.do(t, http.MethodGet, *job.DownloadURL, "", nil)
	require.Equal(t, http.StatusOK, status, string(body))
	require.Equal(t, strconv.FormatInt(*job.ByteSize, 10), hdr.Get("Content-Length"))
	require.Equal(t, `"`+*job.SHA256+`"`, hdr.Get("ETag"))
	wantType := map[string]string{"jsonl": "application/x-ndjson", "csv": "text/csv; charset=utf-8", "parquet": "application/vnd.apache.parquet"}[job.Format]
	require.Equal(t, wantType, hdr.Get("Content-Type"))
	sum := sha256.Sum256(body)
	require.Equal(t, *job.SHA256, hex.EncodeToString(sum[:]))
	return body
}

// TestExportJobsEndToEnd creates a job per scope and format over HTTP,
// waits for River to fulfill it, downloads the file through its signed URL
// and compares its rows with the database (count and content).
func TestExportJobsEndToEnd(t *testing.T) {
	t.Parallel()
	s := startExportServer(t, exportServerOpts{})
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	exportSeed(t, s.store, base, 30)
	key, keyID := exportEnterpriseKey(t, s.store)

	since := "2026-11-01T03:00:00Z"
	until := "2026-11-01T12:30:00.5+00:00"
	sinceT, untilT := base.Add(3*time.Hour), base.Add(12*time.Hour+30*time.Minute+500*time.Millisecond)
	type scopeCase struct {
		body  map[string]any
		where string
		args  []any
	}
	cases := map[string]scopeCase{
		exportjob.ScopeRadarHistory: {
			body:  map[string]any{"since": since, "until": until, "includeEvidence": true},
			where: "e.latest_evidence_at >= $1 AND e.latest_evidence_at < $2", args: []any{sinceT, untilT},
		},
		exportjob.ScopeSignalHistory: {
			body:  map[string]any{"since": since, "category": "partnership"},
			where: "e.latest_evidence_at >= $1 AND e.significance IS NOT NULL AND e.category = 'partnership'", args: []any{sinceT},
		},
		exportjob.ScopeReplayGlobal: {
			body:  map[string]any{"since": "2026-10-01"},
			where: "e.latest_evidence_at >= $1", args: []any{base.AddDate(0, -1, 0)},
		},
		exportjob.ScopeTimelineByOrg: {
			body:  map[string]any{"since": since, "organizationIds": []int64{3}, "includeEvidence": true},
			where: "e.latest_evidence_at >= $1 AND EXISTS (SELECT 1 FROM event_entities ee WHERE ee.event_id = e.id AND ee.entity_id = 3)", args: []any{sinceT},
		},
	}
	for _, scope := range exportjob.Scopes {
		for _, format := range exportjob.Formats {
			t.Run(scope+"/"+format, func(t *testing.T) {
				body := map[string]any{"scope": scope, "format": format, "note": "nightly " + format}
				c := cases[scope]
				for k, v := range c.body {
					body[k] = v
				}
				created := s.create(t, key, body)
				require.Equal(t, exportjob.StatusRequested, created.Status)
				require.Equal(t, keyID, created.APIKeyID)
				require.NotEmpty(t, created.AppUserID)
				require.Nil(t, created.DownloadURL)
				require.Nil(t, created.ExpiresAt)
				require.Nil(t, created.Error)
				require.True(t, exportstore.IsUUID(created.ID))

				job := s.waitDone(t, key, created.ID)
				require.Equal(t, exportjob.StatusCompleted, job.Status, "error: %v", job.Error)
				require.NotNil(t, job.ExpiresAt)
				data := exportDownload(t, s, job)

				if scope == exportjob.ScopeOrganizationsRegistry {
					var n int64
					require.NoError(t, s.store.Pool.QueryRow(context.Background(), "SELECT count(*) FROM entities").Scan(&n))
					require.Equal(t, n, *job.RowCount)
					switch format {
					case exportjob.FormatParquet:
						rows, err := parquet.Read[jobs.ParquetEntity](bytes.NewReader(data), int64(len(data)))
						require.NoError(t, err)
						require.Len(t, rows, int(n))
						require.Equal(t, "org-1", rows[0].CanonicalName)
						require.Equal(t, []string{"O1"}, rows[0].Aliases)
					case exportjob.FormatCSV:
						recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
						require.NoError(t, err)
						require.Len(t, recs, int(n)+1)
						require.Equal(t, []string{"1", "org-1", "Org 1", "project", "active", "O1"}, recs[1])
					default:
						lines := strings.Split(strings.TrimSpace(string(data)), "\n")
						require.Len(t, lines, int(n))
						require.JSONEq(t, `{"id":1,"canonicalName":"org-1","displayName":"Org 1","entityType":"project","status":"active","aliases":["O1"]}`, lines[0])
					}
					return
				}
				_, includeEvidence := c.body["includeEvidence"]
				want := exportDBRows(t, s.store, c.where, includeEvidence, c.args...)
				require.NotEmpty(t, want)
				require.Equal(t, int64(len(want)), *job.RowCount)
				require.Equal(t, want, exportParseRows(t, format, data))
			})
		}
	}
}

// TestExportCreateResponse checks the 201 body field by field: the
// account id as a string, the key id, requestedParams with since/until in
// millisecond form with Z, nulls where the contract says null.
func TestExportCreateResponse(t *testing.T) {
	t.Parallel()
	s := startExportServer(t, exportServerOpts{noStart: true})
	key, keyID := exportEnterpriseKey(t, s.store)
	status, _, body := s.do(t, http.MethodPost, "/v1/export/jobs", key, []byte(`{
		"scope": "timeline.by-organization", "format": "parquet",
		"since": "2026-11-20T10:00:00Z", "until": "2026-11-21T10:00:00.25+01:00",
		"organizationIds": [7, 3, 7], "category": "funding", "includeEvidence": true, "note": "warehouse load"}`))
	require.Equal(t, http.StatusCreated, status, string(body))
	var raw map[string]map[string]any
	require.NoError(t, json.Unmarshal(body, &raw))
	data := raw["data"]
	var accountID int64
	require.NoError(t, s.store.Pool.QueryRow(context.Background(), "SELECT account_id FROM api_keys WHERE id = $1", keyID).Scan(&accountID))
	require.Equal(t, strconv.FormatInt(accountID, 10), data["appUserId"])
	require.Equal(t, float64(keyID), data["apiKeyId"])
	require.Equal(t, "timeline.by-organization", data["scope"])
	require.Equal(t, "parquet", data["format"])
	require.Equal(t, "requested", data["status"])
	require.Equal(t, "warehouse load", data["note"])
	for _, k := range []string{"downloadUrl", "expiresAt", "error"} {
		v, ok := data[k]
		require.True(t, ok, k)
		require.Nil(t, v, k)
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		_, err := time.Parse("2006-01-02T15:04:05.000Z", data[k].(string))
		require.NoError(t, err, k)
	}
	params, err := json.Marshal(data["requestedParams"])
	require.NoError(t, err)
	require.JSONEq(t, `{"since":"2026-11-20T10:00:00.000Z","until":"2026-11-21T09:00:00.250Z","category":"funding","includeEvidence":true,"organizationIds":[7,3]}`, string(params))

	// The River job was inserted with the row.
	var riverJobs int
	require.NoError(t, s.store.Pool.QueryRow(context.Background(), "SELECT count(*) FROM river_job WHERE kind = 'export' AND args->>'job_id' = $1", data["id"]).Scan(&riverJobs))
	require.Equal(t, 1, riverJobs)

	// Defaults: no until, category, evidence or organizations.
	created := s.create(t, key, map[string]any{"scope": "organizations.registry", "format": "csv"})
	require.Nil(t, created.RequestedParams.Since)
	require.Nil(t, created.RequestedParams.Until)
	require.Nil(t, created.RequestedParams.Category)
	require.False(t, created.RequestedParams.IncludeEvidence)
	require.Equal(t, []int64{}, created.RequestedParams.OrganizationIDs)
}

// TestExportValidation: every invalid body is a 400 (413 for size) whose
// message names the field, and nothing is recorded.
func TestExportValidation(t *testing.T) {
	t.Parallel()
	s := startExportServer(t, exportServerOpts{noStart: true})
	key, _ := exportEnterpriseKey(t, s.store)
	ok := `"scope":"radar.history","format":"csv","since":"2026-11-20T10:00:00Z"`
	cases := []struct {
		name, body string
		status     int
		msg        string
	}{
		{"empty body", ``, 400, "Request body is required"},
		{"invalid json", `{"scope":`, 400, "Invalid JSON body"},
		{"not an object", `[1,2]`, 400, "Invalid JSON body"},
		{"trailing data", `{` + ok + `} {}`, 400, "unexpected data after the JSON object"},
		{"unknown field", `{` + ok + `,"colour":"red"}`, 400, `Unknown field "colour"`},
		{"scope missing", `{"format":"csv"}`, 400, "scope is required"},
		{"scope wrong type", `{"scope":5,"format":"csv"}`, 400, "scope must be a string."},
		{"scope invalid", `{"scope":"radar.all","format":"csv"}`, 400, `Invalid scope "radar.all". Must be one of: organizations.registry, radar.history, signal.history, replay.global, timeline.by-organization.`},
		{"format missing", `{"scope":"organizations.registry"}`, 400, "format is required"},
		{"format invalid", `{"scope":"organizations.registry","format":"xlsx"}`, 400, `Invalid format "xlsx". Must be one of: jsonl, csv, parquet.`},
		{"since missing", `{"scope":"signal.history","format":"csv"}`, 400, "since is required for scope signal.history"},
		{"since invalid", `{"scope":"replay.global","format":"csv","since":"yesterday"}`, 400, "Invalid since"},
		{"since wrong type", `{"scope":"replay.global","format":"csv","since":1700000000}`, 400, "since must be an ISO 8601 timestamp string."},
		{"until invalid", `{` + ok + `,"until":"soon"}`, 400, "Invalid until"},
		{"until before since", `{` + ok + `,"until":"2026-11-19T10:00:00Z"}`, 400, "until must be later than since."},
		{"until equal since", `{` + ok + `,"until":"2026-11-20T10:00:00Z"}`, 400, "until must be later than since."},
		{"organizationIds missing", `{"scope":"timeline.by-organization","format":"csv","since":"2026-11-20T10:00:00Z"}`, 400, "organizationIds is required for scope timeline.by-organization"},
		{"organizationIds empty", `{"scope":"timeline.by-organization","format":"csv","since":"2026-11-20T10:00:00Z","organizationIds":[]}`, 400, "organizationIds is required"},
		{"organizationIds strings", `{"scope":"timeline.by-organization","format":"csv","since":"2026-11-20T10:00:00Z","organizationIds":["a"]}`, 400, "organizationIds must be an array of integers."},
		{"organizationIds fraction", `{"scope":"timeline.by-organization","format":"csv","since":"2026-11-20T10:00:00Z","organizationIds":[1.5]}`, 400, "organizationIds must be an array of integers."},
		{"organizationIds negative", `{"scope":"timeline.by-organization","format":"csv","since":"2026-11-20T10:00:00Z","organizationIds":[-1]}`, 400, "organizationIds must contain positive integer ids."},
		{"includeEvidence wrong type", `{` + ok + `,"includeEvidence":"yes"}`, 400, "includeEvidence must be a boolean."},
		{"category wrong type", `{` + ok + `,"category":["a"]}`, 400, "category must be a string."},
		{"note too long", `{` + ok + `,"note":"` + strings.Repeat("x", 501) + `"}`, 400, "note must be at most 500 characters."},
		{"body too large", `{` + ok + `,"note":"` + strings.Repeat("x", 1<<20) + `"}`, 413, "Request body too large. Maximum 1 MB."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, _, body := s.do(t, http.MethodPost, "/v1/export/jobs", key, []byte(c.body))
			require.Equal(t, c.status, status, string(body))
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(body, &e), string(body))
			require.Contains(t, e.Error, c.msg)
		})
	}
	var n int
	require.NoError(t, s.store.Pool.QueryRow(context.Background(), "SELECT count(*) FROM export_jobs").Scan(&n))
	require.Zero(t, n)

	// Limits that are valid: 500 characters of multi-byte text, a date-only
	// since, no since for the registry.
	s.create(t, key, map[string]any{"scope": "radar.history", "format": "jsonl", "since": "2026-11-20", "note": strings.Repeat("é", 500)})
	s.create(t, key, map[string]any{"scope": "organizations.registry", "format": "jsonl"})
}

// TestExportAccess: below the enterprise floor is 403, no key is 401, and
// another account's job (or a malformed id) is 404 "Export job not found".
// Listing shows only the caller's jobs, newest first, with capped paging.
func TestExportAccess(t *testing.T) {
	t.Parallel()
	s := startExportServer(t, exportServerOpts{noStart: true})
	body := []byte(`{"scope":"organizations.registry","format":"csv"}`)
	for _, plan := range []string{cryptointel.PlanFree, cryptointel.PlanPro, cryptointel.PlanBusiness} {
		key, _ := accesstest.NewKey(t, s.store, plan)
		status, _, resp := s.do(t, http.MethodPost, "/v1/export/jobs", key, body)
		require.Equal(t, http.StatusForbidden, status, "%s: %s", plan, resp)
		status, _, _ = s.do(t, http.MethodGet, "/v1/export/jobs", key, nil)
		require.Equal(t, http.StatusForbidden, status)
	}
	status, _, _ := s.do(t, http.MethodPost, "/v1/export/jobs", "", body)
	require.Equal(t, http.StatusUnauthorized, status)

	mine, _ := exportEnterpriseKey(t, s.store)
	theirs, _ := exportEnterpriseKey(t, s.store)
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, s.create(t, mine, map[string]any{"scope": "organizations.registry", "format": "csv", "note": strconv.Itoa(i)}).ID)
		later := s.now.Load().Add(time.Second)
		s.now.Store(&later)
	}
	other := s.create(t, theirs, map[string]any{"scope": "organizations.registry", "format": "jsonl"})

	for _, path := range []string{"/v1/export/jobs/" + other.ID, "/v1/export/jobs/not-a-uuid", "/v1/export/jobs/00000000-0000-0000-0000-000000000000"} {
		status, _, resp := s.do(t, http.MethodGet, path, mine, nil)
		require.Equal(t, http.StatusNotFound, status, path)
		require.JSONEq(t, `{"error":"Export job not found"}`, errorOnly(t, resp))
	}
	require.Equal(t, ids[1], s.get(t, mine, ids[1]).ID)

	list := func(query string) (int, int, []string) {
		status, _, resp := s.do(t, http.MethodGet, "/v1/export/jobs"+query, mine, nil)
		require.Equal(t, http.StatusOK, status, string(resp))
		var out struct {
			Limit, Offset int
			Data          []exportJobBody
		}
		require.NoError(t, json.Unmarshal(resp, &out))
		var got []string
		for _, j := range out.Data {
			got = append(got, j.ID)
		}
		return out.Limit, out.Offset, got
	}
	limit, offset, got := list("")
	require.Equal(t, 20, limit)
	require.Equal(t, 0, offset)
	require.Equal(t, []string{ids[2], ids[1], ids[0]}, got)
	limit, offset, got = list("?limit=1&offset=1")
	require.Equal(t, []string{ids[1]}, got)
	require.Equal(t, 1, limit)
	require.Equal(t, 1, offset)
	limit, offset, _ = list("?limit=999&offset=-4")
	require.Equal(t, 50, limit)
	require.Equal(t, 0, offset)
	limit, _, _ = list("?limit=0")
	require.Equal(t, 1, limit)
	status, _, _ = s.do(t, http.MethodGet, "/v1/export/jobs?limit=ten", mine, nil)
	require.Equal(t, http.StatusBadRequest, status)
}

// TestExportDownloadLink: the signed URL serves ranges and conditional
// requests; a tampered signature, another job's signature and an expired
// link are refused with JSON errors; an expired job shows no link.
func TestExportDownloadLink(t *testing.T) {
	t.Parallel()
	s := startExportServer(t, exportServerOpts{})
	exportSeed(t, s.store, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 10)
	key, _ := exportEnterpriseKey(t, s.store)
	created := s.create(t, key, map[string]any{"scope": "replay.global", "format": "jsonl", "since": "2026-10-01T00:00:00Z"})
	job := s.waitDone(t, key, created.ID)
	require.Equal(t, exportjob.StatusCompleted, job.Status)
	full := exportDownload(t, s, job)
	require.Equal(t, int64(10), *job.RowCount)

	// Range.
	status, hdr, part := s.do(t, http.MethodGet, *job.DownloadURL, "", nil, "Range", "bytes=5-24")
	require.Equal(t, http.StatusPartialContent, status)
	require.Equal(t, full[5:25], part)
	require.Equal(t, fmt.Sprintf("bytes 5-24/%d", len(full)), hdr.Get("Content-Range"))
	// Conditional.
	status, _, _ = s.do(t, http.MethodGet, *job.DownloadURL, "", nil, "If-None-Match", `"`+*job.SHA256+`"`)
	require.Equal(t, http.StatusNotModified, status)

	u, err := url.Parse(*job.DownloadURL)
	require.NoError(t, err)
	q := u.Query()
	sig := q.Get("sig")
	tampered := func(mut func(url.Values)) string {
		v := url.Values{"account": {q.Get("account")}, "expires": {q.Get("expires")}, "sig": {sig}}
		mut(v)
		return s.url + u.Path + "?" + v.Encode()
	}
	require.Equal(t, job.AppUserID, q.Get("account"), "the link names the account owning the export")
	// Links made with the secret itself, for this export: naming another
	// account, or (as links once were) no account at all.
	owner, err := strconv.ParseInt(job.AppUserID, 10, 64)
	require.NoError(t, err)
	otherAccount := owner + 1
	forOther := s.handlers.DownloadURL(nil, otherAccount, job.ID, time.Now().Add(time.Hour))
	unbound := func() string {
		exp := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
		m := hmac.New(sha256.New, s.handlers.Secret)
		m.Write([]byte("export-download\n" + job.ID + "\n" + exp))
		return s.url + u.Path + "?" + url.Values{"expires": {exp}, "sig": {hex.EncodeToString(m.Sum(nil))}}.Encode()
	}()
	flip := "0"
	if sig[0] == '0' {
		flip = "1"
	}
	for name, link := range map[string]string{
		"bad sig":                    tampered(func(v url.Values) { v.Set("sig", flip+sig[1:]) }),
		"no sig":                     tampered(func(v url.Values) { v.Del("sig") }),
		"later expiry":               tampered(func(v url.Values) { v.Set("expires", "99999999999") }),
		"other account":              tampered(func(v url.Values) { v.Set("account", strconv.FormatInt(otherAccount, 10)) }),
		"no account":                 tampered(func(v url.Values) { v.Del("account") }),
		"signed for another account": forOther,
		"signed without an account":  unbound,
		"other job":                  s.url + "/v1/export/files/00000000-0000-0000-0000-000000000000?" + q.Encode(),
		"no query at all":            s.url + u.Path,
	} {
		status, _, body := s.do(t, http.MethodGet, link, "", nil)
		require.Equal(t, http.StatusForbidden, status, name)
		require.JSONEq(t, `{"error":"Invalid download signature."}`, errorOnly(t, body), name)
	}
	// A correctly signed link to an unknown job is 404.
	unknown := "00000000-0000-0000-0000-000000000000"
	status, _, body := s.do(t, http.MethodGet, s.handlers.DownloadURL(nil, owner, unknown, time.Now().Add(time.Hour)), "", nil)
	require.Equal(t, http.StatusNotFound, status, string(body))

	// After the link lifetime: the link is refused and the job reads as
	// expired without a link, even before the sweep runs.
	later := s.now.Load().Add(2 * time.Hour)
	s.now.Store(&later)
	status, _, body = s.do(t, http.MethodGet, *job.DownloadURL, "", nil)
	require.Equal(t, http.StatusForbidden, status)
	require.Contains(t, string(body), "expired")
	expired := s.get(t, key, job.ID)
	require.Equal(t, exportjob.StatusExpired, expired.Status)
	require.Nil(t, expired.DownloadURL)
	// The sweep (run here, or already by River's periodic job) deletes the
	// file.
	_, err = jobs.ExpireExports(context.Background(), s.store, s.storage)
	require.NoError(t, err)
	require.Equal(t, exportjob.StatusExpired, s.get(t, key, job.ID).Status)
	entries, err := os.ReadDir(s.dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}
