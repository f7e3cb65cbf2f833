package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// leadership is the maintenance leader's row.
type leadership struct {
	id        string
	term      int64
	electedAt time.Time
}

// leader returns the current maintenance leader, or nil when none holds
// an unexpired lease.
func (e *env) leader() *leadership {
	e.t.Helper()
	var l leadership
	err := e.pool.QueryRow(context.Background(), `
SELECT leader_id, term, elected_at FROM docket_leaders
WHERE name = 'maintenance' AND expires_at > clock_timestamp()`).Scan(&l.id, &l.term, &l.electedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		e.t.Fatalf("leader: %v", err)
	}
	return &l
}

// TestLeaderFailover_Smoke: 3 workers × 8 (leader TTL 1 s,
// election every 333 ms, every maintenance sweep audited) work 300 ledger
// jobs of 300 ms (600 until the smoke tier was cut to 3 minutes: the run
// after the kill is still longer than a lease and the rescue of the dead
// leader's jobs); the maintenance leader, running handlers, is SIGKILLed. A new
// leader is elected within TTL + election interval (+ 500 ms for a loaded
// 2-core box) with the next term; sweeps never ran in two processes at
// once (the audit changes hands no more often than the term, over the
// whole run: a live leader whose renewal came late may lose a term before
// the kill, and its sweeps must have stopped by then, see queue/leader.go's
// hold); the dead leader's jobs are rescued by the new one and nothing is
// lost. Bound on duplicates: the dead leader's 8 slots.
func TestLeaderFailover_Smoke(t *testing.T) {
	nightlyOnly(t)
	scheduleHeavy(t) // schedule_test.go: light on CPU, but an unkilled worker lost leases (heartbeats past 2 s) beside a heavy scenario at load 14 (13:23 UTC 2026-11-25)
	const (
		slots = 8
		ttl   = time.Second
		elect = ttl / 3
		lease = 2 * time.Second
	)
	e := setup(t)
	ids := e.mustEnqueue(ledgerJobs(300, 30, "tenant-", 5, map[string]int{"sleep_ms": 300}))
	f := startFleet(t, 3, false, e.workerArgs("-concurrency", strconv.Itoa(slots), "-lease", lease.String(),
		"-leader-ttl", ttl.String(), "-elect", elect.String(), "-rescue", "250ms", "-poll", "200ms", "-audit-maintenance"))

	var old *leadership
	var victim *proc
	waitFor(t, 10*time.Second, "a leader running handlers", func() (bool, string) {
		if old = e.leader(); old == nil {
			return false, "no leader"
		}
		for _, p := range f.procs() {
			if old.id == fmt.Sprintf("chaos-%d", p.pid) {
				victim = p
			}
		}
		if victim == nil {
			return false, "leader " + old.id + " is no worker of this test"
		}
		n := e.count(`SELECT count(*) FROM executions x WHERE worker_pid = $1
			AND NOT EXISTS (SELECT FROM effects f WHERE f.job_id = x.job_id)`, victim.pid)
		return n >= slots/2, fmt.Sprintf("leader %s runs %d handlers", old.id, n)
	})
	runsBefore := e.count(`SELECT count(*) FROM maintenance_runs`)
	killAt := e.dbNow()
	f.kill(victim)
	t.Logf("%s: SIGKILL the leader %s (term %d)", killAt.Format("15:04:05.000"), old.id, old.term)
	goneAt := e.sessionsGone(t, victim)
	t.Logf("%s: the server has ended every session of pid %d", goneAt.Format("15:04:05.000"), victim.pid)

	var next *leadership
	bound := ttl + elect + 500*time.Millisecond
	waitFor(t, bound+5*time.Second, "a new leader", func() (bool, string) {
		next = e.leader()
		return next != nil && next.id != old.id, fmt.Sprintf("%+v", next)
	})
	took := next.electedAt.Sub(killAt)
	t.Logf("new leader %s (term %d) %.2fs after the kill (bound TTL %s + election %s + 500 ms)",
		next.id, next.term, took.Seconds(), ttl, elect)
	if took > bound {
		t.Errorf("new leader %.2fs after the kill, over %s", took.Seconds(), bound)
	}
	if next.term != old.term+1 {
		t.Errorf("new term %d after term %d, want the next", next.term, old.term)
	}

	e.waitDrained(t, len(ids), 30*time.Second)
	v := e.checkTotalQueue(ids, f.killedPIDs())
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
	if v.Bound > slots {
		t.Errorf("%d unfinished executions on the dead leader, over its %d slots", v.Bound, slots)
	}
	r := e.recovery(victim.pid, killAt)
	t.Logf("the dead leader held %d jobs; all completed elsewhere %.2fs after the kill", r.held, r.took.Seconds())
	if rb := lease + 3*time.Second; r.took > rb {
		t.Errorf("the dead leader's jobs completed %.2fs after the kill, over lease + 3 s = %s", r.took.Seconds(), rb)
	}
	// Every term of the run may hand the sweeps over once: the kill's, and
	// any a live leader lost to a late renewal before it (the database is
	// fresh, so the first term is 1).
	final := e.leader()
	e.checkSweepsExclusive(t, runsBefore, victim.pid, killAt, goneAt, final.term-1)
	checkNoUnexpectedDeaths(t, f)
}

// checkSweepsExclusive reads the maintenance audit: no sweep of the dead
// leader once the server has ended its sessions (goneAt; a statement it
// sent just before the SIGKILL may still run after killAt), sweeps after
// the kill, and the process running the sweeps changes no more often than
// the leadership term did (two processes sweeping at once would
// interleave).
func (e *env) checkSweepsExclusive(t *testing.T, runsBefore, dead int, killAt, goneAt time.Time, terms int64) {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT worker_pid, done_at FROM maintenance_runs ORDER BY done_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var seq []string
	switches, after, last := 0, 0, 0
	for rows.Next() {
		var pid int
		var at time.Time
		if err := rows.Scan(&pid, &at); err != nil {
			t.Fatal(err)
		}
		switch {
		case pid == dead && at.After(goneAt):
			t.Errorf("the dead leader pid %d swept at %s, after the server ended its sessions", pid, at.Format("15:04:05.000"))
		case pid == dead && at.After(killAt):
			t.Logf("the dead leader's last sweep, sent before the SIGKILL, ran at %s", at.Format("15:04:05.000"))
		case at.After(killAt):
			after++
		}
		if last != 0 && pid != last {
			switches++
			seq = append(seq, fmt.Sprintf("%d→%d at %s", last, pid, at.Format("15:04:05.000")))
		}
		last = pid
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sweeps audited (%d before the kill, %d after); sweeping changed hands %d times (%s) over %d terms after the first",
		runsBefore+after, runsBefore, after, switches, strings.Join(seq, ", "), terms)
	if after == 0 {
		t.Error("no sweep after the kill: the new leader does not sweep")
	}
	if int64(switches) > terms {
		t.Errorf("sweeping changed hands %d times over %d terms after the first: two processes swept at once", switches, terms)
	}
}

// kill SIGKILLs p and records it as killed by the test.
func (f *fleet) kill(p *proc) {
	f.mu.Lock()
	f.killed[p.pid] = true
	f.mu.Unlock()
	p.signal(syscall.SIGKILL)
}

// sessionsGone waits until p is reaped and the server has ended every
// session p opened (named after it: proc.appLike), and returns the
// database's clock then: nothing p sent can run after it.
func (e *env) sessionsGone(t *testing.T, p *proc) time.Time {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("worker pid %d not reaped 10 s after SIGKILL", p.pid)
	}
	app := p.appLike()
	waitFor(t, 10*time.Second, "the killed worker's sessions to end", func() (bool, string) {
		n := e.count(`SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1`, app)
		return n == 0, fmt.Sprintf("%d sessions of %s", n, app)
	})
	return e.dbNow()
}
