// Package exportjob is the vocabulary of bulk export jobs (POST
// /v1/export/jobs): their scopes, formats and statuses, the parameters a
// job was requested with and the job as stored. db stores the jobs, jobs
// fulfills them, rest serves them; exportstore holds their files.
package exportjob

import (
	"encoding/json"
	"time"

	"github.com/uptrace/bun"

	"github.com/cryptointel/cryptointel"
	"github.com/cryptointel/cryptointel/wire"
)

// Export scopes (POST /v1/export/jobs "scope").
const (
	ScopeOrganizationsRegistry = "organizations.registry"
	ScopeRadarHistory          = "radar.history"
	ScopeSignalHistory         = "signal.history"
	ScopeReplayGlobal          = "replay.global"
	ScopeTimelineByOrg         = "timeline.by-organization"
)

// Scopes lists every export scope in the contract's order.
var Scopes = []string{
	ScopeOrganizationsRegistry,
	ScopeRadarHistory,
	ScopeSignalHistory,
	ScopeReplayGlobal,
	ScopeTimelineByOrg,
}

// ScopeIsHistorical reports whether scope exports events over a time
// window, so that "since" is required.
func ScopeIsHistorical(scope string) bool {
	switch scope {
	case ScopeRadarHistory, ScopeSignalHistory, ScopeReplayGlobal, ScopeTimelineByOrg:
		return true
	}
	return false
}

// Export formats (POST /v1/export/jobs "format").
const (
	FormatJSONL   = "jsonl"
	FormatCSV     = "csv"
	FormatParquet = "parquet"
)

// Formats lists every export format in the contract's order.
var Formats = []string{FormatJSONL, FormatCSV, FormatParquet}

// Export job statuses. A job is requested, then running, then completed or
// failed; a completed job becomes expired when its download link's lifetime
// ends and its file is deleted.
const (
	StatusRequested = "requested"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusExpired   = "expired"
)

// Time is a timestamp that marshals to JSON in the API's instant
// form, wire.TimeLayout.
type Time struct{ time.Time }

// MarshalJSON writes the time in UTC with milliseconds and a Z suffix.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.UTC().Format(wire.TimeLayout) + `"`), nil
}

// UnmarshalJSON reads an ISO 8601 timestamp (cryptointel.ParseInstant).
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := cryptointel.ParseInstant(s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// Params are the filters an export job was requested with, stored as
// the job's requested_params and echoed in its requestedParams.
type Params struct {
	// Since is the inclusive lower bound on latestEvidenceTimestamp; nil
	// for organizations.registry.
	Since *Time `json:"since"`
	// Until is the exclusive upper bound on latestEvidenceTimestamp; nil
	// for no upper bound.
	Until *Time `json:"until"`
	// Category filters events by eventCategory; nil for every category.
	Category *string `json:"category"`
	// IncludeEvidence adds each event's evidence to the output.
	IncludeEvidence bool `json:"includeEvidence"`
	// OrganizationIDs restricts timeline.by-organization to events owned by
	// or involving these entities. Never nil when marshaled.
	OrganizationIDs []int64 `json:"organizationIds"`
}

// Job is an account's request for a bulk export file.
type Job struct {
	bun.BaseModel `bun:"table:export_jobs"`

	ID              string          `bun:"id,pk,type:uuid"`
	AccountID       int64           `bun:"account_id"`
	APIKeyID        int64           `bun:"api_key_id"`
	Scope           string          `bun:"scope"`
	Format          string          `bun:"format"`
	Status          string          `bun:"status"`
	RequestedParams json.RawMessage `bun:"requested_params,type:jsonb"`
	Note            string          `bun:"note"`
	StorageKey      *string         `bun:"storage_key"`
	RowCount        *int64          `bun:"row_count"`
	ByteSize        *int64          `bun:"byte_size"`
	SHA256          *string         `bun:"sha256"`
	Error           *string         `bun:"error"`
	ExpiresAt       *time.Time      `bun:"expires_at"`
	CreatedAt       time.Time       `bun:"created_at,nullzero,default:current_timestamp"`
	UpdatedAt       time.Time       `bun:"updated_at,nullzero,default:current_timestamp"`
}
