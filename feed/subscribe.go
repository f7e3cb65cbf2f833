package feed

import (
	"context"

	"github.com/docketq/docket/queue"
)

// Change is a job of a tenant as it is after a change.
type Change struct {
	// ID is the SSE event id; resuming with it (Feed.Since, Last-Event-ID)
	// returns what changed after it.
	ID string
	// Job is the job as it is now. Shared by subscribers: do not modify it.
	Job *queue.Job
	// Position is how many jobs of the tenant start before this one, for a
	// pending or scheduled job; -1 otherwise.
	Position int
	// Paused: the job waits (Position >= 0) while its tenant or the feed's
	// queue is paused, as the feed last read the pauses; it keeps its
	// position and starts only after a resume.
	Paused bool
}

// Subscription is one subscriber's stream of a tenant's job changes.
type Subscription struct {
	// Snapshot is the tenant's active jobs (scheduled, pending, running)
	// when the subscription began: running first, then by position.
	Snapshot []Change
	// C delivers every change after the snapshot. It is closed by Close,
	// when the feed stops, or when the subscriber falls Config.Buffer
	// changes behind (it should then resume with its last Change.ID).
	C <-chan Change

	ch     chan Change
	f      *Feed
	t      *tenant
	closed bool // guarded by f.mu
}

// Subscribe returns the tenant's active jobs now, with their queue
// positions, and then every change of the tenant's jobs in the feed's queue.
// It waits for Run to start; once Run has returned it gives ErrClosed. The
// caller must Close the subscription.
func (f *Feed) Subscribe(ctx context.Context, tenantID string) (*Subscription, error) {
	select {
	case <-f.started:
	case <-f.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, ErrClosed
	}
	t := f.tenants[tenantID]
	if t == nil {
		t = newTenant(tenantID)
		f.tenants[tenantID] = t
	}
	t.joining++
	loaded := t.loaded
	f.mu.Unlock()

	var err error
	if !loaded {
		// Events of the tenant are applied to its view from now on; the
		// read merges with them.
		err = f.refreshTenant(ctx, tenantID)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t.joining--
	switch {
	case f.closed:
		return nil, ErrClosed
	case err != nil:
		f.forgetLocked(t)
		return nil, err
	}
	s := &Subscription{ch: make(chan Change, f.cfg.Buffer), f: f, t: t}
	s.C = s.ch
	for _, e := range t.snapshot() {
		s.Snapshot = append(s.Snapshot, f.changeLocked(t, e))
	}
	t.subs[s] = struct{}{}
	return s, nil
}

// Close ends the subscription and closes C. It may be called more than
// once.
func (s *Subscription) Close() {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if s.closed {
		return
	}
	s.closeLocked()
	delete(s.t.subs, s)
	s.f.forgetLocked(s.t)
}

func (s *Subscription) closeLocked() {
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
}

// forgetLocked drops the view of a tenant nobody watches any more.
func (f *Feed) forgetLocked(t *tenant) {
	if len(t.subs) == 0 && t.joining == 0 && f.tenants[t.id] == t {
		delete(f.tenants, t.id)
	}
}

// emitLocked sends the changed entries to the tenant's subscribers,
// dropping those whose buffer is full.
func (f *Feed) emitLocked(t *tenant, changed []*entry) {
	for _, e := range changed {
		c := f.changeLocked(t, e)
		for s := range t.subs {
			select {
			case s.ch <- c:
			default:
				f.logger.Warn("subscriber too slow; dropped", "tenant_id", t.id)
				s.closeLocked()
				delete(t.subs, s)
			}
		}
	}
	f.forgetLocked(t)
}

func (f *Feed) changeLocked(t *tenant, e *entry) Change {
	return Change{ID: f.nextIDLocked(e.job.ID), Job: e.job, Position: e.pos, Paused: e.waitsPaused(t.paused)}
}

// nextStamp returns a new stamp: reads and events are ordered by it.
func (f *Feed) nextStamp() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stamp++
	return f.stamp
}

// watching reports whether the tenant has a view.
func (f *Feed) watching(tenantID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tenants[tenantID] != nil
}
