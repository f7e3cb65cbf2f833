package chaos

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/docketq/docket/internal/faultproxy"
	"github.com/docketq/docket/internal/testpg"
	"github.com/docketq/docket/queue"
)

// partitionConfig sizes a partition run (reliability plan, test 17).
type partitionConfig struct {
	mode         faultproxy.Mode // Drop (blackhole) or Reset
	jobs         int
	procs, slots int           // procs workers reach the server directly; one more through the proxy
	lease        time.Duration // every worker's
	fault        time.Duration // how long the partition lasts
	produce      time.Duration // enqueues spread over this long: past the heal by a few seconds, so that the victim finds work again
	drain        time.Duration
	// midTx injects the fault while the victim holds a completing
	// transaction open (it holds each for hold after Task.CompleteTx);
	// otherwise the fault waits for a moment when it holds none.
	midTx bool
	hold  time.Duration
	// params are extra keyword=value settings of the victim's
	// connections (runtime parameters sent at connect).
	params string
}

// TestPartition_Smoke is test 17: one worker of three reaches PostgreSQL
// through the fault proxy, which blackholes it (sockets open, nothing
// forwarded, FINs held too) for 3 leases while ledger jobs are enqueued;
// then the partition heals. The fault is injected at a moment when the
// victim holds no transaction open; the mid-transaction case is
// TestPartition_MidTransaction. Bound on duplicates: the jobs the partitioned
// worker held or was claiming, at most its 8 slots.
func TestPartition_Smoke(t *testing.T) {
	runPartition(t, partitionConfig{mode: faultproxy.Drop, jobs: 1200, procs: 2, slots: 8,
		lease: 2 * time.Second, fault: 6 * time.Second, produce: 12 * time.Second, drain: 40 * time.Second})
}

// TestPartition_MidTransaction is test 17 with the blackhole injected while
// the victim holds a completing transaction open (each ledger job of the
// victim holds it 1 s after Task.CompleteTx). The server cannot tell a
// partitioned client from a slow one, so the job's row stays locked, and
// the rescuer (SKIP LOCKED) passes it by, until the server ends the
// session: CompleteTx gives the transaction an idle limit of one lease
// (queue.JobFinishParams.TxIdleLimit), so the job is rescued within the
// same bound as in TestPartition_Smoke. It failed before that limit: the
// row stayed locked for the whole partition and the job re-ran only after
// the heal.
func TestPartition_MidTransaction(t *testing.T) {
	runPartition(t, partitionConfig{mode: faultproxy.Drop, jobs: 1200, procs: 2, slots: 8, midTx: true, hold: time.Second,
		lease: 2 * time.Second, fault: 6 * time.Second, produce: 12 * time.Second, drain: 40 * time.Second})
}

// TestPartitionReset_Smoke is test 17's variant: every connection of the
// worker is reset (RST) and new ones are refused the same way for 3 leases.
func TestPartitionReset_Smoke(t *testing.T) {
	runPartition(t, partitionConfig{mode: faultproxy.Reset, jobs: 1200, procs: 2, slots: 8,
		lease: 2 * time.Second, fault: 6 * time.Second, produce: 12 * time.Second, drain: 40 * time.Second})
}

func runPartition(t *testing.T, c partitionConfig) {
	cl := startCluster(t, testpg.Options{TCP: true})
	e := setupOn(t, cl)
	proxy, err := faultproxy.Listen(faultproxy.Config{Target: cl.TCPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	host, port, _ := net.SplitHostPort(proxy.Addr())
	proxied := fmt.Sprintf("host=%s port=%s user=postgres dbname=%s sslmode=disable connect_timeout=2 application_name=%s",
		host, port, databaseName(t, e.connString), victimApp) + " " + c.params

	rescue := 250 * time.Millisecond
	common := []string{"-concurrency", strconv.Itoa(c.slots), "-lease", c.lease.String(),
		"-rescue", rescue.String(), "-poll", "200ms", "-grace", "1s", "-ledger-min", "20ms", "-ledger-max", "200ms"}
	others := startFleet(t, c.procs, false, e.workerArgs(common...))
	victimArgs := append([]string{"-database-url", proxied}, common...)
	if c.hold > 0 {
		victimArgs = append(victimArgs, "-complete-hold", c.hold.String())
	}
	cut := startFleet(t, 1, false, victimArgs)
	victim := cut.procs()[0]

	acked, enqueueErrs := e.produce(c.jobs, c.produce)

	// The fault, once the victim has handlers running.
	waitFor(t, 10*time.Second, "the proxied worker to run jobs", func() (bool, string) {
		n := e.count(`SELECT count(*) FROM executions WHERE worker_pid = $1`, victim.pid)
		return n >= c.slots, fmt.Sprintf("%d executions on pid %d", n, victim.pid)
	})
	// Whether the victim holds a transaction open decides whether a job's
	// row stays locked on the server through the partition (the server
	// cannot tell a partitioned client from an idle one): see
	// TestPartition_MidTransaction.
	waitFor(t, 10*time.Second, "the victim's transactions to be as the scenario wants", func() (bool, string) {
		n := e.openTransactions()
		return (n > 0) == c.midTx, fmt.Sprintf("%d open transactions of the victim", n)
	})
	faultAt := e.dbNow()
	proxy.SetMode(c.mode)
	t.Logf("%s: proxy %s for %s between pid %d and PostgreSQL", faultAt.Format("15:04:05.000"), c.mode, c.fault, victim.pid)
	time.Sleep(c.fault) // the scenario: the partition lasts this long
	healAt := e.dbNow()
	proxy.SetMode(faultproxy.Pass)
	t.Logf("%s: healed; proxy %+v", healAt.Format("15:04:05.000"), proxy.Stats())

	ids := <-acked
	e.waitDrained(t, len(ids), c.drain)
	v := e.checkTotalQueue(ids, map[int]bool{victim.pid: true})
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
	// The derived bound: the victim holds at most its slots, claimed or
	// being claimed, when the partition starts.
	if v.Bound > c.slots {
		t.Errorf("%d unfinished executions on the partitioned worker, over its %d slots", v.Bound, c.slots)
	}
	r := e.recovery(victim.pid, faultAt)
	t.Logf("the victim held %d jobs at the fault; all completed elsewhere %.2fs after it (lease %s, rescue %s)",
		r.held, r.took.Seconds(), c.lease, rescue)
	if bound := c.lease + 4*rescue + 2*time.Second; r.took > bound && r.held > 0 {
		t.Errorf("the partitioned worker's jobs completed %.2fs after the fault, over the bound lease + 4 rescue intervals + 2 s = %s",
			r.took.Seconds(), bound)
	}
	after := e.count(`SELECT count(*) FROM executions WHERE worker_pid = $1 AND started_at > $2`, victim.pid, healAt)
	t.Logf("the victim started %d jobs after the heal", after)
	if after == 0 {
		t.Errorf("the partitioned worker never worked again after the heal\n%s", victim.tail(20))
	}
	checkNoUnexpectedDeaths(t, others)
	checkNoUnexpectedDeaths(t, cut)
	for _, err := range *enqueueErrs {
		t.Errorf("%v (the producer's connection was not faulted)", err.err)
	}
}

// enqueueError is a failed enqueue transaction and when it failed.
type enqueueError struct {
	at  time.Time
	err error
}

// victimApp is the application_name of the partitioned worker's sessions.
const victimApp = "chaos-victim"

// openTransactions counts the victim's sessions inside a transaction.
func (e *env) openTransactions() int {
	return e.count(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND xact_start IS NOT NULL`, victimApp)
}

// produce enqueues n ledger jobs (50 tenants) in batches of 20 spread
// over d, and sends the acknowledged ids when done; errors are collected,
// readable once the ids are received.
func (e *env) produce(n int, d time.Duration) (<-chan []int64, *[]enqueueError) {
	out := make(chan []int64, 1)
	errs := new([]enqueueError)
	const batch = 20
	go func() {
		var acked []int64
		defer func() { out <- acked }()
		batches := (n + batch - 1) / batch
		pace := time.NewTicker(d / time.Duration(batches))
		defer pace.Stop()
		for i := 0; i < batches; i++ {
			ids, err := e.enqueue(context.Background(), ledgerJobs(min(batch, n-i*batch), 50, "tenant-", 25, nil))
			if err != nil {
				*errs = append(*errs, enqueueError{time.Now(), fmt.Errorf("enqueue batch %d: %w", i, err)})
			}
			acked = append(acked, ids...)
			<-pace.C // pacing, not synchronisation
		}
	}()
	return out, errs
}

// waitDrained waits until no job is left to run and at least n finished;
// on timeout it fails the test (the check that follows names the jobs).
func (e *env) waitDrained(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	ok, seen := pollUntil(timeout, func() (bool, string) {
		s := e.stats()
		busy := s[queue.StateScheduled] + s[queue.StatePending] + s[queue.StateRunning]
		finished := s[queue.StateCompleted] + s[queue.StateFailed] + s[queue.StateCancelled]
		return busy == 0 && finished >= n, formatStates(s)
	})
	if !ok {
		t.Errorf("the queue did not drain within %s: %s", timeout, seen)
	}
}

// recoveryStats is how the jobs a faulted worker held came back.
type recoveryStats struct {
	held int           // jobs with an execution on pid, started before the fault, not completed by pid
	took time.Duration // from the fault to the last of their effects
}

// recovery measures, by the database clock, how long after at the jobs
// pid held then took to complete elsewhere.
func (e *env) recovery(pid int, at time.Time) recoveryStats {
	e.t.Helper()
	var r recoveryStats
	var last *time.Time
	err := e.pool.QueryRow(context.Background(), `
SELECT count(DISTINCT x.job_id), max(f.done_at)
FROM executions x JOIN effects f USING (job_id)
WHERE x.worker_pid = $1 AND x.started_at < $2 AND f.worker_pid <> $1`, pid, at).Scan(&r.held, &last)
	if err != nil {
		e.t.Fatalf("recovery: %v", err)
	}
	if last != nil {
		r.took = last.Sub(at)
	}
	return r
}
