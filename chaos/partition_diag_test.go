package chaos

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// The phases of a partition run, by the database clock.
const (
	phaseBeforeFault = "before the fault"
	phaseDuring      = "during the partition (reached the server as the cut took effect)"
	phaseAfterHeal   = "after the heal"
)

// unfinished is one execution on the partitioned worker that did not
// complete its job, placed in the run's timeline.
type unfinished struct {
	x            execution
	phase        string // phaseBeforeFault, phaseDuring or phaseAfterHeal
	jobAttempt   int    // the job's attempt at the end
	completedBy  int    // the PID whose execution completed it (0: none)
	leaseLostLog string // the victim's "lease lost" log line for this attempt, if any
}

// victimUnfinished returns the executions on pid that did not complete
// their job, each with the phase it started in (by the database clock)
// and what the victim logged about its lease.
func (e *env) victimUnfinished(pid int, logPath string, faultAt, healAt time.Time) []unfinished {
	e.t.Helper()
	effects := e.effects()
	jobs := e.jobs()
	lost := leaseLostLines(logPath)
	var out []unfinished
	for _, x := range e.executions() {
		if x.PID != pid {
			continue
		}
		ef, ok := effects[x.JobID]
		if ok && ef.PID == x.PID && ef.Attempt == x.Attempt {
			continue
		}
		u := unfinished{x: x, completedBy: ef.PID, leaseLostLog: lost[leaseKey{x.JobID, x.Attempt}]}
		if j := jobs[x.JobID]; j != nil {
			u.jobAttempt = j.Attempt
		}
		switch {
		case x.StartedAt.Before(faultAt):
			u.phase = phaseBeforeFault
		case x.StartedAt.Before(healAt):
			u.phase = phaseDuring
		default:
			u.phase = phaseAfterHeal
		}
		out = append(out, u)
	}
	return out
}

func (u unfinished) String() string {
	lost := "no lease-lost line"
	if u.leaseLostLog != "" {
		lost = "victim logged: " + u.leaseLostLog
	}
	return fmt.Sprintf("%s; %s (handler entered %s); job ended at attempt %d, completed by pid %d; %s",
		u.x, u.phase, u.x.EnteredAt.Format("15:04:05.000"), u.jobAttempt, u.completedBy, lost)
}

// grepLog returns the first n lines of the log at path that contain
// substr.
func grepLog(path, substr string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(line, substr) {
			if len(out) == n {
				out = append(out, "…")
				break
			}
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
