package chaos

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// Bounds of the LISTEN-kill scenario.
const (
	listenPoll  = time.Second            // the workers' poll interval
	listenSlack = 300 * time.Millisecond // poll + 100 ms, widened for a loaded 2-core box
	relisten    = 5 * time.Second        // every worker listens again within this of the last kill
)

// TestListenerKilled_Smoke: while 10 single jobs a second are
// enqueued for 10 s into 2 workers × 8 (poll 1 s), every LISTEN backend of
// the database is killed with pg_terminate_backend every 2 s. Nothing is
// lost or run twice (no duplicate is explained by this fault: bound 0),
// every enqueue→start latency stays within the poll interval + 300 ms,
// and both workers listen again within 5 s of the last kill.
func TestListenerKilled_Smoke(t *testing.T) {
	runListenerKilled(t, 10*time.Second, 2*time.Second)
}

// runListenerKilled enqueues 10 single jobs a second for run while every
// LISTEN backend is terminated every every.
func runListenerKilled(t *testing.T, run, every time.Duration) {
	const procs = 2
	e := setup(t)
	f := startFleet(t, procs, false, e.workerArgs("-concurrency", "8", "-lease", "2s", "-rescue", "250ms",
		"-poll", listenPoll.String(), "-ledger-min", "1ms", "-ledger-max", "5ms"))
	waitFor(t, 10*time.Second, "both workers to listen", func() (bool, string) {
		n := len(e.listeners())
		return n >= procs, fmt.Sprintf("%d LISTEN backends", n)
	})

	var acked []int64
	kills, lastKill := 0, time.Time{}
	start := time.Now()
	enq := time.NewTicker(100 * time.Millisecond)
	defer enq.Stop()
	killEvery := int(every / (100 * time.Millisecond))
	for i := 0; time.Since(start) < run; i++ {
		<-enq.C // pacing: 10 jobs a second
		acked = append(acked, e.mustEnqueue(ledgerJobs(1, 1, fmt.Sprintf("t%d-", i%20), 3, nil))...)
		if i%killEvery == killEvery/2 {
			pids := e.listeners()
			for _, pid := range pids {
				var ok bool
				if err := e.pool.QueryRow(context.Background(), `SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil {
					t.Fatalf("terminate %d: %v", pid, err)
				}
				if ok {
					kills++
				}
			}
			lastKill = time.Now()
			t.Logf("%4.1fs: terminated LISTEN backends %v", time.Since(start).Seconds(), pids)
		}
	}
	waitFor(t, relisten, "both workers to listen again after the last kill", func() (bool, string) {
		n := len(e.listeners())
		return n >= procs, fmt.Sprintf("%d LISTEN backends", n)
	})
	t.Logf("listening again %.2fs after the last kill", time.Since(lastKill).Seconds())
	e.waitDrained(t, len(acked), 20*time.Second)

	v := e.checkTotalQueue(acked, nil)
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
	if want := procs * int(run/every) * 3 / 4; kills < want {
		t.Errorf("only %d LISTEN backends terminated: the fault did not happen", kills)
	}
	lat := e.startLatencies()
	slices.Sort(lat)
	p50, max := lat[len(lat)/2], lat[len(lat)-1]
	t.Logf("%d jobs, %d listener kills: enqueue→start p50 %s, p99 %s, max %s (bound poll %s + %s)",
		len(acked), kills, p50.Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond),
		max.Round(time.Millisecond), listenPoll, listenSlack)
	if max > listenPoll+listenSlack {
		t.Errorf("enqueue→start max %s, over the poll interval %s + %s", max, listenPoll, listenSlack)
	}
	checkNoUnexpectedDeaths(t, f)
}

// listeners returns the backend pids of the database's LISTEN sessions.
func (e *env) listeners() []int {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `
SELECT pid FROM pg_stat_activity
WHERE datname = current_database() AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()`)
	if err != nil {
		e.t.Fatalf("listeners: %v", err)
	}
	defer rows.Close()
	var pids []int
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			e.t.Fatalf("listeners: %v", err)
		}
		pids = append(pids, pid)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("listeners: %v", err)
	}
	return pids
}

// startLatencies returns every job's enqueue→first start.
func (e *env) startLatencies() []time.Duration {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `
SELECT min(x.started_at) - q.enqueued_at FROM executions x JOIN enqueues q USING (job_id) GROUP BY job_id, q.enqueued_at`)
	if err != nil {
		e.t.Fatalf("latencies: %v", err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var d time.Duration
		if err := rows.Scan(&d); err != nil {
			e.t.Fatalf("latencies: %v", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("latencies: %v", err)
	}
	return out
}
