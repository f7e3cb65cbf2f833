package feed

import (
	"slices"
	"time"

	"github.com/docketq/docket/queue"
)

// tombstoneTTL is how long a finished job stays in its tenant's view, so
// that a read begun before it finished cannot bring it back.
const tombstoneTTL = time.Minute

// tenant is the view of one subscribed tenant's jobs, shared by its
// subscribers: they all saw the same snapshot and the same changes since.
// Guarded by Feed.mu.
type tenant struct {
	id      string
	subs    map[*Subscription]struct{}
	joining int  // Subscribe calls still loading the view
	loaded  bool // read from the store at least once
	dirty   bool // to be re-read soon (capped views)
	capped  bool // more waiting jobs than trackLimit
	paused  bool // the tenant or the feed's queue is paused (as last read)
	base    aheadBase
	jobs    map[int64]*entry
	// finishedMark is the newest UpdatedAt of the finished jobs read: a
	// finished job not in the view is news only if it is newer.
	finishedMark time.Time
}

// entry is one job of a tenant's view.
type entry struct {
	job     *queue.Job // as subscribers see it now; never modified
	version time.Time  // the store's UpdatedAt of job (progress merges keep it)
	stamp   uint64     // Feed.stamp of the read or event that set job
	pos     int        // queue position; -1 unless pending or scheduled
	seen    visible    // what subscribers last saw
	doneAt  time.Time  // when it was seen finished; zero while active
}

// visible is what a change shows: a job whose visible fields are unchanged
// is not sent again.
type visible struct {
	state                  queue.State
	stage, message, errMsg string
	partial                string // the partial result's JSON, "" for none
	progress, attempt, pos int
	started, completed     int64
	paused                 bool // waiting on a paused tenant or queue
}

func newTenant(id string) *tenant {
	return &tenant{id: id, subs: make(map[*Subscription]struct{}), jobs: make(map[int64]*entry)}
}

func (e *entry) visible(paused bool) visible {
	j := e.job
	return visible{
		state: j.State, stage: j.Stage, message: j.ProgressMessage, errMsg: j.ErrorMessage,
		partial: string(j.PartialResult), progress: j.Progress, attempt: j.Attempt, pos: e.pos,
		started: unixMicro(j.StartedAt), completed: unixMicro(j.CompletedAt),
		paused: e.waitsPaused(paused),
	}
}

// waitsPaused reports whether the entry waits while its tenant or queue
// is paused (tenantPaused).
func (e *entry) waitsPaused(tenantPaused bool) bool { return tenantPaused && e.pos >= 0 }

func unixMicro(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func (e *entry) active() bool { return e.doneAt.IsZero() }

// set makes j the entry's version, applied at stamp.
func (t *tenant) set(j *queue.Job, stamp uint64, now time.Time) *entry {
	e := t.jobs[j.ID]
	if e == nil {
		e = &entry{pos: -1}
		t.jobs[j.ID] = e
	}
	e.job, e.version, e.stamp = j, j.UpdatedAt, stamp
	switch {
	case !j.State.Finished():
		e.doneAt = time.Time{}
	case e.doneAt.IsZero():
		e.doneAt = now
	}
	return e
}

// offer applies a job read from the store at stamp, unless the entry holds
// a version applied after the read began.
func (t *tenant) offer(j *queue.Job, stamp uint64, now time.Time) *entry {
	if e := t.jobs[j.ID]; e != nil && e.stamp > stamp {
		return nil
	}
	return t.set(j, stamp, now)
}

// applyEvent applies a job carried by a bus event: a store row (inserted,
// started, cancelled) when it is newer than the entry's, or a progress
// report of the entry's running attempt. It returns the entry changed, if
// any.
func (t *tenant) applyEvent(j *queue.Job, progress bool, stamp uint64, now time.Time) *entry {
	e := t.jobs[j.ID]
	if !progress || e == nil {
		if e != nil && !j.UpdatedAt.After(e.version) {
			return nil
		}
		return t.set(j, stamp, now)
	}
	cur := e.job
	if cur.State != queue.StateRunning || cur.Attempt != j.Attempt || cur.LeaseToken != j.LeaseToken {
		return nil // a late report of an attempt that has ended
	}
	merged := *cur
	merged.Stage, merged.Progress, merged.ProgressMessage = j.Stage, j.Progress, j.ProgressMessage
	if j.PartialResult != nil {
		merged.PartialResult = j.PartialResult // the report's partial result, or the one it kept
	}
	if now.After(merged.UpdatedAt) {
		merged.UpdatedAt = now // for display; e.version keeps the store's
	}
	e.job, e.stamp = &merged, stamp
	return e
}

// recompute sets every entry's queue position.
func (t *tenant) recompute() {
	var jobs []*queue.Job
	for _, e := range t.jobs {
		if e.active() {
			jobs = append(jobs, e.job)
		}
	}
	pos := positions(jobs, t.base)
	for id, e := range t.jobs {
		if p, ok := pos[id]; ok {
			e.pos = p
		} else {
			e.pos = -1
		}
	}
}

// changed returns the entries whose visible fields changed since
// subscribers last saw them (only e's, when e is not nil), by job id, and
// marks them seen.
func (t *tenant) changed(only *entry) []*entry {
	var out []*entry
	check := func(e *entry) {
		if v := e.visible(t.paused); v != e.seen {
			e.seen = v
			out = append(out, e)
		}
	}
	if only != nil {
		check(only)
		return out
	}
	for _, e := range t.jobs {
		check(e)
	}
	slices.SortFunc(out, func(a, b *entry) int { return cmpInt64(a.job.ID, b.job.ID) })
	return out
}

// snapshot returns the active entries: running first, then waiting by
// position, then by id.
func (t *tenant) snapshot() []*entry {
	var out []*entry
	for _, e := range t.jobs {
		if e.active() {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *entry) int {
		ra, rb := a.job.State == queue.StateRunning, b.job.State == queue.StateRunning
		switch {
		case ra != rb:
			if ra {
				return -1
			}
			return 1
		case a.pos != b.pos:
			return a.pos - b.pos
		}
		return cmpInt64(a.job.ID, b.job.ID)
	})
	return out
}

// prune forgets finished jobs seen long enough ago.
func (t *tenant) prune(now time.Time) {
	for id, e := range t.jobs {
		if !e.active() && now.Sub(e.doneAt) > tombstoneTTL {
			delete(t.jobs, id)
		}
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
