package app

import (
	"net/http"

	"github.com/cryptointel/cryptointel/rest"
)

// ExportRoutes returns the /v1/export/jobs route-table entries, bound to
// this app's database, export storage and job queue.
func (a *App) ExportRoutes() []rest.Route { return rest.ExportRoutes(a.jobs.export) }

// ExportDownloadHandler serves GET /v1/export/files/{id}: the signed,
// expiring download of a completed export. It authenticates by the URL's
// signature and is mounted outside the access layer.
func (a *App) ExportDownloadHandler() http.Handler { return a.jobs.export.Download() }
