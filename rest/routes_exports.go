package rest

import (
	"net/http"

	"github.com/cryptointel/cryptointel"
)

// ExportRoutes returns the route-table entries of the export jobs API. The
// download route (ExportHandlers.Download) is not among them: it
// authenticates by its URL signature, not by API key, and is mounted
// outside the access middleware.
func ExportRoutes(h *ExportHandlers) []Route {
	return []Route{
		{
			Method:        http.MethodPost,
			Path:          "/v1/export/jobs",
			Summary:       "Request a bulk export (fulfilled asynchronously)",
			Description:   "Records an export job in status requested and queues its fulfillment. The job moves to running, then completed (with a signed, expiring downloadUrl, rowCount, byteSize and sha256) or failed (with error); a completed job becomes expired when its link lifetime ends. An account may have a bounded number of jobs requested or running (409 beyond it) and its jobs of one UTC day may write a bounded number of bytes (429 with Retry-After once reached); refusals cost no credits.",
			Policy:        exportPolicy("export.jobs", 10),
			Handler:       h.Create,
			SuccessStatus: http.StatusCreated,
			ErrorStatuses: []int{http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType},
			RequestBody:   exportRequestSchema,
			Response:      goSchemaOf[exportJobBody](),
		},
		{
			Method:  http.MethodGet,
			Path:    "/v1/export/jobs",
			Summary: "List the account's export jobs, newest first",
			Policy:  exportPolicy("export.jobs.list", 1),
			Params: []Param{
				limitParam(&cryptointel.ExportJobsLimit),
				offsetParam(&cryptointel.ExportJobsOffset),
			},
			Handler:  h.List,
			Response: goSchemaOf[exportJobListBody](),
		},
		{
			Method:        http.MethodGet,
			Path:          "/v1/export/jobs/{id}",
			Summary:       "Read one export job: status, progress, row count, size, checksum, download link",
			Policy:        exportPolicy("export.jobs.get", 1),
			Params:        []Param{{Name: "id", In: "path", Type: TypeString, Required: true, Description: "export job id (UUID)"}},
			Handler:       h.Get,
			Response:      goSchemaOf[exportJobBody](),
			ErrorStatuses: []int{http.StatusNotFound},
		},
	}
}
