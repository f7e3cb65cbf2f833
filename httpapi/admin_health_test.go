package httpapi_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
)

// TestAdmin_Health: GET /v1/admin/health shows the monitoring views of
// both stores, named as their columns, and bounds its lists.
func TestAdmin_Health(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		a := e.createTenant("a", nil)
		b := e.createTenant("b", nil)
		_, failed := e.addDocument(a.Tenant.ID, "one.txt")
		e.finish(e.claim(time.Hour), queue.OutcomeFailed)
		e.addDocument(a.Tenant.ID, "two.txt")
		e.addDocument(b.Tenant.ID, "three.txt")
		e.claim(time.Hour) // one of the two pending: running

		var h httpapi.HealthView
		e.admin("GET", "/v1/admin/health?queue="+envQueue, nil, http.StatusOK).decode(t, &h)
		counts := map[string]int{}
		for _, r := range h.QueueHealth {
			if r.Queue != envQueue {
				t.Errorf("queue health row of queue %q with ?queue=%s", r.Queue, envQueue)
			}
			counts[r.State] = r.Jobs
		}
		if counts["failed"] != 1 || counts["pending"] != 1 || counts["running"] != 1 || len(counts) != 3 {
			t.Errorf("queue health counts = %v, want failed 1, pending 1, running 1", counts)
		}
		if len(h.ProcessingPerformance) != 1 || h.ProcessingPerformance[0].Failed != 1 ||
			h.ProcessingPerformance[0].Completed != 0 || h.ProcessingPerformance[0].AvgDurationSeconds != nil {
			t.Errorf("processing performance = %+v, want one hour with 1 failed, none completed", h.ProcessingPerformance)
		}
		if h.FailedJobs.Total != 1 || len(h.FailedJobs.Jobs) != 1 || h.FailedJobs.Jobs[0].ID != strconv.FormatInt(failed.ID, 10) ||
			h.FailedJobs.Jobs[0].ErrorMessage != "boom" || h.FailedJobs.Jobs[0].TenantID != a.Tenant.ID {
			t.Errorf("failed jobs = %+v, want job %d of %s (boom)", h.FailedJobs, failed.ID, a.Tenant.ID)
		}
		if h.StuckJobs.Total != 0 || len(h.StuckJobs.Jobs) != 0 {
			t.Errorf("stuck jobs = %+v, want none", h.StuckJobs)
		}
		if h.QueueDepth.Total != 2 || len(h.QueueDepth.Tenants) != 2 {
			t.Errorf("queue depth = %+v, want 2 tenants", h.QueueDepth)
		}

		e.admin("GET", "/v1/admin/health?limit=1", nil, http.StatusOK).decode(t, &h)
		if h.Queue != "" || h.QueueDepth.Total != 2 || len(h.QueueDepth.Tenants) != 1 {
			t.Errorf("?limit=1: queue %q, depth %+v; want every queue, 1 row of 2", h.Queue, h.QueueDepth)
		}
		e.admin("GET", "/v1/admin/health?performance=false&finished=false", nil, http.StatusOK).decode(t, &h)
		if len(h.ProcessingPerformance) != 0 || len(h.QueueHealth) != 2 || h.FailedJobs.Total != 1 {
			t.Errorf("?performance=false&finished=false: %d performance rows, queue health %+v, %d failed; want none, pending and running, 1",
				len(h.ProcessingPerformance), h.QueueHealth, h.FailedJobs.Total)
		}
		e.admin("GET", "/v1/admin/health?finished=maybe", nil, http.StatusBadRequest)
		e.admin("GET", "/v1/admin/health?limit=0", nil, http.StatusBadRequest)
		if r := e.do("GET", "/v1/admin/health", a.APIKey, nil); r.status != http.StatusUnauthorized && r.status != http.StatusForbidden {
			t.Errorf("GET /v1/admin/health with a tenant key: %d, want 401 or 403", r.status)
		}
	})
}
