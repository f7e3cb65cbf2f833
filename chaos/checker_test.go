package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docketq/docket/queue"
)

// execution is one row of the ledger: a handler start.
type execution struct {
	JobID     int64
	Attempt   int
	PID       int
	WorkerID  string
	Kind      string
	StartedAt time.Time
	EnteredAt time.Time // when the handler began (zero: not recorded)
}

func (x execution) String() string {
	return fmt.Sprintf("job %d attempt %d on pid %d (%s) at %s", x.JobID, x.Attempt, x.PID, x.WorkerID,
		x.StartedAt.Format("15:04:05.000"))
}

// effect is the side effect of a completed ledger job.
type effect struct {
	Attempt int
	PID     int
}

// verdict is the total-queue checker's result over the jobs acknowledged.
type verdict struct {
	Acked      int
	Completed  int
	Effects    int
	Executions int

	// Lost are acknowledged jobs not completed (with their state).
	Lost []int64
	// Unexpected are jobs completed, executed or with an effect that were
	// never acknowledged.
	Unexpected []int64
	// NoEffect are completed jobs without an effect; EffectNotCompleted
	// the reverse.
	NoEffect, EffectNotCompleted []int64
	// Duplicates counts executions beyond the first per job.
	Duplicates int
	// Bound is the executions that did not complete on a process the test
	// killed (or that died): the most duplicates a correct queue may have.
	Bound int
	// Unexplained are executions that did not complete on a process that
	// was not killed: each is a duplicate no crash accounts for.
	Unexplained []execution

	jobs map[int64]*queue.Job
}

// checkTotalQueue runs Jepsen's total-queue check after a full drain.
// acked are the ids whose enqueue commit returned; dead are the PIDs of the
// processes that were killed or died, whose unfinished executions explain
// duplicates.
func (e *env) checkTotalQueue(acked []int64, dead map[int]bool) *verdict {
	e.t.Helper()
	return e.checkTotalQueueExplained(acked, func(x execution) bool { return dead[x.PID] })
}

// checkTotalQueueExplained is checkTotalQueue where explained says which
// unfinished executions a fault accounts for (a process killed, a server
// restarted while they ran).
func (e *env) checkTotalQueueExplained(acked []int64, explained func(execution) bool) *verdict {
	e.t.Helper()
	v := &verdict{Acked: len(acked), jobs: e.jobs()}
	effects := e.effects()
	execs := e.executions()
	v.Effects, v.Executions = len(effects), len(execs)

	isAcked := make(map[int64]bool, len(acked))
	for _, id := range acked {
		isAcked[id] = true
		if j := v.jobs[id]; j == nil || j.State != queue.StateCompleted {
			v.Lost = append(v.Lost, id)
		}
	}
	unexpected := map[int64]bool{}
	for id, j := range v.jobs {
		if j.State != queue.StateCompleted {
			continue
		}
		v.Completed++
		if !isAcked[id] {
			unexpected[id] = true
		}
		if _, ok := effects[id]; !ok {
			v.NoEffect = append(v.NoEffect, id)
		}
	}
	for id := range effects {
		if !isAcked[id] {
			unexpected[id] = true
		}
		if j := v.jobs[id]; j == nil || j.State != queue.StateCompleted {
			v.EffectNotCompleted = append(v.EffectNotCompleted, id)
		}
	}
	seen := map[int64]bool{}
	for _, x := range execs {
		if !isAcked[x.JobID] {
			unexpected[x.JobID] = true
		}
		if seen[x.JobID] {
			v.Duplicates++
		}
		seen[x.JobID] = true
		if ef, ok := effects[x.JobID]; ok && ef.Attempt == x.Attempt && ef.PID == x.PID {
			continue // the execution that completed the job
		}
		if explained(x) {
			v.Bound++
		} else {
			v.Unexplained = append(v.Unexplained, x)
		}
	}
	for id := range unexpected {
		v.Unexpected = append(v.Unexpected, id)
	}
	for _, s := range [][]int64{v.Lost, v.Unexpected, v.NoEffect, v.EffectNotCompleted} {
		slices.Sort(s)
	}
	return v
}

// problems lists the ways the verdict fails the check; empty means it
// passes.
func (v *verdict) problems() []string {
	var out []string
	if len(v.Lost) > 0 {
		out = append(out, fmt.Sprintf("lost %d acknowledged jobs: %s", len(v.Lost), v.describe(v.Lost, 10)))
	}
	if len(v.Unexpected) > 0 {
		out = append(out, fmt.Sprintf("%d unexpected jobs (never acknowledged): %s", len(v.Unexpected), firstIDs(v.Unexpected, 10)))
	}
	if len(v.NoEffect) > 0 {
		out = append(out, fmt.Sprintf("%d completed jobs without an effect: %s", len(v.NoEffect), firstIDs(v.NoEffect, 10)))
	}
	if len(v.EffectNotCompleted) > 0 {
		out = append(out, fmt.Sprintf("%d effects of jobs not completed: %s", len(v.EffectNotCompleted), v.describe(v.EffectNotCompleted, 10)))
	}
	if v.Effects != v.Acked {
		out = append(out, fmt.Sprintf("%d effects for %d acknowledged jobs (want exactly one each)", v.Effects, v.Acked))
	}
	if v.Duplicates > v.Bound {
		out = append(out, fmt.Sprintf("%d duplicate executions, over the bound %d (unfinished executions on killed processes)",
			v.Duplicates, v.Bound))
	}
	if len(v.Unexplained) > 0 {
		var b strings.Builder
		for i, x := range v.Unexplained {
			if i == 10 {
				fmt.Fprintf(&b, "\n    … %d in all", len(v.Unexplained))
				break
			}
			fmt.Fprintf(&b, "\n    %s; job now %s", x, v.describe([]int64{x.JobID}, 1))
		}
		out = append(out, fmt.Sprintf("%d executions that never completed on processes the test did not kill:%s",
			len(v.Unexplained), b.String()))
	}
	return out
}

// describe renders jobs with their state, attempt and error.
func (v *verdict) describe(ids []int64, n int) string {
	var parts []string
	for i, id := range ids {
		if i == n {
			parts = append(parts, fmt.Sprintf("… (%d in all)", len(ids)))
			break
		}
		j := v.jobs[id]
		if j == nil {
			parts = append(parts, fmt.Sprintf("%d (missing)", id))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d (%s, attempt %d/%d, tenant %s, error %q)",
			id, j.State, j.Attempt, j.MaxAttempts, j.TenantID, j.ErrorMessage))
	}
	return strings.Join(parts, ", ")
}

func (v *verdict) String() string {
	return fmt.Sprintf("acked=%d completed=%d effects=%d executions=%d lost=%d unexpected=%d duplicates=%d bound=%d unexplained=%d",
		v.Acked, v.Completed, v.Effects, v.Executions, len(v.Lost), len(v.Unexpected), v.Duplicates, v.Bound, len(v.Unexplained))
}

// effects returns the effects by job id.
func (e *env) effects() map[int64]effect {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT job_id, attempt, worker_pid FROM effects`)
	if err != nil {
		e.t.Fatalf("read effects: %v", err)
	}
	defer rows.Close()
	out := map[int64]effect{}
	for rows.Next() {
		var id int64
		var ef effect
		if err := rows.Scan(&id, &ef.Attempt, &ef.PID); err != nil {
			e.t.Fatalf("read effects: %v", err)
		}
		out[id] = ef
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("read effects: %v", err)
	}
	return out
}

// executions returns the ledger in start order.
func (e *env) executions() []execution {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(),
		`SELECT job_id, attempt, worker_pid, worker_id, kind, started_at, coalesce(entered_at, started_at) FROM executions ORDER BY started_at, id`)
	if err != nil {
		e.t.Fatalf("read executions: %v", err)
	}
	defer rows.Close()
	var out []execution
	for rows.Next() {
		var x execution
		if err := rows.Scan(&x.JobID, &x.Attempt, &x.PID, &x.WorkerID, &x.Kind, &x.StartedAt, &x.EnteredAt); err != nil {
			e.t.Fatalf("read executions: %v", err)
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("read executions: %v", err)
	}
	return out
}
