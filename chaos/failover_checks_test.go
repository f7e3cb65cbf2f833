package chaos

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docketq/docket"
)

// failoverTimes is what the failover manager (the test) did and saw.
type failoverTimes struct {
	killAt     time.Time // every process of the primary stopped (then SIGKILLed)
	streamLost time.Time // the standby no longer streaming
	promoteAt  time.Time // pg_ctl promote started
	promotedAt time.Time // pg_ctl promote -w returned: the standby accepts writes
	// received is the standby's last received WAL position, read once its
	// stream was gone: what the promotion keeps.
	received int64
	// leaderExpires is the maintenance leader's lease on the promoted
	// standby right after the promotion (zero for none).
	leaderExpires time.Time
}

// failover kills the primary and promotes the standby, as a failover
// manager would: it waits until the standby has lost its stream (so that
// nothing more can arrive), reads what it received, then promotes it. With
// cfg.lag it first holds the standby's walreceiver stopped for that long.
func (r *failoverRun) failover() failoverTimes {
	t, p := r.t, r.pair
	var f failoverTimes
	walreceiver := 0
	if r.cfg.lag > 0 {
		if err := p.queryRow(p.standby, "postgres", `SELECT pid FROM pg_stat_wal_receiver`, nil, &walreceiver); err != nil {
			t.Fatalf("the standby's walreceiver: %v", err)
		}
		if err := signalPID(walreceiver, syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP walreceiver %d: %v", walreceiver, err)
		}
		time.Sleep(r.cfg.lag) // the scenario: the standby falls this far behind
	}
	// The kill comes while jobs run (they take 50-200 ms), so that the
	// failover cuts executions.
	waitFor(t, 10*time.Second, "jobs running on the primary", func() (bool, string) {
		var n int
		err := r.pool.QueryRow(context.Background(), `SELECT count(*) FROM docket_jobs WHERE state = 'running'`).Scan(&n)
		return err == nil && n >= 2, fmt.Sprintf("%d running, %v", n, err)
	})
	var err error
	if f.killAt, err = p.killPrimary(); err != nil {
		t.Fatal(err)
	}
	if walreceiver > 0 {
		if err := signalPID(walreceiver, syscall.SIGCONT); err != nil {
			t.Fatalf("SIGCONT walreceiver %d: %v", walreceiver, err)
		}
	}
	waitFor(t, 30*time.Second, "the standby to lose its stream", func() (bool, string) {
		var n int
		err := p.queryRow(p.standby, "postgres", `SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming'`, nil, &n)
		return err == nil && n == 0, fmt.Sprintf("%d streaming, %v", n, err)
	})
	f.streamLost = time.Now()
	if err := p.queryRow(p.standby, "postgres", `SELECT (pg_last_wal_receive_lsn() - '0/0')::bigint`, nil, &f.received); err != nil {
		t.Fatalf("the standby's received position: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f.promoteAt = time.Now()
	if err := p.promote(ctx); err != nil {
		t.Fatal(err)
	}
	f.promotedAt = time.Now()
	var exp *time.Time
	if err := p.queryRow(p.standby, "docket", `SELECT max(expires_at) FROM docket_leaders WHERE name = 'maintenance'`, nil, &exp); err != nil {
		t.Fatalf("the leader after the promotion: %v", err)
	}
	if exp != nil {
		f.leaderExpires = *exp
	}
	r.pool.Reset() // its connections were to the old primary
	return f
}

// checkUploads checks every acknowledged upload against the new primary.
// On a synchronous pair every one exists, document and job. On an
// asynchronous one the uploads acknowledged before the promotion split by
// the standby's received position: those whose commit it had must exist,
// those whose request began after it must be gone, those in between may
// be either; uploads acknowledged after the promotion must exist. Refused
// uploads must all fall between the kill and the end of the resume bound.
func (r *failoverRun) checkUploads(f failoverTimes) {
	t := r.t
	r.mu.Lock()
	acked, refused := slices.Clone(r.acked), slices.Clone(r.refused)
	r.mu.Unlock()
	windowEnd := f.promotedAt.Add(failoverResume)
	inWindow := 0
	for _, e := range refused {
		switch {
		case e.at.Before(f.killAt) || e.at.After(windowEnd):
			t.Errorf("upload refused outside the failover window: %v", e.err)
		case !strings.HasPrefix(e.err.Error(), "upload: 503 "):
			t.Errorf("upload refused in the failover window with %v, want 503 (the database unavailable: retry)", e.err)
		default:
			inWindow++
		}
	}
	present, reissued := r.presentUploads(acked)
	r.lost = map[int64]bool{}
	var lost, mustKeep, mustLose, between, afterPromotion int
	for _, u := range acked {
		ok := present[u.DocumentID]
		if !ok {
			lost++
			r.lost[u.JobID] = true
		}
		switch {
		case r.cfg.sync:
			if !ok {
				t.Errorf("upload acknowledged at %s (job %d, document %s) lost in the failover", u.at.Format("15:04:05.000"), u.JobID, u.DocumentID)
			}
		case u.at.After(f.promotedAt):
			afterPromotion++
			if !ok {
				t.Errorf("upload acknowledged by the new primary (job %d) lost", u.JobID)
			}
		case u.after.lsn >= 0 && u.after.sent.Before(f.promoteAt) && u.after.lsn <= f.received:
			mustKeep++
			if !ok {
				t.Errorf("upload (job %d) committed by %s, before the standby's received %s, lost: a loss replication does not explain",
					u.JobID, lsnString(u.after.lsn), lsnString(f.received))
			}
		case u.before.lsn >= 0 && u.before.sent.Before(f.killAt) && u.before.lsn > f.received:
			mustLose++
			if ok {
				t.Errorf("upload (job %d) begun at %s, after the standby's received %s, exists on the promoted standby",
					u.JobID, lsnString(u.before.lsn), lsnString(f.received))
			}
		default:
			between++
		}
	}
	t.Logf("uploads: %d acknowledged, %d lost (%d of their job ids handed out again), %d refused in the failover window",
		len(acked), lost, reissued, inWindow)
	if len(refused) > 0 {
		t.Logf("first refusal: %v", refused[0].err)
	}
	if !r.cfg.sync {
		t.Logf("asynchronous: %d committed before the standby's received position (kept), %d begun after it (lost), "+
			"%d straddling it, %d acknowledged by the new primary", mustKeep, mustLose, between, afterPromotion)
		if r.cfg.lag > 0 && mustLose == 0 {
			t.Errorf("no upload began after the standby's received position although its walreceiver was stopped for %s: "+
				"the lag the scenario needs did not happen", r.cfg.lag)
		}
	}
}

// presentUploads returns which acknowledged uploads exist, by document
// id: the document, and the job it names with the acknowledged id. A
// document naming another job, or none, fails the test: they commit
// together. A job id of a lost upload may name another job now, which
// reissued counts: a sequence's WAL runs ahead of the values it hands out,
// and a standby that missed that WAL hands them out again.
func (r *failoverRun) presentUploads(acked []uploadRec) (present map[string]bool, reissued int) {
	t := r.t
	docIDs := make([]string, len(acked))
	for i, u := range acked {
		docIDs[i] = u.DocumentID
	}
	jobOf := map[string]*int64{}
	rows, err := r.pool.Query(context.Background(), `
SELECT d.id, j.id FROM docket_documents d LEFT JOIN docket_jobs j ON j.id = d.job_id WHERE d.id = ANY($1)`, docIDs)
	if err != nil {
		t.Fatalf("read documents: %v", err)
	}
	for rows.Next() {
		var (
			id  string
			job *int64
		)
		if err := rows.Scan(&id, &job); err != nil {
			t.Fatal(err)
		}
		jobOf[id] = job
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read documents: %v", err)
	}
	present = map[string]bool{}
	var gone []int64
	for _, u := range acked {
		job, ok := jobOf[u.DocumentID]
		switch {
		case !ok:
			gone = append(gone, u.JobID)
		case job == nil || *job != u.JobID:
			t.Errorf("document %s of job %d exists with job %v: not its acknowledged job", u.DocumentID, u.JobID, job)
		default:
			present[u.DocumentID] = true
		}
	}
	return present, len(r.int64Set(`SELECT id FROM docket_jobs WHERE id = ANY($1)`, gone))
}

func (r *failoverRun) int64Set(query string, args ...any) map[int64]bool {
	rows, err := r.pool.Query(context.Background(), query, args...)
	if err != nil {
		r.t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			r.t.Fatal(err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		r.t.Fatalf("%s: %v", query, err)
	}
	return out
}

// waitDrained waits until every document job is finished, and fails the
// test for any that failed.
func (r *failoverRun) waitDrained(within time.Duration) {
	waitFor(r.t, within, "every document job to finish", func() (bool, string) {
		var open int
		err := r.pool.QueryRow(context.Background(), `SELECT count(*) FROM docket_jobs WHERE kind = $1 AND state NOT IN ('completed', 'failed', 'cancelled')`,
			docket.DocumentKind).Scan(&open)
		return err == nil && open == 0, fmt.Sprintf("%d open, %v", open, err)
	})
	failed := r.int64Set(`SELECT id FROM docket_jobs WHERE kind = $1 AND state <> 'completed'`, docket.DocumentKind)
	if len(failed) > 0 {
		r.t.Errorf("%d document jobs did not complete: %v", len(failed), failed)
	}
}

// checkLedger checks the completions the processes' handlers saw commit
// (their "attempt ended" lines with outcome completed) against the new
// primary, and counts executions run more than once.
func (r *failoverRun) checkLedger(f failoverTimes) {
	t := r.t
	// Keyed by job id, but a lost upload's job (its id maybe handed out
	// again, see presentUploads) is keyed by -id for its attempts started
	// before the kill: a job of the new primary's starts after it.
	executions := map[int64]int{}
	runs := map[int64][]attemptEnd{}
	inFlight := map[int64]bool{} // jobs with an execution that began before the kill and ended after it
	completed := map[int64]int{} // job → the attempt whose completion was acknowledged
	for _, p := range r.procs {
		for _, a := range p.attempts(t) {
			key := a.JobID
			if r.lost[a.JobID] && a.StartedAt.Before(f.killAt) {
				key = -a.JobID
			}
			executions[key]++
			runs[key] = append(runs[key], a)
			if a.StartedAt.Before(f.killAt) && a.EndedAt.After(f.killAt) {
				inFlight[key] = true
			}
			if cur, ok := completed[key]; a.Outcome == "completed" && (!ok || a.Attempt < cur) {
				completed[key] = a.Attempt // the first acknowledged completion must be the job's last word
			}
		}
	}
	ids := make([]int64, 0, len(completed))
	for id := range completed {
		ids = append(ids, id)
	}
	state := map[int64]string{}
	attempt := map[int64]int{}
	rows, err := r.pool.Query(context.Background(), `SELECT id, state, attempt FROM docket_jobs WHERE id = ANY($1)`, ids)
	if err != nil {
		t.Fatalf("read jobs: %v", err)
	}
	for rows.Next() {
		var (
			id int64
			s  string
			n  int
		)
		if err := rows.Scan(&id, &s, &n); err != nil {
			t.Fatal(err)
		}
		state[id], attempt[id] = s, n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	lostCompletions, gone := 0, 0
	for id, a := range completed {
		if state[id] == "completed" && attempt[id] == a {
			continue
		}
		lostCompletions++
		if state[id] == "" {
			gone++
		}
		if r.cfg.sync {
			t.Errorf("job %d: completion of attempt %d acknowledged to its handler, now %q in attempt %d: lost in the failover",
				id, a, state[id], attempt[id])
		}
	}
	duplicates := 0
	for id, n := range executions {
		if n <= 1 {
			continue
		}
		duplicates += n - 1
		if r.cfg.sync && !inFlight[id] {
			t.Errorf("job %d ran %d times, none of them in flight at the kill (%s): a duplicate the failover does not explain: %v",
				id, n, f.killAt.Format("15:04:05.000"), runs[id])
		}
	}
	t.Logf("ledger: %d executions of %d jobs, %d completions acknowledged, %d of them lost (%d with their job); "+
		"%d executions beyond the first, %d in flight at the kill",
		sumValues(executions), len(executions), len(completed), lostCompletions, gone, duplicates, len(inFlight))
	if r.cfg.sync && duplicates > len(inFlight) {
		t.Errorf("%d executions run again, over the %d in flight at the kill", duplicates, len(inFlight))
	}
}

func sumValues(m map[int64]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// checkResumed checks that every process started a job within
// failoverResume of the promotion, and serve answered an upload 202.
func (r *failoverRun) checkResumed(f failoverTimes) {
	t := r.t
	for _, p := range r.procs {
		var first time.Time
		for _, a := range p.attempts(t) {
			if a.StartedAt.After(f.promoteAt) && (first.IsZero() || a.StartedAt.Before(first)) {
				first = a.StartedAt
			}
		}
		switch {
		case first.IsZero():
			t.Errorf("%s started no job after the promotion", p.name)
		case first.Sub(f.promotedAt) > failoverResume:
			t.Errorf("%s started its first job %.2fs after the promotion, over %s", p.name, first.Sub(f.promotedAt).Seconds(), failoverResume)
		default:
			t.Logf("%s started a job %.2fs after the promotion (%.2fs after the kill)", p.name,
				first.Sub(f.promotedAt).Seconds(), first.Sub(f.killAt).Seconds())
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range r.acked {
		if u.at.After(f.promotedAt) {
			t.Logf("first upload acknowledged %.2fs after the promotion", u.at.Sub(f.promotedAt).Seconds())
			if u.at.Sub(f.promotedAt) > failoverResume {
				t.Errorf("serve acknowledged its first upload %.2fs after the promotion, over %s", u.at.Sub(f.promotedAt).Seconds(), failoverResume)
			}
			return
		}
	}
	t.Errorf("no upload acknowledged after the promotion")
}

// checkListening checks that every process has a LISTEN session on the
// new primary.
func (r *failoverRun) checkListening() {
	for _, p := range r.procs {
		tag := ":" + strconv.Itoa(p.pid()) + " "
		waitFor(r.t, failoverResume, p.name+" to LISTEN on the new primary", func() (bool, string) {
			var n int
			err := r.pool.QueryRow(context.Background(), `
SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND strpos(application_name, $1) > 0`, tag).Scan(&n)
			return err == nil && n > 0, fmt.Sprintf("%d LISTEN sessions, %v", n, err)
		})
	}
}

// workerIDPID reads the process id out of a queue worker id
// (host-pid-rand).
var workerIDPID = regexp.MustCompile(`-(\d+)-[0-9a-f]{4}$`)

// checkLeader checks that one of the processes leads maintenance on the
// new primary: the lease was written there (it ends later than the one the
// standby had) and has not run out.
func (r *failoverRun) checkLeader(f failoverTimes) {
	pids := map[int]string{}
	for _, p := range r.procs {
		pids[p.pid()] = p.name
	}
	var leader string
	var term int64
	waitFor(r.t, 3*failoverResume, "a maintenance leader elected on the new primary", func() (bool, string) {
		var exp time.Time
		err := r.pool.QueryRow(context.Background(), `
SELECT leader_id, expires_at, term FROM docket_leaders WHERE name = 'maintenance' AND expires_at > now()`).Scan(&leader, &exp, &term)
		if err != nil {
			return false, err.Error()
		}
		m := workerIDPID.FindStringSubmatch(leader)
		pid := 0
		if m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		return exp.After(f.leaderExpires) && pids[pid] != "", fmt.Sprintf("leader %s until %s (standby had %s)", leader, exp, f.leaderExpires)
	})
	r.t.Logf("maintenance leader on the new primary: %s (term %d)", leader, term)
}
