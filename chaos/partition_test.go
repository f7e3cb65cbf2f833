package chaos

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/internal/faultproxy"
	"github.com/docketq/docket/queue"
	"github.com/docketq/docket/queue/postgres/pgtest"
)

// partitionConfig sizes a partition run.
type partitionConfig struct {
	mode         faultproxy.Mode // Drop (blackhole) or Reset
	jobs         int
	procs, slots int           // procs workers reach the server directly; one more through the proxy
	lease        time.Duration // every worker's
	fault        time.Duration // how long the partition lasts
	produce      time.Duration // enqueues spread over this long, or until afterHeal past the heal
	drain        time.Duration
	// midTx injects the fault while the victim holds a completing
	// transaction open (it holds each for hold after Task.CompleteTx);
	// otherwise the fault waits for a moment when it holds none.
	midTx bool
	hold  time.Duration
	// params are extra keyword=value settings of the victim's
	// connections (runtime parameters sent at connect).
	params string
	// netns partitions at the network level instead of through the
	// proxy: the victim runs in a network namespace of its own and
	// reaches the server over a veth pair, which is cut (netns_test.go).
	netns bool
}

// afterHeal is how long the producer goes on after the heal (when its
// c.produce lasts that long): the victim must find work again (it started
// about 25 jobs a second after the heal in the runs of 2026-11-25).
const afterHeal = 3 * time.Second

// partition is how a run cuts the victim off: through the fault proxy or
// by cutting a veth pair.
type partition struct {
	host, port string   // where the victim connects
	prefix     []string // how the victim is started
	cut, heal  func() error
	stats      func() string
}

// newPartition prepares the cluster and the fault of c: a TCP cluster and
// the proxy in front of it, or a namespace, its veth pair and a cluster
// that listens on the host's end of it too.
func newPartition(t *testing.T, c partitionConfig) (*env, *partition) {
	t.Helper()
	if c.netns {
		l := newNetLink(t) // before the cluster: the server binds its address
		cl := startCluster(t, pgtest.Options{TCP: true, Settings: map[string]string{
			"listen_addresses": "'127.0.0.1," + l.hostIP + "'",
		}})
		e := setupOn(t, cl)
		_, port, _ := net.SplitHostPort(cl.TCPAddr())
		e.allowPair(t, cl.DataDir(), l, port)
		return e, &partition{host: l.hostIP, port: port, prefix: l.prefix(), cut: l.cut, heal: l.heal, stats: l.String}
	}
	if !testing.Short() && cluster.External() { // -short: setup skips (no cluster)
		t.Skip("the fault proxy needs the package's own cluster (TCP); not with " + pgtest.EnvDatabaseURL)
	}
	e := setup(t) // the package's cluster listens on TCP too; only the victim goes through the proxy
	proxy, err := faultproxy.Listen(faultproxy.Config{Target: cluster.TCPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	host, port, _ := net.SplitHostPort(proxy.Addr())
	return e, &partition{host: host, port: port,
		cut:   func() error { proxy.SetMode(c.mode); return nil },
		heal:  func() error { proxy.SetMode(faultproxy.Pass); return nil },
		stats: func() string { return fmt.Sprintf("proxy %+v", proxy.Stats()) },
	}
}

// TestPartition_Smoke: one worker of three reaches PostgreSQL
// through the fault proxy, which blackholes it (sockets open, nothing
// forwarded, FINs held too) for 3 leases while ledger jobs are enqueued;
// then the partition heals. The fault is injected at a moment when the
// victim holds no transaction open; the mid-transaction case is
// TestPartition_MidTransaction. Bound on duplicates: the jobs the partitioned
// worker held or was claiming, at most its 8 slots.
func TestPartition_Smoke(t *testing.T) {
	scheduleHeavy(t) // schedule_test.go
	runPartition(t, partitionConfig{mode: faultproxy.Drop, jobs: 1200, procs: 2, slots: 8,
		lease: 2 * time.Second, fault: 6 * time.Second, produce: 12 * time.Second, drain: 40 * time.Second})
}

// TestPartition_MidTransaction is the blackhole partition injected while
// the victim holds a completing transaction open (each ledger job of the
// victim holds it 300 ms after Task.CompleteTx: long enough that one is
// nearly always open; 1 s until the smoke tier was cut to 3 minutes, which
// slowed the victim's share of the drain to half a minute). The server cannot tell a
// partitioned client from a slow one, so the job's row stays locked, and
// the rescuer (SKIP LOCKED) passes it by, until the server ends the
// session: CompleteTx gives the transaction an idle limit of one lease
// (queue.JobFinishParams.TxIdleLimit), so the job is rescued within the
// same bound as in TestPartition_Smoke. It failed before that limit: the
// row stayed locked for the whole partition and the job re-ran only after
// the heal.
func TestPartition_MidTransaction(t *testing.T) {
	nightlyOnly(t)
	scheduleHeavy(t) // schedule_test.go
	runPartition(t, partitionConfig{mode: faultproxy.Drop, jobs: 1200, procs: 2, slots: 8, midTx: true, hold: 300 * time.Millisecond,
		lease: 2 * time.Second, fault: 6 * time.Second, produce: 12 * time.Second, drain: 40 * time.Second})
}

// TestPartitionReset_Smoke is the partition's reset variant: every connection of the
// worker is reset (RST) and new ones are refused the same way for 3 leases.
func TestPartitionReset_Smoke(t *testing.T) {
	nightlyOnly(t)
	scheduleHeavy(t) // schedule_test.go
	runPartition(t, partitionConfig{mode: faultproxy.Reset, jobs: 1200, procs: 2, slots: 8,
		lease: 2 * time.Second, fault: 6 * time.Second, produce: 12 * time.Second, drain: 40 * time.Second})
}

func runPartition(t *testing.T, c partitionConfig) {
	e, part := newPartition(t, c)
	proxied := fmt.Sprintf("host=%s port=%s user=postgres dbname=%s sslmode=disable connect_timeout=2 application_name=%s",
		part.host, part.port, databaseName(t, e.connString), victimApp) + " " + c.params

	rescue := 250 * time.Millisecond
	common := []string{"-concurrency", strconv.Itoa(c.slots), "-lease", c.lease.String(),
		"-rescue", rescue.String(), "-poll", "200ms", "-grace", "1s", "-ledger-min", "20ms", "-ledger-max", "200ms"}
	others := startFleet(t, c.procs, false, e.workerArgs(common...))
	victimArgs := append([]string{"-database-url", proxied}, common...)
	if c.hold > 0 {
		victimArgs = append(victimArgs, "-complete-hold", c.hold.String())
	}
	cut := startFleetIn(t, 1, false, part.prefix, victimArgs)
	victim := cut.procs()[0]

	// Production ends c.produce after the start or afterHeal after the
	// heal, whichever comes first: the victim finds work again after the
	// heal, and the drain is short.
	stopProducing := make(chan struct{})
	acked, enqueueErrs := e.produce(c.jobs, c.produce, stopProducing)

	// The fault, once the victim has handlers running.
	waitFor(t, 10*time.Second, "the proxied worker to run jobs", func() (bool, string) {
		n := e.count(`SELECT count(*) FROM executions WHERE worker_pid = $1`, victim.pid)
		return n >= c.slots, fmt.Sprintf("%d executions on pid %d", n, victim.pid)
	})
	// Whether the victim holds a transaction open decides whether a job's
	// row stays locked on the server through the partition (the server
	// cannot tell a partitioned client from an idle one): see
	// TestPartition_MidTransaction.
	faultAt := e.cutAsWanted(t, c, part)
	what := "proxy " + c.mode.String()
	if c.netns {
		what = "veth pair cut"
	}
	t.Logf("%s: %s for %s between pid %d and PostgreSQL", faultAt.Format("15:04:05.000"), what, c.fault, victim.pid)
	healWall := time.Now().Add(c.fault)
	if c.midTx {
		e.checkLocksReleased(t, faultAt, c.lease, healWall)
	}
	time.Sleep(time.Until(healWall)) // the scenario: the partition lasts this long
	healAt := e.dbNow()
	if err := part.heal(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: healed; %s", healAt.Format("15:04:05.000"), part.stats())
	time.AfterFunc(afterHeal, func() { close(stopProducing) })

	ids := <-acked
	e.waitDrained(t, len(ids), c.drain)
	v := e.checkTotalQueue(ids, map[int]bool{victim.pid: true})
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
	// The derived bound: at the cut the victim holds at most its slots
	// (handlers running plus claims in flight). Nothing it claims can
	// reach it during the partition, so an unfinished execution that
	// reached the server before the heal is one of those: its row may
	// land after faultAt (the database's clock read just before the cut),
	// while the cut takes effect. One that started after the heal is a
	// job claimed after it: it may go unfinished only as a lease the
	// victim logged lost (heartbeats failing under load), each checked.
	var atCut, afterHeal int
	for _, u := range e.victimUnfinished(victim.pid, victim.logPath, faultAt, healAt) {
		t.Logf("unfinished on the victim: %s", u)
		if u.phase != phaseAfterHeal {
			atCut++
		} else if afterHeal++; u.leaseLostLog == "" {
			t.Errorf("an execution the victim started after the heal did not finish, and it logged no lease loss: %s", u)
		}
	}
	t.Logf("unfinished on the victim: %d of jobs held at the cut (bound: %d slots), %d of jobs claimed after the heal whose leases it logged lost",
		atCut, c.slots, afterHeal)
	if atCut > c.slots {
		t.Errorf("%d unfinished executions of jobs the partitioned worker held at the cut, over its %d slots", atCut, c.slots)
	}
	if afterHeal > 0 {
		t.Logf("the victim's failed heartbeats:\n%s", grepLog(victim.logPath, "heartbeat failed", 20))
	}
	r := e.heldRecovery(victim.pid, faultAt, healAt)
	t.Logf("the victim held %d jobs at the cut; all completed %.2fs after it, %d of them by the victim after the heal (lease %s, rescue %s)",
		r.held, r.took.Seconds(), r.byVictim, c.lease, rescue)
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

// cutAsWanted cuts the victim off at a moment when it holds no
// transaction open or, for c.midTx, when it does, and returns the
// database's clock just before the cut. For c.midTx the cut must leave a
// transaction of the victim open on the server (its COMMIT cut off); when
// the one seen before the cut committed first (the cut takes an ip
// command's start on the network variant), the link is healed at once and
// cut again, up to 5 times.
func (e *env) cutAsWanted(t *testing.T, c partitionConfig, part *partition) time.Time {
	t.Helper()
	for try := 1; ; try++ {
		waitFor(t, 10*time.Second, "the victim's transactions to be as the scenario wants", func() (bool, string) {
			if c.midTx {
				n := e.idleInTransaction()
				return n > 0, fmt.Sprintf("%d completing transactions of the victim open", n)
			}
			n := e.openTransactions()
			return n == 0, fmt.Sprintf("%d open transactions of the victim", n)
		})
		at := e.dbNow()
		if err := part.cut(); err != nil {
			t.Fatal(err)
		}
		if !c.midTx {
			return at
		}
		if n := e.idleInTransaction(); n > 0 {
			t.Logf("the cut left %d completing transactions of the victim open on the server (try %d)", n, try)
			return at
		}
		if try == 5 {
			t.Fatalf("5 cuts missed every transaction of the victim: the scenario needs one open through the partition")
		}
		if err := part.heal(); err != nil {
			t.Fatal(err)
		}
	}
}

// enqueueError is a failed enqueue transaction and when it failed.
type enqueueError struct {
	at  time.Time
	err error
}

// victimApp is the application_name of the partitioned worker's sessions.
const victimApp = "chaos-victim"

// checkLocksReleased waits, during the partition, until the server has
// ended every completing transaction the victim held open at the cut
// (which releases their jobs' rows to the rescuer), and checks that it
// did within a lease and a second of the cut (the fix of
// queue.JobFinishParams.TxIdleLimit: one lease of idleness). Without it the
// rows stay locked until the heal, and the victim may even commit them
// then: the effects' times, taken before the commit, would not show it.
func (e *env) checkLocksReleased(t *testing.T, faultAt time.Time, lease time.Duration, healWall time.Time) {
	t.Helper()
	bound := lease + time.Second
	ok, seen := pollUntil(time.Until(healWall), func() (bool, string) {
		n := e.idleInTransaction()
		return n == 0, fmt.Sprintf("%d completing transactions of the victim still open", n)
	})
	took := e.dbNow().Sub(faultAt)
	if !ok {
		t.Errorf("the server still held the victim's completing transactions (and their rows) %.2fs after the cut, until the heal: %s\n%s",
			took.Seconds(), seen, e.victimSessions())
		return
	}
	t.Logf("the server ended the victim's open completing transactions %.2fs after the cut (bound lease + 1 s = %s)", took.Seconds(), bound)
	if took > bound {
		t.Errorf("the victim's completing transactions ended %.2fs after the cut, over lease + 1 s = %s", took.Seconds(), bound)
	}
}

// victimSessions describes the victim's sessions in a transaction, for a
// failure's message.
func (e *env) victimSessions() string {
	rows, err := e.pool.Query(context.Background(), `SELECT format('pid %s %s since %s (transaction since %s): %s', pid, state,
		state_change, xact_start, left(query, 200)) FROM pg_stat_activity WHERE application_name = $1 AND xact_start IS NOT NULL`, victimApp)
	if err != nil {
		return err.Error()
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err.Error()
	}
	return strings.Join(lines, "\n")
}

// heldRecovery measures, by the database clock, how long after at the
// jobs pid held then (an execution that reached the server before heal,
// the job completed after at; the rows of the handlers running at the cut
// may land just after at) took to complete — elsewhere, or by pid itself
// once the partition healed: a job whose row the victim kept locked through the
// partition completes late either way, which is what the bound must catch
// (recovery counts only those completed elsewhere).
func (e *env) heldRecovery(pid int, at, heal time.Time) heldStats {
	e.t.Helper()
	var r heldStats
	var last *time.Time
	err := e.pool.QueryRow(context.Background(), `
SELECT count(DISTINCT x.job_id), count(DISTINCT x.job_id) FILTER (WHERE f.worker_pid = $1), max(f.done_at)
FROM executions x JOIN effects f USING (job_id)
WHERE x.worker_pid = $1 AND x.started_at < $3 AND f.done_at > $2`, pid, at, heal).Scan(&r.held, &r.byVictim, &last)
	if err != nil {
		e.t.Fatalf("held recovery: %v", err)
	}
	if last != nil {
		r.took = last.Sub(at)
	}
	return r
}

// heldStats is how the jobs a partitioned worker held were completed.
type heldStats struct {
	held, byVictim int
	took           time.Duration // from the fault to the last of their effects
}

// idleInTransaction counts the victim's completing transactions held open
// after Task.CompleteTx: sessions idle inside a transaction that has
// written docket_jobs (the completion's UPDATE, whose row lock keeps the
// rescuer off the job). A transaction cut before CompleteTx has written
// only its effect: it holds no job and is no such session.
func (e *env) idleInTransaction() int {
	return e.count(`SELECT count(*) FROM pg_stat_activity a
		WHERE a.application_name = $1 AND a.state = 'idle in transaction'
		AND EXISTS (SELECT FROM pg_locks l WHERE l.pid = a.pid AND l.granted
			AND l.relation = 'docket_jobs'::regclass AND l.mode = 'RowExclusiveLock')`, victimApp)
}

// openTransactions counts the victim's sessions inside a transaction.
func (e *env) openTransactions() int {
	return e.count(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND xact_start IS NOT NULL`, victimApp)
}

// produce enqueues n ledger jobs (50 tenants) in batches of 20 spread
// over d, or fewer if stop closes first, and sends the acknowledged ids
// when done; errors are collected, readable once the ids are received.
func (e *env) produce(n int, d time.Duration, stop <-chan struct{}) (<-chan []int64, *[]enqueueError) {
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
			select {
			case <-pace.C: // pacing, not synchronisation
			case <-stop:
				return
			}
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
