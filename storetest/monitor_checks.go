package storetest

import (
	"time"

	"github.com/docketq/docket"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/driver"
)

// checkQueueHealth: per queue and state, the count and the ages since the
// state began, and the queue filter.
func checkQueueHealth(m *monitorFixture) {
	// testQueue: a scheduled, two pending (tenant a), one running (a), one
	// completed (b), one failed (c), one cancelled (d); otherQueue: one
	// pending.
	m.insert(params("a"), params("a"))
	running := m.claimTenants(3, "a", "b", "c")
	m.end(running["b"], queue.OutcomeCompleted, "")
	m.end(running["c"], queue.OutcomeFailed, "broken")
	m.cancel(&driver.JobCancelParams{ID: m.enqueue("d").ID})
	later := params("e")
	later.RunAt = time.Now().Add(time.Hour)
	m.insert(later)
	other := params("a")
	other.Queue = otherQueue
	m.insert(other)

	pending := m.list(&queue.JobListParams{Queue: testQueue, States: []queue.State{queue.StatePending}})
	if len(pending) != 2 {
		m.t.Fatalf("%d pending jobs, want 2", len(pending))
	}
	m.setTimes(pending[0].ID, JobTimes{RunAt: ago(10 * time.Minute)})
	m.setTimes(pending[1].ID, JobTimes{RunAt: ago(20 * time.Minute)})
	m.setTimes(running["a"].ID, JobTimes{StartedAt: ago(5 * time.Minute)})
	m.setTimes(running["b"].ID, JobTimes{CompletedAt: ago(3 * time.Minute)})

	h := m.health(nil)
	want := []struct {
		queue, state string
		jobs         int
		avg, max     time.Duration // -1: only checked to be small
	}{
		{otherQueue, "pending", 1, -1, -1},
		{testQueue, "cancelled", 1, -1, -1},
		{testQueue, "completed", 1, 3 * time.Minute, 3 * time.Minute},
		{testQueue, "failed", 1, -1, -1},
		{testQueue, "pending", 2, 15 * time.Minute, 20 * time.Minute},
		{testQueue, "running", 1, 5 * time.Minute, 5 * time.Minute},
		{testQueue, "scheduled", 1, -1, -1},
	}
	if len(h.Queues) != len(want) {
		m.t.Fatalf("queue health: %d rows %+v, want %d", len(h.Queues), h.Queues, len(want))
	}
	for i, w := range want {
		got := h.Queues[i]
		if got.Queue != w.queue || got.State != w.state || got.Jobs != w.jobs {
			m.t.Errorf("queue health row %d = %s/%s %d jobs, want %s/%s %d", i, got.Queue, got.State, got.Jobs, w.queue, w.state, w.jobs)
			continue
		}
		if w.avg < 0 {
			w.avg, w.max = 0, 0
		}
		m.wantAge(got.Queue+"/"+got.State+" average age", got.AvgAge, w.avg)
		m.wantAge(got.Queue+"/"+got.State+" max age", got.MaxAge, w.max)
	}
	active := m.health(&docket.HealthParams{SkipFinished: true})
	if len(active.Queues) != 4 {
		m.t.Errorf("queue health with SkipFinished: %+v, want the 4 scheduled, pending and running rows", active.Queues)
	}
	for _, r := range active.Queues {
		if r.State != "scheduled" && r.State != "pending" && r.State != "running" {
			m.t.Errorf("queue health with SkipFinished has a %s row", r.State)
		}
	}
	only := m.health(&docket.HealthParams{Queue: otherQueue})
	if len(only.Queues) != 1 || only.Queues[0].Queue != otherQueue {
		m.t.Errorf("queue health of %q: %+v, want its one row", otherQueue, only.Queues)
	}
}

// checkPerformance: per hour and queue, finished counts, the average and
// nearest-rank 95th percentile of run times, the most attempts, the 24-hour
// window and the queue filter.
func checkPerformance(m *monitorFixture) {
	at := ago(time.Minute) // every finish of the current bucket
	tenants := make([]string, 20)
	for i := range tenants {
		tenants[i] = string(rune('a'+i)) + "-done"
	}
	for i, tn := range tenants { // run times 1s..20s
		j := m.claimTenants(3, tn)[tn]
		m.end(j, queue.OutcomeCompleted, "")
		m.setTimes(j.ID, JobTimes{StartedAt: at.Add(-time.Duration(i+1) * time.Second), CompletedAt: at})
	}
	// A failure on its third attempt and one on its first, same hour.
	third := m.claimTenants(3, "retried")["retried"]
	for range 2 {
		m.end(third, queue.OutcomeRetry, "again")
		third = m.claimAgain(third.ID)
	}
	m.end(third, queue.OutcomeFailed, "gave up")
	m.end(m.claimTenants(3, "first")["first"], queue.OutcomeFailed, "permanent")
	for _, tn := range []string{"retried", "first"} {
		j := m.list(&queue.JobListParams{TenantID: tn})[0]
		m.setTimes(j.ID, JobTimes{CompletedAt: at})
	}
	// The hour before: one 7 s run. A day ago: outside the window.
	prev := m.claimTenants(3, "prev")["prev"]
	m.end(prev, queue.OutcomeCompleted, "")
	m.setTimes(prev.ID, JobTimes{StartedAt: at.Add(-time.Hour - 7*time.Second), CompletedAt: at.Add(-time.Hour)})
	old := m.claimTenants(3, "old")["old"]
	m.end(old, queue.OutcomeCompleted, "")
	m.setTimes(old.ID, JobTimes{StartedAt: ago(25*time.Hour + time.Second), CompletedAt: ago(25 * time.Hour)})
	// Another queue, filtered out below.
	o := params("other")
	o.Queue = otherQueue
	m.insert(o)
	m.complete(m.claim(otherQueue, 1, longLease)[0])

	h := m.health(&docket.HealthParams{Queue: testQueue})
	if len(h.Performance) != 2 {
		m.t.Fatalf("performance of %q: %d rows %+v, want 2 (this hour and the one before)", testQueue, len(h.Performance), h.Performance)
	}
	hour := at.UTC().Truncate(time.Hour)
	m.wantHour(h.Performance[0], hourWant{hour.Add(-time.Hour), 1, 0, 7 * time.Second, 7 * time.Second, 1})
	m.wantHour(h.Performance[1], hourWant{hour, 20, 2, 10500 * time.Millisecond, 19 * time.Second, 3})
	if all := m.health(nil); len(all.Performance) != 3 {
		m.t.Errorf("performance of every queue: %d rows, want 3", len(all.Performance))
	}
	if skipped := m.health(&docket.HealthParams{SkipPerformance: true}); len(skipped.Performance) != 0 || len(skipped.Queues) == 0 {
		m.t.Errorf("SkipPerformance: %d performance rows, %d queue rows; want none and some", len(skipped.Performance), len(skipped.Queues))
	}
}

type hourWant struct {
	hour              time.Time
	completed, failed int
	avg, p95          time.Duration
	maxAttempts       int
}

func (m *monitorFixture) wantHour(got docket.HourPerformance, w hourWant) {
	m.t.Helper()
	if !got.Hour.Equal(w.hour) || got.Queue != testQueue || got.Completed != w.completed ||
		got.Failed != w.failed || got.MaxAttempts != w.maxAttempts {
		m.t.Errorf("hour %v of %s: %d completed, %d failed, max attempts %d; want hour %v of %s: %d, %d, %d",
			got.Hour, got.Queue, got.Completed, got.Failed, got.MaxAttempts, w.hour, testQueue, w.completed, w.failed, w.maxAttempts)
	}
	near := func(what string, d *time.Duration, want time.Duration) {
		if d == nil || (*d-want).Abs() > time.Millisecond {
			m.t.Errorf("hour %v: %s = %v, want %v", w.hour, what, d, want)
		}
	}
	near("average duration", got.AvgDuration, w.avg)
	near("p95 duration", got.P95Duration, w.p95)
}

// checkStuckJobs: a running job whose lease expired and one running over
// StuckAfter are stuck, longest running first; a fresh one is not; the
// limit bounds the rows, not the total.
func checkStuckJobs(m *monitorFixture) {
	jobs := m.claimTenants(3, "expired", "long", "fresh")
	m.setTimes(jobs["expired"].ID, JobTimes{StartedAt: ago(2 * time.Minute), LeaseExpiresAt: ago(time.Minute)})
	m.setTimes(jobs["long"].ID, JobTimes{StartedAt: ago(docket.StuckAfter + time.Minute)})

	h := m.health(nil)
	if h.StuckTotal != 2 || len(h.Stuck) != 2 {
		m.t.Fatalf("stuck: %d rows of %d, want 2 of 2: %+v", len(h.Stuck), h.StuckTotal, h.Stuck)
	}
	long, expired := h.Stuck[0], h.Stuck[1]
	if long.ID != jobs["long"].ID || long.Reason != "running_too_long" ||
		expired.ID != jobs["expired"].ID || expired.Reason != "lease_expired" {
		m.t.Errorf("stuck = %+v, want the long-running job (running_too_long) then the expired one (lease_expired)", h.Stuck)
	}
	if long.TenantID != "long" || long.Kind != testKind || long.Queue != testQueue || long.WorkerID != workerID ||
		long.Attempt != 1 || long.MaxAttempts != 3 || long.LeaseExpiresAt.IsZero() {
		m.t.Errorf("stuck job fields = %+v", long)
	}
	m.wantAge("running time of the long job", long.Running, docket.StuckAfter+time.Minute)
	m.wantAge("running time of the expired job", expired.Running, 2*time.Minute)
	if one := m.health(&docket.HealthParams{Limit: 1}); len(one.Stuck) != 1 || one.StuckTotal != 2 {
		m.t.Errorf("stuck with limit 1: %d rows of %d, want 1 of 2", len(one.Stuck), one.StuckTotal)
	}
}

// checkFailedJobs: failed jobs no job retries, newest first, with whether
// their attempts ran out.
func checkFailedJobs(m *monitorFixture) {
	exhausted := m.claimTenants(1, "exhausted")["exhausted"]
	m.end(exhausted, queue.OutcomeFailed, "out of attempts")
	permanent := m.claimTenants(3, "permanent")["permanent"]
	m.end(permanent, queue.OutcomeFailed, "unreadable")
	retried := m.claimTenants(3, "retried")["retried"]
	m.end(retried, queue.OutcomeFailed, "fixed since")
	m.retry(&driver.JobRetryParams{ID: retried.ID})
	m.setTimes(exhausted.ID, JobTimes{CompletedAt: ago(2 * time.Minute)})
	m.setTimes(permanent.ID, JobTimes{CompletedAt: ago(time.Minute)})

	h := m.health(nil)
	if h.FailedTotal != 2 || len(h.Failed) != 2 {
		m.t.Fatalf("failed: %d rows of %d, want 2 of 2 (the retried one left out): %+v", len(h.Failed), h.FailedTotal, h.Failed)
	}
	p, e := h.Failed[0], h.Failed[1]
	if p.ID != permanent.ID || p.AttemptsExhausted || p.ErrorMessage != "unreadable" || p.Attempt != 1 || p.MaxAttempts != 3 {
		m.t.Errorf("newest failed job = %+v, want job %d, attempt 1 of 3, not exhausted, %q", p, permanent.ID, "unreadable")
	}
	if e.ID != exhausted.ID || !e.AttemptsExhausted || e.ErrorMessage != "out of attempts" || e.Attempt != 1 || e.MaxAttempts != 1 {
		m.t.Errorf("older failed job = %+v, want job %d, attempt 1 of 1, exhausted", e, exhausted.ID)
	}
	m.wantAge("age of the failure", time.Since(e.CompletedAt), 2*time.Minute)
	if e.CreatedAt.IsZero() || e.TenantID != "exhausted" || e.Kind != testKind || e.Queue != testQueue {
		m.t.Errorf("failed job fields = %+v", e)
	}
}

// checkQueueDepth: pending and running per queue and tenant, deepest
// first, the wait of the oldest pending job, the limit and the total.
func checkQueueDepth(m *monitorFixture) {
	m.insert(params("a"), params("a"), params("a"), params("a"))
	m.insert(params("b"))
	c := params("c")
	c.Queue = otherQueue
	m.insert(c, c)
	claimed := m.claim(testQueue, 1, longLease)
	if len(claimed) != 1 {
		m.t.Fatalf("claimed %d, want 1", len(claimed))
	}
	runner := claimed[0].TenantID
	pendingA := m.list(&queue.JobListParams{TenantID: "a", States: []queue.State{queue.StatePending}})
	m.setTimes(pendingA[len(pendingA)-1].ID, JobTimes{RunAt: ago(10 * time.Minute)})

	h := m.health(nil)
	if h.DepthTotal != 3 || len(h.Depth) != 3 {
		m.t.Fatalf("depth: %d rows of %d, want 3 of 3: %+v", len(h.Depth), h.DepthTotal, h.Depth)
	}
	wantA := docket.TenantDepth{Queue: testQueue, TenantID: "a", Pending: 4, Running: 0}
	wantB := docket.TenantDepth{Queue: testQueue, TenantID: "b", Pending: 1, Running: 0}
	if runner == "a" {
		wantA.Pending, wantA.Running = 3, 1
	} else {
		wantB.Pending, wantB.Running = 0, 1
	}
	want := []docket.TenantDepth{wantA, {Queue: otherQueue, TenantID: "c", Pending: 2}, wantB}
	for i, w := range want {
		got := h.Depth[i]
		if got.Queue != w.Queue || got.TenantID != w.TenantID || got.Pending != w.Pending || got.Running != w.Running {
			m.t.Errorf("depth row %d = %+v, want %+v", i, got, w)
		}
	}
	m.wantAge("oldest pending of a", h.Depth[0].OldestPendingAge, 10*time.Minute)
	if one := m.health(&docket.HealthParams{Limit: 1, Queue: testQueue}); len(one.Depth) != 1 || one.DepthTotal != 2 {
		m.t.Errorf("depth of %q with limit 1: %d rows of %d, want 1 of 2", testQueue, len(one.Depth), one.DepthTotal)
	}
}
