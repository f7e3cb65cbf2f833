package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// TestAdminPause: the pause and resume routes answer their contract, stop
// and restart claims, and the tenant, job, queue and health views say
// paused.
func TestAdminPause(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		a, b := e.createTenant("Acme", nil), e.createTenant("Beta", nil)
		_, a1 := e.addDocument(a.Tenant.ID, "a1.txt")
		_, a2 := e.addDocument(a.Tenant.ID, "a2.txt")
		_, b1 := e.addDocument(b.Tenant.ID, "b1.txt")

		wantBody(t, e.admin("POST", "/v1/admin/tenants/"+a.Tenant.ID+"/pause", nil, http.StatusOK),
			map[string]any{"tenant_id": a.Tenant.ID, "paused": true})
		var list struct{ Tenants []httpapi.TenantView }
		e.admin("GET", "/v1/admin/tenants", nil, http.StatusOK).decode(t, &list)
		for _, tv := range list.Tenants {
			if tv.Paused != (tv.ID == a.Tenant.ID) {
				t.Errorf("tenant list: %s paused %v", tv.Name, tv.Paused)
			}
		}
		var one struct{ Tenant httpapi.TenantView }
		e.admin("GET", "/v1/admin/tenants/"+a.Tenant.ID, nil, http.StatusOK).decode(t, &one)
		if !one.Tenant.Paused {
			t.Errorf("GET tenant %s: paused false, want true", a.Tenant.ID)
		}
		if v := e.jobStatus(a.APIKey, a2.ID); !v.Paused || v.QueuePosition == nil || *v.QueuePosition != 1 {
			t.Errorf("job %d of the paused tenant: paused %v, position %v; want paused, 1 ahead", a2.ID, v.Paused, v.QueuePosition)
		}
		if v := e.jobStatus(b.APIKey, b1.ID); v.Paused {
			t.Errorf("job %d of another tenant: paused, want not", b1.ID)
		}
		if got := e.claimIDs(); !slices.Equal(got, []int64{b1.ID}) {
			t.Fatalf("claimed %v with tenant %s paused, want only [%d]", got, a.Tenant.ID, b1.ID)
		}

		wantBody(t, e.admin("POST", "/v1/admin/queues/"+envQueue+"/pause", nil, http.StatusOK),
			map[string]any{"queue": envQueue, "paused": true})
		var health httpapi.HealthView
		e.admin("GET", "/v1/admin/health?performance=false", nil, http.StatusOK).decode(t, &health)
		if !slices.Contains(health.PausedQueues, envQueue) || len(health.QueueHealth) == 0 {
			t.Errorf("health: paused_queues %v, %d queue rows; want %s listed", health.PausedQueues, len(health.QueueHealth), envQueue)
		}
		for _, row := range health.QueueHealth {
			if !row.Paused {
				t.Errorf("health row %s/%s: paused false", row.Queue, row.State)
			}
		}
		var qh httpapi.QueueHealthView
		e.admin("GET", "/v1/admin/queue", nil, http.StatusOK).decode(t, &qh)
		if !qh.Paused {
			t.Error("GET /v1/admin/queue: paused false with the queue paused")
		}
		wantBody(t, e.admin("POST", "/v1/admin/tenants/"+a.Tenant.ID+"/resume", nil, http.StatusOK),
			map[string]any{"tenant_id": a.Tenant.ID, "paused": false})
		if got := e.claimIDs(); len(got) != 0 {
			t.Fatalf("claimed %v with the queue paused", got)
		}
		wantBody(t, e.admin("POST", "/v1/admin/queues/"+envQueue+"/resume", nil, http.StatusOK),
			map[string]any{"queue": envQueue, "paused": false})
		if v := e.jobStatus(a.APIKey, a2.ID); v.Paused {
			t.Error("job status after resume: paused")
		}
		if got := e.claimIDs(); !slices.Equal(got, []int64{a1.ID}) {
			t.Fatalf("claimed %v after resume, want the tenant's first job [%d]", got, a1.ID)
		}
	})
}

// TestAdminPause_Errors: an unknown tenant or queue is 404, a bad queue
// name 400, a tenant key 401; a configured queue with no jobs, a queue
// with jobs and a paused queue can be paused or resumed.
func TestAdminPause_Errors(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	a := e.createTenant("Acme", nil)
	for _, path := range []string{"/v1/admin/tenants/nope/pause", "/v1/admin/tenants/nope/resume"} {
		e.admin("POST", path, nil, http.StatusNotFound)
	}
	e.admin("POST", "/v1/admin/queues/Bad!/pause", nil, http.StatusBadRequest)
	e.admin("POST", "/v1/admin/queues/"+strings.Repeat("q", 64)+"/resume", nil, http.StatusBadRequest)
	if r := e.do("POST", "/v1/admin/queues/later/pause", a.APIKey, nil); r.status != http.StatusUnauthorized {
		t.Errorf("pause with a tenant key: status %d, want 401", r.status)
	}
	for _, verb := range []string{"pause", "resume"} {
		r := e.admin("POST", "/v1/admin/queues/documnets/"+verb, nil, http.StatusNotFound)
		if !strings.Contains(string(r.body), `no queue \"documnets\"; known queues: dispatch, documents`) {
			t.Errorf("%s of a misspelt queue: %s, want the known queues named", verb, r.body)
		}
	}
	p, err := e.queue.Pauses(e.ctx)
	if err != nil || len(p.Queues) != 0 {
		t.Fatalf("pauses after refusing unknown queues: %+v, %v", p, err)
	}
	// Configured queues are known with no jobs; a queue with jobs of its
	// own, or one paused now, is known too.
	e.admin("POST", "/v1/admin/queues/dispatch/pause", nil, http.StatusOK)
	if _, err := e.queue.Enqueue(e.ctx, &queue.EnqueueParams{Queue: "later", Kind: "k", TenantID: a.Tenant.ID}); err != nil {
		t.Fatal(err)
	}
	e.admin("POST", "/v1/admin/queues/later/pause", nil, http.StatusOK)
	if err := e.queue.PauseQueue(e.ctx, "old"); err != nil {
		t.Fatal(err)
	}
	r := e.admin("POST", "/v1/admin/queues/other/pause", nil, http.StatusNotFound)
	if !strings.Contains(string(r.body), "known queues: dispatch, documents, later, old") {
		t.Errorf("pause of an unknown queue: %s, want the paused and busy queues named", r.body)
	}
	e.admin("POST", "/v1/admin/queues/old/resume", nil, http.StatusOK)
	p, err = e.queue.Pauses(e.ctx)
	if err != nil || !p.QueuePaused("later") || !p.QueuePaused("dispatch") || p.QueuePaused("old") || p.QueuePaused(envQueue) {
		t.Fatalf("pauses after pausing later and dispatch, resuming old: %+v, %v", p, err)
	}
}

// wantBody checks a JSON answer field by field, with no other field.
func wantBody(t *testing.T, r *envResponse, want map[string]any) {
	t.Helper()
	var got map[string]any
	r.decode(t, &got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("body %s, want %v", r.body, want)
	}
}

// jobStatus reads GET /v1/jobs/{id} with a tenant's key.
func (e *adminEnv) jobStatus(key string, id int64) httpapi.JobView {
	e.t.Helper()
	r := e.do("GET", "/v1/jobs/"+strconv.FormatInt(id, 10), key, nil)
	if r.status != http.StatusOK {
		e.t.Fatalf("GET job %d: status %d: %s", id, r.status, r.body)
	}
	var v httpapi.JobView
	if err := json.Unmarshal(r.body, &v); err != nil {
		e.t.Fatal(err)
	}
	return v
}

// claimIDs claims what it can of the documents queue, as a worker would.
func (e *adminEnv) claimIDs() []int64 {
	e.t.Helper()
	jobs, _, err := e.driver.Executor().JobClaim(e.ctx, &driver.JobClaimParams{
		Queue: envQueue, WorkerID: "test", Max: 10, LeaseDuration: time.Hour,
	})
	if err != nil {
		e.t.Fatalf("claim: %v", err)
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	slices.Sort(ids)
	return ids
}

// TestAdminPause_UploadAnswer: the upload's answer says paused while the
// tenant or the queue is paused, as GET /v1/jobs/{id} does, with or without
// an idempotency key.
func TestAdminPause_UploadAnswer(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, nil, func(t *testing.T, e *adminEnv) {
		a := e.createTenant("Acme", nil)
		upload := func(name, idemKey string) httpapi.JobView {
			t.Helper()
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, err := mw.CreateFormFile("file", name)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = fw.Write([]byte("text of " + name))
			_ = mw.Close()
			req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+"/v1/documents", &buf)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.Header.Set("Authorization", "Bearer "+a.APIKey)
			if idemKey != "" {
				req.Header.Set("Idempotency-Key", idemKey)
			}
			r := e.send(req)
			if r.status != http.StatusAccepted {
				t.Fatalf("upload %s: status %d: %s", name, r.status, r.body)
			}
			var u struct{ Job httpapi.JobView }
			r.decode(t, &u)
			return u.Job
		}
		if j := upload("before.txt", ""); j.Paused {
			t.Error("upload before any pause: paused true")
		}
		e.admin("POST", "/v1/admin/tenants/"+a.Tenant.ID+"/pause", nil, http.StatusOK)
		for _, key := range []string{"", "k-tenant"} {
			j := upload("tenant"+key+".txt", key)
			if !j.Paused || j.QueuePosition == nil {
				t.Errorf("upload (key %q) with the tenant paused: paused %v, position %v; want paused with a position", key, j.Paused, j.QueuePosition)
			}
			id, _ := strconv.ParseInt(j.ID, 10, 64)
			if v := e.jobStatus(a.APIKey, id); v.Paused != j.Paused {
				t.Errorf("job %s: GET says paused %v, the upload %v", j.ID, v.Paused, j.Paused)
			}
		}
		e.admin("POST", "/v1/admin/tenants/"+a.Tenant.ID+"/resume", nil, http.StatusOK)
		e.admin("POST", "/v1/admin/queues/"+envQueue+"/pause", nil, http.StatusOK)
		for _, key := range []string{"", "k-queue"} {
			if j := upload("queue"+key+".txt", key); !j.Paused {
				t.Errorf("upload (key %q) with the queue paused: paused false", key)
			}
		}
		e.admin("POST", "/v1/admin/queues/"+envQueue+"/resume", nil, http.StatusOK)
		if j := upload("after.txt", "k-after"); j.Paused {
			t.Error("upload after resume: paused true")
		}
	})
}
