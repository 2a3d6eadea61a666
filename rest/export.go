package rest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/access"
	"github.com/cryptointel/cryptointel/db"
	"github.com/cryptointel/cryptointel/exportjob"
	"github.com/cryptointel/cryptointel/exportstore"
)

// Export request limits.
const (
	// ExportMaxNoteChars is the longest note, in characters.
	ExportMaxNoteChars = 500
	// ExportMaxOrganizationIDs bounds organizationIds.
	ExportMaxOrganizationIDs = 1000
)

// Per-account export bounds (ExportHandlers.MaxActiveJobs and
// MaxBytesPerDay; app's EXPORT_MAX_ACTIVE_JOBS and
// EXPORT_MAX_BYTES_PER_DAY default to them).
const (
	// DefaultExportMaxActiveJobs is how many export jobs an account may
	// have requested or running at a time.
	DefaultExportMaxActiveJobs = 3
	// DefaultExportMaxBytesPerDay bounds the bytes an account's export jobs
	// created in a UTC day write: 2 GiB.
	DefaultExportMaxBytesPerDay = 2 << 30
)

// Messages of an export job refused by the account's bounds.
const (
	// msgExportTooManyActiveFmt: active jobs, bound.
	msgExportTooManyActiveFmt = "Too many export jobs in progress: this account has %d requested or running, and at most %d may be at a time. Wait for one to complete or fail (GET /v1/export/jobs), then retry."
	// msgExportDailyVolumeFmt: bytes written today, bound.
	msgExportDailyVolumeFmt = "Daily export volume reached: this account's export jobs created today (UTC) wrote %s, and at most %s may be written per day. New export jobs are accepted again at 00:00 UTC (see Retry-After)."
)

// formatBytes writes n bytes for people: "1.5 GiB", "37.8 MiB", "512 B".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// ExportHandlers serves /v1/export/*: creating and reading an account's
// export jobs and downloading their files through signed, expiring URLs.
type ExportHandlers struct {
	// Store is the database.
	Store *db.DB
	// Storage holds the export files.
	Storage exportstore.Storage
	// RedirectDownloads answers a valid download link with a redirect (302)
	// to a short-lived presigned URL of the object store, so the file's
	// bytes do not pass through the service, when the store can sign URLs
	// (S3). Otherwise, and by default, the service streams the file itself.
	RedirectDownloads bool
	// Enqueue inserts the export's River job in the transaction that
	// inserts its row (jobs.EnqueueExport).
	Enqueue func(ctx context.Context, tx pgx.Tx, jobID string) error
	// Secret keys the HMAC-SHA256 signature of download URLs.
	Secret []byte
	// BaseURL is the public base URL put in downloadUrl, for example
	// "https://api.example.com". Empty derives it from the request (Host,
	// TLS or X-Forwarded-Proto).
	BaseURL string
	// MaxActiveJobs bounds the jobs an account may have requested or
	// running: one more is refused 409. Zero or negative: no bound.
	MaxActiveJobs int
	// MaxBytesPerDay bounds the bytes written by an account's jobs created
	// in a UTC day: once reached, new jobs are refused 429 with
	// Retry-After until the next day. Zero or negative: no bound.
	MaxBytesPerDay int64
}

func (h *ExportHandlers) now() time.Time {
	if h.Store != nil && h.Store.Now != nil {
		return h.Store.Now()
	}
	return time.Now()
}

// exportPolicy is the access policy of the export routes: premium layer,
// enterprise floor, export feature.
func exportPolicy(name string, cost int) access.Policy {
	return access.Policy{
		Surface:    "export",
		Layer:      access.LayerPremium,
		Name:       name,
		CreditCost: cost,
		Feature:    access.FeatureExport,
		MinPlan:    cryptointel.PlanEnterprise,
	}
}

var exportRequestSchema = map[string]any{
	"type":                 "object",
	"additionalProperties": false,
	"required":             []string{"scope", "format"},
	"properties": map[string]any{
		"scope":           map[string]any{"type": "string", "enum": exportjob.Scopes},
		"format":          map[string]any{"type": "string", "enum": exportjob.Formats},
		"since":           map[string]any{"type": "string", "format": "date-time", "description": "required for radar.history, signal.history, replay.global and timeline.by-organization"},
		"until":           map[string]any{"type": "string", "format": "date-time", "description": "must be later than since"},
		"organizationIds": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 1, "maxItems": ExportMaxOrganizationIDs, "description": "required for timeline.by-organization"},
		"category":        map[string]any{"type": "string"},
		"includeEvidence": map[string]any{"type": "boolean"},
		"note":            map[string]any{"type": "string", "maxLength": ExportMaxNoteChars},
	},
}

// exportCaller returns the keyed caller allowed to use export jobs.
func exportCaller(ctx context.Context) (*access.Caller, error) {
	c, ok := access.CallerFrom(ctx)
	if !ok || c == nil {
		return nil, cryptointel.Errorf(cryptointel.EUNAUTHORIZED, "%s", access.MsgMissingKey)
	}
	if c.AccountID == 0 || c.APIKeyID == 0 || !c.Plan.Export {
		return nil, cryptointel.Errorf(cryptointel.EFORBIDDEN, "Export jobs require the enterprise plan.")
	}
	return c, nil
}

// Messages of an export request body that cannot be read (the webhook
// routes word theirs differently, and clients match on both).
var (
	msgExportBodyTooLarge   = "Request body too large. Maximum " + maxJSONBody + "."
	msgExportBodyUnreadable = "Could not read the request body."
)

// exportRequest is the POST /v1/export/jobs body. Pointers tell absent
// (or null) from given.
type exportRequest struct {
	Scope           *string  `json:"scope"`
	Format          *string  `json:"format"`
	Since           *string  `json:"since"`
	Until           *string  `json:"until"`
	OrganizationIDs *[]int64 `json:"organizationIds"`
	Category        *string  `json:"category"`
	IncludeEvidence *bool    `json:"includeEvidence"`
	Note            *string  `json:"note"`
}

var exportFieldTypes = map[string]string{
	"scope": "a string", "format": "a string", "since": "an ISO 8601 timestamp string",
	"until": "an ISO 8601 timestamp string", "organizationIds": "an array of integers",
	"category": "a string", "includeEvidence": "a boolean", "note": "a string",
}

// decodeExportRequest reads and validates the body of a create request.
func decodeExportRequest(w http.ResponseWriter, r *http.Request) (*exportRequest, error) {
	body, err := readJSONBody(w, r, msgExportBodyTooLarge, msgExportBodyUnreadable)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "Request body is required: a JSON object with scope and format.")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req exportRequest
	if err := dec.Decode(&req); err != nil {
		return nil, exportJSONError(err)
	}
	// Anything after the object, even a stray bracket, is a token or a
	// syntax error, never the end of the input.
	if _, err := dec.Token(); err != io.EOF {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "Invalid JSON body: unexpected data after the JSON object.")
	}
	return &req, nil
}

// exportJSONError turns a decoding error into a 400 naming the field.
func exportJSONError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		name := typeErr.Field
		if i := strings.IndexByte(name, '.'); i >= 0 {
			name = name[:i]
		}
		if want, ok := exportFieldTypes[name]; ok {
			return cryptointel.Errorf(cryptointel.EINVALID, "%s must be %s.", name, want)
		}
		if name == "" {
			return cryptointel.Errorf(cryptointel.EINVALID, "Invalid JSON body: expected a JSON object.")
		}
		return cryptointel.Errorf(cryptointel.EINVALID, "Invalid JSON body: %s has the wrong type.", name)
	case errors.As(err, &syntaxErr):
		return cryptointel.Errorf(cryptointel.EINVALID, "Invalid JSON body: %s (at byte %d).", syntaxErr.Error(), syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return cryptointel.Errorf(cryptointel.EINVALID, "Invalid JSON body: unexpected end of input.")
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		return cryptointel.Errorf(cryptointel.EINVALID, "Unknown field %s. Allowed fields: scope, format, since, until, organizationIds, category, includeEvidence, note.",
			strings.TrimPrefix(msg, "json: unknown field "))
	}
	return cryptointel.Errorf(cryptointel.EINVALID, "Invalid JSON body.")
}

// validate checks req against the contract and returns the job to insert.
func (req *exportRequest) validate() (scope, format string, params exportjob.Params, note string, err error) {
	if req.Scope == nil || strings.TrimSpace(*req.Scope) == "" {
		return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "scope is required. Must be one of: %s.", strings.Join(exportjob.Scopes, ", "))
	}
	scope = *req.Scope
	if !exportContains(exportjob.Scopes, scope) {
		return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "Invalid scope %q. Must be one of: %s.", scope, strings.Join(exportjob.Scopes, ", "))
	}
	if req.Format == nil || strings.TrimSpace(*req.Format) == "" {
		return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "format is required. Must be one of: %s.", strings.Join(exportjob.Formats, ", "))
	}
	format = *req.Format
	if !exportContains(exportjob.Formats, format) {
		return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "Invalid format %q. Must be one of: %s.", format, strings.Join(exportjob.Formats, ", "))
	}
	if req.Since != nil && strings.TrimSpace(*req.Since) != "" {
		if params.Since, err = exportInstant("since", *req.Since, "2026-11-20T10:00:00Z"); err != nil {
			return "", "", params, "", err
		}
	} else if exportjob.ScopeIsHistorical(scope) {
		return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "since is required for scope %s. Use an ISO 8601 timestamp (for example 2026-11-20T10:00:00Z).", scope)
	}
	if req.Until != nil && strings.TrimSpace(*req.Until) != "" {
		if params.Until, err = exportInstant("until", *req.Until, "2026-11-21T10:00:00Z"); err != nil {
			return "", "", params, "", err
		}
		if params.Since != nil && !params.Until.After(params.Since.Time) {
			return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "until must be later than since.")
		}
	}
	params.OrganizationIDs = []int64{}
	if req.OrganizationIDs != nil {
		seen := map[int64]bool{}
		for _, id := range *req.OrganizationIDs {
			if id <= 0 {
				return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "organizationIds must contain positive integer ids.")
			}
			if !seen[id] {
				seen[id] = true
				params.OrganizationIDs = append(params.OrganizationIDs, id)
			}
		}
		if len(params.OrganizationIDs) > ExportMaxOrganizationIDs {
			return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "organizationIds may hold at most %d ids.", ExportMaxOrganizationIDs)
		}
	}
	if scope == exportjob.ScopeTimelineByOrg && len(params.OrganizationIDs) == 0 {
		return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "organizationIds is required for scope timeline.by-organization: a non-empty array of integer organization ids.")
	}
	// PostgreSQL text cannot hold NUL; refuse it here rather than fail the
	// insert.
	for name, v := range map[string]*string{"category": req.Category, "note": req.Note} {
		if v != nil && strings.IndexByte(*v, 0) >= 0 {
			return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "%s must not contain NUL bytes.", name)
		}
	}
	if req.Category != nil && strings.TrimSpace(*req.Category) != "" {
		c := strings.TrimSpace(*req.Category)
		params.Category = &c
	}
	if req.IncludeEvidence != nil {
		params.IncludeEvidence = *req.IncludeEvidence
	}
	if req.Note != nil {
		note = *req.Note
		if utf8.RuneCountInString(note) > ExportMaxNoteChars {
			return "", "", params, "", cryptointel.Errorf(cryptointel.EINVALID, "note must be at most %d characters.", ExportMaxNoteChars)
		}
	}
	return scope, format, params, note, nil
}

// exportInstant parses the body field name, an instant, to the millisecond;
// example illustrates the form in the message of a bad value.
func exportInstant(name, raw, example string) (*exportjob.Time, error) {
	t, err := parseTime(strings.TrimSpace(raw))
	if cryptointel.IsInstantRange(err) {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "Invalid %s: use an instant %s.", name, cryptointel.InstantBounds)
	} else if err != nil {
		return nil, cryptointel.Errorf(cryptointel.EINVALID, "Invalid %s: use an ISO 8601 timestamp (for example %s).", name, example)
	}
	return &exportjob.Time{Time: t.Truncate(time.Millisecond)}, nil
}

func exportContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Create serves POST /v1/export/jobs: 201 {"data": job} in status
// requested. The row and its River job are inserted in one transaction.
func (h *ExportHandlers) Create(w http.ResponseWriter, r *http.Request) error {
	caller, err := exportCaller(r.Context())
	if err != nil {
		return err
	}
	req, err := decodeExportRequest(w, r)
	if err != nil {
		return handleBodyError(w, err)
	}
	scope, format, params, note, err := req.validate()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("error encoding export params: %w", err)
	}
	job := &exportjob.Job{
		AccountID: caller.AccountID, APIKeyID: caller.APIKeyID,
		Scope: scope, Format: format, RequestedParams: raw, Note: note,
	}
	bounds := exportstore.ExportBounds{MaxActive: max(h.MaxActiveJobs, 0), MaxBytesPerDay: max(h.MaxBytesPerDay, 0)}
	err = exportstore.CreateExportJob(r.Context(), h.Store, job, bounds, func(ctx context.Context, tx pgx.Tx) error {
		return h.Enqueue(ctx, tx, job.ID)
	})
	var be *exportstore.ExportBoundError
	switch {
	case errors.As(err, &be) && bounds.MaxActive > 0 && be.Active >= bounds.MaxActive:
		return cryptointel.Errorf(cryptointel.ECONFLICT, msgExportTooManyActiveFmt, be.Active, bounds.MaxActive)
	case errors.As(err, &be):
		now := h.now().UTC()
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(now.Truncate(24*time.Hour).Add(24*time.Hour).Sub(now).Seconds()))))
		return cryptointel.Errorf(cryptointel.ERATELIMIT, msgExportDailyVolumeFmt, formatBytes(be.BytesToday), formatBytes(bounds.MaxBytesPerDay))
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusCreated, exportJobBody{h.present(r, job)})
	return nil
}

// List serves GET /v1/export/jobs: the account's jobs, newest first, paged
// by limit and offset (cryptointel.ExportJobsLimit, ExportJobsOffset),
// capped and clamped like every list route.
func (h *ExportHandlers) List(w http.ResponseWriter, r *http.Request) error {
	caller, err := exportCaller(r.Context())
	if err != nil {
		return err
	}
	c, err := callOf(r)
	if err != nil {
		return err
	}
	limit, offset := c.Int("limit"), c.Int("offset")
	list, err := exportstore.ListExportJobs(r.Context(), h.Store.Bun, caller.AccountID, limit, offset)
	if err != nil {
		return err
	}
	data := make([]*exportJobJSON, len(list))
	for i, j := range list {
		data[i] = h.present(r, j)
	}
	writeJSON(w, http.StatusOK, exportJobListBody{Limit: limit, Offset: offset, Data: data})
	return nil
}

// Get serves GET /v1/export/jobs/{id}. Another account's job, an unknown
// id and a malformed id are all 404 "Export job not found".
func (h *ExportHandlers) Get(w http.ResponseWriter, r *http.Request) error {
	caller, err := exportCaller(r.Context())
	if err != nil {
		return err
	}
	job, err := exportstore.ExportJobByID(r.Context(), h.Store.Bun, caller.AccountID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, exportJobBody{h.present(r, job)})
	return nil
}

// exportJobBody is the response of POST /v1/export/jobs and GET
// /v1/export/jobs/{id}.
type exportJobBody struct {
	Data *exportJobJSON `json:"data"`
}

// exportJobListBody is GET /v1/export/jobs' response.
type exportJobListBody struct {
	Limit  int              `json:"limit"`
	Offset int              `json:"offset"`
	Data   []*exportJobJSON `json:"data"`
}

// exportJobJSON is the export job resource (section 2.6) plus, once the
// worker has run, rowCount (rows written so far while running), byteSize
// and sha256.
type exportJobJSON struct {
	ID              string           `json:"id"`
	AppUserID       string           `json:"appUserId"`
	APIKeyID        int64            `json:"apiKeyId"`
	Scope           string           `json:"scope"`
	Format          string           `json:"format"`
	Status          string           `json:"status"`
	RequestedParams exportjob.Params `json:"requestedParams"`
	Note            string           `json:"note"`
	DownloadURL     *string          `json:"downloadUrl"`
	ExpiresAt       *exportjob.Time  `json:"expiresAt"`
	Error           *string          `json:"error"`
	CreatedAt       exportjob.Time   `json:"createdAt"`
	UpdatedAt       exportjob.Time   `json:"updatedAt"`
	RowCount        *int64           `json:"rowCount,omitempty"`
	ByteSize        *int64           `json:"byteSize,omitempty"`
	SHA256          *string          `json:"sha256,omitempty"`
}

func (h *ExportHandlers) present(r *http.Request, j *exportjob.Job) *exportJobJSON {
	var params exportjob.Params
	json.Unmarshal(j.RequestedParams, &params) //nolint:errcheck // written by Create
	if params.OrganizationIDs == nil {
		params.OrganizationIDs = []int64{}
	}
	out := &exportJobJSON{
		ID: j.ID, AppUserID: strconv.FormatInt(j.AccountID, 10), APIKeyID: j.APIKeyID,
		Scope: j.Scope, Format: j.Format, Status: j.Status, RequestedParams: params, Note: j.Note,
		Error: j.Error, CreatedAt: exportjob.Time{Time: j.CreatedAt}, UpdatedAt: exportjob.Time{Time: j.UpdatedAt},
		RowCount: j.RowCount, ByteSize: j.ByteSize, SHA256: j.SHA256,
	}
	if j.ExpiresAt != nil {
		out.ExpiresAt = &exportjob.Time{Time: *j.ExpiresAt}
	}
	switch {
	case j.Status == exportjob.StatusCompleted && j.ExpiresAt != nil && !h.now().Before(*j.ExpiresAt):
		// Expired but not swept yet.
		out.Status = exportjob.StatusExpired
	case j.Status == exportjob.StatusCompleted && j.ExpiresAt != nil:
		u := h.DownloadURL(r, j.AccountID, j.ID, *j.ExpiresAt)
		out.DownloadURL = &u
	}
	return out
}

// DownloadURL returns the signed URL of job id's file, owned by account,
// valid until expires. The signature covers the account with the job and
// the expiry, so a link is bound to the account that owns the export.
func (h *ExportHandlers) DownloadURL(r *http.Request, account int64, id string, expires time.Time) string {
	base := strings.TrimRight(h.BaseURL, "/")
	if base == "" && r != nil {
		base = access.RequestOrigin(r)
	}
	acct := strconv.FormatInt(account, 10)
	exp := strconv.FormatInt(expires.Unix(), 10)
	q := url.Values{"account": {acct}, "expires": {exp}, "sig": {h.sign(acct, id, exp)}}
	return base + "/v1/export/files/" + id + "?" + q.Encode()
}

func (h *ExportHandlers) sign(account, id, expires string) string {
	m := hmac.New(sha256.New, h.Secret)
	m.Write([]byte("export-download\n" + account + "\n" + id + "\n" + expires))
	return hex.EncodeToString(m.Sum(nil))
}

// PresignedDownloadTTL bounds the lifetime of the presigned URL a download
// redirects to (see ExportHandlers.RedirectDownloads); it never outlives
// the download link itself.
const PresignedDownloadTTL = 5 * time.Minute

// Download returns the handler of GET
// /v1/export/files/{id}?account=…&expires=…&sig=…: it authenticates by the
// URL's HMAC signature (not by API key), which binds the link to the
// account owning the export (a link naming another account is 403), and serves
// the file with Content-Length, Content-Type, ETag (the SHA-256) and range
// support — or, with RedirectDownloads and a store that signs URLs, with a
// 302 to a presigned URL of the object (valid for PresignedDownloadTTL at
// most, never past the link's expiry). A tampered or missing signature and
// an expired link are 403; an unknown job or a job without a published
// file is 404. Mount it outside
// the API key middleware, for example
// mux.Handle("GET /v1/export/files/{id}", h.Download()).
func (h *ExportHandlers) Download() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.download(w, r); err != nil {
			WriteError(w, r, err)
		}
	})
}

func (h *ExportHandlers) download(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	q := r.URL.Query()
	acct, exp, sig := q.Get("account"), q.Get("expires"), q.Get("sig")
	account, aerr := strconv.ParseInt(acct, 10, 64)
	expUnix, err := strconv.ParseInt(exp, 10, 64)
	if aerr != nil || err != nil || sig == "" || !hmac.Equal([]byte(sig), []byte(h.sign(acct, id, exp))) {
		return cryptointel.Errorf(cryptointel.EFORBIDDEN, "Invalid download signature.")
	}
	now := h.now()
	if !now.Before(time.Unix(expUnix, 0)) {
		return cryptointel.Errorf(cryptointel.EFORBIDDEN, "Download link has expired. Request a new export.")
	}
	job, err := exportstore.ExportJobForWorker(r.Context(), h.Store.Bun, id)
	if err != nil {
		return err
	}
	if job.AccountID != account {
		// Signed for an account that does not own the export: only a
		// holder of the secret could make such a link.
		return cryptointel.Errorf(cryptointel.EFORBIDDEN, "Invalid download signature.")
	}
	if job.Status == exportjob.StatusExpired || (job.ExpiresAt != nil && !now.Before(*job.ExpiresAt)) {
		return cryptointel.Errorf(cryptointel.EFORBIDDEN, "Download link has expired. Request a new export.")
	}
	if job.Status != exportjob.StatusCompleted || job.StorageKey == nil {
		return cryptointel.Errorf(cryptointel.ENOTFOUND, "Export file not found")
	}
	contentType := exportstore.ContentType(job.Format)
	disposition := fmt.Sprintf(`attachment; filename="export-%s.%s"`, job.ID, exportstore.FileExt(job.Format))
	hdr := w.Header()
	hdr.Set("Cache-Control", "private, no-store")
	if h.RedirectDownloads {
		ttl := min(PresignedDownloadTTL, time.Unix(expUnix, 0).Sub(now))
		if job.ExpiresAt != nil {
			ttl = min(ttl, job.ExpiresAt.Sub(now))
		}
		ttl = max(ttl, time.Second)
		u, err := h.Storage.SignedURL(r.Context(), *job.StorageKey, ttl, contentType, disposition)
		if err == nil {
			http.Redirect(w, r, u, http.StatusFound)
			return nil
		} else if !errors.Is(err, exportstore.ErrNoSignedURL) {
			return err
		}
	}
	obj, err := h.Storage.Open(r.Context(), *job.StorageKey)
	if errors.Is(err, exportstore.ErrNotFound) {
		return cryptointel.Errorf(cryptointel.ENOTFOUND, "Export file not found")
	} else if err != nil {
		return err
	}
	defer obj.Close()
	hdr.Set("Content-Type", contentType)
	hdr.Set("Content-Disposition", disposition)
	if job.SHA256 != nil {
		hdr.Set("ETag", `"`+*job.SHA256+`"`)
	}
	http.ServeContent(w, r, "", obj.ModTime(), obj)
	return nil
}
