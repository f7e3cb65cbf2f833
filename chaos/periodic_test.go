package chaos

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// periodicTicks returns the ticks of the jobs the periodic job tick
// enqueued, in order, with how many jobs each tick has.
func (e *env) periodicTicks() ([]time.Time, map[time.Time]int) {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `
SELECT (args->>'tick')::timestamptz AS tick, count(*) FROM docket_jobs
WHERE kind = 'periodic' AND args->>'name' = 'tick' GROUP BY tick ORDER BY tick`)
	if err != nil {
		e.t.Fatalf("periodic jobs: %v", err)
	}
	defer rows.Close()
	var ticks []time.Time
	jobs := map[time.Time]int{}
	for rows.Next() {
		var tick time.Time
		var n int
		if err := rows.Scan(&tick, &n); err != nil {
			e.t.Fatal(err)
		}
		ticks = append(ticks, tick.UTC())
		jobs[tick.UTC()] = n
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return ticks, jobs
}

// outage is a time when no leader ran: ticks due then may be passed over.
type outage struct {
	what       string
	start, end time.Time // the fault; the next leader's election
}

// leaderProc returns the current leader and its process.
func (e *env) leaderProc(t *testing.T, f *fleet) (*leadership, *proc) {
	t.Helper()
	l := e.leader()
	for _, p := range f.procs() {
		if l != nil && l.id == fmt.Sprintf("chaos-%d", p.pid) {
			return l, p
		}
	}
	t.Fatalf("leader %+v is no worker of this test", l)
	return nil, nil
}

// newLeader waits for a leader other than old and returns it.
func (e *env) newLeader(t *testing.T, old *leadership) *leadership {
	t.Helper()
	var next *leadership
	waitFor(t, 10*time.Second, "a new leader", func() (bool, string) {
		next = e.leader()
		return next != nil && next.id != old.id, fmt.Sprintf("%+v", next)
	})
	return next
}

// waitTicksAfter waits until n ticks after at were enqueued.
func (e *env) waitTicksAfter(t *testing.T, at time.Time, n int) {
	t.Helper()
	waitFor(t, 15*time.Second, fmt.Sprintf("%d ticks after %s", n, at.Format("15:04:05.000")), func() (bool, string) {
		ticks, _ := e.periodicTicks()
		got := 0
		for _, tk := range ticks {
			if tk.After(at) {
				got++
			}
		}
		return got >= n, fmt.Sprintf("%d ticks", got)
	})
}

// atTick returns just after the next whole second: when the leader is
// enqueueing a tick.
func atTick() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 2*time.Millisecond).Sub(now))
}

// TestPeriodic_ExactlyOnceAcrossLeaderKill: three worker processes on one
// PostgreSQL define the same periodic job, every second ("* * * * * *").
// The maintenance leader, which enqueues it, is SIGKILLed as it enqueues a
// tick, and restarted; then the next leader is SIGSTOPped past its TTL and
// resumed, a zombie that believes it still leads, its next tick long due.
// Every tick is enqueued exactly once: no tick has two jobs; the ticks
// missing are only those that fell due while no leader ran (the documented
// policy: the next leader enqueues the latest due tick once), and the
// store's record counts them (runs = jobs, missed = the gaps).
func TestPeriodic_ExactlyOnceAcrossLeaderKill(t *testing.T) {
	scheduleLight(t) // schedule_test.go: a mostly waiting scenario
	const ttl = time.Second
	e := setup(t)
	f := startFleet(t, 3, true, e.workerArgs("-concurrency", "1", "-leader-ttl", ttl.String(),
		"-elect", (ttl/3).String(), "-periodic", "tick=* * * * * *"))
	e.waitTicksAfter(t, time.Time{}, 3)
	var outages []outage

	old, victim := e.leaderProc(t, f)
	atTick()
	killAt := e.dbNow()
	f.kill(victim)
	next := e.newLeader(t, old)
	t.Logf("%s: SIGKILL the leader %s; new leader %s %.2fs later", killAt.Format("15:04:05.000"), old.id, next.id,
		next.electedAt.Sub(killAt).Seconds())
	outages = append(outages, outage{"kill", killAt, next.electedAt})
	e.waitTicksAfter(t, next.electedAt, 2)

	old, zombie := e.leaderProc(t, f)
	atTick()
	stopAt := e.dbNow()
	if !zombie.signal(syscall.SIGSTOP) {
		t.Fatalf("leader gone before SIGSTOP: %s", zombie.status())
	}
	next = e.newLeader(t, old)
	outages = append(outages, outage{"stop", stopAt, next.electedAt})
	e.waitTicksAfter(t, next.electedAt, 1)
	contAt := e.dbNow()
	zombie.signal(syscall.SIGCONT)
	t.Logf("%s: SIGSTOP the leader %s; new leader %s %.2fs later; SIGCONT at %s", stopAt.Format("15:04:05.000"),
		old.id, next.id, next.electedAt.Sub(stopAt).Seconds(), contAt.Format("15:04:05.000"))
	e.waitTicksAfter(t, contAt, 3)
	checkNoUnexpectedDeaths(t, f)
	f.stop()

	ticks, jobs := e.periodicTicks()
	var gaps []string
	missing := 0
	for i, tk := range ticks {
		if jobs[tk] != 1 {
			t.Errorf("tick %s enqueued %d times", tk.Format("15:04:05"), jobs[tk])
		}
		if i == 0 || tk.Sub(ticks[i-1]) == time.Second {
			continue
		}
		d := tk.Sub(ticks[i-1])
		if d%time.Second != 0 {
			t.Errorf("ticks %s and %s are not whole seconds apart", ticks[i-1], tk)
			continue
		}
		missing += int(d/time.Second) - 1
		gap := fmt.Sprintf("%s..%s", ticks[i-1].Format("15:04:05"), tk.Format("15:04:05"))
		gaps = append(gaps, gap)
		// Ticks may be passed over only between a fault and the next
		// leader's first run.
		explained := false
		for _, o := range outages {
			explained = explained || (!ticks[i-1].Add(time.Second).Before(o.start.Add(-time.Second)) && !tk.After(o.end.Add(2*time.Second)))
		}
		if !explained {
			t.Errorf("ticks missing between %s: no leader outage explains them (%+v)", gap, outages)
		}
	}
	var runs, missed int
	if err := e.pool.QueryRow(context.Background(),
		`SELECT runs, missed FROM docket_periodic WHERE name = 'tick'`).Scan(&runs, &missed); err != nil {
		t.Fatal(err)
	}
	njobs := 0
	for _, n := range jobs {
		njobs += n
	}
	t.Logf("%d ticks from %s to %s, %d jobs; gaps: [%s] (%d ticks); record: %d runs, %d missed",
		len(ticks), ticks[0].Format("15:04:05"), ticks[len(ticks)-1].Format("15:04:05"), njobs, strings.Join(gaps, ", "),
		missing, runs, missed)
	if runs != len(ticks) || missed != missing {
		t.Errorf("record: %d runs, %d missed; want %d runs (the jobs), %d missed (the gaps)", runs, missed, len(ticks), missing)
	}
	if started := len(f.history()); started < 4 {
		t.Errorf("%d workers started, want the killed leader restarted", started)
	}
}
