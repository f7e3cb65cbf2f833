package chaos

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Lease losses as the workers log them: the evidence that explains an
// unfinished execution on a worker no test fault touched. A worker whose
// heartbeats could not be renewed in time (a loaded machine) cancels its
// handlers once the leases as last renewed have run out, and the store
// hands the jobs to another worker once they have: a re-execution the
// engine allows, with the first execution's finish fenced off. Each such
// execution must be one the worker itself logged losing.

type leaseKey struct {
	job     int64
	attempt int
}

var leaseLostRE = regexp.MustCompile(`^time=(\S+) .*msg="lease lost[^"]*".*? job_id=(\d+) attempt=(\d+)`)

// leaseLostLines reads the worker's "lease lost" log lines (the
// heartbeat's cancellation and the dropped result), keyed by attempt: the
// first line of each, shortened to its time and message.
func leaseLostLines(logPath string) map[leaseKey]string {
	out := map[leaseKey]string{}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return out
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		m := leaseLostRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id, _ := strconv.ParseInt(m[2], 10, 64)
		att, _ := strconv.Atoi(m[3])
		k := leaseKey{id, att}
		if _, seen := out[k]; !seen {
			msg := line
			if i := strings.Index(line, "msg="); i >= 0 {
				msg = line[i:]
			}
			out[k] = m[1] + " " + msg
		}
	}
	return out
}

// loggedLosses returns, per PID, the leases each process of the fleet
// logged lost.
func (f *fleet) loggedLosses() map[int]map[leaseKey]string {
	out := map[int]map[leaseKey]string{}
	for _, p := range f.history() {
		out[p.pid] = leaseLostLines(p.logPath)
	}
	return out
}

// lossTime is the time of a line of leaseLostLines.
func lossTime(line string) time.Time {
	at, _ := time.Parse(time.RFC3339Nano, strings.Fields(line)[0])
	return at
}
