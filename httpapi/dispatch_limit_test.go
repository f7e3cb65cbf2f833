package httpapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docketq/docket/dispatch"
	"github.com/docketq/docket/httpapi"
	"github.com/docketq/docket/queue"
)

// dispatchJobs counts the tenant's jobs in the dispatch queue.
func (e *adminEnv) dispatchJobs(tenantID string) int {
	e.t.Helper()
	jobs, err := e.queue.List(e.ctx, &queue.JobListParams{TenantID: tenantID, Queue: dispatch.Queue, Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(jobs)
}

// remainingSlots is GET /v1/rate-limit's remaining.
func (e *adminEnv) remainingSlots(key string) int {
	e.t.Helper()
	var rl struct{ Remaining int }
	e.get("/v1/rate-limit", key, &rl)
	return rl.Remaining
}

// TestDispatchRoutes_RateLimit: dispatch jobs take slots of the tenant's
// window, the one uploads take: at the limit an enqueue is 429 with
// Retry-After and stores no job, a repeat of an enqueue with its
// unique_key returns its job without a slot, and another tenant is not
// limited.
func TestDispatchRoutes_RateLimit(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, withDispatch, func(t *testing.T, e *adminEnv) {
		a := e.createTenant("acme", map[string]any{"rate_limit": 3})
		e.upload(a.APIKey, "a.txt", []byte("hello"))
		first := e.do("POST", "/v1/dispatch/jobs", a.APIKey, map[string]any{"kind": "hook", "unique_key": "k1"})
		if first.status != http.StatusAccepted {
			t.Fatalf("enqueue: %d %s", first.status, first.body)
		}
		var v struct{ Job httpapi.JobView }
		first.decode(t, &v)
		e.enqueueHook(a.APIKey)
		if n := e.remainingSlots(a.APIKey); n != 0 {
			t.Errorf("remaining %d after an upload and 2 jobs of 3, want 0", n)
		}
		r := e.do("POST", "/v1/dispatch/jobs", a.APIKey, map[string]any{"kind": "hook"})
		if r.status != http.StatusTooManyRequests {
			t.Fatalf("enqueue past the limit: %d %s, want 429", r.status, r.body)
		}
		if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 {
			t.Errorf("Retry-After %q, want seconds", r.header.Get("Retry-After"))
		}
		again := e.do("POST", "/v1/dispatch/jobs", a.APIKey, map[string]any{"kind": "hook", "unique_key": "k1"})
		var w struct{ Job httpapi.JobView }
		if again.decode(t, &w); again.status != http.StatusAccepted || w.Job.ID != v.Job.ID {
			t.Errorf("repeat with the unique key: %d, job %s; want 202 and job %s", again.status, w.Job.ID, v.Job.ID)
		}
		if n := e.dispatchJobs(a.Tenant.ID); n != 2 {
			t.Errorf("%d dispatch jobs stored, want 2", n)
		}
		b := e.createTenant("globex", map[string]any{"rate_limit": 1})
		e.enqueueHook(b.APIKey)
	})
}

// TestDispatchRoutes_RateLimitRace: enqueues racing for a tenant's last
// slots are settled by the transaction that stores the job: exactly the
// limit is stored, the rest get 429.
func TestDispatchRoutes_RateLimitRace(t *testing.T) {
	t.Parallel()
	forEachAdminStore(t, withDispatch, func(t *testing.T, e *adminEnv) {
		const limit, clients = 2, 8
		a := e.createTenant("acme", map[string]any{"rate_limit": limit})
		var accepted, refused atomic.Int32
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				switch r := e.do("POST", "/v1/dispatch/jobs", a.APIKey, map[string]any{"kind": "hook"}); r.status {
				case http.StatusAccepted:
					accepted.Add(1)
				case http.StatusTooManyRequests:
					refused.Add(1)
				default:
					t.Errorf("status %d %s", r.status, r.body)
				}
			})
		}
		wg.Wait()
		if accepted.Load() != limit || refused.Load() != clients-limit {
			t.Errorf("%d accepted, %d refused; want %d and %d", accepted.Load(), refused.Load(), limit, clients-limit)
		}
		if n := e.dispatchJobs(a.Tenant.ID); n != limit {
			t.Errorf("%d jobs stored, want %d", n, limit)
		}
	})
}

// TestDispatchRoutes_ArgsCap: args over the dispatcher's cap are a 413
// that stores no job and takes no slot; args at the cap are accepted.
func TestDispatchRoutes_ArgsCap(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, withDispatch)
	a := e.createTenant("acme", map[string]any{"rate_limit": 5})
	// A JSON string of n bytes in all: n-2 characters between quotes.
	args := func(n int) string { return `"` + strings.Repeat("x", n-2) + `"` }
	body := func(n int) string { return `{"kind": "hook", "args": ` + args(n) + `}` }
	r := e.do("POST", "/v1/dispatch/jobs", a.APIKey, body(dispatch.DefaultMaxArgsBytes+1))
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.body), strconv.Itoa(dispatch.DefaultMaxArgsBytes)) {
		t.Errorf("args over the cap: %d %s, want 413 naming the cap", r.status, r.body)
	}
	if n, left := e.dispatchJobs(a.Tenant.ID), e.remainingSlots(a.APIKey); n != 0 || left != 5 {
		t.Errorf("%d jobs, %d slots left after a 413; want 0, 5", n, left)
	}
	if r := e.do("POST", "/v1/dispatch/jobs", a.APIKey, body(dispatch.DefaultMaxArgsBytes)); r.status != http.StatusAccepted {
		t.Errorf("args at the cap: %d %s, want 202", r.status, r.body)
	}
}
