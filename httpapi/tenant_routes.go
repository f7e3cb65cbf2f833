package httpapi

import (
	"net/http"
	"time"

	"github.com/docketq/docket"
)

// The queue and kind of document jobs (pipeline.Queue and pipeline.Kind).
const (
	documentsQueue = docket.DocumentQueue
	documentKind   = docket.DocumentKind
)

// Page sizes of the list routes (?limit=).
const (
	defaultPageSize = 50
	maxPageSize     = 500
)

// uploadOverhead is what a multipart body may carry on top of the file:
// boundaries, part headers and small fields.
const uploadOverhead = 64 << 10

// Upload transfer-rate floor: after uploadGrace, a client must have sent at
// least uploadMinRate bytes per second on average, or the upload ends with
// 408 (a slowloris holds no connection for long). Variables so that tests
// can shrink them.
var (
	uploadGrace   = 10 * time.Second
	uploadMinRate = int64(16 << 10)
)

// uploadPath is the upload route's pattern; uploadRoute is its name.
const (
	uploadPath  = "/v1/documents"
	uploadRoute = http.MethodPost + " " + uploadPath
)

// tenantRoutes serves the tenant API: documents, jobs, search, rate limit.
func (s *Server) tenantRoutes() []route {
	return []route{
		{http.MethodPost, uploadPath, tenant, s.uploadDocument},
		{http.MethodGet, "/v1/documents", tenant, s.listDocuments},
		{http.MethodGet, "/v1/documents/{id}", tenant, s.getDocument},
		{http.MethodDelete, "/v1/documents/{id}", tenant, s.deleteDocument},
		{http.MethodPost, "/v1/documents/{id}/retry", tenant, s.retryDocument},
		{http.MethodGet, "/v1/documents/{id}/chunks", tenant, s.listChunks},
		{http.MethodGet, "/v1/search", tenant, s.search},
		{http.MethodGet, "/v1/jobs", tenant, s.listJobs},
		{http.MethodGet, "/v1/jobs/{id}", tenant, s.getJob},
		{http.MethodPost, "/v1/jobs/{id}/cancel", tenant, s.cancelJob},
		{http.MethodGet, "/v1/rate-limit", tenant, s.getRateLimit},
	}
}
