package feed

import (
	"context"
	"time"

	"github.com/docketq/docket/queue"
)

// rereads reports whether an event's job is the worker's approximation
// (state set, timestamps not) rather than a row of the store, so that the
// job is read again before it is shown.
func rereads(t queue.EventType) bool {
	switch t {
	case queue.EventInserted, queue.EventStarted, queue.EventProgress, queue.EventCancelled:
		return false
	}
	return true
}

// handle applies one in-process event to its tenant's view, if the tenant
// is watched, and sends the changes at once.
func (f *Feed) handle(ctx context.Context, ev queue.Event) {
	tenantID := ev.Job.TenantID
	if !f.watching(tenantID) {
		return
	}
	job, stamp := ev.Job, uint64(0)
	if rereads(ev.Type) {
		stamp = f.nextStamp()
		j, err := f.client.Get(ctx, job.ID)
		if err != nil {
			f.markDirty(tenantID)
			return
		}
		job = j
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tenants[tenantID]
	if t == nil {
		return
	}
	var e *entry
	if stamp != 0 {
		e = t.offer(job, stamp, now)
	} else {
		f.stamp++
		e = t.applyEvent(job, ev.Type == queue.EventProgress, f.stamp, now)
	}
	if e == nil {
		return
	}
	if ev.Type == queue.EventProgress {
		f.emitLocked(t, t.changed(e)) // positions unchanged
	} else {
		t.recompute()
		f.emitLocked(t, t.changed(nil))
	}
	if t.capped {
		// Unlisted jobs may have moved too: re-anchor soon.
		t.dirty = true
		poke(f.dirty)
	}
}

// markDirty asks for a re-read of the tenant soon.
func (f *Feed) markDirty(tenantID string) {
	f.mu.Lock()
	if t := f.tenants[tenantID]; t != nil {
		t.dirty = true
	}
	f.mu.Unlock()
	poke(f.dirty)
}
