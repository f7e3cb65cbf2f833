package storetest

// The engine fixture the monitoring suite (monitor.go) builds its states
// with: jobs inserted, claimed and finished through the driver seam, as
// package drivertest does for its own suite.

import (
	"context"
	"encoding/json"
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

// enqueue inserts one pending job of tenant in testQueue.
func (f *fixture) enqueue(tenant string) *queue.Job {
	f.t.Helper()
	return f.insert(params(tenant))[0].Job
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

func (f *fixture) cancel(p *driver.JobCancelParams) *queue.Job {
	f.t.Helper()
	j, err := f.x.JobCancel(f.ctx, p)
	if err != nil {
		f.t.Fatalf("JobCancel(%+v): %v", p, err)
	}
	return j
}

func (f *fixture) retry(p *driver.JobRetryParams) *queue.Job {
	f.t.Helper()
	j, err := f.x.JobRetry(f.ctx, p)
	if err != nil {
		f.t.Fatalf("JobRetry(%+v): %v", p, err)
	}
	return j
}

func (f *fixture) list(p *queue.JobListParams) []*queue.Job {
	f.t.Helper()
	jobs, err := f.x.JobList(f.ctx, p)
	if err != nil {
		f.t.Fatalf("JobList(%+v): %v", p, err)
	}
	return jobs
}
