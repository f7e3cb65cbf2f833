package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// kindSink is the chaosworker's job kind that writes to the fenced sink.
const kindSink = "sink"

// fencedSink is the test double of an external system that takes a fencing
// token: it keeps the highest attempt written per job and refuses writes
// of lower attempts.
type fencedSink struct {
	mu       sync.Mutex
	max      map[int64]int // highest attempt accepted per job
	accepted []sinkWrite
	refused  []sinkWrite
}

type sinkWrite struct {
	job     int64
	attempt int
	pid     int
	at      time.Time
}

func (s *fencedSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	job, err1 := strconv.ParseInt(r.URL.Query().Get("job"), 10, 64)
	attempt, err2 := strconv.Atoi(r.URL.Query().Get("attempt"))
	pid, err3 := strconv.Atoi(r.URL.Query().Get("pid"))
	if err1 != nil || err2 != nil || err3 != nil {
		http.Error(w, "bad write", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	wr := sinkWrite{job: job, attempt: attempt, pid: pid, at: time.Now()}
	if attempt < s.max[job] {
		s.refused = append(s.refused, wr)
		http.Error(w, "fenced", http.StatusConflict)
		return
	}
	s.max[job] = attempt
	s.accepted = append(s.accepted, wr)
}

func (s *fencedSink) snapshot() (max map[int64]int, accepted, refused []sinkWrite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	max = make(map[int64]int, len(s.max))
	for k, v := range s.max {
		max[k] = v
	}
	return max, append([]sinkWrite(nil), s.accepted...), append([]sinkWrite(nil), s.refused...)
}

// TestSigstop_Smoke: 20 sink jobs of 1 s (handlers deaf to
// their context) on 2 workers × 8; once the victim runs 8 handlers it is
// SIGSTOPped for 3 leases (6 s), then SIGCONTed. Its jobs are rescued and
// run elsewhere; on resume its handlers write late to the sink, which
// refuses them (a higher attempt wrote), and it changes no job. A handler
// stopped after its write, in its completing transaction, wrote before the
// stop (accepted: no later attempt had written); each held job must be one
// or the other. Bound on duplicates: the victim's 8 slots.
func TestSigstop_Smoke(t *testing.T) {
	const (
		slots = 8
		lease = 2 * time.Second
		pause = 3 * lease
	)
	e := setup(t)
	sink := &fencedSink{max: map[int64]int{}}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	// 20 jobs for 16 slots: the other worker has room for the victim's
	// jobs once they are rescued.
	ids := e.mustEnqueue(jobsOf(kindSink, 20, 20, "tenant-", 5, map[string]int{"sleep_ms": 1000}))
	f := startFleet(t, 2, false, e.workerArgs("-concurrency", strconv.Itoa(slots), "-lease", lease.String(),
		"-rescue", "250ms", "-poll", "100ms", "-sink-url", srv.URL))

	// The victim: the first worker to run 8 handlers at once.
	var victim *proc
	waitFor(t, 10*time.Second, "a worker to run 8 handlers", func() (bool, string) {
		seen := ""
		for _, p := range f.procs() {
			n := e.count(`SELECT count(*) FROM executions x WHERE worker_pid = $1
				AND NOT EXISTS (SELECT FROM effects f WHERE f.job_id = x.job_id)`, p.pid)
			if n >= slots {
				victim = p
				return true, ""
			}
			seen += fmt.Sprintf("%d running on pid %d; ", n, p.pid)
		}
		return false, seen
	})
	stopAt := e.dbNow()
	if !victim.signal(syscall.SIGSTOP) {
		t.Fatalf("victim gone before SIGSTOP: %s", victim.status())
	}
	t.Logf("%s: SIGSTOP pid %d for %s", stopAt.Format("15:04:05.000"), victim.pid, pause)
	time.Sleep(pause) // the scenario: the pause lasts this long
	resumeAt := e.dbNow()
	resumedWall := time.Now()
	victim.signal(syscall.SIGCONT)
	t.Logf("%s: SIGCONT", resumeAt.Format("15:04:05.000"))

	e.waitDrained(t, len(ids), 30*time.Second)
	r := e.recovery(victim.pid, stopAt)
	t.Logf("the victim held %d jobs at the stop; all completed elsewhere %.2fs after it", r.held, r.took.Seconds())
	// Recovery bound: the lease runs out, a rescue sweep (250 ms) finds
	// the job, a worker claims it (poll 100 ms) and runs it (1 s); 2 s of
	// slack for a loaded 2-core box.
	if bound := lease + time.Second + 3*time.Second; r.took > bound {
		t.Errorf("the stopped worker's jobs completed %.2fs after the stop, over the bound lease + 1 s job + 3 s = %s", r.took.Seconds(), bound)
	}
	// The victim's stalled handlers write on resume: wait for their
	// refusals, within 10 s: one per job it held, but for a job whose
	// handler had written before the stop and was stopped in its
	// completing transaction (that write was accepted: no later attempt
	// had written yet; the transaction never commits, and the rescued
	// attempt's write replaces the value). Every held job must be one or
	// the other.
	held := e.heldJobs(victim.pid, stopAt)
	var early, late map[int64]bool
	ok, seen := pollUntil(10*time.Second, func() (bool, string) {
		early, late = victimWrites(sink, victim.pid, resumedWall)
		missing := heldUnwritten(held, early, late)
		return len(missing) == 0, fmt.Sprintf("%d refused late writes, %d writes before the stop, for %d jobs held (%d held jobs without either: %v)",
			len(late), len(early), len(held), len(missing), missing)
	})
	if !ok {
		t.Fatalf("timed out after 10s waiting for the victim's late writes; last seen: %s", seen)
	}
	t.Logf("of the %d jobs the victim held, %d had written to the sink before the stop (stopped in their completing transaction), %d wrote late and were refused",
		len(held), len(heldIn(held, early)), len(heldIn(held, late)))

	v := e.checkTotalQueue(ids, map[int]bool{victim.pid: true})
	t.Logf("total-queue: %s", v)
	for _, p := range v.problems() {
		t.Error(p)
	}
	if v.Bound > slots {
		t.Errorf("%d unfinished executions on the stopped worker, over its %d slots", v.Bound, slots)
	}
	if r.held == 0 {
		t.Errorf("the victim held no job at the stop: the scenario did not happen")
	}
	checkSink(t, sink, e.effects(), victim.pid, resumedWall)
	n := e.count(`SELECT count(*) FROM effects WHERE worker_pid = $1 AND done_at > $2`, victim.pid, resumeAt)
	t.Logf("the victim completed %d jobs after resuming", n)
	checkNoUnexpectedDeaths(t, f)
}

// heldJobs returns the jobs pid held at (the jobs of recovery's count):
// an execution on pid that started before at, completed by another worker.
func (e *env) heldJobs(pid int, at time.Time) []int64 {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT DISTINCT x.job_id FROM executions x JOIN effects f USING (job_id)
		WHERE x.worker_pid = $1 AND x.started_at < $2 AND f.worker_pid <> $1 ORDER BY 1`, pid, at)
	if err != nil {
		e.t.Fatalf("held jobs: %v", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		e.t.Fatalf("held jobs: %v", err)
	}
	return ids
}

// victimWrites returns the jobs of the victim's writes the sink accepted
// before it resumed (necessarily sent before the stop), and of its writes
// refused after.
func victimWrites(sink *fencedSink, pid int, resumed time.Time) (early, late map[int64]bool) {
	_, accepted, refused := sink.snapshot()
	early, late = map[int64]bool{}, map[int64]bool{}
	for _, w := range accepted {
		if w.pid == pid && w.at.Before(resumed) {
			early[w.job] = true
		}
	}
	for _, w := range refused {
		if w.pid == pid && !w.at.Before(resumed) {
			late[w.job] = true
		}
	}
	return early, late
}

// heldUnwritten returns the held jobs with neither an early write nor a
// refused late one.
func heldUnwritten(held []int64, early, late map[int64]bool) []int64 {
	var out []int64
	for _, id := range held {
		if !early[id] && !late[id] {
			out = append(out, id)
		}
	}
	return out
}

// heldIn returns the held jobs in set.
func heldIn(held []int64, set map[int64]bool) []int64 {
	var out []int64
	for _, id := range held {
		if set[id] {
			out = append(out, id)
		}
	}
	return out
}

// checkSink: one value per job, written by the attempt that completed it;
// every refused write was of a lower attempt than the one kept; every
// write the victim made after resuming was refused.
func checkSink(t *testing.T, sink *fencedSink, effects map[int64]effect, victim int, resumed time.Time) {
	t.Helper()
	max, accepted, refused := sink.snapshot()
	if len(max) != len(effects) {
		t.Errorf("the sink holds %d jobs, the ledger %d effects", len(max), len(effects))
	}
	for id, ef := range effects {
		if max[id] != ef.Attempt {
			t.Errorf("job %d: the sink kept attempt %d, the job was completed by attempt %d", id, max[id], ef.Attempt)
		}
	}
	for _, w := range refused {
		if w.attempt >= max[w.job] {
			t.Errorf("job %d: attempt %d refused though the sink kept %d", w.job, w.attempt, max[w.job])
		}
	}
	late := 0
	for _, w := range accepted {
		if w.pid == victim && w.at.After(resumed) && w.attempt < max[w.job] {
			t.Errorf("job %d: the resumed victim's attempt %d was accepted", w.job, w.attempt)
		}
	}
	for _, w := range refused {
		if w.pid == victim {
			late++
		}
	}
	t.Logf("sink: %d jobs, %d writes accepted, %d refused (%d of them the resumed victim's)", len(max), len(accepted), len(refused), late)
}
