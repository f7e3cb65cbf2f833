package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// Bounds of the pause test, generous for a loaded 2-core box: the
// engine's goal is a second for both.
const (
	// pauseTakesEffect: no job may start later than this after a pause
	// returned (a claim already in flight may still commit).
	pauseTakesEffect = time.Second
	// resumeBound: the first claim after a resume, with workers that poll
	// every 30 s: only the resume's notification can wake them in time.
	resumeBound = 3 * time.Second
	// pauseWindow is how long the test watches that nothing starts.
	pauseWindow = 2500 * time.Millisecond
)

// TestPauseResume_Smoke: three worker processes on one PostgreSQL work six
// tenants' jobs; a third client (this test) pauses the queue, then one
// tenant. After pause + 1 s no job of the queue (then of that tenant)
// starts in any process, while the jobs already running finish (and, for
// the tenant, the other tenants go on); after a resume claiming restarts
// within resumeBound; every tenant's jobs start in FIFO order.
func TestPauseResume_Smoke(t *testing.T) {
	nightlyOnly(t)
	scheduleLight(t) // schedule_test.go: a mostly waiting scenario
	e := setup(t)
	ctx := context.Background()
	const tenants, perTenant = 6, 50
	ps := make([]*queue.EnqueueParams, 0, tenants*perTenant)
	for i := range tenants * perTenant {
		ps = append(ps, &queue.EnqueueParams{Kind: kindSleep, TenantID: fmt.Sprintf("p%d", i%tenants), Args: map[string]int{"sleep_ms": 100}})
	}
	e.mustEnqueue(ps)
	startFleet(t, 3, false, e.workerArgs("-concurrency", "4", "-poll", "30s"))
	e.waitCompleted(30)

	// The queue.
	if err := e.client.PauseQueue(ctx, queue.DefaultQueue); err != nil {
		t.Fatal(err)
	}
	paused := e.dbNow()
	watch(pauseWindow)
	t.Logf("queue paused: last claim %s after the pause returned", e.lastStart(paused, ""))
	if n := e.count(`SELECT count(*) FROM docket_jobs WHERE started_at > $1`, paused.Add(pauseTakesEffect)); n != 0 {
		t.Errorf("%d jobs started later than %s after the queue was paused", n, pauseTakesEffect)
	}
	if n := e.count(`SELECT count(*) FROM docket_jobs WHERE state NOT IN ('pending', 'completed')`); n != 0 {
		t.Errorf("%d jobs neither pending nor completed %s after the pause: running jobs should have finished", n, pauseWindow)
	}
	t.Logf("queue resumed after %s: %s", pauseWindow, e.resumeLatency(func() error { return e.client.ResumeQueue(ctx, queue.DefaultQueue) }, ""))

	// One tenant.
	e.waitCompleted(e.count(`SELECT count(*) FROM docket_jobs WHERE state = 'completed'`) + 12)
	if err := e.client.PauseTenant(ctx, "p0"); err != nil {
		t.Fatal(err)
	}
	paused = e.dbNow()
	watch(pauseWindow)
	t.Logf("tenant paused: its last claim %s after the pause returned", e.lastStart(paused, "p0"))
	late := paused.Add(pauseTakesEffect)
	if n := e.count(`SELECT count(*) FROM docket_jobs WHERE tenant_id = 'p0' AND started_at > $1`, late); n != 0 {
		t.Errorf("%d jobs of the paused tenant started later than %s after the pause", n, pauseTakesEffect)
	}
	if n := e.count(`SELECT count(DISTINCT tenant_id) FROM docket_jobs WHERE tenant_id <> 'p0' AND started_at > $1`, late); n != tenants-1 {
		t.Errorf("%d of the %d other tenants started jobs while p0 was paused, want all", n, tenants-1)
	}
	t.Logf("tenant resumed after %s: %s", pauseWindow, e.resumeLatency(func() error { return e.client.ResumeTenant(ctx, "p0") }, "p0"))

	e.waitCompleted(tenants * perTenant)
	e.checkFIFO()
}

// lastStart is how long after at the last job (of tenant, when set)
// started; negative when none started after at.
func (e *env) lastStart(at time.Time, tenant string) time.Duration {
	e.t.Helper()
	var last time.Time
	err := e.pool.QueryRow(context.Background(), `
SELECT max(started_at) FROM docket_jobs WHERE ($1 = '' OR tenant_id = $1)`, tenant).Scan(&last)
	if err != nil {
		e.t.Fatal(err)
	}
	return last.Sub(at)
}

// waitCompleted waits until n jobs have completed.
func (e *env) waitCompleted(n int) {
	e.t.Helper()
	waitFor(e.t, time.Minute, fmt.Sprintf("%d completed jobs", n), func() (bool, string) {
		s := e.stats()
		return s[queue.StateCompleted] >= n, formatStates(s)
	})
}

// resumeLatency resumes and returns how long after it the first job (of
// tenant, when set) started, by the database clock; it fails the test past
// resumeBound.
func (e *env) resumeLatency(resume func() error, tenant string) time.Duration {
	e.t.Helper()
	before := e.dbNow()
	if err := resume(); err != nil {
		e.t.Fatal(err)
	}
	var first time.Time
	waitFor(e.t, 2*resumeBound, "a job to start after the resume", func() (bool, string) {
		err := e.pool.QueryRow(context.Background(), `
SELECT coalesce(min(started_at), '-infinity') FROM docket_jobs
WHERE started_at > $1 AND ($2 = '' OR tenant_id = $2)`, before, tenant).Scan(&first)
		return err == nil && first.After(before), fmt.Sprint(err)
	})
	d := first.Sub(before)
	if d > resumeBound {
		e.t.Errorf("the first job started %s after the resume, want at most %s", d, resumeBound)
	}
	return d
}

// checkFIFO: each tenant's jobs ran once and started in id order, and
// more than one process claimed them.
func (e *env) checkFIFO() {
	e.t.Helper()
	last := map[string]*queue.Job{}
	workers := map[string]bool{}
	for _, j := range byID(e.jobs()) {
		if j.Attempt != 1 || j.State != queue.StateCompleted {
			e.t.Errorf("job %d: %s after %d attempts, want completed after 1", j.ID, j.State, j.Attempt)
		}
		if prev := last[j.TenantID]; prev != nil && j.StartedAt.Before(prev.StartedAt) {
			e.t.Errorf("tenant %s: job %d started at %s, before job %d (%s)", j.TenantID, j.ID,
				j.StartedAt.Format(time.RFC3339Nano), prev.ID, prev.StartedAt.Format(time.RFC3339Nano))
		}
		last[j.TenantID] = j
		workers[j.WorkerID] = true
	}
	if len(workers) < 2 {
		e.t.Errorf("jobs claimed by %d worker processes, want several", len(workers))
	}
}

// watch lets d pass: an observation window in which the test checks that
// nothing happens, not a wait for something to happen.
func watch(d time.Duration) {
	<-time.After(d)
}
