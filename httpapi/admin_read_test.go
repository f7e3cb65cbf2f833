package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
)

type tenantsPage struct {
	Tenants    []httpapi.TenantView `json:"tenants"`
	NextCursor *string              `json:"next_cursor"`
}

// GET /v1/admin/tenants pages: each page after the cursor of the one
// before, oldest first, next_cursor null on the last; bad limits and
// cursors are 400.
func TestAdmin_TenantListPaged(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		var ids []string
		for i := range 5 {
			ids = append(ids, e.createTenant(fmt.Sprintf("t%d", i), nil).Tenant.ID)
		}
		var got []string
		path := "/v1/admin/tenants?limit=2"
		for pages := 1; ; pages++ {
			var p tenantsPage
			e.admin("GET", path, nil, http.StatusOK).decode(t, &p)
			if len(p.Tenants) > 2 {
				t.Fatalf("page %d: %d tenants with limit 2", pages, len(p.Tenants))
			}
			for _, tv := range p.Tenants {
				got = append(got, tv.ID)
			}
			if p.NextCursor == nil {
				if pages != 3 {
					t.Errorf("%d pages of 2 for 5 tenants, want 3", pages)
				}
				break
			}
			if pages > 5 {
				t.Fatal("next_cursor never ends")
			}
			path = "/v1/admin/tenants?limit=2&cursor=" + *p.NextCursor
		}
		if fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Errorf("paged tenants %v, want %v (oldest first, each once)", got, ids)
		}
		var all tenantsPage
		e.admin("GET", "/v1/admin/tenants", nil, http.StatusOK).decode(t, &all)
		if len(all.Tenants) != 5 || all.NextCursor != nil {
			t.Errorf("default page: %d tenants, next_cursor %v; want 5, null", len(all.Tenants), all.NextCursor)
		}
		for _, q := range []string{"limit=0", "limit=501", "limit=x", "cursor=t_nobody"} {
			e.admin("GET", "/v1/admin/tenants?"+q, nil, http.StatusBadRequest)
		}
	})
}

// The default page is 50 tenants.
func TestAdmin_TenantListDefaultLimit(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	for i := range 51 {
		e.createTenant(fmt.Sprintf("t%02d", i), nil)
	}
	var p tenantsPage
	e.admin("GET", "/v1/admin/tenants", nil, http.StatusOK).decode(t, &p)
	if len(p.Tenants) != 50 || p.NextCursor == nil || *p.NextCursor != p.Tenants[49].ID {
		t.Fatalf("default page: %d tenants, next_cursor %v; want 50 and the 50th's id", len(p.Tenants), p.NextCursor)
	}
	e.admin("GET", "/v1/admin/tenants?cursor="+*p.NextCursor, nil, http.StatusOK).decode(t, &p)
	if len(p.Tenants) != 1 || p.Tenants[0].Name != "t50" || p.NextCursor != nil {
		t.Errorf("second page: %+v, want t50 alone and no cursor", p)
	}
}

// GET /v1/admin/jobs/{id} shows a job of any tenant with its attempts:
// the finished ones, then the running one.
func TestAdmin_JobGet(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		a := e.createTenant("acme", nil).Tenant.ID
		doc, job := e.addDocument(a, "a.txt")
		path := "/v1/admin/jobs/" + strID(job.ID)
		var got httpapi.JobDetailView
		e.admin("GET", path, nil, http.StatusOK).decode(t, &got)
		if got.Job.ID != strID(job.ID) || got.Job.TenantID != a || got.Job.DocumentID != doc.ID || got.Job.Status != "pending" || len(got.Attempts) != 0 {
			t.Fatalf("pending job: %+v", got)
		}

		before := time.Now().Add(-time.Minute)
		e.finish(e.claim(time.Minute), queue.OutcomeRetry)
		e.claim(time.Minute)
		e.admin("GET", path, nil, http.StatusOK).decode(t, &got)
		if len(got.Attempts) != 2 {
			t.Fatalf("attempts after a retry and a claim: %+v", got.Attempts)
		}
		first, running := got.Attempts[0], got.Attempts[1]
		if first.Attempt != 1 || first.Outcome != "retry" || first.Error != "boom" || first.WorkerID != "test-worker" ||
			first.StartedAt == nil || first.EndedAt == nil || first.StartedAt.Before(before) || first.EndedAt.Before(*first.StartedAt) {
			t.Errorf("first attempt: %+v", first)
		}
		if running.Attempt != 2 || running.Outcome != "running" || running.EndedAt != nil || running.WorkerID != "test-worker" || running.StartedAt == nil {
			t.Errorf("running attempt: %+v", running)
		}
		if got.Job.Status != "processing" || got.Job.Attempt != 2 {
			t.Errorf("running job: %+v", got.Job)
		}

		e.finish(e.getJob(job.ID), queue.OutcomeFailed)
		e.admin("GET", path, nil, http.StatusOK).decode(t, &got)
		if len(got.Attempts) != 2 || got.Attempts[1].Outcome != "failed" || got.Attempts[1].EndedAt == nil || got.Job.Status != "failed" {
			t.Errorf("after the last attempt failed: %+v", got)
		}

		e.admin("GET", "/v1/admin/jobs/999999", nil, http.StatusNotFound)
		for _, id := range []string{"abc", "0", "-1", "1.5"} {
			e.admin("GET", "/v1/admin/jobs/"+id, nil, http.StatusBadRequest)
		}
		if r := e.do("GET", path, "", nil); r.status != http.StatusUnauthorized {
			t.Errorf("without the admin key: %d", r.status)
		}
	})
}
