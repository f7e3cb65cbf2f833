package chaos

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// TestPriorityInversion_Smoke: 4 workers × 16 slots of the
// default queue, each also reserving 3 slots for queue "high" (chaosworker
// -reserve). 64 low-priority jobs of 3 s (64 tenants) occupy every default
// slot and 32 more wait; then 10 high-priority jobs (priority 1000) are
// enqueued in the default queue and 10 in queue high. Those in queue high
// must start within the poll interval (1 s) + 200 ms at the 95th
// percentile: the reserved capacity. Those in the default queue wait for a
// slot (the control: priority orders jobs within a tenant, it preempts
// nothing); their waits are reported. Every job runs exactly once. The
// full tier's low-priority jobs run 5 s (TestPriorityInversion_Full, -tags
// chaos); 3 s still outlasts the bound more than twice over, and saves the
// smoke tier 4 s.
func TestPriorityInversion_Smoke(t *testing.T) {
	nightlyOnly(t)
	runPriority(t, 3*time.Second)
}

// runPriority runs the priority inversion with low-priority jobs of lowSleep.
func runPriority(t *testing.T, lowSleep time.Duration) {
	const (
		procs, slots, reserved = 4, 16, 3
		low, waiting, high     = 64, 32, 10
		poll                   = time.Second
		bound                  = poll + 200*time.Millisecond
	)
	e := setup(t)
	ctx := context.Background()
	startFleet(t, procs, false, e.workerArgs("-concurrency", fmt.Sprint(slots),
		"-reserve", fmt.Sprintf("high=%d", reserved), "-poll", poll.String(), "-lease", "3s"))

	lowJobs := func(n, from int) []*queue.EnqueueParams {
		ps := make([]*queue.EnqueueParams, n)
		for i := range ps {
			ps[i] = &queue.EnqueueParams{Kind: kindLedger, TenantID: fmt.Sprintf("low-%d", from+i),
				Args: map[string]int{"sleep_ms": int(lowSleep / time.Millisecond)}}
		}
		return ps
	}
	acked := e.mustEnqueue(lowJobs(low, 0))
	waitFor(t, 15*time.Second, "every default slot busy", func() (bool, string) {
		s := e.stats()
		return s[queue.StateRunning] == procs*slots, formatStates(s)
	})
	acked = append(acked, e.mustEnqueue(lowJobs(waiting, low))...)

	vip := func(q string) []*queue.EnqueueParams {
		ps := make([]*queue.EnqueueParams, high)
		for i := range ps {
			ps[i] = &queue.EnqueueParams{Queue: q, Kind: kindLedger, TenantID: fmt.Sprintf("vip-%d", i),
				Priority: 1000, Args: map[string]int{"sleep_ms": 10}}
		}
		return ps
	}
	inDefault := e.mustEnqueue(vip(queue.DefaultQueue))
	inHigh := e.mustEnqueue(vip("high"))
	acked = append(append(acked, inDefault...), inHigh...)

	waitFor(t, 60*time.Second, "every job completed", func() (bool, string) {
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM docket_jobs WHERE state = 'completed'`).Scan(&n); err != nil {
			return false, err.Error()
		}
		return n == len(acked), fmt.Sprintf("%d of %d completed", n, len(acked))
	})

	p95High, maxHigh := startWaits(t, e, inHigh)
	p95Default, maxDefault := startWaits(t, e, inDefault)
	if p95High > bound {
		t.Errorf("high-priority jobs in the reserved queue: p95 enqueue→start %s, want at most %s (poll + 200 ms)", p95High, bound)
	}
	var lowFirst int // waiting low jobs that started before the last default-queue vip job
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM docket_jobs WHERE tenant_id LIKE 'low-%' AND id > $1
		AND started_at < (SELECT max(started_at) FROM docket_jobs WHERE id = ANY($2))`, acked[low-1], inDefault).Scan(&lowFirst); err != nil {
		t.Fatal(err)
	}
	t.Logf("reserved queue high: p95 %s, max %s (bound %s); same queue, priority 1000: p95 %s, max %s; "+
		"%d of the %d waiting low-priority jobs (other tenants) started before the last of them",
		p95High.Round(time.Millisecond), maxHigh.Round(time.Millisecond), bound,
		p95Default.Round(time.Millisecond), maxDefault.Round(time.Millisecond), lowFirst, waiting)

	v := e.checkTotalQueue(acked, nil)
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
}

// startWaits returns the 95th percentile (nearest rank) and the most of the
// jobs' enqueue→start waits, by the database clock.
func startWaits(t *testing.T, e *env, ids []int64) (p95, most time.Duration) {
	t.Helper()
	var p, m float64
	err := e.pool.QueryRow(context.Background(), `
SELECT percentile_disc(0.95) WITHIN GROUP (ORDER BY w), max(w)
FROM (SELECT extract(epoch FROM j.started_at - q.enqueued_at) AS w
      FROM docket_jobs j JOIN enqueues q ON q.job_id = j.id WHERE j.id = ANY($1)) s`, ids).Scan(&p, &m)
	if err != nil {
		t.Fatalf("start waits: %v", err)
	}
	return time.Duration(p * float64(time.Second)), time.Duration(m * float64(time.Second))
}
