package chaos

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// Clock skew: worker hosts whose clocks disagree
// with the database's by minutes.
//
// The mechanism: the PostgreSQL server runs under libfaketime (LD_PRELOAD,
// FAKETIME="+10m" or "-10m"), so its clock_timestamp() and now() are off the
// true time by the skew, while the worker processes and this test keep the
// machine's clock. libfaketime cannot move a Go process's clock: Go reads
// the wall clock through the vDSO, not libc, with or without cgo (checked:
// a cgo build under LD_PRELOAD=libfaketime.so.1 FAKETIME=+10m prints the
// true time). What the engine's protocol sees is the difference between
// each worker's clock and the database's, which is what this produces: all
// workers 10 minutes behind the database, or 10 minutes ahead of it. Skew
// between two workers is run with the engine's own seam instead
// (MaintenanceConfig.HostClock, chaosworker -clock-offset), the one wall
// clock a worker reads: see TestClockSkew_BetweenWorkers.

// skewAlmost is how far the measured skew may be from the one injected:
// the round trip of the reading and the server's start.
const skewAlmost = 5 * time.Second

// faketimeEnv returns the environment that runs the server's commands
// under libfaketime with the clock off by skew, or skips the test when
// libfaketime is not installed (it fails instead with
// DOCKET_REQUIRE_FAKETIME=1, which scripts/test.sh sets after installing
// it).
func faketimeEnv(t *testing.T, skew time.Duration) []string {
	t.Helper()
	libs, _ := filepath.Glob("/usr/lib/*/faketime/libfaketime.so.1")
	if len(libs) == 0 {
		const why = "libfaketime not installed (Debian package libfaketime; scripts/test.sh installs it)"
		if os.Getenv("DOCKET_REQUIRE_FAKETIME") == "1" {
			t.Fatal(why + ", and DOCKET_REQUIRE_FAKETIME=1")
		}
		t.Skip(why)
	}
	return []string{
		"LD_PRELOAD=" + libs[0],
		fmt.Sprintf("FAKETIME=%+ds", int64(skew/time.Second)),
		"FAKETIME_DONT_FAKE_MONOTONIC=1", // timeouts and instrumentation keep the true pace
	}
}

// skewConfig sizes a clock-skew run.
type skewConfig struct {
	skew time.Duration // the database's clock minus the workers'
	// offsets, when set, skew each worker's own clock against this host's
	// (chaosworker -clock-offset), one worker per element (procs unused).
	offsets      []time.Duration
	jobs         int
	procs, slots int
	jobSleep     time.Duration // longer than the lease: renewals must hold it
	lease, ttl   time.Duration
}

// TestClockSkew_Smoke: the database's clock 10 minutes
// ahead of every worker's (the workers behind) and 10 minutes behind
// (the workers ahead). 3 workers × 4 run 36 ledger jobs of 3 s under a 2 s
// lease while one defines a periodic job every second; the maintenance
// leader, running handlers, is SIGKILLed.
//
// What must hold, and what a clock read on the worker's host instead of
// the database would break:
//   - no job is rescued while its worker renews it (leases by the
//     database's clock; the workers' clock behind by 10 minutes would
//     write leases already 10 minutes expired: every running job rescued
//     and run twice — unexplained duplicates);
//   - the leadership term does not change while the leader lives (a
//     leader lease by the workers' clock behind would be expired at once);
//   - the dead leader's jobs are rescued within lease + 1.5 s (a rescue
//     interval of 250 ms and a loaded box) and a new leader is elected
//     within TTL + election + 500 ms, both by the database's clock (by the
//     workers' clock ahead, both would wait 10 minutes);
//   - nothing lost, duplicates only on the killed process (≤ its slots).
//
// And the ticks of a periodic job fall due by the database's clock too
// (each tick's job is created at its tick by that clock, within 1.5 s;
// until the leader read the store's clock, they fell due by its own, the
// skew late or early), while an absolute EnqueueParams.RunAt is compared
// with the database's clock (a job 2 s ahead by the producer's clock is
// due at once when the database is 10 minutes ahead, and waits 10
// minutes when it is 10 minutes behind).
func TestClockSkew_Smoke(t *testing.T) {
	nightlyOnly(t)
	t.Parallel() // its subtests take their light slots (schedule_test.go)
	for _, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute} {
		name := "workers_behind_10m"
		if skew < 0 {
			name = "workers_ahead_10m"
		}
		t.Run(name, func(t *testing.T) {
			scheduleLight(t) // schedule_test.go: each on a cluster of its own; mostly sleeping jobs
			runSkew(t, skewConfig{skew: skew, jobs: 36, procs: 3, slots: 4,
				jobSleep: 3 * time.Second, lease: 2 * time.Second, ttl: time.Second})
		})
	}
}

// TestClockSkew_BetweenWorkers is skew between the workers themselves: the
// database's clock right, and the workers' hosts 10 minutes ahead of it,
// 10 minutes behind and right (chaosworker -clock-offset: the engine reads
// its host's wall clock only through MaintenanceConfig.HostClock; every
// other reading is a duration). The same checks as TestClockSkew_Smoke,
// and so, with leadership passing between hosts 10 or 20 minutes apart,
// every periodic tick created at its tick by the database's clock: a
// leader ticking by its own clock ran them 10 minutes early, or waited 20
// minutes for the tick its predecessor stored (TestWorker_PeriodicByStoreClock
// in queue shows both). A job with a RunAt 2 s ahead is due 2 s later by
// the database's clock and run.
func TestClockSkew_BetweenWorkers(t *testing.T) {
	nightlyOnly(t)
	scheduleLight(t) // schedule_test.go: a cluster of its own; mostly sleeping jobs
	runSkew(t, skewConfig{offsets: []time.Duration{10 * time.Minute, -10 * time.Minute, 0}, jobs: 36, slots: 4,
		jobSleep: 3 * time.Second, lease: 2 * time.Second, ttl: time.Second})
}

func runSkew(t *testing.T, c skewConfig) {
	var env []string
	if c.skew != 0 {
		env = faketimeEnv(t, c.skew)
	}
	cl := startCluster(t, pgtest.Options{Env: env})
	e := setupOn(t, cl)
	ctx := context.Background()
	measured := time.Until(e.dbNow())
	t.Logf("the database's clock is %s off this host's (injected %s)", measured.Round(time.Millisecond), c.skew)
	if (measured - c.skew).Abs() > skewAlmost {
		t.Fatalf("measured skew %s, injected %s: libfaketime did not take", measured, c.skew)
	}

	// An absolute RunAt 2 s ahead by this host's clock.
	runAt := time.Now().Add(2 * time.Second)
	later, err := e.client.Enqueue(ctx, &queue.EnqueueParams{Kind: kindLedger, TenantID: "later", RunAt: runAt})
	if err != nil {
		t.Fatal(err)
	}

	ids := e.mustEnqueue(ledgerJobs(c.jobs, 30, "tenant-", 5, map[string]int{"sleep_ms": int(c.jobSleep / time.Millisecond)}))
	elect := c.ttl / 3
	args := e.workerArgs("-concurrency", strconv.Itoa(c.slots), "-lease", c.lease.String(),
		"-leader-ttl", c.ttl.String(), "-elect", elect.String(), "-rescue", "250ms", "-poll", "200ms",
		"-periodic", "tick=* * * * * *")
	var f *fleet
	if c.offsets == nil {
		f = startFleet(t, c.procs, false, args)
	} else {
		slotArgs := make([][]string, len(c.offsets))
		for i, off := range c.offsets {
			slotArgs[i] = []string{"-clock-offset", off.String()}
		}
		f = startFleetSlots(t, args, slotArgs)
	}

	// The leader, running handlers, for three TTLs without a new term.
	var first, old *leadership
	var victim *proc
	waitFor(t, 20*time.Second, "a leader running handlers for 3 TTLs", func() (bool, string) {
		if old = e.leader(); old == nil {
			return false, "no leader"
		}
		if first == nil {
			first = old
		}
		victim = nil
		for _, p := range f.procs() {
			if old.id == fmt.Sprintf("chaos-%d", p.pid) {
				victim = p
			}
		}
		n := 0
		if victim != nil {
			n = e.count(`SELECT count(*) FROM executions x WHERE worker_pid = $1
				AND NOT EXISTS (SELECT FROM effects f WHERE f.job_id = x.job_id)`, victim.pid)
		}
		held := e.dbNow().Sub(first.electedAt)
		return victim != nil && n >= c.slots/2 && held >= 3*c.ttl,
			fmt.Sprintf("leader %s (term %d, first term %d) for %s, %d handlers", old.id, old.term, first.term, held.Round(time.Millisecond), n)
	})
	if old.term != first.term {
		t.Errorf("the leadership term went from %d to %d while no process died: leader leases do not hold", first.term, old.term)
	}
	killAt := e.dbNow()
	f.kill(victim)
	e.sessionsGone(t, victim) // its last execution recorded, if it was on its way
	held := e.heldBy(victim.pid)
	t.Logf("%s (database clock): SIGKILL the leader %s (term %d), holding %d jobs", killAt.Format("15:04:05.000"), old.id, old.term, len(held))
	rescued := e.waitRescued(t, held)
	t.Logf("its jobs rescued %.2fs after the kill (lease %s, rescue every 250 ms)", rescued.Sub(killAt).Seconds(), c.lease)
	if bound := c.lease + time.Second + 500*time.Millisecond; rescued.Sub(killAt) > bound {
		t.Errorf("the dead leader's jobs rescued %.2fs after the kill, over lease + 1 s + 500 ms = %s", rescued.Sub(killAt).Seconds(), bound)
	}
	next := e.newLeader(t, old)
	took := next.electedAt.Sub(killAt)
	t.Logf("new leader %s (term %d) %.2fs after the kill", next.id, next.term, took.Seconds())
	if bound := c.ttl + elect + 500*time.Millisecond; took > bound {
		t.Errorf("new leader %.2fs after the kill, over TTL + election + 500 ms = %s", took.Seconds(), bound)
	}
	if next.term != old.term+1 {
		t.Errorf("new term %d after term %d, want the next", next.term, old.term)
	}

	e.checkRunAt(t, c.skew, later.Job.ID, runAt)
	if c.skew >= 0 {
		ids = append(ids, later.Job.ID) // due by the database's clock: the workers run it
	}
	e.waitDrained(t, len(ids), 60*time.Second)
	v := e.checkTotalQueue(ids, f.killedPIDs())
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
	if v.Bound > c.slots {
		t.Errorf("%d unfinished executions on the dead leader, over its %d slots", v.Bound, c.slots)
	}
	if after := time.Until(e.dbNow()); (after - c.skew).Abs() > skewAlmost {
		t.Errorf("the database's clock is %s off at the end, injected %s: the skew did not hold through the run", after, c.skew)
	}
	e.checkTicksByStoreClock(t, killAt, next.electedAt)
	checkNoUnexpectedDeaths(t, f)
}

// checkRunAt checks the job enqueued with an absolute RunAt 2 s ahead by
// the producer's clock: with the database ahead it was due at once (it
// never waited as scheduled); with the database behind it is still
// scheduled after its RunAt passed by this host's clock, due by the
// database's clock at RunAt itself (that is, skew later than the producer
// meant), and is cancelled so the queue drains.
func (e *env) checkRunAt(t *testing.T, skew time.Duration, id int64, runAt time.Time) {
	t.Helper()
	var state string
	var due time.Time
	for {
		err := e.pool.QueryRow(context.Background(), `SELECT state, run_at FROM docket_jobs WHERE id = $1`, id).Scan(&state, &due)
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(runAt.Add(time.Second)) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the producer's clock must pass RunAt: an observation window
	}
	dueIn := due.Sub(time.Now().Add(skew)) // by the database's clock
	t.Logf("a job with RunAt 2 s ahead by the producer's clock, past it by that clock: %s, due in %s by the database's",
		state, dueIn.Round(time.Millisecond))
	if !due.Equal(runAt.Truncate(time.Microsecond)) {
		t.Errorf("job %d stored run_at %s, want the RunAt given, %s", id, due, runAt)
	}
	switch {
	case skew >= 0 && state == string(queue.StateScheduled):
		t.Errorf("job %d scheduled although its RunAt is %s in the database's past", id, -dueIn)
	case skew < 0 && state != string(queue.StateScheduled):
		t.Errorf("job %d %s, want it scheduled: its RunAt is in the database's future", id, state)
	case skew < 0:
		if _, err := e.client.Cancel(context.Background(), id, "later"); err != nil {
			t.Fatalf("cancel job %d: %v", id, err)
		}
	}
}

// checkTicksByStoreClock checks the periodic job's ticks: one job per
// tick, and each created at its tick by the database's clock, no more than
// 1.5 s later (an election interval and a loaded box), except the ticks
// due while no leader ran (from the kill to the next election), which the
// next leader enqueues late or passes over (docs/periodic.md).
func (e *env) checkTicksByStoreClock(t *testing.T, killAt, electedAt time.Time) {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `
SELECT (args->>'tick')::timestamptz AS tick, count(*), min(created_at) FROM docket_jobs
WHERE kind = 'periodic' AND args->>'name' = 'tick' GROUP BY tick ORDER BY tick`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lags []time.Duration
	for rows.Next() {
		var tick, created time.Time
		var n int
		if err := rows.Scan(&tick, &n, &created); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("tick %s has %d jobs, want 1", tick.Format("15:04:05"), n)
		}
		lag := created.Sub(tick)
		outage := !created.Before(killAt) && !created.After(electedAt.Add(time.Second))
		if !outage && (lag < -time.Second || lag > 1500*time.Millisecond) {
			t.Errorf("tick %s created at %s (the database's clock): %s after it, want within -1 s..1.5 s",
				tick.Format("15:04:05.000"), created.Format("15:04:05.000"), lag.Round(time.Millisecond))
		}
		lags = append(lags, lag)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lags) < 3 {
		t.Fatalf("%d periodic ticks, want at least 3", len(lags))
	}
	slices.Sort(lags)
	t.Logf("%d ticks; created − tick: min %s, median %s, max %s (ticks by the database's clock)", len(lags),
		lags[0].Round(time.Millisecond), lags[len(lags)/2].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond))
	if med := lags[len(lags)/2]; math.Abs(med.Seconds()) > 1.5 {
		t.Errorf("median tick lag %s: ticks are not by the database's clock", med)
	}
}

// heldBy returns the jobs pid runs now, by id, with their attempts.
func (e *env) heldBy(pid int) map[int64]int {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT x.job_id, x.attempt FROM executions x
		WHERE x.worker_pid = $1 AND NOT EXISTS (SELECT FROM effects f WHERE f.job_id = x.job_id)`, pid)
	if err != nil {
		e.t.Fatal(err)
	}
	held, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{ id, attempt int64 }, error) {
		var v struct{ id, attempt int64 }
		return v, r.Scan(&v.id, &v.attempt)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	out := make(map[int64]int, len(held))
	for _, h := range held {
		out[h.id] = int(h.attempt)
	}
	return out
}

// waitRescued waits until no job of held (id → attempt) is still running
// its attempt there, and returns the database's clock then: the rescue of
// a dead worker's jobs.
func (e *env) waitRescued(t *testing.T, held map[int64]int) time.Time {
	t.Helper()
	ids := make([]int64, 0, len(held))
	for id := range held {
		ids = append(ids, id)
	}
	var at time.Time
	waitFor(t, 30*time.Second, "the dead worker's jobs to be rescued", func() (bool, string) {
		rows, err := e.pool.Query(context.Background(), `SELECT id, state, attempt, clock_timestamp() FROM docket_jobs WHERE id = ANY($1)`, ids)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		still := 0
		for rows.Next() {
			var id int64
			var state string
			var attempt int
			if err := rows.Scan(&id, &state, &attempt, &at); err != nil {
				t.Fatal(err)
			}
			if state == string(queue.StateRunning) && attempt == held[id] {
				still++
			}
		}
		return still == 0, fmt.Sprintf("%d of %d still running their attempt on the dead worker", still, len(held))
	})
	return at
}
