package chaos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/docketq/docket/queue/postgres/pgtest"
)

// serverFault is a fault of the PostgreSQL server itself.
type serverFault struct {
	name    string
	durable bool                        // fsync and synchronous_commit on
	inject  func(*pgtest.Cluster) error // returns once the server accepts connections again
}

// serverFaultConfig sizes a server-fault run (fast restart or durable
// crash).
type serverFaultConfig struct {
	jobs         int
	procs, slots int
	produce      time.Duration // enqueues spread over this long
	faultAfter   time.Duration // the fault, this long after the first enqueue
}

// Bounds of the server-fault scenarios.
const (
	reclaimBound = 5 * time.Second        // every worker claims again within this of the server's return
	faultPoll    = 3 * time.Second        // workers' poll interval: a fast pick-up proves LISTEN
	notifyBound  = 300 * time.Millisecond // enqueue→start by notification
)

// TestPGRestart_Smoke: `pg_ctl restart -m fast` 2 s into a run
// of 1,500 ledger jobs enqueued over 7 s on 3 workers × 8 (2,500 until the
// smoke tier was cut to 3 minutes: more than the workers do in 7 s, so the
// backlog took 5 s more to drain). No worker exits,
// each claims again within 5 s of the server's return, LISTEN is re-issued
// (three single jobs after the drain each start within 300 ms with a 3 s
// poll interval), every enqueue whose commit returned is worked once in
// effect. Bound on duplicates: the executions in flight on the broken
// connections, at most the workers' pool connections (3 × 12).
func TestPGRestart_Smoke(t *testing.T) {
	nightlyOnly(t)
	scheduleHeavy(t) // schedule_test.go
	runServerFault(t, serverFault{name: "pg_ctl restart -m fast", inject: func(c *pgtest.Cluster) error {
		return c.Restart("fast")
	}}, serverFaultConfig{jobs: 1500, procs: 3, slots: 8, produce: 7 * time.Second, faultAfter: 2 * time.Second})
}

// TestPGCrash_Smoke: a durable cluster (fsync and
// synchronous_commit on) crashed with `pg_ctl stop -m immediate` 2 s into
// a run of 1,500 jobs enqueued over 7 s, then started (crash recovery). Every enqueue whose commit
// returned exists after recovery and is worked; enqueues whose outcome was
// unknown (the commit failed with the crash) are present or absent, never
// twice. Bound on duplicates as in TestPGRestart_Smoke.
func TestPGCrash_Smoke(t *testing.T) {
	scheduleHeavy(t) // schedule_test.go
	runServerFault(t, serverFault{name: "pg_ctl stop -m immediate; pg_ctl start", durable: true,
		inject: func(c *pgtest.Cluster) error {
			if err := c.StopServer("immediate"); err != nil {
				return err
			}
			return c.StartServer()
		}}, serverFaultConfig{jobs: 1500, procs: 3, slots: 8, produce: 7 * time.Second, faultAfter: 2 * time.Second})
}

func runServerFault(t *testing.T, fault serverFault, c serverFaultConfig) {
	cl := startCluster(t, pgtest.Options{Durable: fault.durable})
	e := setupOn(t, cl)
	// A checkpoint before the run, as a server in service has taken one in
	// the last few minutes: crash recovery then replays the run's WAL, not
	// the copy of the template that created the test's database (5.5 s of
	// recovery instead of ~1 s on a loaded 2-core box).
	if _, err := e.pool.Exec(context.Background(), `CHECKPOINT`); err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	f := startFleet(t, c.procs, false, e.workerArgs("-concurrency", strconv.Itoa(c.slots), "-lease", "2s",
		"-rescue", "250ms", "-poll", faultPoll.String(), "-ledger-min", "5ms", "-ledger-max", "50ms"))
	acked, enqueueErrs := e.produce(c.jobs, c.produce, nil)

	time.Sleep(c.faultAfter) // the scenario: the fault comes this far into the run
	faultAt := time.Now()
	if err := fault.inject(cl); err != nil {
		t.Fatalf("%s: %v", fault.name, err)
	}
	backAt := time.Now()
	t.Logf("%s at +%s; the server accepted connections again %.2fs later", fault.name, c.faultAfter,
		backAt.Sub(faultAt).Seconds())

	ackedIDs := <-acked
	windowEnd := backAt.Add(reclaimBound)
	inWindow := 0
	for _, ee := range *enqueueErrs {
		if ee.at.Before(faultAt) || ee.at.After(windowEnd) {
			t.Errorf("enqueue failed outside the fault window: %v", ee.err)
		} else {
			inWindow++
		}
	}
	e.waitDrained(t, len(ackedIDs), 60*time.Second)

	// Every enqueue whose commit returned must exist; those whose commit
	// failed with the fault may exist (then they are worked like the rest).
	present := e.enqueued()
	missing := 0
	for _, id := range ackedIDs {
		if _, ok := slices.BinarySearch(present, id); !ok {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d acknowledged enqueues missing after %s", missing, fault.name)
	}
	t.Logf("%d enqueues acknowledged, %d present (%d with an unknown outcome), %d enqueue transactions failed in the fault window",
		len(ackedIDs), len(present), len(present)-len(ackedIDs)+missing, inWindow)

	v := e.checkTotalQueueExplained(present, func(x execution) bool { return x.StartedAt.Before(windowEnd) })
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
	if bound := c.procs * (c.slots + 4); v.Bound > bound {
		t.Errorf("%d executions cut by the fault, over the bound of the workers' pool connections %d", v.Bound, bound)
	}
	for _, p := range f.procs() {
		first := e.firstStartAfter(p.pid, backAt)
		if first == nil || first.Sub(backAt) > reclaimBound {
			t.Errorf("worker pid %d: first claim after the server's return at %v, want within %s", p.pid, first, reclaimBound)
		} else {
			t.Logf("worker pid %d claimed again %.2fs after the server's return", p.pid, first.Sub(backAt).Seconds())
		}
	}
	e.checkNotified(t, 3)
	checkNoUnexpectedDeaths(t, f)
}

// enqueued returns the job ids of the enqueues table, sorted.
func (e *env) enqueued() []int64 {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT job_id FROM enqueues ORDER BY job_id`)
	if err != nil {
		e.t.Fatalf("read enqueues: %v", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			e.t.Fatalf("read enqueues: %v", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("read enqueues: %v", err)
	}
	return ids
}

// firstStartAfter returns when pid first started a handler after at, or
// nil.
func (e *env) firstStartAfter(pid int, at time.Time) *time.Time {
	e.t.Helper()
	var first *time.Time
	if err := e.pool.QueryRow(context.Background(),
		`SELECT min(started_at) FROM executions WHERE worker_pid = $1 AND started_at > $2`, pid, at).Scan(&first); err != nil {
		e.t.Fatalf("first start: %v", err)
	}
	return first
}

// checkNotified enqueues n single jobs into an idle queue, one after the
// other, and fails unless each starts within notifyBound: with workers
// polling every faultPoll, only a notification (LISTEN working) starts
// them that fast; all n by polls alone is unlikely (each about 0.27 with 3
// workers, so 2% for 3).
func (e *env) checkNotified(t *testing.T, n int) {
	t.Helper()
	var lat []time.Duration
	for i := range n {
		id := e.mustEnqueue(ledgerJobs(1, 1, fmt.Sprintf("probe-%d-", i), 3, nil))[0]
		waitFor(t, 2*faultPoll, "a probe job to finish", func() (bool, string) {
			n := e.count(`SELECT count(*) FROM effects WHERE job_id = $1`, id)
			return n == 1, fmt.Sprintf("job %d: %d effects", id, n)
		})
		var d time.Duration
		if err := e.pool.QueryRow(context.Background(), `
SELECT min(x.started_at) - q.enqueued_at FROM executions x JOIN enqueues q USING (job_id)
WHERE job_id = $1 GROUP BY q.enqueued_at`, id).Scan(&d); err != nil {
			t.Fatalf("probe latency: %v", err)
		}
		lat = append(lat, d)
	}
	t.Logf("enqueue→start of %d probe jobs after the fault: %v (poll interval %s)", n, lat, faultPoll)
	for _, d := range lat {
		if d > notifyBound {
			t.Errorf("probe latencies %v: over %s, so the workers did not hear the insert (LISTEN not re-issued?)", lat, notifyBound)
			return
		}
	}
}
