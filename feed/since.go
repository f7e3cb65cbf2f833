package feed

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketq/docket/queue"
)

// sinceLimit caps the finished jobs Since looks through (newest first).
const sinceLimit = 1000

// resumeSlack is added to twice the poll interval to make Since's margin:
// how late a change may reach the feed after its store timestamp (poll
// delay, commit delay, clock skew between processes and the database).
const resumeSlack = 5 * time.Second

// nextIDLocked returns a new event id for a change of job jobID: the feed's
// clock in unix microseconds (never repeating, never going back in this
// process) and the job id.
func (f *Feed) nextIDLocked(jobID int64) string {
	us := time.Now().UnixMicro()
	if us <= f.lastID {
		us = f.lastID + 1
	}
	f.lastID = us
	return strconv.FormatInt(us, 10) + "-" + strconv.FormatInt(jobID, 10)
}

// parseID returns the time of an event id.
func parseID(id string) (time.Time, error) {
	us, _, ok := strings.Cut(id, "-")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || n <= 0 {
		return time.Time{}, fmt.Errorf("%w: event id %q", queue.ErrInvalid, id)
	}
	return time.UnixMicro(n), nil
}

// Since returns the tenant's job changes after lastEventID (an SSE
// Last-Event-ID from this feed, another process's or a past run's): at
// least every job whose state, stage or progress changed since, as it is
// now, oldest change first. It may return a job that did not change since
// (it looks back a margin of 2×PollInterval+5s, for late changes and
// clocks), and it looks through the newest 1000 finished jobs only. An
// invalid id gives an error wrapping queue.ErrInvalid.
func (f *Feed) Since(ctx context.Context, tenantID, lastEventID string) ([]Change, error) {
	at, err := parseID(lastEventID)
	if err != nil {
		return nil, err
	}
	after := at.Add(-2*f.cfg.PollInterval - resumeSlack)
	r, err := f.read(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	finished, err := f.client.List(ctx, &queue.JobListParams{
		TenantID: tenantID, Queue: f.cfg.Queue, Limit: sinceLimit,
		States: []queue.State{queue.StateCompleted, queue.StateFailed, queue.StateCancelled},
	})
	if err != nil {
		return nil, err
	}
	pos := positions(r.jobs, r.base)
	var out []Change
	for _, j := range append(r.jobs, finished...) {
		if !j.UpdatedAt.After(after) {
			continue
		}
		p, ok := pos[j.ID]
		if !ok {
			p = -1
		}
		out = append(out, Change{Job: j, Position: p})
	}
	slices.SortFunc(out, func(a, b Change) int {
		if c := a.Job.UpdatedAt.Compare(b.Job.UpdatedAt); c != 0 {
			return c
		}
		return cmpInt64(a.Job.ID, b.Job.ID)
	})
	now := time.Now()
	for i := range out {
		// Replayed changes are named by their own time, so a client that
		// breaks off the replay resumes from where it broke off.
		us := min(out[i].Job.UpdatedAt.UnixMicro(), now.UnixMicro())
		out[i].ID = strconv.FormatInt(us, 10) + "-" + strconv.FormatInt(out[i].Job.ID, 10)
	}
	return out, nil
}
