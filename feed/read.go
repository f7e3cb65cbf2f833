package feed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docketq/docket/queue"
)

// finishedLimit caps the finished jobs a re-read lists (newest first) to
// learn the end of jobs that finished between two reads.
const finishedLimit = 100

// trackLimit caps the running and the waiting jobs read per tenant; a
// tenant with more waiting jobs is tracked by its newest trackLimit.
var trackLimit = 1000

// readResult is a tenant's active jobs as read from the store.
type readResult struct {
	stamp      uint64       // taken before the read began
	jobs       []*queue.Job // active
	finished   []*queue.Job // the newest finished
	capped     bool         // more waiting jobs than listed
	minWaiting int64        // smallest id of the listed waiting jobs, when capped
	base       aheadBase
	paused     bool // the tenant or the feed's queue is paused
}

// read lists the tenant's running and waiting jobs in the feed's queue.
func (f *Feed) read(ctx context.Context, tenantID string) (*readResult, error) {
	r := &readResult{stamp: f.nextStamp()}
	// Running first: a job that starts between the two reads is missing
	// from both (and fetched as vanished) rather than listed twice.
	running, err := f.client.List(ctx, &queue.JobListParams{
		TenantID: tenantID, Queue: f.cfg.Queue, States: []queue.State{queue.StateRunning}, Limit: trackLimit,
	})
	if err != nil {
		return nil, err
	}
	waiting, err := f.client.List(ctx, &queue.JobListParams{
		TenantID: tenantID, Queue: f.cfg.Queue,
		States: []queue.State{queue.StateScheduled, queue.StatePending}, Limit: trackLimit + 1,
	})
	if err != nil {
		return nil, err
	}
	if len(waiting) > trackLimit {
		waiting = waiting[:trackLimit] // newest first
		r.capped, r.minWaiting = true, waiting[len(waiting)-1].ID
		if r.base, err = f.anchor(ctx, waiting); err != nil {
			return nil, err
		}
	}
	r.jobs = slices.Concat(running, waiting)
	r.finished, err = f.client.List(ctx, &queue.JobListParams{
		TenantID: tenantID, Queue: f.cfg.Queue, Limit: finishedLimit,
		States: []queue.State{queue.StateCompleted, queue.StateFailed, queue.StateCancelled},
	})
	if err != nil {
		return nil, err
	}
	pauses, err := f.client.Pauses(ctx)
	if err != nil {
		return nil, err
	}
	r.paused = pauses.TenantPaused(tenantID) || pauses.QueuePaused(f.cfg.Queue)
	return r, nil
}

// anchor counts the unlisted waiting jobs ahead of the listed ones with one
// queue.Client.Position per priority of the listed pending jobs, and one for
// a scheduled job.
func (f *Feed) anchor(ctx context.Context, waiting []*queue.Job) (aheadBase, error) {
	var pending []*queue.Job
	var scheduled *queue.Job
	for _, j := range waiting {
		switch j.State {
		case queue.StatePending:
			pending = append(pending, j)
		case queue.StateScheduled:
			scheduled = j
		}
	}
	sortPending(pending)
	base := aheadBase{byPriority: make(map[int]int)}
	for i, j := range pending {
		if _, ok := base.byPriority[j.Priority]; ok {
			continue
		}
		ahead, err := f.ahead(ctx, j.ID)
		if err != nil {
			return base, err
		}
		if ahead >= 0 {
			base.byPriority[j.Priority] = max(ahead-i, 0)
		}
	}
	if scheduled != nil {
		ahead, err := f.ahead(ctx, scheduled.ID)
		if err != nil {
			return base, err
		}
		base.all = max(ahead-len(pending), 0)
	} else if len(pending) > 0 {
		base.all = base.ahead(pending[len(pending)-1].Priority)
	}
	return base, nil
}

// ahead returns a waiting job's queue.Client.Position, or -1 when it is no
// longer waiting.
func (f *Feed) ahead(ctx context.Context, id int64) (int, error) {
	p, err := f.client.Position(ctx, id)
	switch {
	case errors.Is(err, queue.ErrConflict), errors.Is(err, queue.ErrNotFound):
		return -1, nil
	case err != nil:
		return 0, fmt.Errorf("job %d position: %w", id, err)
	}
	return p.Ahead, nil
}

// refreshTenant re-reads a tenant's active jobs, fetches the jobs of its
// view that left the active list (finished elsewhere), merges both into the
// view and sends what changed.
func (f *Feed) refreshTenant(ctx context.Context, tenantID string) error {
	r, err := f.read(ctx, tenantID)
	if err != nil {
		return err
	}
	f.mu.Lock()
	var gone []int64
	if t := f.tenants[tenantID]; t != nil {
		gone = t.vanished(r)
	}
	f.mu.Unlock()
	goneStamp := f.nextStamp()
	var fetched []*queue.Job
	var missing []int64
	for _, id := range gone {
		j, err := f.client.Get(ctx, id)
		switch {
		case errors.Is(err, queue.ErrNotFound):
			missing = append(missing, id)
		case err != nil:
			return fmt.Errorf("get job %d: %w", id, err)
		default:
			fetched = append(fetched, j)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tenants[tenantID]
	if t == nil {
		return nil
	}
	t.merge(r, fetched, missing, goneStamp, time.Now())
	t.paused = r.paused
	t.recompute()
	f.emitLocked(t, t.changed(nil))
	return nil
}

// vanished returns the active jobs of the view that r does not list
// (active or among the newest finished), though r began after they were
// last applied.
func (t *tenant) vanished(r *readResult) []int64 {
	listed := make(map[int64]bool, len(r.jobs)+len(r.finished))
	for _, j := range r.jobs {
		listed[j.ID] = true
	}
	for _, j := range r.finished {
		listed[j.ID] = true
	}
	var out []int64
	for id, e := range t.jobs {
		if e.active() && !listed[id] && e.stamp < r.stamp {
			out = append(out, id)
		}
	}
	return out
}

// merge applies a read and the jobs fetched after it (at goneStamp).
func (t *tenant) merge(r *readResult, fetched []*queue.Job, missing []int64, goneStamp uint64, now time.Time) {
	for _, j := range r.jobs {
		t.offer(j, r.stamp, now)
	}
	t.mergeFinished(r, now)
	for _, j := range fetched {
		waiting := j.State == queue.StatePending || j.State == queue.StateScheduled
		if r.capped && waiting && j.ID < r.minWaiting {
			// Still waiting, behind the newest trackLimit: untracked until
			// it starts.
			if e := t.jobs[j.ID]; e != nil && e.stamp < goneStamp {
				delete(t.jobs, j.ID)
			}
			continue
		}
		t.offer(j, goneStamp, now)
	}
	for _, id := range missing { // deleted from the store
		if e := t.jobs[id]; e != nil && e.stamp < goneStamp {
			delete(t.jobs, id)
		}
	}
	t.prune(now)
	t.capped, t.base, t.loaded = r.capped, r.base, true
}

// mergeFinished applies the newest finished jobs: those of the view, and
// those that finished after the previous read saw the newest (jobs that
// lived and ended between two reads). The first read only sets the mark:
// what finished before the tenant was watched is history.
func (t *tenant) mergeFinished(r *readResult, now time.Time) {
	mark := t.finishedMark
	for _, j := range r.finished {
		if t.jobs[j.ID] != nil || (t.loaded && j.UpdatedAt.After(t.finishedMark)) {
			t.offer(j, r.stamp, now)
		}
		if j.UpdatedAt.After(mark) {
			mark = j.UpdatedAt
		}
	}
	t.finishedMark = mark
}
