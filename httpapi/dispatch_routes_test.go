package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
	"github.com/docketq/docket/webhook"
)

// hookSecret is the secret of the dispatched kind "hook".
var hookSecret = webhook.NewSecret()

func newHookDispatcher(c *queue.Client) *dispatch.Dispatcher {
	d, err := dispatch.New(dispatch.Config{
		Client:    c,
		Endpoints: []dispatch.Endpoint{{Kind: "hook", URL: "https://hooks.example/", Secrets: []string{hookSecret}}},
	})
	if err != nil {
		panic(err)
	}
	return d
}

// withDispatch dispatches kind "hook" (to a URL never called here).
func withDispatch(c *httpapi.Config) { c.Dispatch = newHookDispatcher(c.Queue) }

// claimOne claims the next job of queue q as a worker does and returns
// the callback token of its lease, as the dispatcher issues it.
func (e *adminEnv) claimOne(q string) (*queue.Job, string) {
	e.t.Helper()
	jobs, _, err := e.driver.Executor().JobClaim(e.ctx, &driver.JobClaimParams{Queue: q, WorkerID: "w", Max: 1, LeaseDuration: time.Minute})
	if err != nil || len(jobs) != 1 {
		e.t.Fatalf("claim %s: %d jobs, %v", q, len(jobs), err)
	}
	return jobs[0], e.token(jobs[0].Kind, jobs[0].Lease())
}

func (e *adminEnv) token(kind string, l queue.Lease) string {
	e.t.Helper()
	tok, err := newHookDispatcher(e.queue).Token(kind, l) // the same secret: the server's tokens
	if err != nil {
		return "1.1.x" // a kind not dispatched: no token is valid
	}
	return tok
}

func (e *adminEnv) enqueueHook(key string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/dispatch/jobs", key, map[string]any{"kind": "hook", "args": map[string]int{"x": 1}})
	if r.status != http.StatusAccepted {
		e.t.Fatalf("enqueue: %d %s", r.status, r.body)
	}
	var v struct{ Job httpapi.JobView }
	r.decode(e.t, &v)
	return v.Job.ID
}

// TestDispatchRoutes: a tenant enqueues a dispatched kind; the endpoint
// reports progress and completion with the lease token; a missing token
// is 401, a wrong or spent one 409, and the result shows on the job.
func TestDispatchRoutes(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, withDispatch, func(t *testing.T, e *adminEnv) {
		key := e.createTenant("acme", nil).APIKey
		if r := e.do("POST", "/v1/dispatch/jobs", key, map[string]any{"kind": "process_document"}); r.status != http.StatusBadRequest {
			t.Errorf("enqueue of a kind not dispatched: %d, want 400", r.status)
		}
		if r := e.do("POST", "/v1/dispatch/jobs", "", map[string]any{"kind": "hook"}); r.status != http.StatusUnauthorized {
			t.Errorf("enqueue without a key: %d, want 401", r.status)
		}
		id := e.enqueueHook(key)
		job, tok := e.claimOne(dispatch.Queue)
		if strconv.FormatInt(job.ID, 10) != id || string(job.Args) == "" {
			t.Fatalf("claimed %d (%s), want %s", job.ID, job.Args, id)
		}
		base := "/v1/dispatch/jobs/" + id
		// A lease token of this job, issued by Docket, whose attempt is not
		// the running one (a stale attempt's): 409. The running lease's
		// numbers without Docket's MAC (forged): 401.
		stale := e.token("hook", queue.Lease{JobID: job.ID, Attempt: job.Attempt, Token: job.LeaseToken + 1})
		forged := strconv.Itoa(job.Attempt) + "." + strconv.FormatInt(job.LeaseToken, 10) + ".AAAA"
		for _, tc := range []struct {
			tok  string
			want int
		}{{"", 401}, {"garbage", 401}, {key, 401}, {forged, 401}, {stale, 409}, {tok, 204}} {
			if r := e.do("POST", base+"/progress", tc.tok, map[string]any{"stage": "resizing", "percent": 40}); r.status != tc.want {
				t.Errorf("progress with token %q: %d, want %d: %s", tc.tok, r.status, tc.want, r.body)
			}
		}
		if j, _ := e.queue.Get(e.ctx, job.ID); j.Stage != "resizing" || j.Progress != 40 {
			t.Errorf("progress stored %q %d", j.Stage, j.Progress)
		}
		if r := e.do("POST", base+"/complete", stale, map[string]any{"result": 1}); r.status != http.StatusConflict {
			t.Errorf("complete with a stale token: %d, want 409", r.status)
		}
		if r := e.do("POST", base+"/complete", tok, map[string]any{"result": map[string]string{"url": "t.png"}}); r.status != http.StatusOK {
			t.Fatalf("complete: %d %s", r.status, r.body)
		}
		for _, p := range []string{"/complete", "/progress", "/fail"} {
			if r := e.do("POST", base+p, tok, map[string]any{"error": "late", "result": 2}); r.status != http.StatusConflict {
				t.Errorf("%s with the spent token: %d, want 409", p, r.status)
			}
		}
		var got struct {
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
		}
		e.do("GET", "/v1/jobs/"+id, key, nil).decode(t, &got)
		var res map[string]string
		if err := json.Unmarshal(got.Result, &res); got.Status != "completed" || err != nil || res["url"] != "t.png" {
			t.Errorf("GET /v1/jobs/%s: %s %s", id, got.Status, got.Result)
		}
	})
}

// TestDispatchRoutes_Fail: fail with retry schedules another attempt;
// without, the job fails; a running job of a kind that is not dispatched
// cannot be reported on even with its lease.
func TestDispatchRoutes_Fail(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, withDispatch)
	key := e.createTenant("acme", nil).APIKey
	id := e.enqueueHook(key)
	_, tok := e.claimOne(dispatch.Queue)
	r := e.do("POST", "/v1/dispatch/jobs/"+id+"/fail", tok, map[string]any{"error": "busy", "retry": true, "retry_after_seconds": 0})
	if r.status != http.StatusOK {
		t.Fatalf("fail with retry: %d %s", r.status, r.body)
	}
	_, tok = e.claimOne(dispatch.Queue)
	if r := e.do("POST", "/v1/dispatch/jobs/"+id+"/fail", tok, map[string]any{"error": "cannot"}); r.status != http.StatusOK {
		t.Fatalf("fail: %d %s", r.status, r.body)
	}
	n, _ := strconv.ParseInt(id, 10, 64)
	j, err := e.queue.Get(e.ctx, n)
	if err != nil || j.State != queue.StateFailed || j.ErrorMessage != "cannot" || j.Attempt != 2 {
		t.Errorf("job %+v (%v), want failed after 2 attempts", j, err)
	}
	// A job of another kind, running with a lease the caller knows.
	if _, err := e.queue.Enqueue(e.ctx, &queue.EnqueueParams{Queue: dispatch.Queue, Kind: "internal", TenantID: "x"}); err != nil {
		t.Fatal(err)
	}
	other, _ := e.claimOne(dispatch.Queue)
	otok := e.token("hook", other.Lease()) // a token as for a dispatched kind
	if r := e.do("POST", "/v1/dispatch/jobs/"+strconv.FormatInt(other.ID, 10)+"/complete", otok, map[string]any{}); r.status != http.StatusUnauthorized {
		t.Errorf("complete a job of a kind not dispatched: %d, want 401", r.status)
	}
}

// TestDispatchRoutes_Throttled: forged callback tokens count as failed
// authentications of the client's address; past the limit even a good
// token waits (429), so tokens cannot be guessed at speed.
func TestDispatchRoutes_Throttled(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, func(c *httpapi.Config) {
		withDispatch(c)
		c.AuthFailuresPerAddr = 3
	})
	key := e.createTenant("acme", nil).APIKey
	id := e.enqueueHook(key)
	job, tok := e.claimOne(dispatch.Queue)
	forged := strconv.Itoa(job.Attempt) + "." + strconv.FormatInt(job.LeaseToken, 10) + ".AAAA"
	for i := range 3 {
		if r := e.do("POST", "/v1/dispatch/jobs/"+id+"/progress", forged, map[string]any{"percent": 1}); r.status != http.StatusUnauthorized {
			t.Fatalf("forged token %d: %d, want 401", i+1, r.status)
		}
	}
	r := e.do("POST", "/v1/dispatch/jobs/"+id+"/progress", tok, map[string]any{"percent": 1})
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("after 3 forged tokens: %d (Retry-After %q), want 429 with Retry-After", r.status, r.header.Get("Retry-After"))
	}
}
