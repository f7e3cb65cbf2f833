package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/queue"
)

// TestPoisonPill_Smoke: a job that makes its worker process exit at every
// attempt, among 1,000 normal jobs, with 3 supervised workers.
// Every attempt of the pill is ended by the rescuer, so after K=3
// attempts the job fails with the rescuer's "Processing timed out"; the
// other jobs all complete exactly once in effect, and no more than K+1
// processes die.
func TestPoisonPill_Smoke(t *testing.T) {
	scheduleHeavy(t) // schedule_test.go
	runPoison(t, 1000, 45*time.Second)
}

// runPoison enqueues the pill (max attempts 3) and normal ledger jobs, and
// checks the pill's fate, the process deaths and the total-queue verdict of
// the normal jobs.
func runPoison(t *testing.T, normal int, timeout time.Duration) {
	const maxAttempts = 3
	e := setup(t)
	// A 2 s lease: with 1 s, one heartbeat slowed past its 500 ms timeout
	// on a loaded 2-core test run made the worker cancel every handler
	// (queue's heartbeat deadline, half a lease since the last renewal),
	// and the checker counted those attempts as unexplained (1 in 3 runs at
	// 9bda443, before this change; 0 in 3 with 2 s). The deadline rule
	// itself is the open engine issue.
	f := startFleet(t, 3, true, e.workerArgs("-concurrency", "8",
		"-lease", "2s", "-rescue", "100ms", "-poll", "100ms"))
	start := time.Now()

	pill := e.mustEnqueue(jobsOf(kindExit, 1, 1, "poison-", maxAttempts, nil))[0]
	var acked []int64
	for i := 0; i < normal; i += 1000 {
		acked = append(acked, e.mustEnqueue(ledgerJobs(min(1000, normal-i), 20, "tenant-", 10, nil))...)
	}

	waitFor(t, timeout, "the pill to fail and the other jobs to complete", func() (bool, string) {
		j, err := e.client.Get(context.Background(), pill)
		if err != nil {
			t.Fatalf("get pill: %v", err)
		}
		s := e.stats()
		return j.State.Finished() && s[queue.StateCompleted] == len(acked),
			fmt.Sprintf("pill %s attempt %d; %s", j.State, j.Attempt, formatStates(s))
	})
	t.Logf("done in %.1fs", time.Since(start).Seconds())

	j, err := e.client.Get(context.Background(), pill)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != queue.StateFailed || j.Attempt != maxAttempts || !strings.Contains(j.ErrorMessage, "Processing timed out") {
		t.Errorf("pill job is %s at attempt %d/%d with error %q; want failed at attempt %d with \"Processing timed out\"",
			j.State, j.Attempt, j.MaxAttempts, j.ErrorMessage, maxAttempts)
	}
	attempts, err := e.client.Attempts(context.Background(), pill)
	if err != nil {
		t.Fatal(err)
	}
	timedOut := 0
	for _, a := range attempts {
		if a.Outcome == queue.OutcomeTimedOut {
			timedOut++
		}
	}
	if len(attempts) != maxAttempts || timedOut != maxAttempts {
		t.Errorf("pill attempts = %s; want %d, all timed out (consumed by rescues)", formatAttempts(attempts), maxAttempts)
	}

	// Deaths: every worker that exited did so running the pill.
	dead := map[int]bool{}
	deaths := 0
	for _, p := range f.history() {
		if !p.exited() {
			continue
		}
		dead[p.pid] = true
		deaths++
		if p.exitCode() != exitPoison {
			t.Errorf("worker pid %d exited with %s, not the pill's status %d\n%s", p.pid, p.status(), exitPoison, p.tail(20))
		}
	}
	pillRuns := 0
	for _, x := range e.executions() {
		if x.JobID == pill {
			pillRuns++
			if !dead[x.PID] {
				t.Errorf("pill ran on pid %d, which did not die", x.PID)
			}
		}
	}
	if deaths > maxAttempts+1 || pillRuns != maxAttempts {
		t.Errorf("%d process deaths and %d pill executions; want at most %d deaths and %d executions",
			deaths, pillRuns, maxAttempts+1, maxAttempts)
	}
	t.Logf("%d deaths, %d pill executions", deaths, pillRuns)

	v := e.checkTotalQueue(acked, dead)
	// The pill is the one execution and job outside the acknowledged set.
	v.Unexpected = without(v.Unexpected, pill)
	t.Logf("total-queue over the normal jobs: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
}

func without(ids []int64, id int64) []int64 {
	var out []int64
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}
