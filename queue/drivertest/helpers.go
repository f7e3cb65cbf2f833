package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// Names and durations the tests share.
const (
	testQueue  = "q"
	otherQueue = "other"
	testKind   = "kind"
	workerID   = "worker-1"

	// longLease is a lease that never expires during a test.
	longLease = time.Hour
	// shortLease is a lease the tests let expire.
	shortLease = 100 * time.Millisecond
	// soonDelay is how far ahead the tests schedule jobs they then wait
	// for (see insertSoon).
	soonDelay = 200 * time.Millisecond
	// waitTimeout bounds every poll.
	waitTimeout = 10 * time.Second
	// clockSlack is how far the store's clock and the test's may disagree
	// (same host; allows for slow CI and coarse timestamps).
	clockSlack = 5 * time.Second
)

// fixture is one fresh store and the context of one subtest.
type fixture struct {
	t   *testing.T
	ctx context.Context
	d   driver.Driver
	x   driver.Executor
}

// setup returns a fixture on a fresh store.
func (s *suite) setup(t *testing.T) *fixture {
	t.Helper()
	d := s.cfg.NewDriver(t)
	if d == nil {
		t.Fatal("NewDriver returned nil")
	}
	return &fixture{t: t, ctx: t.Context(), d: d, x: d.Executor()}
}

// params returns insert params for a pending job of tenant in testQueue.
func params(tenant string) *driver.JobInsertParams {
	return &driver.JobInsertParams{
		Queue: testQueue, Kind: testKind, TenantID: tenant,
		Args: json.RawMessage(`{}`), MaxAttempts: 3,
	}
}

// insert inserts jobs and returns the results.
func (f *fixture) insert(ps ...*driver.JobInsertParams) []queue.InsertResult {
	f.t.Helper()
	return insertWith(f.t, f.ctx, f.x, ps...)
}

func insertWith(t *testing.T, ctx context.Context, x driver.Executor, ps ...*driver.JobInsertParams) []queue.InsertResult {
	t.Helper()
	res, err := x.JobInsertMany(ctx, ps)
	if err != nil {
		t.Fatalf("JobInsertMany: %v", err)
	}
	if len(res) != len(ps) {
		t.Fatalf("JobInsertMany: %d results for %d params", len(res), len(ps))
	}
	for i, r := range res {
		if r.Job == nil {
			t.Fatalf("JobInsertMany: result %d has no job", i)
		}
	}
	return res
}

// insertSoon inserts jobs due soonDelay from now, which must come out
// scheduled, and returns them and their RunAt. When the store was slower
// than the delay (a loaded machine), it cancels them and tries again with
// twice the delay.
func (f *fixture) insertSoon(ps ...*driver.JobInsertParams) ([]*queue.Job, time.Time) {
	f.t.Helper()
	for d := soonDelay; ; d *= 2 {
		runAt := time.Now().Add(d)
		for _, p := range ps {
			p.RunAt = runAt
		}
		res := f.insert(ps...)
		jobs := make([]*queue.Job, len(res))
		late := false
		for i, r := range res {
			jobs[i] = r.Job
			late = late || r.Job.State != queue.StateScheduled
		}
		if !late {
			return jobs, runAt
		}
		if d >= 8*time.Second {
			f.t.Fatalf("inserted %s with RunAt %v after %v: want scheduled", describe(jobs[0]), runAt, time.Now())
		}
		for _, j := range jobs {
			f.cancel(&driver.JobCancelParams{ID: j.ID})
		}
	}
}

// enqueue inserts one pending job of tenant in testQueue.
func (f *fixture) enqueue(tenant string) *queue.Job {
	f.t.Helper()
	return f.insert(params(tenant))[0].Job
}

// enqueueN inserts n pending jobs of tenant in testQueue, in one call.
func (f *fixture) enqueueN(tenant string, n int) []*queue.Job {
	f.t.Helper()
	ps := make([]*driver.JobInsertParams, n)
	for i := range ps {
		ps[i] = params(tenant)
	}
	jobs := make([]*queue.Job, n)
	for i, r := range f.insert(ps...) {
		jobs[i] = r.Job
	}
	return jobs
}

// claim claims up to max jobs of queue with a lease of the given length.
func (f *fixture) claim(queueName string, max int, lease time.Duration) []*queue.Job {
	f.t.Helper()
	jobs, _, err := f.x.JobClaim(f.ctx, &driver.JobClaimParams{
		Queue: queueName, WorkerID: workerID, Max: max, LeaseDuration: lease,
	})
	if err != nil {
		f.t.Fatalf("JobClaim(%s, max %d): %v", queueName, max, err)
	}
	if len(jobs) > max {
		f.t.Fatalf("JobClaim(max %d) returned %d jobs", max, len(jobs))
	}
	return jobs
}

// claimOne claims exactly one job of testQueue, with a long lease.
func (f *fixture) claimOne() *queue.Job {
	f.t.Helper()
	jobs := f.claim(testQueue, 1, longLease)
	if len(jobs) != 1 {
		f.t.Fatalf("JobClaim: got %d jobs, want 1", len(jobs))
	}
	return jobs[0]
}

// claimNone asserts that nothing of testQueue can be claimed.
func (f *fixture) claimNone() {
	f.t.Helper()
	if jobs := f.claim(testQueue, 10, longLease); len(jobs) != 0 {
		f.t.Fatalf("JobClaim: got %d jobs (first %s), want none", len(jobs), describe(jobs[0]))
	}
}

// get returns a job that must exist.
func (f *fixture) get(id int64) *queue.Job {
	f.t.Helper()
	j, err := f.x.JobGet(f.ctx, id)
	if err != nil {
		f.t.Fatalf("JobGet(%d): %v", id, err)
	}
	return j
}

// finish ends one attempt and returns its per-param error.
func (f *fixture) finish(p *driver.JobFinishParams) error {
	f.t.Helper()
	errs, err := f.x.JobFinish(f.ctx, []*driver.JobFinishParams{p})
	if err != nil {
		f.t.Fatalf("JobFinish: %v", err)
	}
	if len(errs) != 1 {
		f.t.Fatalf("JobFinish: %d results for 1 param", len(errs))
	}
	return errs[0]
}

// complete completes a running job whose lease must be held.
func (f *fixture) complete(j *queue.Job) {
	f.t.Helper()
	err := f.finish(&driver.JobFinishParams{Lease: j.Lease(), Outcome: queue.OutcomeCompleted, WorkerID: workerID})
	if err != nil {
		f.t.Fatalf("complete job %d: %v", j.ID, err)
	}
}

// attempts returns the finished attempts of a job.
func (f *fixture) attempts(id int64) []*queue.Attempt {
	f.t.Helper()
	as, err := f.x.JobAttempts(f.ctx, id)
	if err != nil {
		f.t.Fatalf("JobAttempts(%d): %v", id, err)
	}
	return as
}

// rescueUntil runs rescue sweeps until every id in ids has been rescued,
// and returns the rescued jobs by id.
func (f *fixture) rescueUntil(ids ...int64) map[int64]*queue.Job {
	f.t.Helper()
	want := make(map[int64]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	got := make(map[int64]*queue.Job, len(ids))
	eventually(f.t, "rescue of the expired leases", func() bool {
		jobs, err := f.x.JobRescue(f.ctx, &driver.JobRescueParams{Limit: 1000})
		if err != nil {
			f.t.Fatalf("JobRescue: %v", err)
		}
		for _, j := range jobs {
			if !want[j.ID] {
				f.t.Fatalf("JobRescue returned job %d, which was not expected to expire", j.ID)
			}
			got[j.ID] = j
		}
		return len(got) == len(want)
	})
	return got
}

// eventually polls cond until it holds, failing t after waitTimeout.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitPast lets the clock pass tm plus a margin: for tests that need time
// to pass (lease expiry, run_at), not to synchronise goroutines.
func waitPast(tm time.Time) {
	time.Sleep(time.Until(tm.Add(20 * time.Millisecond)))
}

// wantErr fails t unless err wraps target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

// near fails t unless got is within clockSlack of want.
func near(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if got.IsZero() {
		t.Fatalf("%s is zero, want about %v", what, want)
	}
	if d := got.Sub(want); d < -clockSlack || d > clockSlack {
		t.Fatalf("%s = %v, want within %v of %v (off by %v)", what, got, clockSlack, want, d)
	}
}

// wantState fails t unless the stored job is in state.
func (f *fixture) wantState(id int64, state queue.State) *queue.Job {
	f.t.Helper()
	j := f.get(id)
	if j.State != state {
		f.t.Fatalf("job %d state %s, want %s", id, j.State, state)
	}
	return j
}

func describe(j *queue.Job) string {
	return fmt.Sprintf("job %d (tenant %s, queue %s, state %s, attempt %d)", j.ID, j.TenantID, j.Queue, j.State, j.Attempt)
}

func ids(jobs []*queue.Job) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func tenantsOf(jobs []*queue.Job) map[string]int {
	out := make(map[string]int)
	for _, j := range jobs {
		out[j.TenantID]++
	}
	return out
}

// tenantLimit sets a tenant's limit in a queue (every queue when q is "").
func (f *fixture) tenantLimit(tenant, q string, limit int) {
	f.t.Helper()
	err := f.x.TenantLimitSet(f.ctx, &driver.TenantLimitParams{TenantID: tenant, Queue: q, MaxRunning: limit})
	if err != nil {
		f.t.Fatalf("TenantLimitSet(%s, %q, %d): %v", tenant, q, limit, err)
	}
}

// queueConfig sets a queue's default tenant limit.
func (f *fixture) queueConfig(q string, limit int) {
	f.t.Helper()
	if err := f.x.QueueConfigSet(f.ctx, &driver.QueueConfigParams{Queue: q, DefaultTenantLimit: limit}); err != nil {
		f.t.Fatalf("QueueConfigSet(%s, %d): %v", q, limit, err)
	}
}

// schedule runs one scheduling sweep and returns how many jobs it moved.
func (f *fixture) schedule(limit int) int {
	f.t.Helper()
	n, err := f.x.JobSchedule(f.ctx, &driver.JobScheduleParams{Limit: limit})
	if err != nil {
		f.t.Fatalf("JobSchedule: %v", err)
	}
	return n
}

// jobDiff names the fields in which two jobs differ ("" for none), times
// compared as instants.
func jobDiff(a, b *queue.Job) string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var diffs []string
	for i := range va.NumField() {
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		same := reflect.DeepEqual(fa, fb)
		if ta, ok := fa.(time.Time); ok {
			same = ta.Equal(fb.(time.Time))
		}
		if !same {
			if ra, ok := fa.(json.RawMessage); ok {
				fa, fb = string(ra), string(fb.(json.RawMessage))
			}
			diffs = append(diffs, fmt.Sprintf("%s %v vs %v", va.Type().Field(i).Name, fa, fb))
		}
	}
	return strings.Join(diffs, "; ")
}
