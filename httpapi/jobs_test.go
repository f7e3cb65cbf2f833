package httpapi

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/docketq/docket/queue"
)

// TestJobs_FIFOPositions: with tenant concurrency 1 and no worker, three
// uploads of one tenant wait in order, at positions 0, 1 and 2; another
// tenant's upload is first in its own line; claiming moves everyone up.
func TestJobs_FIFOPositions(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		b := e.newTenant(t, "globex", 0)
		for _, id := range []string{a.id, b.id} { // as docket.Provision does
			if err := e.queue.SetTenantLimit(t.Context(), id, documentsQueue, 1); err != nil {
				t.Fatal(err)
			}
		}
		var ids []string
		for i := range 3 {
			u := e.uploadOK(t, a.key, fmt.Sprintf("document %d", i))
			if u.Job.QueuePosition == nil || *u.Job.QueuePosition != i {
				t.Errorf("upload %d: queue_position %v", i, u.Job.QueuePosition)
			}
			ids = append(ids, u.Job.ID)
		}
		if u := e.uploadOK(t, b.key, "other tenant"); *u.Job.QueuePosition != 0 {
			t.Errorf("tenant B: queue_position %d, want 0", *u.Job.QueuePosition)
		}
		positions := func() []any {
			var out []any
			for _, id := range ids {
				var j JobView
				e.do(t, http.MethodGet, "/v1/jobs/"+id, a.key, nil).want(t, http.StatusOK).decode(t, &j)
				if j.QueuePosition == nil {
					out = append(out, j.Status)
				} else {
					out = append(out, *j.QueuePosition)
				}
			}
			return out
		}
		if got := fmt.Sprint(positions()); got != "[0 1 2]" {
			t.Fatalf("positions %s, want [0 1 2]", got)
		}
		// The first claim of the tenant takes its oldest job (per-tenant FIFO).
		var claimed []string
		for range 2 { // one per tenant: round-robin
			claimed = append(claimed, fmt.Sprint(e.claim(t).ID))
		}
		if claimed[0] != ids[0] && claimed[1] != ids[0] {
			t.Fatalf("claimed %v, want %s among them", claimed, ids[0])
		}
		if got := fmt.Sprint(positions()); got != "[processing 0 1]" {
			t.Errorf("after a claim: %s, want [processing 0 1]", got)
		}
		var list struct {
			Jobs       []JobView `json:"jobs"`
			NextCursor *string   `json:"next_cursor"`
		}
		e.do(t, http.MethodGet, "/v1/jobs?status=pending", a.key, nil).want(t, http.StatusOK).decode(t, &list)
		if len(list.Jobs) != 2 || list.Jobs[0].ID != ids[2] || *list.Jobs[0].QueuePosition != 1 || list.NextCursor != nil {
			t.Errorf("pending jobs %+v", list)
		}
	})
}

func TestJobs_ListPages(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, nil)
	a := e.newTenant(t, "acme", 0)
	for i := range 5 {
		e.uploadOK(t, a.key, fmt.Sprint("doc ", i))
	}
	var seen []string
	cursor := ""
	for range 10 {
		var page struct {
			Jobs       []JobView `json:"jobs"`
			NextCursor *string   `json:"next_cursor"`
		}
		e.do(t, http.MethodGet, "/v1/jobs?limit=2"+cursor, a.key, nil).want(t, http.StatusOK).decode(t, &page)
		for _, j := range page.Jobs {
			seen = append(seen, j.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *page.NextCursor
	}
	if len(seen) != 5 {
		t.Errorf("paged through %v, want 5 jobs", seen)
	}
	for _, q := range []string{"status=done", "limit=0", "limit=x", "cursor=abc", "limit=501"} {
		e.do(t, http.MethodGet, "/v1/jobs?"+q, a.key, nil).want(t, http.StatusBadRequest)
	}
}

func TestJobs_Cancel(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 0)
		u := e.uploadOK(t, a.key, "to cancel")
		var j JobView
		e.do(t, http.MethodPost, "/v1/jobs/"+u.Job.ID+"/cancel", a.key, nil).want(t, http.StatusOK).decode(t, &j)
		if j.Status != "cancelled" || j.CompletedAt == nil {
			t.Errorf("cancelled job %+v", j)
		}
		e.do(t, http.MethodPost, "/v1/jobs/"+u.Job.ID+"/cancel", a.key, nil).want(t, http.StatusConflict)
		var d DocumentView
		e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusOK).decode(t, &d)
		if d.Status != "cancelled" {
			t.Errorf("document status %q, want cancelled", d.Status)
		}
		// A running job is cancelled too.
		u2 := e.uploadOK(t, a.key, "running")
		job := e.claim(t)
		if fmt.Sprint(job.ID) != u2.Job.ID {
			t.Fatalf("claimed %d, want %s", job.ID, u2.Job.ID)
		}
		e.do(t, http.MethodPost, "/v1/jobs/"+u2.Job.ID+"/cancel", a.key, nil).want(t, http.StatusOK)
		if got, _ := e.queue.Get(t.Context(), job.ID); got.State != queue.StateCancelled {
			t.Errorf("state %s", got.State)
		}
	})
}
