package httpapi_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
)

type jobsPage struct {
	Jobs       []httpapi.JobView `json:"jobs"`
	NextCursor *string           `json:"next_cursor"`
}

type jobAnswer struct {
	Job httpapi.JobView `json:"job"`
}

func strID(n int64) string { return strconv.FormatInt(n, 10) }

func TestAdmin_FailedJobs(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	a := e.createTenant("acme", nil).Tenant.ID
	var failed []int64
	for range 3 {
		_, job := e.addDocument(a, "a.txt")
		e.finish(e.claim(time.Minute), queue.OutcomeFailed)
		failed = append(failed, job.ID)
	}
	e.addDocument(a, "pending.txt")
	var p1, p2 jobsPage
	e.admin("GET", "/v1/admin/jobs/failed?limit=2", nil, 200).decode(t, &p1)
	if len(p1.Jobs) != 2 || p1.Jobs[0].ID != strID(failed[2]) || p1.Jobs[1].ID != strID(failed[1]) || p1.NextCursor == nil {
		t.Fatalf("page 1 = %+v", p1)
	}
	if j := p1.Jobs[0]; j.Status != "failed" || j.ErrorMessage == nil || *j.ErrorMessage != "boom" || j.TenantID != a || j.DocumentID == "" {
		t.Errorf("failed job = %+v", j)
	}
	e.admin("GET", "/v1/admin/jobs/failed?limit=2&cursor="+*p1.NextCursor, nil, 200).decode(t, &p2)
	if len(p2.Jobs) != 1 || p2.Jobs[0].ID != strID(failed[0]) || p2.NextCursor != nil {
		t.Errorf("page 2 = %+v", p2)
	}
	e.admin("GET", "/v1/admin/jobs/failed?tenant_id=other", nil, 200).decode(t, &p2)
	if len(p2.Jobs) != 0 {
		t.Errorf("failed jobs of another tenant = %+v", p2.Jobs)
	}
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "cursor=x", "cursor=-1"} {
		e.admin("GET", "/v1/admin/jobs/failed?"+q, nil, http.StatusBadRequest)
	}
}

func TestAdmin_Requeue(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	a := e.createTenant("acme", nil).Tenant.ID
	doc, job := e.addDocument(a, "a.txt")
	e.finish(e.claim(time.Minute), queue.OutcomeFailed)
	r := e.admin("POST", "/v1/admin/jobs/"+strID(job.ID)+"/requeue", nil, http.StatusAccepted)
	var got jobAnswer
	r.decode(t, &got)
	nj := got.Job
	if nj.ID == strID(job.ID) || nj.RetryOf == nil || *nj.RetryOf != strID(job.ID) || nj.Status != "pending" || nj.DocumentID != doc.ID || nj.TenantID != a {
		t.Errorf("requeued job = %+v", nj)
	}
	if loc := r.header.Get("Location"); loc != "/v1/jobs/"+nj.ID {
		t.Errorf("Location = %q", loc)
	}
	if st := e.jobState(job.ID); st != queue.StateFailed {
		t.Errorf("original job is %s, want failed (kept for debugging)", st)
	}
	if d := e.getDocument(a, doc.ID); strID(d.JobID) != nj.ID || d.Status != "pending" {
		t.Errorf("document after requeue: job %d, status %s; want job %s, pending", d.JobID, d.Status, nj.ID)
	}
	e.admin("POST", "/v1/admin/jobs/"+nj.ID+"/requeue", nil, http.StatusConflict) // pending
	e.admin("POST", "/v1/admin/jobs/999999/requeue", nil, http.StatusNotFound)
	e.admin("POST", "/v1/admin/jobs/abc/requeue", nil, http.StatusNotFound)
}

func TestAdmin_Discard(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	a := e.createTenant("acme", nil).Tenant.ID
	_, pending := e.addDocument(a, "a.txt")
	var got jobAnswer
	e.admin("POST", "/v1/admin/jobs/"+strID(pending.ID)+"/discard", `{"reason":"poison pill"}`, 200).decode(t, &got)
	if got.Job.Status != "failed" || got.Job.ErrorMessage == nil || *got.Job.ErrorMessage != "poison pill" {
		t.Errorf("discarded job = %+v", got.Job)
	}
	e.addDocument(a, "b.txt")
	running := e.claim(time.Minute)
	e.admin("POST", "/v1/admin/jobs/"+strID(running.ID)+"/discard", nil, 200).decode(t, &got)
	if got.Job.Status != "failed" || e.jobState(running.ID) != queue.StateFailed {
		t.Errorf("discarded running job = %+v", got.Job)
	}
	e.admin("POST", "/v1/admin/jobs/"+strID(running.ID)+"/discard", nil, http.StatusConflict)
	e.admin("POST", "/v1/admin/jobs/424242/discard", nil, http.StatusNotFound)
	e.admin("POST", "/v1/admin/jobs/"+strID(running.ID)+"/discard", `{"why":1}`, http.StatusBadRequest)
}

type stuckPage struct {
	OlderThan float64 `json:"older_than_seconds"`
	Jobs      []struct {
		httpapi.JobView
		Reason   string  `json:"reason"`
		WorkerID string  `json:"worker_id"`
		Running  float64 `json:"running_seconds"`
	} `json:"jobs"`
}

func TestAdmin_StuckJobs(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	a := e.createTenant("acme", nil).Tenant.ID
	b := e.createTenant("globex", nil).Tenant.ID
	e.addDocument(a, "a.txt")
	expired := e.claim(time.Millisecond) // its worker "dies": no heartbeat
	e.addDocument(b, "b.txt")
	healthy := e.claim(time.Hour)
	var p stuckPage
	pollUntil(t, "the expired lease to show", func() bool {
		e.admin("GET", "/v1/admin/jobs/stuck", nil, 200).decode(t, &p)
		return len(p.Jobs) == 1
	})
	if j := p.Jobs[0]; j.ID != strID(expired.ID) || j.Reason != "lease_expired" || j.WorkerID != "test-worker" || p.OlderThan != 1800 {
		t.Errorf("stuck = %+v", p)
	}
	pollUntil(t, "the long-running job to show", func() bool {
		e.admin("GET", "/v1/admin/jobs/stuck?older_than=1ms", nil, 200).decode(t, &p)
		return len(p.Jobs) == 2
	})
	for _, j := range p.Jobs {
		if j.ID == strID(healthy.ID) && (j.Reason != "running_too_long" || j.Status != "processing" || j.Running <= 0) {
			t.Errorf("long-running job = %+v", j)
		}
	}
	for _, q := range []string{"older_than=x", "older_than=-1s", "older_than=0"} {
		e.admin("GET", "/v1/admin/jobs/stuck?"+q, nil, http.StatusBadRequest)
	}
}

func TestAdmin_QueueHealth(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	a := e.createTenant("acme", map[string]any{"concurrency": 2}).Tenant.ID
	for range 3 {
		e.addDocument(a, "a.txt")
	}
	e.claim(time.Minute)
	var h httpapi.QueueHealthView
	e.admin("GET", "/v1/admin/queue", nil, 200).decode(t, &h)
	want := map[string]int{"scheduled": 0, "pending": 2, "running": 1, "completed": 0, "failed": 0, "cancelled": 0}
	if h.Queue != envQueue || len(h.Counts) != len(want) {
		t.Fatalf("health = %+v", h)
	}
	for k, n := range want {
		if h.Counts[k] != n {
			t.Errorf("counts[%s] = %d, want %d", k, h.Counts[k], n)
		}
	}
	if h.OldestPendingSeconds < 0 || h.DeadTuples < 0 || h.OldestXactAgeSeconds < 0 {
		t.Errorf("health = %+v", h)
	}
}

func TestAdmin_Performance(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	var p httpapi.PerformanceView
	e.admin("GET", "/v1/admin/performance", nil, 200).decode(t, &p)
	if p.Completed != 0 || p.DurationSeconds.P50 != nil || p.WindowSeconds != 3600 || p.Queue != envQueue {
		t.Errorf("empty performance = %+v", p)
	}
	a := e.createTenant("acme", nil).Tenant.ID
	for range 4 {
		e.addDocument(a, "a.txt")
		e.finish(e.claim(time.Minute), queue.OutcomeCompleted)
	}
	e.addDocument(a, "failed.txt")
	e.finish(e.claim(time.Minute), queue.OutcomeFailed)
	e.admin("GET", "/v1/admin/performance?window=2m", nil, 200).decode(t, &p)
	if p.Completed != 4 || p.WindowSeconds != 120 || p.JobsPerMinute != 2 || p.Truncated {
		t.Errorf("performance = %+v", p)
	}
	d, w := p.DurationSeconds, p.QueueWaitSeconds
	if d.P50 == nil || d.P95 == nil || d.P99 == nil || w.P50 == nil || w.P95 == nil {
		t.Fatalf("percentiles missing: %+v", p)
	}
	if *d.P50 < 0 || *d.P50 > *d.P95 || *d.P95 > *d.P99 || *w.P50 < 0 || *w.P50 > *w.P95 {
		t.Errorf("percentiles out of order: duration %v %v %v, wait %v %v", *d.P50, *d.P95, *d.P99, *w.P50, *w.P95)
	}
	e.admin("GET", "/v1/admin/performance?window=soon", nil, http.StatusBadRequest)
}
