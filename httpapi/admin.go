package httpapi

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketq/docket"
)

// adminRoutes serves /v1/admin/*: tenants and their keys, queue health,
// processing performance, stuck and failed jobs, pause and resume. The admin sees every
// tenant's objects.
func (s *Server) adminRoutes() []route {
	return []route{
		{"POST", "/v1/admin/tenants", admin, s.adminTenantCreate},
		{"GET", "/v1/admin/tenants", admin, s.adminTenantList},
		{"GET", "/v1/admin/tenants/{id}", admin, s.adminTenantGet},
		{"PATCH", "/v1/admin/tenants/{id}", admin, s.adminTenantUpdate},
		{"DELETE", "/v1/admin/tenants/{id}", admin, s.adminTenantDelete}, // admin_tenant_delete.go
		{"POST", "/v1/admin/tenants/{id}/keys", admin, s.adminKeyCreate},
		{"DELETE", "/v1/admin/tenants/{id}/keys/{key_id}", admin, s.adminKeyRevoke},
		{"GET", "/v1/admin/queue", admin, s.adminQueueHealth},
		{"GET", "/v1/admin/health", admin, s.adminHealth},
		{"GET", "/v1/admin/events", admin, s.adminEvents}, // admin_events.go
		{"GET", "/v1/admin/performance", admin, s.adminPerformance},
		{"GET", "/v1/admin/jobs", admin, s.adminJobList}, // admin_job_list.go
		{"GET", "/v1/admin/jobs/stuck", admin, s.adminStuckJobs},
		{"GET", "/v1/admin/jobs/failed", admin, s.adminFailedJobs},
		{"GET", "/v1/admin/jobs/{id}", admin, s.adminJobGet},
		{"GET", "/v1/admin/periodic", admin, s.adminPeriodic},
		{"POST", "/v1/admin/jobs/{id}/requeue", admin, s.adminRequeue},
		{"POST", "/v1/admin/jobs/{id}/discard", admin, s.adminDiscard},
		{"POST", "/v1/admin/jobs/{id}/cancel", admin, s.adminCancel},
		{"POST", "/v1/admin/queues/{queue}/pause", admin, s.adminQueuePause(true)}, // admin_pause.go
		{"POST", "/v1/admin/queues/{queue}/resume", admin, s.adminQueuePause(false)},
		{"POST", "/v1/admin/tenants/{id}/pause", admin, s.adminTenantPause(true)},
		{"POST", "/v1/admin/tenants/{id}/resume", admin, s.adminTenantPause(false)},
	}
}

// Bounds of the admin API's tenant settings.
const (
	maxTenantConcurrency = 1000
	maxTenantRateLimit   = 1_000_000
	maxTenantWeight      = docket.MaxTenantWeight
)

// TenantView is a tenant as the admin API shows it.
type TenantView struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Plan        string `json:"plan"`
	Concurrency int    `json:"concurrency"`
	// RateLimit is the tenant's override of uploads per hour; 0: the plan's.
	RateLimit int `json:"rate_limit"`
	// UploadsPerHour is the effective limit.
	UploadsPerHour int `json:"uploads_per_hour"`
	// Weight is the tenant's override of its plan's weight in the
	// document queue's fair shares; 0: the plan's.
	Weight int `json:"weight"`
	// EffectiveWeight is the weight the queue applies.
	EffectiveWeight int       `json:"effective_weight"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
	// Paused: no job of the tenant starts until it is resumed
	// (admin_pause.go).
	Paused bool `json:"paused"`
}

// NewTenantView renders a tenant as the admin API shows it (for the CLI).
func NewTenantView(t *docket.Tenant) TenantView { return tenantView(t) }

func tenantView(t *docket.Tenant) TenantView {
	return TenantView{
		ID: t.ID, Name: t.Name, Plan: string(t.Plan), Concurrency: t.Concurrency,
		RateLimit: t.RateLimit, UploadsPerHour: t.UploadsPerHour(),
		Weight: t.Weight, EffectiveWeight: t.EffectiveWeight(),
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
}

// APIKeyView is a stored key as the admin API shows it: never the key.
type APIKeyView struct {
	ID        string     `json:"id"`
	TenantID  string     `json:"tenant_id"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// NewAPIKeyView renders a stored key as the admin API shows it (for the
// CLI).
func NewAPIKeyView(k *docket.APIKey) APIKeyView { return apiKeyView(k) }

func apiKeyView(k *docket.APIKey) APIKeyView {
	return APIKeyView{
		ID: k.ID, TenantID: k.TenantID, Name: k.Name, CreatedAt: k.CreatedAt,
		ExpiresAt: timePtr(k.ExpiresAt), RevokedAt: timePtr(k.RevokedAt),
	}
}

// tenantInput is the body of tenant create (name required) and update
// (every field optional).
type tenantInput struct {
	Name        *string `json:"name"`
	Plan        *string `json:"plan"`
	Concurrency *int    `json:"concurrency"`
	RateLimit   *int    `json:"rate_limit"`
	Weight      *int    `json:"weight"`
}

// validate checks the fields that are set; the plan it returns is nil
// when none was given.
func (in *tenantInput) validate() (*docket.Plan, error) {
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
		if n := utf8.RuneCountInString(*in.Name); n == 0 || n > 200 {
			return nil, errorf(http.StatusBadRequest, "name: want 1-200 characters")
		}
	}
	if in.Concurrency != nil && (*in.Concurrency < 1 || *in.Concurrency > maxTenantConcurrency) {
		return nil, errorf(http.StatusBadRequest, "concurrency %d: want 1-%d", *in.Concurrency, maxTenantConcurrency)
	}
	if in.RateLimit != nil && (*in.RateLimit < 0 || *in.RateLimit > maxTenantRateLimit) {
		return nil, errorf(http.StatusBadRequest, "rate_limit %d: want 0 (the plan's) to %d uploads per hour", *in.RateLimit, maxTenantRateLimit)
	}
	if in.Weight != nil && (*in.Weight < 0 || *in.Weight > maxTenantWeight) {
		return nil, errorf(http.StatusBadRequest, "weight %d: want 0 (the plan's) to %d", *in.Weight, maxTenantWeight)
	}
	if in.Plan == nil {
		return nil, nil
	}
	p, err := docket.ParsePlan(*in.Plan)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "plan %q: want one of free, starter, pro, enterprise", *in.Plan)
	}
	return &p, nil
}
